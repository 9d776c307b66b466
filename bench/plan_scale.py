"""Planner scale: every switch of the full topology (6,144 switches,
131,072 NICs), and one device's state on demand. Peak RSS is measured in a
fresh process so earlier benchmarks do not count."""

from __future__ import annotations

import json
import subprocess
import sys

from testbed import toolchain

FULL = toolchain.REPO / "bmv2_configs" / "topologies" / "full.yaml"

_CHILD = r"""
import json, resource, sys, time
from control_plane import switch_plan as S, topology
topo = topology.load(sys.argv[1])
t0 = time.perf_counter()
planner = S.Planner(topo)
entries = largest = 0
for name in S.switch_names(topo):
    st = planner.switch_state(name)
    entries += len(st.entries())
    largest = max(largest, len(st.routes))
all_s = time.perf_counter() - t0
one = []
for name in ("t0-p7-r511", "t1-p3-s200", "t0-p0-r0"):
    t1 = time.perf_counter()
    S.switch_state(topo, name)
    one.append(time.perf_counter() - t1)
print(json.dumps({"switches": len(S.switch_names(topo)), "entries": entries, "largest": largest,
                  "all_s": all_s, "one_ms": max(one) * 1000,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run() -> list[str]:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(FULL)], capture_output=True, text=True, check=True,
                          cwd=toolchain.REPO)
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    return [
        "## Planner, full topology (8 planes, 512 rows, 256 spines, 256 hosts per T0)",
        f"- planned {r['switches']:,} switches, {r['entries']:,} entries in {r['all_s']:.2f} s (target 5 s)",
        f"- peak RSS {r['rss_mib']:.0f} MiB (target 1 GiB)",
        f"- one device on demand, cold: {r['one_ms']:.2f} ms worst of 3 (target 10 ms)",
        f"- largest /48 table: {r['largest']} entries (T0 radix 512)",
    ]
