"""A sweep's results: each variant in a subfolder of its own (what mrc-sim
writes for one scenario: results.json, messages.csv, timeline.csv,
figures), and a summary across variants (summary.csv, and the terminal
table) with one row per variant and transport."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path
from typing import Any

from control_plane import outputs
from fabric_sim import report
from fabric_sim.report import saved
from fabric_sim.runner.parallel import Task, label
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import Scenario

COLUMNS = ("delivered", "messages", "fct_p50_us", "fct_p99_us", "fct_max_us", "goodput_gbps", "after_fault_gbps",
           "retx_sack", "retx_nack", "retx_timeout", "drops", "errors")


def folder(i: int, n: int, values: dict[str, Any]) -> str:
    """`03_message_bytes=65536_rate=0.01`: numbered in sweep order (two
    keys may share a last part), file-name safe, short."""
    text = "_".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in values.items())
    return f"{i + 1:0{len(str(n))}d}" + ("_" + re.sub(r"[^A-Za-z0-9._=+-]", "-", text)[:80] if text else "")


def tasks(variants: list[tuple[dict[str, Any], Scenario]], names: list[str] = ()) -> list[Task]:  # type: ignore[assignment]
    """A run per variant and transport (only the transports `names`, if
    any), labelled for the progress display."""
    n = len(variants)
    return [Task((f"[{i + 1}/{n}] {label(vals)} " if vals else "") + t.name, v, t)
            for i, (vals, v) in enumerate(variants) for t in v.transports if not names or t.name in names]


def group(variants: list[tuple[dict[str, Any], Scenario]], done: list[tuple[Task, RunResult]]
          ) -> list[tuple[dict[str, Any], list[RunResult]]]:
    """The results of tasks() back by variant, in sweep order."""
    by_variant: dict[int, list[RunResult]] = {}
    for t, r in done:
        by_variant.setdefault(id(t.scenario), []).append(r)
    return [(vals, by_variant[id(v)]) for vals, v in variants if id(v) in by_variant]


def row(r: RunResult) -> dict[str, Any]:
    s = report.summary(r)
    return {"delivered": s["delivered"], "messages": s["messages"], "fct_p50_us": s["fct_us"]["p50"],
            "fct_p99_us": s["fct_us"]["p99"], "fct_max_us": s["fct_us"]["max"], "goodput_gbps": s["goodput_gbps"],
            "after_fault_gbps": s["phases"].get("after_gbps", ""), "retx_sack": s["retransmissions"]["sack"],
            "retx_nack": s["retransmissions"]["nack"], "retx_timeout": s["retransmissions"]["timeout"],
            "drops": sum(s["drops"].values()), "errors": len(s["errors"])}


def write(variants: list[tuple[dict[str, Any], list[RunResult]]], out: Path, figures: bool = True) -> Path:
    """Every variant's folder under `out`, and out/summary.csv; returns the
    summary's path. Each file is written whole (saved.py)."""
    keys = list(variants[0][0]) if variants else []
    rows = []
    for i, (values, results) in enumerate(variants):
        name = folder(i, len(variants), values)
        saved.save(out / name, results[0].scenario, results, figures=figures)
        rows += [[name, *(values[k] for k in keys), r.transport.name, *row(r).values()] for r in results]
    out.mkdir(parents=True, exist_ok=True)
    with outputs.replacing(out / "summary.csv") as tmp, open(tmp, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["variant", *keys, "transport", *COLUMNS])
        w.writerows(rows)
    return out / "summary.csv"


# What runs write into a results folder: anything else in one is the user's, never removed.
RUN_FILES = frozenset({"results.json", "messages.csv", "timeline.csv", "summary.csv"})
_VARIANT = re.compile(r"\d+(_.*)?")


def _ours(p: Path, top: bool = True) -> bool:
    """Whether `p` is what a run writes: a result file, a figure, a
    temporary file, or (at the top) a variant folder holding only those."""
    if p.is_dir() and not p.is_symlink():
        return top and bool(_VARIANT.fullmatch(p.name)) and all(_ours(c, False) for c in p.iterdir())
    return p.name in RUN_FILES or p.suffix == ".png" or (p.name.startswith(".") and ".tmp" in p.name)


def leftovers(out: Path, names: set[str]) -> list[str]:
    """What `out` holds that a sweep writing variant folders `names` (and
    summary.csv) would leave beside its own results: an earlier run's."""
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir() if p.name not in names | {"summary.csv"})


def clear(out: Path) -> str | None:
    """Remove from `out` what runs wrote there; why not, naming what no
    run writes, if anything else is in it (nothing is removed then)."""
    if not out.is_dir():
        return None
    foreign = sorted(p.name for p in out.iterdir() if not _ours(p))
    if foreign:
        return f"{out} holds files no run writes ({', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''})"
    for p in out.iterdir():
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()
    return None


def _num(x: Any, fmt: str) -> str:
    return format(x, fmt) if isinstance(x, (int, float)) and x == x else "-"  # x != x: nan, nothing measured


def _gbps(x: Any) -> str:
    return _num(x, ".0f") + (" Gb/s" if _num(x, ".0f") != "-" else "")


def table(variants: list[tuple[dict[str, Any], list[RunResult]]]) -> str:
    """One line per variant and transport: the sweep's values and the
    numbers a reader compares first."""
    lines = [f"{'variant':40} {'transport':12} {'delivered':>10} {'FCT p50':>9} {'p99':>9} {'goodput':>9} "
             f"{'after fault':>11} {'retx':>7} {'drops':>7}"]
    lines.append("-" * len(lines[0]))
    for values, results in variants:
        name = label(values)[:40]
        for r in results:
            x = row(r)
            lines.append(f"{name:40} {r.transport.name:12} {x['delivered']:>4}/{x['messages']:<5} "
                         f"{_num(x['fct_p50_us'], '7.1f')}us {_num(x['fct_p99_us'], '7.1f')}us "
                         f"{_num(x['goodput_gbps'], '5.0f')}Gb/s {_gbps(x['after_fault_gbps']):>11} "
                         f"{x['retx_sack'] + x['retx_nack'] + x['retx_timeout']:>7} {x['drops']:>7}")
    return "\n".join(lines)
