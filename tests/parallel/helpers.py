"""A sweep small enough to run many times: 4 variants (size x loss rate)
of 8 NICs, MRC and RoCE each, 32 ms of CPU a run or so."""

from __future__ import annotations

from pathlib import Path

import yaml

from fabric_sim import scenario
from fabric_sim.report import sweep_out
from fabric_sim.runner.parallel import Task

SWEEP = {
    "name": "tiny-sweep", "seed": 5,
    "topology": {"planes": 2, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 4},
    "workload": {"pattern": "permutation", "message_bytes": 65536, "messages": 8},
    "transports": [{"name": "mrc", "kind": "mrc", "evs_per_qp": 16}, {"name": "roce", "kind": "roce"}],
    "events": [{"at_us": 20, "nic_rx_loss": {"rate": 0.01}}],
    "sweep": {"workload.message_bytes": [32768, 65536], "events[0].nic_rx_loss.rate": [0, 0.01]},
    "duration_us": 2000, "bins": 50,
}


def write(path: Path, doc: dict = SWEEP) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def tasks(doc: dict = SWEEP) -> list[Task]:
    return sweep_out.tasks(scenario.variants(scenario.parse(doc)))
