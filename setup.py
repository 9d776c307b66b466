"""Packaging beyond pyproject.toml: the wheel carries the data the installed
commands read (control_plane/pipelines.py finds it with importlib.resources
under control_plane/data/): the compiled P4 programs (bmv2_configs/build,
tofino_configs), the topologies and the scenarios. In a checkout they are
read where they are.

With MRC_COMPILE=1 (`make fast`) the timed fabric's hot path is compiled
with mypyc: the same Python source, as C extension modules (the reference
models stay one source; a compiled run gives the interpreted run's numbers
bit for bit, which bench/sim_scale.py checks each time it runs both)."""

import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA = {  # folder -> files of it shipped (same relative paths under control_plane/data/)
    "bmv2_configs/build": "*",
    "bmv2_configs/topologies": "*.yaml",
    "tofino_configs": "*",
    "scenarios": "**/*",  # the scenario files and the Chakra traces they run (scenarios/chakra/traces/)
}


# The modules one packet-hop runs through (profile: bench/results/latest.md),
# typed enough for mypyc. A module mypyc cannot compile is left out, not
# silenced.
COMPILED = [
    "sim_core/sim.py",
    "fabric_sim/net/links.py",
    "fabric_sim/net/fabric.py",
    "fabric_sim/net/qp_scheduler.py",
    "fabric_sim/net/ledger.py",
    "fabric_sim/net/pfc.py",
    "switch_model/pipeline.py",
    "nic_model/nic_pipeline.py",
    "nic_model/parser.py",
    "nic_model/outputs.py",
    "nic_model/tx.py",
    "nic_model/encap.py",
    "nic_model/decap.py",
    "nic_model/trim_nack.py",
    "nic_model/reply.py",
    "nic_model/rx_track.py",
    "nic_model/ev_health.py",
    "mrc_host/nscc.py",
    "mrc_host/ev.py",
    "mrc_host/qp.py",
    "mrc_host/qp_paths.py",
    "mrc_host/placement.py",
    "mrc_host/endpoint.py",
    "mrc_host/recovery.py",
    "mrc_host/paths.py",
    "mrc_wire/packet.py",
    "mrc_wire/frame.py",
    "mrc_wire/constants.py",
    "mrc_wire/psn.py",
    "mrc_wire/segment.py",
]


def ext_modules() -> list:
    if os.environ.get("MRC_COMPILE") != "1":
        return []
    from mypyc.build import mypycify  # the build's own environment has mypy (make fast)

    return mypycify(COMPILED, opt_level="3")


class BuildWithData(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads the checkout itself
            return
        for folder, pattern in DATA.items():
            for src in sorted((ROOT / folder).glob(pattern)):
                if src.is_file():
                    dst = Path(self.build_lib) / "control_plane" / "data" / src.relative_to(ROOT)
                    self.mkpath(str(dst.parent))
                    self.copy_file(str(src), str(dst))


setup(cmdclass={"build_py": BuildWithData}, ext_modules=ext_modules())
