"""Numbers a researcher would put in a paper, from the runs of one
scenario: message completion times, goodput before and after the first
fault, retransmissions by cause, drops by reason, reorder distance; as
JSON, CSV and a terminal table."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

from fabric_sim.net import pfc
from fabric_sim.report import steps
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import Scenario, collectives


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of `values`; nan if empty."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))]


def fcts(r: RunResult) -> list[float]:
    return [m.done_at - m.posted_at for m in r.messages if m.done_at >= 0]


def ideal_fct(r: RunResult, size: int) -> float:
    """Line rate of the NIC (every plane) plus one base RTT."""
    return size * 8 / (r.nic_gbps * 1e3) + r.base_rtt


def ideal_one_way(r: RunResult, size: int) -> float:
    """Line rate of the NIC plus half a base RTT: the least a message's
    completion time (posted at the sender to placed at the receiver, no
    ACK in it) can be. `ideal_fct` adds a full RTT and so flatters it."""
    return size * 8 / (r.nic_gbps * 1e3) + r.base_rtt / 2


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def busy(r: RunResult) -> float:
    """Until when every pair still had data to send: the first time a pair
    delivered its last message (the run's end if one never did)."""
    last: dict[tuple[int, int], float] = {}
    for m in r.messages:
        done = m.done_at if m.done_at >= 0 else float("inf")
        last[(m.src, m.dst)] = max(last.get((m.src, m.dst), 0.0), done)
    return min(min(last.values(), default=r.end_us), r.end_us)


def phases(r: RunResult) -> dict[str, float]:
    """Mean goodput (Gb/s) before the first event and after it: from a
    settling time of 5 base RTTs after the event to the last full bin in
    which every sender still had data to send."""
    tl, evs = r.timeline, r.scenario.events
    if not tl.t:
        return {}
    busy_until = busy(r)
    bins = list(zip(tl.t, tl.goodput, strict=True))
    width = tl.t[0]
    out = {"steady_gbps": _mean([g for t, g in bins if t <= busy_until and t - width >= 5 * r.base_rtt])}
    if evs:
        t0 = evs[0].at_us
        out["before_gbps"] = _mean([g for t, g in bins if t <= t0 and t - width >= 5 * r.base_rtt])
        out["after_gbps"] = _mean([g for t, g in bins if t - width >= t0 + 5 * r.base_rtt and t <= busy_until])
    return out


def collective(r: RunResult) -> dict[str, Any] | None:
    """A collective's algbw and busbw as nccl-tests reports them (None for
    other patterns)."""
    w = r.scenario.workload
    if w.message_bytes is None:  # a trace's collectives are reported one by one (report/steps.py)
        return None
    return collectives.bandwidth(w.pattern, w.message_bytes, w.messages, r.messages)


def summary(r: RunResult) -> dict[str, Any]:
    f = fcts(r)
    sizes = sorted({m.size for m in r.messages})
    done = [m for m in r.messages if m.done_at >= 0]
    span = (max(m.done_at for m in done) - min(m.posted_at for m in done)) if done else 0.0
    return {
        "transport": r.transport.name,
        "kind": r.transport.kind,
        "messages": len(r.messages),
        "delivered": len(done),
        "fct_us": {"p50": pct(f, 0.5), "p99": pct(f, 0.99), "max": max(f, default=float("nan")), "mean": _mean(f)},
        "ideal_fct_us": {str(s): ideal_fct(r, s) for s in sizes},
        "base_rtt_us": r.base_rtt,
        "nic_gbps": r.nic_gbps,
        "goodput_gbps": sum(m.size for m in done) * 8 / (span * 1e3) if span else 0.0,
        "collective": collective(r),
        **({"chakra": steps.summary(r)} if r.steps is not None else {}),
        "phases": phases(r),
        "retransmissions": r.retx,
        "drops": dict(sorted(r.drops.items())),
        "events": r.events,
        "reorder_hist": {
            ("0" if i == 0 else f"{1 << (i - 1)}-{(1 << i) - 1}"): n for i, n in enumerate(r.reorder) if n
        },
        "errors": r.errors,
        "undelivered": r.undelivered,
        "packets": r.packets,
        "exactly_once": _ledger(r),
        "rehashed_flows": r.rehashed,
        **({"pfc": r.pfc} if r.pfc is not None else {}),
        "sim": {
            "events": r.sim_events,
            "packet_hops": r.packet_hops,
            "wall_s": r.wall_s,
            "end_us": r.end_us,
            "hops_per_s": r.packet_hops / r.wall_s if r.wall_s else 0.0,
        },
    }


def _ledger(r: RunResult) -> dict[str, Any] | None:
    v = r.ledger
    if v is None:
        return None
    return {"posted_bytes": v.posted, "placed_bytes": v.placed, "duplicate_bytes": v.duplicate,
            "missing_bytes": v.missing, "stray_bytes": v.stray, "problems": v.problems}


def strict(x: Any) -> Any:
    """`x` with every NaN or infinity replaced by None (JSON null): strict
    JSON parsers refuse the bare NaN Python's json writes."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [strict(v) for v in x]
    return x


def document(sc: Scenario, results: list[RunResult], failed: dict[str, str] | None = None,
             cut_off: dict[str, str] | None = None) -> dict[str, Any]:
    """results.json: the scenario, each finished run's summary, and what
    did not finish: `failed` (transport -> why it crashed) and `cut_off`
    (transport -> why it was stopped, e.g. an interrupt); `complete` says
    whether nothing is missing."""
    raw = {"scenario": sc.name, "source": sc.source, "seed": sc.seed, "scale": sc.meta.get("scale"),
           "events": [{"at_us": e.at_us, "kind": e.kind, "args": list(e.args)} for e in sc.events],
           "complete": not failed and not cut_off, "runs": [summary(r) for r in results],
           "failed": dict(failed or {}), "not_finished": dict(cut_off or {})}
    doc: dict[str, Any] = strict(raw)
    return doc


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=1, default=str, allow_nan=False) + "\n")


def write_messages(path: Path, results: list[RunResult]) -> None:
    """messages.csv: every message of every run, its completion time if delivered."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["transport", "message", "src", "dst", "bytes", "posted_us", "done_us", "fct_us"])
        for r in results:
            for m in r.messages:
                done = m.done_at >= 0
                w.writerow([r.transport.name, m.id, m.src, m.dst, m.size, f"{m.posted_at:.3f}",
                            f"{m.done_at:.3f}" if done else "", f"{m.done_at - m.posted_at:.3f}" if done else ""])


def write_timeline(path: Path, results: list[RunResult]) -> None:
    """timeline.csv: each run's goodput, load per plane and EV states per bin."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        planes = sorted({p for r in results for p in r.timeline.planes})  # transports may differ in planes
        states = list(results[0].timeline.ev_states) if results else []
        w.writerow(["transport", "t_us", "goodput_gbps", *[f"plane{p}_gbps" for p in planes],
                    *[f"evs_{s.lower()}" for s in states]])
        for r in results:
            tl = r.timeline
            for i, t in enumerate(tl.t):
                w.writerow([r.transport.name, f"{t:.3f}", f"{tl.goodput[i]:.3f}",
                            *[f"{tl.planes[p][i]:.3f}" if p in tl.planes else "" for p in planes],
                            *[tl.ev_states[s][i] for s in states]])


def table(results: list[RunResult]) -> str:
    """The terminal summary: one line per transport."""
    head = (f"{'transport':14} {'delivered':>10} {'FCT p50':>9} {'p99':>9} {'max':>9} {'goodput':>9} "
            f"{'after fault':>11} {'retx sack/nack/rto':>19} {'drops':>7} {'errors':>6}")
    lines = [head, "-" * len(head)]
    for r in results:
        s = summary(r)
        f, ph, rx = s["fct_us"], s["phases"], s["retransmissions"]
        after = f"{ph['after_gbps']:.0f} Gb/s" if "after_gbps" in ph else "-"
        lines.append(
            f"{s['transport']:14} {s['delivered']:>4}/{s['messages']:<5} {f['p50']:>7.1f}us {f['p99']:>7.1f}us "
            f"{f['max']:>7.1f}us {s['goodput_gbps']:>5.0f}Gb/s {after:>11} "
            f"{rx['sack']:>7}/{rx['nack']}/{rx['timeout']:<5} {sum(s['drops'].values()):>7} {len(s['errors']):>6}"
        )
    lines += [pfc.summary_line(r.transport.name, r.pfc) for r in results if r.pfc is not None]
    ideal = summary(results[0])["ideal_fct_us"]
    lines.append("ideal FCT (line rate + base RTT): " + ", ".join(f"{int(k):,} B: {v:.1f} us" for k, v in ideal.items())
                 + f"; base RTT {results[0].base_rtt:.2f} us; NIC {results[0].nic_gbps:g} Gb/s")
    return "\n".join(lines)
