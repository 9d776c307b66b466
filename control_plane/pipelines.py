"""The compiled P4 programs the controller pushes: P4Info and BMv2 JSON,
committed under bmv2_configs/build/ (compiled by `make build`)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD_DIR = REPO / "bmv2_configs" / "build"


def artifacts(program: str, out_dir: Path = BUILD_DIR) -> tuple[Path, Path]:
    """(P4Info text, BMv2 JSON) of a program ("switch", "nic", "l2fwd")."""
    return out_dir / f"{program}.p4info.txtpb", out_dir / f"{program}.json"
