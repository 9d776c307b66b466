"""Timed-fabric speed and scale: packet-hops per CPU-second on
the flagship, then a permutation of 2 MiB messages on fabrics of 64 to
8,192 NICs, each in a child process for its wall time, CPU time and peak
RSS (fabric_sim.runner.timing), and what dominates the flagship's profile.

Two builds of the one source are measured side by side: interpreted (this
environment) and compiled with mypyc (`make fast`, which `make bench`
builds first where a C compiler is found). Where both run a size, their
outcomes must be identical (digest of every message's completion time) and
the ratio of their CPU seconds is given. `BENCH_MAX_NICS` bounds the table
(default 16384), `BENCH_INTERPRETED_MAX_NICS` the interpreted column
(default 1024); a size that would not finish within `BENCH_SIZE_TIMEOUT_S`
(default 1800) is reported as over. The targets of issue 38 are checked
beside their baselines (`targets`). Where `htsim_uec` is on PATH (or named
by HTSIM_UEC) it runs the same permutations (bench/htsim_peer.py) and the
ratio of CPU seconds is given; where not, one line says so.
`BENCH_BASELINE` names an earlier build's python (e.g. a copy of
.venv-fast made before a change, `/path/bin/python -P`): the flagship and
the 1,024-NIC permutation then run in it too, beside this build's."""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import htsim_peer, sections
from control_plane.pipelines import REPO
from fabric_sim import scenario
from fabric_sim.runner import timing
from fabric_sim.runner.run import run as simulate

FLAGSHIP = REPO / "scenarios" / "flagship.yaml"
TARGET_1024_S = 20.0  # the target without htsim beside it, 1,024 NICs in at most 20 s on an idle core
PEER_TARGET = 3.0  # the target with htsim beside it, 1,024 NICs in at most 3x its CPU seconds
# Issue 38's other targets, against the figures the bench gave before it (bench/results/latest.md, 2026-11-23):
FLAGSHIP_BEFORE = 242_737  # packet-hops per CPU-second, compiled; the target is twice it
HOP_GROWTH = 1.30  # µs per hop may grow at most this much from 64 to 8,192 NICs (it was 4.0 -> 11.8)
TARGET_8192_S, TARGET_8192_GIB = 200.0, 3.0  # 8,192 NICs (it was 405.7 s, 3.93 GiB)
INTERPRETED = [sys.executable]


def _child(build: list[str], args: list[str], timeout: float) -> dict[str, Any] | None:
    """fabric_sim.runner.timing in a child process of `build`, from a folder with no
    source in it (a -P build then imports only what it installed)."""
    with tempfile.TemporaryDirectory() as cwd:
        try:
            proc = subprocess.run([*build, "-m", "fabric_sim.runner.timing", *args], capture_output=True, text=True,
                                  timeout=timeout, cwd=cwd if "-P" in build else REPO)
        except subprocess.TimeoutExpired:
            return None
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {proc.stderr[-800:]}")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    if not isinstance(figures, dict):
        raise RuntimeError(f"{' '.join(args)} printed {figures!r}, not a JSON object")
    return figures


def _same(a: dict[str, Any] | None, b: dict[str, Any] | None) -> str:
    if a is None or b is None:
        return ""
    return "same" if (a["digest"], a["hops"]) == (b["digest"], b["hops"]) else "**DIFFERENT**"


