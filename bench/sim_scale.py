"""Timed-fabric speed (issue 10, item 7): packet-hops per second on the
flagship scenario, then the 1,024-NIC permutation (scenarios/bench_1024.yaml,
about half a million data packets) in a child process for its wall time
and peak RSS, and what dominates the profile (cProfile, own time)."""

from __future__ import annotations

import cProfile
import json
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from control_plane.pipelines import REPO
from fabric_sim import scenario
from fabric_sim.run import run as simulate

BIG = REPO / "scenarios" / "bench_1024.yaml"
FLAGSHIP = REPO / "scenarios" / "flagship.yaml"
TARGET_S, TARGET_GIB = 60.0, 2.0


def _profile() -> list[str]:
    sc = scenario.load(FLAGSHIP)
    prof = cProfile.Profile()
    prof.enable()
    r = simulate(sc, sc.transports[0])
    prof.disable()
    st = pstats.Stats(prof)
    total = sum(v[2] for v in st.stats.values())  # own time
    rows = sorted(st.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:10]
    out = [f"Profile of the flagship's MRC run ({r.packet_hops:,} packet-hops; own time, cProfile):", "",
           "| function | share of time | calls |", "|---|---|---|"]
    for (path, line, fn), v in rows:
        where = Path(path).name if path != "~" else "builtin"
        out.append(f"| `{where}:{fn}` | {100 * v[2] / total:.1f}% | {v[1]:,} |")
    return out


def run() -> list[str]:
    sc = scenario.load(FLAGSHIP)
    r = simulate(sc, sc.transports[0])
    lines = ["## Timed fabric (fabric_sim)", "",
             f"Flagship ({sc.topology.nics} NICs, MRC): {r.packet_hops:,} packet-hops, {r.sim_events:,} events in "
             f"{r.wall_s:.1f} s: **{r.packet_hops / r.wall_s:,.0f} packet-hops/s** "
             f"({1e6 * r.wall_s / r.packet_hops:.1f} µs per hop, endpoints and NICs included)", ""]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "fabric_sim", str(BIG), "--quiet", "--no-plots", "--out", tmp],
                              capture_output=True, text=True)
        wall = time.monotonic() - t0
        rss_gib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
        if proc.returncode != 0:
            return lines + [f"1,024-NIC run failed: {proc.stderr[-800:]}"]
        doc = json.loads((Path(tmp) / "results.json").read_text())
    [big] = doc["runs"]
    sim = big["sim"]
    ok = "within" if wall <= TARGET_S and rss_gib <= TARGET_GIB else "OVER"
    lines += [f"1,024 NICs (8 planes x 32 rows x 32 hosts, 16 spines per plane; 384 switches), permutation of "
              f"2 MiB messages in 4 KiB packets: {big['delivered']}/{big['messages']} delivered, "
              f"{sim['packet_hops']:,} packet-hops, {sim['events']:,} events",
              "",
              f"**wall {wall:.1f} s (simulation {sim['wall_s']:.1f} s, the rest building the fabric and reporting), "
              f"peak RSS {rss_gib:.2f} GiB** on one core: {ok} the target of {TARGET_S:g} s and {TARGET_GIB:g} GiB; "
              f"{sim['hops_per_s']:,.0f} packet-hops/s; slowest message {big['fct_us']['max']:.1f} µs "
              f"(ideal {next(iter(big['ideal_fct_us'].values())):.1f} µs)", ""]
    return lines + _profile() + [""]


if __name__ == "__main__":
    print("\n".join(run()))
