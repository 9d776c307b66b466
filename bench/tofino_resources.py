"""Tofino 1 resources of the switch (switch_tna.p4) from bf-p4c's own
reports, at the full-radix T0 sizes (512 /48 routes, 512 port neighbours,
64 DSCP classes), at the committed sizes, and with a larger route table to
show what grows. Skipped, with the reason, where bf-p4c is absent."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from testbed import tofino

# (label, size.p4 overrides)
VARIANTS = [
    ("full-radix T0: 512 routes", {"ROUTE_TABLE_SIZE": 512}),
    ("committed size.p4: 1,024 routes", {}),
    ("16,384 routes", {"ROUTE_TABLE_SIZE": 16384}),
]


def run() -> list[str]:
    head = ["## Tofino 1 resources of the switch (switch_tna.p4, bf-p4c)"]
    if tofino.bf_p4c() is None:
        return head + ["- skipped: bf-p4c not found (PATH or $BF_P4C); p4c's Tofino back end is not installed"]
    lines = head + [
        "",
        "| sizes | MAU stages (of 12) | ingress / egress | SRAM blocks | TCAM blocks | PHV containers | PHV bits "
        "| compile |",
        "|---|---|---|---|---|---|---|---|",
    ]
    worst = 0
    for label, defines in VARIANTS:
        with tempfile.TemporaryDirectory(prefix="mrc-tna-bench-") as tmp:
            t0 = time.perf_counter()
            tofino.compile_tna(Path(tmp), defines)
            secs = time.perf_counter() - t0
            s = tofino.summarize(Path(tmp))
        worst = max(worst, s["stages_used"])
        lines.append(
            f"| {label} | {s['stages_used']} | {s['ingress_stages']} / {s['egress_stages']} | "
            f"{s['sram_blocks']} / {s['sram_blocks_total']} | {s['tcam_blocks']} / {s['tcam_blocks_total']} | "
            f"{s['phv_containers']} / {s['phv_containers_total']} | "
            f"{100 * s['phv_bits'] / s['phv_bits_total']:.1f}% | {secs:.1f} s |")
    verdict = "within" if worst <= tofino.STAGE_BUDGET else "OVER"
    lines += ["", f"- stage target: at most {tofino.STAGE_BUDGET} of 12; worst {worst}: {verdict} the target "
              f"({s['compiler']}, 64 DSCP classes and 512 port neighbours in every row)"]
    return lines
