"""Time one simulator run in this process: its wall and CPU seconds, peak
RSS, packet-hops, and a digest of its outcome (every message's completion
time), so that two builds of the same source (interpreted, compiled with
mypyc: `make fast`) can be held equal and compared for speed.

`python -m fabric_sim.runner.timing --nics N` runs the bench's permutation of
N NICs (bench/sim_scale.py); `--scenario FILE` a scenario file's first
transport; one JSON line on stdout. `--fingerprint` runs short cases
that between them take every path of the hot code (trimming and NACKs, CE,
probes, port failures, an ACK per packet (ack_bytes 0), RoCE with PFC and DCQCN, single
path, a collective) and prints all they measured, one JSON line per run. This module ships with the package, so
an installed (compiled) environment runs it from outside the checkout."""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

from control_plane.config import ConfigError, read_mapping
from control_plane.pipelines import SCENARIOS
from fabric_sim import scenario
from fabric_sim.net import links
from fabric_sim.runner import run_cache
from fabric_sim.runner.run import run as simulate

# NICs -> (T0 per plane, hosts per T0, spines per plane); 8 planes of 100 Gb/s everywhere.
SIZES = {64: (8, 8, 8), 256: (16, 16, 16), 1024: (32, 32, 16), 4096: (64, 64, 32), 8192: (128, 64, 32),
         16384: (256, 64, 32)}
MESSAGE = 2 * 1024 * 1024


def size_scenario(nics: int) -> dict[str, Any]:
    """A permutation of 2 MiB messages in 4 KiB packets on `nics` NICs."""
    rows, hosts, spines = SIZES[nics]
    return {"name": f"scale-{nics}", "seed": 1,
            "topology": {"name": f"scale-{nics}", "planes": 8, "t0_per_plane": rows, "t1_per_plane": spines,
                         "hosts_per_t0": hosts},
            "links": {"nic_gbps": 100, "fabric_gbps": 100, "prop_us": 0.5}, "endpoint": {"mtu": 4096},
            "workload": {"pattern": "permutation", "message_bytes": MESSAGE},
            "transports": [{"name": "mrc", "kind": "mrc", "evs_per_qp": 64}], "duration_us": 2000, "bins": 20}


def compiled_build(repo: Path) -> tuple[list[str] | None, str]:
    """The command that runs a checkout's compiled build (`make fast`):
    its interpreter with -P, so that a run from any folder imports the
    installed compiled package, not a source folder. None, with the
    reason, where there is none or it is older than the sources."""
    fast = repo / ".venv-fast"
    stamp = fast / ".installed"
    if not (fast / "bin" / "python").exists() or not stamp.exists():
        return None, "no compiled build (make fast builds it)"
    if (fast / "interpreted").exists():
        return None, f"mypyc could not build it here ({fast / 'compile.log'} says why)"
    sources = [p for pkg in run_cache.PACKAGES for p in (repo / pkg).rglob("*.py")] + [repo / "setup.py"]
    newest = max(sources, key=lambda p: p.stat().st_mtime)
    if newest.stat().st_mtime > stamp.stat().st_mtime:
        return None, f"the compiled build is older than {newest.relative_to(repo)} (make fast rebuilds it)"
    return [str(fast / "bin" / "python"), "-P"], "compiled (make fast)"


def compiled() -> bool:
    """Whether this process runs the hot path compiled (a C extension)."""
    return not str(links.__file__).endswith(".py")


def measure(sc: scenario.Scenario) -> dict[str, Any]:
    """Run the scenario's first transport; its figures as a dict."""
    t0, c0 = time.perf_counter(), time.process_time()
    r = simulate(sc, sc.transports[0])
    cpu = time.process_time() - c0
    done = ",".join(repr(m.done_at) for m in r.messages)
    return {"name": sc.name, "compiled": compiled(), "wall_s": time.perf_counter() - t0, "cpu_s": cpu,
            "rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "hops": r.packet_hops,
            "events": r.sim_events, "delivered": sum(m.done_at >= 0 for m in r.messages),
            "messages": len(r.messages), "digest": hashlib.sha256(done.encode()).hexdigest()[:16]}


# (scenario file under scenarios/, overrides): each short, together every hot path.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("flagship.yaml", {"duration_us": 400, "workload": {"pattern": "permutation", "message_bytes": 400000}}),
    ("flagship.yaml", {"duration_us": 300, "seed": 3, "workload": {"pattern": "permutation", "message_bytes": 600000},
                       "endpoint": {"mtu": 4096, "ack_bytes": 0}}),
    ("paper/fig18.yaml", {"duration_us": 300}),
    ("paper/fig09a.yaml", {"duration_us": 500, "events": [
        {"at_us": 120, "nic_port_down": {"nic": "nic-0", "plane": 0}},
        {"at_us": 240, "nic_port_down": {"nic": "nic-0", "plane": 1}},
        {"at_us": 300, "nic_port_up": {"nic": "nic-0", "plane": 1}},
        {"at_us": 360, "nic_port_up": {"nic": "nic-0", "plane": 0}}]}),
    ("paper/fig16.yaml", {"duration_us": 400, "sweep": {}, "events": [{"at_us": 0, "nic_rx_loss": {"rate": 0.01}}],
                          "workload": {"pattern": "ring_allreduce", "message_bytes": 1048576, "placement": "spread"}}),
]


def fingerprint() -> list[dict[str, Any]]:
    """Everything the CASES' runs measured, per run (repr'd floats: exact)."""
    out = []
    for name, over in CASES:
        path = SCENARIOS / name
        sc = scenario.parse({**read_mapping(path), **over}, str(path), path.parent)
        for t in sc.transports:
            r = simulate(sc, t)
            out.append(json.loads(json.dumps({
                "case": name, "transport": t.name, "sim_events": r.sim_events, "packet_hops": r.packet_hops,
                "msgs": [(m.src, m.dst, m.size, repr(m.posted_at), repr(m.done_at)) for m in r.messages],
                "retx": r.retx, "drops": r.drops, "events": r.events, "reorder": r.reorder, "errors": r.errors,
                "end_us": repr(r.end_us), "pfc": r.pfc, "packets": r.packets, "undelivered": r.undelivered,
                "ledger": repr(r.ledger)}, sort_keys=True, default=repr)))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m fabric_sim.runner.timing", description=__doc__.split("\n\n")[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--nics", type=int, choices=sorted(SIZES), help="the bench's permutation of this many NICs")
    which.add_argument("--scenario", type=Path, help="a scenario file (its first transport runs)")
    which.add_argument("--fingerprint", action="store_true",
                       help="run the short cases that take every hot path; all they measured, a JSON line per run")
    args = ap.parse_args(argv)
    if args.fingerprint:
        for row in fingerprint():
            print(json.dumps(row, sort_keys=True))
        return
    if args.nics:
        sc = scenario.parse(size_scenario(args.nics), f"scale-{args.nics}", Path.cwd())
    else:
        try:
            sc = scenario.load(args.scenario)
        except (OSError, ConfigError) as e:
            sys.exit(f"fabric_sim.runner.timing: {e}")
    print(json.dumps(measure(sc)))


if __name__ == "__main__":
    main()
