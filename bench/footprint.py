"""The memory a run's set-up takes per NIC, switch, cable and QP (the
constants of fabric_sim/runner/footprint.py): peak of the Python heap (tracemalloc) in a run that only sets
up (a permutation, 1 µs simulated) at shapes that vary one count at a
time, at two sizes, fitted by least squares and checked against a larger
fabric than any it was fitted on.

    python -m bench.footprint
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from bench import sections
from fabric_sim import scenario
from fabric_sim.runner import footprint

CHILD = """
import json, sys, tracemalloc
from fabric_sim import scenario
from fabric_sim.runner.run import run
planes, t0, t1, hosts, qpp = map(int, sys.argv[1:6])
sc = scenario.parse({"name": "fp", "topology": {"planes": planes, "t0_per_plane": t0, "t1_per_plane": t1,
                     "hosts_per_t0": hosts}, "workload": {"pattern": "permutation", "message_bytes": 4096,
                     "qps_per_pair": qpp}, "transports": [{"name": "mrc", "kind": "mrc", "evs_per_qp": 16}],
                     "duration_us": 1, "bins": 2})
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
rss0 = status("VmRSS:")
if "--rss" in sys.argv:
    run(sc, sc.transports[0])
    peak = 0
else:
    tracemalloc.start()
    run(sc, sc.transports[0])
    peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"bytes": peak, "rss": status("VmHWM:") - rss0, "nics": sc.topology.nics,
                  "switches": sc.topology.switches, "qps": sc.topology.nics * qpp}))
"""

# (planes, T0 per plane, T1 per plane, hosts per T0, QPs per pair): each
# count varied alone, each shape at two sizes.
FIT = [(2, 8, 8, 8, 1), (2, 8, 8, 32, 1), (2, 8, 32, 8, 1), (2, 32, 8, 8, 1), (2, 8, 8, 8, 16),
       (4, 8, 8, 16, 1), (4, 8, 8, 64, 1), (4, 8, 64, 16, 1), (4, 32, 8, 16, 1), (4, 8, 8, 16, 16)]
CHECK = (8, 32, 16, 16, 2)  # 512 NICs x 8 planes: larger than any shape fitted


def measure(shape: tuple[int, ...], *flags: str) -> dict[str, int]:
    out = subprocess.run([sys.executable, "-c", CHILD, *map(str, shape), *flags], capture_output=True, text=True,
                         check=True)
    m = json.loads(out.stdout)
    if not isinstance(m, dict):
        raise RuntimeError(f"the footprint child printed {out.stdout!r}, not a JSON object")
    planes, t0, t1, _, _ = shape
    m["cables"] = planes * (t0 * t1 + m["nics"])
    return m


def run() -> list[str]:
    rows = [measure(s) for s in FIT]
    a = np.array([[1, r["nics"], r["switches"], r["cables"], r["qps"]] for r in rows], dtype=float)
    b = np.array([r["bytes"] for r in rows], dtype=float)
    base, nic, sw, cable, qp = np.linalg.lstsq(a, b, rcond=None)[0]
    chk = measure(CHECK)
    rss = measure(CHECK, "--rss")["rss"]  # without tracemalloc's own overhead
    topo = scenario.parse(
        {
            "name": "fp",
            "topology": dict(zip(("planes", "t0_per_plane", "t1_per_plane", "hosts_per_t0"), CHECK, strict=False)),
            "workload": {"pattern": "permutation", "message_bytes": 4096},
        }
    ).topology
    predicted = footprint.setup(topo, chk["qps"])
    return [
        "## Set-up memory per element (fabric_sim/runner/footprint.py)",
        "",
        f"least squares over {len(FIT)} shapes (peak Python heap of a set-up-only run): base {base / 2**20:.1f} MiB, "
        f"per NIC {nic:,.0f} B, per switch {sw:,.0f} B, per cable {cable:,.0f} B, per QP {qp:,.0f} B",
        f"- committed constants: per NIC {footprint.PER_NIC:,} B, per switch {footprint.PER_SWITCH:,} B, "
        f"per cable {footprint.PER_CABLE:,} B, per QP {footprint.PER_QP:,} B",
        f"- check at {CHECK} ({chk['nics']:,} NICs, {chk['switches']} switches, {chk['qps']:,} QPs): "
        f"Python heap {chk['bytes'] / 2**20:.0f} MiB, peak RSS growth {rss / 2**20:.0f} MiB "
        f"(RSS / heap {rss / chk['bytes']:.2f}; committed {footprint.RSS_PER_HEAP}); "
        f"estimated {predicted / 2**20:.0f} MiB of RSS ({predicted / rss - 1:+.0%})",
        "",
    ]


if __name__ == "__main__":
    lines = run()
    print("\n".join(lines))
    sections.replace(lines)
