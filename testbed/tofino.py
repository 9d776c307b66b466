"""The switch on Tofino 1 (p4src/switch/switch_tna.p4), compiled with p4c's
Tofino back end (bf-p4c; $BF_P4C or PATH), and the resource summary read
from the compiler's own reports (pipe/logs/metrics.json, resources.json and
table_summary.log).

Committed under tofino_configs/: the P4Info and the summary, never the
binary. `make build` recompiles them where bf-p4c is present.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from testbed.toolchain import REPO, tool

PROGRAM = "p4src/switch/switch_tna.p4"
OUT_DIR = REPO / "tofino_configs"
STAGE_BUDGET = 6  # of Tofino 1's 12 MAU stages: the rest is the vendor's


def bf_p4c() -> str | None:
    return tool("BF_P4C", "bf-p4c")


def p4info_path(out_dir: Path = OUT_DIR) -> Path:
    return out_dir / "switch_tna.p4info.txtpb"


def summary_path(out_dir: Path = OUT_DIR) -> Path:
    return out_dir / "switch_tna.resources.json"


def compile_tna(build_dir: Path, defines: dict[str, int] | None = None) -> Path:
    """Compile the TNA switch into `build_dir`; return the P4Info path.
    `defines` override size.p4 (e.g. {"ROUTE_TABLE_SIZE": 512})."""
    compiler = bf_p4c()
    if compiler is None:
        raise FileNotFoundError("bf-p4c not found (PATH or $BF_P4C): p4c's Tofino back end is not installed")
    build_dir.mkdir(parents=True, exist_ok=True)
    p4info = build_dir / "switch_tna.p4info.txtpb"
    cmd = [compiler, "--target", "tofino", "--arch", "tna", "-g", "-o", str(build_dir),
           "--p4runtime-files", str(p4info), "--p4runtime-force-std-externs",
           *(f"-D{k}={v}" for k, v in (defines or {}).items()), PROGRAM]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0 or not (build_dir / "pipe" / "logs" / "metrics.json").exists():
        errors = [ln for ln in proc.stderr.splitlines() if "error" in ln.lower()] or proc.stderr.splitlines()[-5:]
        raise RuntimeError(f"bf-p4c failed for {PROGRAM}:\n" + "\n".join(errors))
    return p4info


def summarize(build_dir: Path) -> dict[str, Any]:
    """Stages, memories and PHV of a compiled program, from bf-p4c's logs."""
    logs = build_dir / "pipe" / "logs"
    metrics = json.loads((logs / "metrics.json").read_text())
    res = json.loads((logs / "resources.json").read_text())["resources"]
    table_summary = (logs / "table_summary.log").read_text()

    def stages(gress: str) -> int:
        m = re.search(rf"Number of stages for {gress} table allocation: (\d+)", table_summary)
        if m is None:
            raise ValueError(f"table_summary.log: no stage count for {gress}")
        return int(m.group(1))

    per_stage = res["mau"]["mau_stages"][0]
    n_stages = res["mau"]["nStages"]
    sram_per_stage = per_stage["rams"]["nRows"] * per_stage["rams"]["nColumns"]
    tcam_per_stage = per_stage["tcams"]["nRows"] * per_stage["tcams"]["nColumns"]
    phv_bits = sum(c["units"] * c["width"] for c in res["phv_containers"]["normal"])
    phv_used = sum(c["bits_occupied"] for c in metrics["phv"]["normal"])
    phv_containers = sum(c["units"] for c in res["phv_containers"]["normal"])
    phv_occupied = sum(c["containers_occupied"] for c in metrics["phv"]["normal"])
    mau = metrics["mau"]
    return {
        "compiler": f"bf-p4c {metrics['compiler_version']}",
        "target": metrics["target"],
        "stages_used": len(res["mau"]["mau_stages"]),
        "stages_total": n_stages,
        "ingress_stages": stages("ingress"),
        "egress_stages": stages("egress"),
        "sram_blocks": mau["srams"],
        "sram_blocks_total": sram_per_stage * n_stages,
        "tcam_blocks": mau["tcams"],
        "tcam_blocks_total": tcam_per_stage * n_stages,
        "map_rams": mau["map_rams"],
        "logical_tables": mau["logical_tables"],
        "phv_containers": phv_occupied,
        "phv_containers_total": phv_containers,
        "phv_bits": phv_used,
        "phv_bits_total": phv_bits,
        "latency_cycles": {x["gress"]: x["cycles"] for x in mau["latency"]},
    }


def build(out_dir: Path = OUT_DIR) -> dict[str, Any]:
    """Compile, then write the P4Info and the summary into `out_dir`."""
    with tempfile.TemporaryDirectory(prefix="mrc-tna-") as tmp:
        p4info = compile_tna(Path(tmp))
        summary = summarize(Path(tmp))
        out_dir.mkdir(parents=True, exist_ok=True)
        p4info_path(out_dir).write_text(p4info.read_text())
    summary_path(out_dir).write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary


def describe(s: dict[str, Any]) -> str:
    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.1f}%"

    return (f"{s['stages_used']} of {s['stages_total']} MAU stages (ingress {s['ingress_stages']}, "
            f"egress {s['egress_stages']}); SRAM {s['sram_blocks']}/{s['sram_blocks_total']} blocks "
            f"({pct(s['sram_blocks'], s['sram_blocks_total'])}), TCAM {s['tcam_blocks']}/{s['tcam_blocks_total']}; "
            f"PHV {s['phv_containers']}/{s['phv_containers_total']} containers, "
            f"{pct(s['phv_bits'], s['phv_bits_total'])} of bits")
