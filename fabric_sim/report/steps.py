"""A trace's run as training steps (fabric_sim/scenario/chakra/walker.py's
log): per iteration and rank the step time, the time computing, the time
communicating and the communication exposed, which nothing computes
beside (the rank waits on the network: the time the step would lose if
the network were free); per collective its size, algorithm and bus
bandwidth as nccl-tests reports them. A rank's iteration starts where
its previous one ended (the first at the workload's start)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import collectives
from fabric_sim.scenario.chakra.trace import Coll, Kind
from fabric_sim.scenario.chakra.walker import MeetingRun, Span, StepLog

COMPUTING = (Kind.COMPUTE, Kind.HOST)
COMMUNICATING = (Kind.COLL, Kind.SEND, Kind.RECV)


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _length(spans: list[tuple[float, float]]) -> float:
    return sum(b - a for a, b in spans)


def _minus(spans: list[tuple[float, float]], cut: list[tuple[float, float]]) -> float:
    """The time in `spans` outside `cut` (both unions: sorted, disjoint)."""
    return _length(spans) - sum(max(0.0, min(b, d) - max(a, c)) for a, b in spans for c, d in cut)


def per_rank(log: StepLog, start_us: float = 0.0) -> list[dict[str, Any]]:
    """One row per iteration and rank that finished it."""
    by: dict[tuple[int, int], list[Span]] = {}
    for s in log.spans:
        by.setdefault((s.iteration, s.rank), []).append(s)
    rows = []
    for r in range(log.ranks):
        begin = start_us
        for it in range(log.iterations):
            spans = by.get((it, r), [])
            if not spans or any(s.end < 0 for s in spans):
                break  # not finished: the run ended first
            end = max(s.end for s in spans)
            comp = _union([(s.start, s.end) for s in spans if s.kind in COMPUTING])
            comm = _union([(s.start, s.end) for s in spans if s.kind in COMMUNICATING])
            rows.append({"iteration": it, "rank": r, "nic": log.nics[r], "start_us": begin, "step_us": end - begin,
                         "compute_us": _length(comp), "comm_us": _length(comm), "exposed_us": _minus(comm, comp)})
            begin = end
    return rows


def per_iteration(rows: list[dict[str, Any]], ranks: int) -> list[dict[str, Any]]:
    """Each iteration every rank finished: its time (the slowest rank's step) and the ranks' means."""
    out = []
    for it in sorted({x["iteration"] for x in rows}):
        xs = [x for x in rows if x["iteration"] == it]
        if len(xs) < ranks:
            continue

        def mean(key: str, xs: list[dict[str, Any]] = xs) -> float:
            return float(sum(x[key] for x in xs)) / len(xs)

        out.append({"iteration": it, "time_us": max(x["step_us"] for x in xs), "compute_us": mean("compute_us"),
                    "comm_us": mean("comm_us"), "exposed_us": mean("exposed_us"),
                    "exposed_max_us": max(x["exposed_us"] for x in xs)})
    return out


def nccl_size(m: MeetingRun) -> int:
    """nccl-tests' size: an all-gather's is the N parts gathered; the rest the trace's comm_size."""
    return m.size * m.ranks if m.coll is Coll.ALL_GATHER else m.size


def per_collective(log: StepLog) -> list[dict[str, Any]]:
    """Each collective and message of each iteration: its time from the
    last rank joining to the last rank done (nccl-tests times an operation
    all ranks start together), its wait for the ranks to join, and its
    bandwidths (None if it never ended)."""
    out = []
    for m in log.meetings:
        name = m.coll.value if m.coll is not None else "sendrecv"
        size = nccl_size(m)
        factor = collectives.bus_factor(name, m.ranks) if m.ranks > 1 else 0.0
        t = m.end - m.last_join if m.end >= 0 else None
        alg = size * 8 / (t * 1e3) if t else None
        out.append({"iteration": m.iteration, "label": m.label, "collective": name, "ranks": m.ranks,
                    "size_bytes": size, "join_wait_us": m.last_join - m.first_join if m.last_join >= 0 else None,
                    "time_us": t, "algbw_gbps": alg, "busbw_gbps": alg * factor if alg is not None else None,
                    "bus_factor": factor})
    return out


def summary(r: RunResult) -> dict[str, Any] | None:
    """results.json's `chakra` of one run (None for other workloads)."""
    log = r.steps
    if log is None:
        return None
    rows = per_rank(log, r.scenario.workload.start_us)
    return {"ranks": log.ranks, "iterations": log.iterations, "per_iteration": per_iteration(rows, log.ranks),
            "per_rank": rows, "collectives": per_collective(log), "unfinished": log.unfinished}


def write(results: list[RunResult], place: Callable[[str], Path]) -> list[Path]:
    """steps.csv (iteration x rank) and collectives.csv, each at
    `place(name)`, if any run walked a trace."""
    traced = [r for r in results if r.steps is not None]
    if not traced:
        return []
    paths = [place("steps.csv"), place("collectives.csv")]
    with open(paths[0], "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["transport", "iteration", "rank", "nic", "start_us", "step_us", "compute_us", "comm_us",
                    "exposed_us"])
        for r in traced:
            assert r.steps is not None
            for x in per_rank(r.steps, r.scenario.workload.start_us):
                w.writerow([r.transport.name, *(f"{v:.3f}" if isinstance(v, float) else v for v in x.values())])
    with open(paths[1], "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["transport", "iteration", "label", "collective", "ranks", "size_bytes", "join_wait_us", "time_us",
                    "algbw_gbps", "busbw_gbps", "bus_factor"])
        for r in traced:
            assert r.steps is not None
            for x in per_collective(r.steps):
                w.writerow([r.transport.name, *("" if v is None else f"{v:.3f}" if isinstance(v, float) else v
                                                for v in x.values())])
    return paths


def table(results: list[RunResult]) -> str:
    """The transports side by side, one line per transport and iteration:
    the iteration's time and, as the ranks' mean, what of it computes,
    communicates, and waits on communication (exposed)."""
    head = (f"{'transport':14} {'iteration':>9} {'time':>11} {'compute':>11} {'comm':>11} {'exposed':>11} "
            f"{'exposed %':>9} {'busbw (mean of collectives)':>27}")
    lines = [head, "-" * len(head)]
    for r in results:
        s = summary(r)
        if s is None:
            continue
        colls = [c for c in s["collectives"] if c["busbw_gbps"] is not None and c["collective"] != "sendrecv"]
        for x in s["per_iteration"]:
            mine = [c["busbw_gbps"] for c in colls if c["iteration"] == x["iteration"]]
            bus = f"{sum(mine) / len(mine):.0f} Gb/s" if mine else "-"
            lines.append(f"{r.transport.name:14} {x['iteration'] + 1:>9} {x['time_us']:>9.1f}us "
                         f"{x['compute_us']:>9.1f}us {x['comm_us']:>9.1f}us {x['exposed_us']:>9.1f}us "
                         f"{x['exposed_us'] / x['time_us']:>9.0%} {bus:>27}")
        lines += [f"{r.transport.name:14} {line}" for line in s["unfinished"]]
    return "\n".join(lines)
