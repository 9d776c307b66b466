"""Where the project's data is: the compiled P4 programs the controller
pushes (P4Info and BMv2 JSON, committed under bmv2_configs/build/ by `make
build`), the Tofino outputs, the topologies and the scenarios.

In a checkout they are read where they are; an installed package carries
them under control_plane/data/ (setup.py puts them there) and finds them
with importlib.resources, so the commands work from any folder."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # the checkout (or, installed, site-packages)
CHECKOUT = (REPO / "bmv2_configs" / "build").is_dir()
DATA = REPO if CHECKOUT else Path(str(resources.files("control_plane") / "data"))
BUILD_DIR = DATA / "bmv2_configs" / "build"
TOFINO_DIR = DATA / "tofino_configs"
TOPOLOGIES = DATA / "bmv2_configs" / "topologies"
SCENARIOS = DATA / "scenarios"
RESULTS = REPO / "results" if CHECKOUT else Path("results")  # installed: under the current folder
RUN_CACHE = RESULTS / "cache"  # finished runs (fabric_sim/runner/run_cache.py); never an output (outputs.py)


def artifacts(program: str, out_dir: Path = BUILD_DIR) -> tuple[Path, Path]:
    """(P4Info text, BMv2 JSON) of a program ("switch", "nic", "l2fwd")."""
    return out_dir / f"{program}.p4info.txtpb", out_dir / f"{program}.json"
