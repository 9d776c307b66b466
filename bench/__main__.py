"""Run every benchmark and write the figures to bench/results/latest.md.

Figures are ratios against a baseline measured in the same run where there
is one: batched vs one update per Write for the P4Runtime install; the
switch program vs a bare L2 program for BMv2 packet rate, the NIC's PNA
program vs a bare L2 PNA program on DPDK's SWX pipeline. The timed fabric
is measured against its targets (1,024 NICs in 60 s, 2 GiB), the
Tofino switch against its stage budget (6 of 12). The mutation run
(bench/mutation.py) is bounded (40 mutants, 10 minutes) and resumable: each
`make bench` tries mutants the runs before it did not.
"""

from __future__ import annotations

import datetime
import logging
import platform
import sys

from bench import (
    bmv2_rate,
    footprint,
    fuzz_models,
    install_rate,
    mutation,
    nic_cost,
    plan_scale,
    sim_scale,
    swx_rate,
    tofino_resources,
)
from testbed import toolchain

RESULTS = toolchain.REPO / "bench" / "results" / "latest.md"


def main() -> int:
    logging.getLogger("finsy").setLevel(logging.ERROR)  # BMv2 has no gNMI
    lines = [
        f"# Benchmarks, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"machine: {platform.machine()}, Python {platform.python_version()}, "
        f"simple_switch_grpc: {toolchain.simple_switch_grpc() or 'absent'}",
        "",
    ]
    for bench in (sim_scale, footprint, plan_scale, install_rate, bmv2_rate, swx_rate, tofino_resources, fuzz_models,
                  nic_cost, mutation):
        print(f"running {bench.__name__} ...", flush=True)
        section = bench.run()
        print("\n".join(section), flush=True)
        lines += section + [""]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print(f"figures written to {RESULTS.relative_to(toolchain.REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