def scale_table(fast: list[str] | None) -> tuple[list[str], dict[int, dict[str, Any]], dict[int, dict[str, float]]]:
    """The table's lines, this build's figures by NICs, htsim's by NICs."""
    limit = int(os.environ.get("BENCH_MAX_NICS", "16384"))
    interp_limit = int(os.environ.get("BENCH_INTERPRETED_MAX_NICS", "1024"))
    timeout = float(os.environ.get("BENCH_SIZE_TIMEOUT_S", "1800"))
    build = fast or INTERPRETED
    lines = [
        "| NICs | switches | wall s | CPU s | peak RSS GiB | packet-hops | hops per CPU-s | µs per hop | delivered "
        "| interpreted CPU s | speed-up | outcome |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    figures: dict[int, dict[str, Any]] = {}
    for nics in (n for n in timing.SIZES if n <= limit):
        print(f"  scale: {nics} NICs ...", flush=True)
        f = _child(build, ["--nics", str(nics)], timeout)
        rows, _, spines = timing.SIZES[nics]
        switches = 8 * (rows + spines)
        if f is None:
            lines.append(f"| {nics:,} | {switches:,} | over {timeout:.0f} s | | | | | | | | | |")
            break
        figures[nics] = f
        slow = _child(INTERPRETED, ["--nics", str(nics)], timeout) if fast and nics <= interp_limit else None
        beside = f"{slow['cpu_s']:.1f} | {slow['cpu_s'] / f['cpu_s']:.2f}x" if slow else " | "
        lines.append(f"| {nics:,} | {switches:,} | {f['wall_s']:.1f} | {f['cpu_s']:.1f} | {f['rss_gib']:.2f} | "
                     f"{f['hops']:,} | {f['hops'] / f['cpu_s']:,.0f} | {1e6 * f['cpu_s'] / f['hops']:.1f} | "
                     f"{f['delivered']}/{f['messages']} | {beside} | {_same(f, slow)} |")
    skipped = [n for n in timing.SIZES if n > limit]
    if skipped:
        lines.append(f"\nNot run (BENCH_MAX_NICS={limit}): {', '.join(f'{n:,}' for n in skipped)} NICs.")
    binary, why = htsim_peer.find()
    peer_lines, peers = htsim_peer.beside(binary, figures, timeout) if binary else ([], {})
    if binary and 1024 not in peers:
        why = f"{binary} gave no 1,024-NIC figure (over {timeout:.0f} s, or BENCH_HTSIM_MAX_NICS): no ratio"
    if 1024 in figures:
        lines.append(verdict_1024(figures[1024], peers.get(1024), why, fast is not None))
    elif binary is None:
        lines.append(f"\n{why}")
    return lines + peer_lines, figures, peers


def verdict_1024(f: dict[str, Any], peer: dict[str, float] | None, why: str, compiled: bool) -> str:
    """The 1,024-NIC figure against its target: at most PEER_TARGET x htsim beside it, else TARGET_1024_S."""
    head = f"\n1,024 NICs: **{f['cpu_s']:.1f} CPU-s** ({'compiled' if compiled else 'interpreted'}), "
    if peer is None or peer["cpu_s"] <= 0:
        verdict = "within" if f["cpu_s"] <= TARGET_1024_S else "OVER"
        return head + f"{verdict} the target of {TARGET_1024_S:g} s on an idle core; {why}"
    ratio = f["cpu_s"] / peer["cpu_s"]
    verdict = "within" if ratio <= PEER_TARGET else "OVER"
    incomplete = "" if peer["flows_done"] == peer["flows"] else " (htsim did not finish every flow)"
    return head + (f"{ratio:.1f}x htsim_uec's {peer['cpu_s']:.1f} CPU-s on the same permutation{incomplete}: "
                   f"{verdict} the target of at most {PEER_TARGET:g}x")


def beside_baseline(figures: dict[str, dict[str, Any] | None]) -> list[str]:
    """The same runs in the build BENCH_BASELINE names, and this build's CPU
    seconds over its (an outcome may differ where behaviour changed)."""
    cmd = os.environ.get("BENCH_BASELINE")
    if not cmd:
        return ["No earlier build beside (BENCH_BASELINE names one's python)."]
    base = shlex.split(cmd)
    lines = [f"Beside an earlier build (`{cmd}`), one run each:", "",
             "| run | CPU s | earlier CPU s | ratio | packet-hops | earlier packet-hops |", "|---|---|---|---|---|---|"]
    for name, args in (("flagship", ["--scenario", str(FLAGSHIP)]), ("1,024 NICs", ["--nics", "1024"])):
        f, b = figures.get(name), _child(base, args, 900)
        if f is None or b is None:
            lines.append(f"| {name} | | | not run | | |")
            continue
        lines.append(f"| {name} | {f['cpu_s']:.1f} | {b['cpu_s']:.1f} | {f['cpu_s'] / b['cpu_s']:.2f}x | "
                     f"{f['hops']:,} | {b['hops']:,} |")
    return lines


# What each part of the project is, by the top package of a function's file.
PARTS = {"switch_model": "reference models", "nic_model": "reference models", "mrc_host": "reference models",
         "mrc_wire": "reference models", "fabric_sim": "timed fabric", "sim_core": "timed fabric"}


def _part(path: str) -> str:
    for name in reversed(Path(path).parts[:-1]):
        if name in PARTS:
            return PARTS[name]
    return "other (Python's library, the run's set-up)"


def by_part(stats: dict[Any, Any]) -> dict[str, float]:
    """Own time (s) per part (PARTS), a builtin's (dict.get, len, heappush)
    charged to the part that called it, from cProfile's per-caller times."""
    out: dict[str, float] = {}
    for (path, _line, _fn), (_cc, _nc, tt, _ct, callers) in stats.items():
        if path != "~":
            out[_part(path)] = out.get(_part(path), 0.0) + tt
            continue
        for (cpath, _cl, _cf), c in callers.items():
            part = _part(cpath) if cpath != "~" else "other (Python's library, the run's set-up)"
            out[part] = out.get(part, 0.0) + c[2]
    return out


def models_bound(share: float, f: dict[str, Any] | None, peer: dict[str, float] | None) -> str:
    """What the reference models' share alone costs at 1,024 NICs, against htsim."""
    if f is None:
        return ""
    line = (f"\nAt that share, the reference models alone would take about {share * f['cpu_s']:.1f} of the compiled "
            f"1,024-NIC run's {f['cpu_s']:.1f} CPU-s")
    if peer is None or peer["cpu_s"] <= 0:
        return line + " (no htsim beside it)."
    return line + (f": {share * f['cpu_s'] / peer['cpu_s']:.1f}x htsim_uec's {peer['cpu_s']:.1f} s, with the "
                   f"timed fabric at no cost (the target is {PEER_TARGET:g}x; the models stay one Python source).")


def _profile() -> tuple[list[str], float]:
    sc = scenario.load(FLAGSHIP)
    prof = cProfile.Profile()
    prof.enable()
    r = simulate(sc, sc.transports[0])
    prof.disable()
    table: dict[Any, Any] = vars(pstats.Stats(prof))["stats"]  # pstats' raw table, which typeshed does not declare
    total = sum(v[2] for v in table.values())  # own time
    rows = sorted(table.items(), key=lambda kv: kv[1][2], reverse=True)[:10]
    out = [f"Profile of the flagship's MRC run, interpreted ({r.packet_hops:,} packet-hops; own time, cProfile):", "",
           "| function | share of time | calls |", "|---|---|---|"]
    for (path, _line, fn), v in rows:
        where = Path(path).name if path != "~" else "builtin"
        out.append(f"| `{where}:{fn}` | {100 * v[2] / total:.1f}% | {v[1]:,} |")
    parts = by_part(table)
    out += ["", "The same profile by part (own time, each builtin charged to the part that called it):", "",
            "| part | share of time |", "|---|---|"]
    out += [f"| {name} | {100 * t / total:.1f}% |" for name, t in sorted(parts.items(), key=lambda kv: -kv[1])]
    return out, parts.get("reference models", 0.0) / total


def run() -> list[str]:
    fast, why = timing.compiled_build(REPO)
    load = os.getloadavg()[0]
    lines = ["## Timed fabric (fabric_sim)", "",
             f"Builds: interpreted ({Path(sys.executable).parent.parent.name}) and "
             + (f"compiled with mypyc ({Path(fast[0]).parent.parent.name}, setup.py's COMPILED modules)" if fast
                else f"no compiled one: {why}") + f"; load average {load:.2f} when this section started "
             "(on an idle machine it is about 0).", ""]
    slow = _child(INTERPRETED, ["--scenario", str(FLAGSHIP)], 900)
    quick = _child(fast, ["--scenario", str(FLAGSHIP)], 900) if fast else None
    assert slow is not None
    for name, f in (("interpreted", slow), ("compiled", quick)):
        if f is not None:
            lines.append(f"Flagship ({name}, 64 NICs, MRC, spine failure): {f['hops']:,} packet-hops, "
                         f"{f['events']:,} events in {f['cpu_s']:.1f} CPU-s: **{f['hops'] / f['cpu_s']:,.0f} "
                         f"packet-hops per CPU-second** ({1e6 * f['cpu_s'] / f['hops']:.1f} µs per hop, endpoints "
                         "and NICs included)")
    if quick:
        lines.append(f"\nCompiled against interpreted on the flagship: {slow['cpu_s'] / quick['cpu_s']:.2f}x the "
                     f"packet-hops per CPU-second; outcome {_same(slow, quick)}.")
    lines += ["", "Scale: a permutation of 2 MiB messages in 4 KiB packets, 8 planes of 100 Gb/s, each size in its "
              f"own process, {'compiled' if fast else 'interpreted'} (beside it, the interpreted CPU seconds):", ""]
    table, sizes, peers = scale_table(fast)
    mine = {"flagship": quick or slow, "1,024 NICs": sizes.get(1024)}
    prof, share = _profile()
    return (lines + table + [""] + targets(quick or slow, sizes, peers.get(1024)) + [""] + beside_baseline(mine)
            + [""] + prof + [models_bound(share, sizes.get(1024), peers.get(1024)), ""])


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def targets(flagship: dict[str, Any], sizes: dict[int, dict[str, Any]], peer: dict[str, float] | None) -> list[str]:
    """Issue 38's targets, each beside its baseline: htsim run beside (1,024
    NICs), or the figure the bench gave before the issue."""
    out = ["Targets (issue 38), each beside its baseline:", "", "| target | baseline | now | |", "|---|---|---|---|"]
    f1024 = sizes.get(1024)
    if f1024 is not None and peer is not None and peer["cpu_s"] > 0:
        r = f1024["cpu_s"] / peer["cpu_s"]
        out.append(f"| 1,024 NICs: at most {PEER_TARGET:g}x htsim_uec's CPU s, same run | htsim_uec "
                   f"{peer['cpu_s']:.1f} CPU-s | {f1024['cpu_s']:.1f} CPU-s, {r:.2f}x | {_mark(r <= PEER_TARGET)} |")
    else:
        out.append("| 1,024 NICs: at most 3x htsim_uec | no htsim_uec figure in this run | | not held |")
    rate = flagship["hops"] / flagship["cpu_s"]
    out.append(f"| flagship: at least 2x the packet-hops per CPU-s | {FLAGSHIP_BEFORE:,} | {rate:,.0f} "
               f"({rate / FLAGSHIP_BEFORE:.2f}x) | {_mark(rate >= 2 * FLAGSHIP_BEFORE)} |")
    small, big = sizes.get(64), sizes.get(8192)
    if small is not None and big is not None:
        a, b = (1e6 * x["cpu_s"] / x["hops"] for x in (small, big))
        out.append(f"| µs per hop, 64 to 8,192 NICs: at most +{100 * (HOP_GROWTH - 1):.0f}% | 4.0 -> 11.8 (+195%) | "
                   f"{a:.1f} -> {b:.1f} ({100 * (b / a - 1):+.0f}%) | {_mark(b <= HOP_GROWTH * a)} |")
        out.append(f"| 8,192 NICs: at most {TARGET_8192_S:g} s and {TARGET_8192_GIB:g} GiB | 405.7 s, 3.93 GiB | "
                   f"{big['wall_s']:.1f} s, {big['rss_gib']:.2f} GiB | "
                   f"{_mark(big['wall_s'] <= TARGET_8192_S and big['rss_gib'] <= TARGET_8192_GIB)} |")
    f16k = sizes.get(16384)
    row = f"{f16k['wall_s']:.0f} s, {f16k['rss_gib']:.2f} GiB" if f16k else "not run"
    out.append(f"| a 16,384-NIC row | none | {row} | {_mark(f16k is not None)} |")
    return out


def main(argv: list[str] | None = None) -> None:
    sections.main("python -m bench.sim_scale", __doc__, run, argv)


if __name__ == "__main__":
    main()
