"""The numbers the paper's figures show, from runs of the timed fabric:
goodput per phase between events, line rate, per-flow means, Jain's
fairness, EV activity and the time of EV state changes, collective bus
bandwidth."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from fabric_sim.report import busy, collective
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import Scenario
from mrc_wire.constants import DATA_FRAME_BYTES as DATA_FRAME
from mrc_wire.constants import SACK_FRAME_BYTES as ACK_FRAME


def line_goodput(r: RunResult, bidirectional: bool) -> float:
    """Gb/s of payload a NIC carries at line rate: full data frames, plus,
    when traffic goes both ways, the ACK each data packet draws back over
    the same link (one ACK per data packet)."""
    mtu = r.scenario.endpoint.mtu
    per_pkt = mtu + DATA_FRAME + (ACK_FRAME if bidirectional else 0)
    return r.nic_gbps * mtu / per_pkt


@dataclass(frozen=True)
class Phase:
    start: float  # µs: an event (or the run's start)
    end: float  # the next event (or when the first flow ran out of data)
    gbps: float  # mean goodput over the phase's settled bins
    bins: int


def settle_us(r: RunResult) -> float:
    """What a phase leaves out after its event before it counts as steady:
    5 base RTTs (detection, remapping, resending) and at least one bin."""
    return max(5 * r.base_rtt, r.timeline.t[0] if r.timeline.t else 0.0)


def steady_end(r: RunResult) -> float:
    """Where steady state ends: the settling time before the first pair ran
    out of data (its QPs finish their parts of the last message one after
    another)."""
    return busy(r) - settle_us(r)


def phases(r: RunResult, series: list[float] | None = None) -> list[Phase]:
    """Mean goodput between consecutive event times, each phase from its
    event plus the settling time to the next event; the last one ends at
    steady_end."""
    tl = r.timeline
    series = tl.goodput if series is None else series
    if not tl.t:
        return []
    width, settle = tl.t[0], settle_us(r)
    stops = sorted({e.at_us for e in r.scenario.events})
    end = steady_end(r)
    bounds = [0.0] + [s for s in stops if s < end] + [end]
    out = []
    for a, b in zip(bounds, bounds[1:], strict=False):
        vals = [g for t, g in zip(tl.t, series, strict=True) if t - width >= a + settle and t <= b]
        out.append(Phase(a, b, sum(vals) / len(vals) if vals else float("nan"), len(vals)))
    return out


def window_mean(r: RunResult, series: list[float], t0: float, t1: float) -> float:
    """Mean of a timeline series over the bins inside [t0, t1]."""
    width = r.timeline.t[0]
    vals = [g for t, g in zip(r.timeline.t, series, strict=True) if t - width >= t0 and t <= t1]
    return sum(vals) / len(vals) if vals else float("nan")


def jain(xs: list[float]) -> float:
    """Jain's fairness index: 1 when all are equal, 1/n when one has all."""
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if xs and any(xs) else float("nan")


def ev_events(r: RunResult, flow: str, state: str) -> list[tuple[float, int]]:
    """(time, EV) of every change of `flow`'s traced QP to `state`."""
    return [(t, ev) for t, ev, _, st in r.timeline.ev_log.get(flow, []) if st == state]


def ev_share(r: RunResult, flow: str, ev: int, t0: float, t1: float) -> float:
    """The share of `flow`'s traced QP's data packets sent on `ev` in [t0, t1]."""
    return share_on(r, flow, lambda e: e == ev, t0, t1)


def sent_on(r: RunResult, flow: str, which: Callable[[int], bool], t0: float, t1: float) -> tuple[int, int]:
    """(on the EVs `which` picks, in all): `flow`'s traced QP's data packets
    sent in the bins inside [t0, t1]."""
    width = r.timeline.t[0]
    per_ev = r.timeline.ev_tx.get(flow, {})
    inside = [i for i, t in enumerate(r.timeline.t) if t - width >= t0 and t <= t1]
    return (sum(per_ev[e][i] for e in per_ev if which(e) for i in inside),
            sum(per_ev[e][i] for e in per_ev for i in inside))


def share_on(r: RunResult, flow: str, which: Callable[[int], bool], t0: float, t1: float) -> float:
    """The share of `flow`'s traced QP's data packets sent in [t0, t1] on
    the EVs `which` picks."""
    on, total = sent_on(r, flow, which, t0, t1)
    return on / total if total else float("nan")


def us_per_paper_s(sc: Scenario) -> float | None:
    """The figure's time scale, from its scenario's `scale:` statement
    ("1 s of the paper = 12 µs ..."): µs of the model per second of the
    paper's plot; None when the figure has no time axis."""
    m = re.search(r"1 s of the paper = ([0-9.]+) µs", sc.meta.get("scale") or "")
    return float(m.group(1)) if m else None


@dataclass(frozen=True)
class Transient:
    at: float  # µs: the event
    target: float  # Gb/s: the steady state of the phase the event starts
    recover_us: float  # from the event to the end of the first bin at RECOVERED of the target (inf: never)
    dip: float  # the lowest bin between the event and then, as a share of the target


RECOVERED = 0.9  # a phase has recovered from its event once a bin reaches this share of its steady state


def transients(r: RunResult) -> list[Transient]:
    """After each event (one per distinct time), how long goodput takes to
    reach RECOVERED of the steady state that follows, and how deep it dips
    on the way: the transient the phase means leave out."""
    tl, out = r.timeline, []
    width = tl.t[0]
    for p in phases(r)[1:]:
        after = [(t, g) for t, g in zip(tl.t, tl.goodput, strict=True) if t - width >= p.start - 1e-9 and t <= p.end]
        done = next((t for t, g in after if g >= RECOVERED * p.gbps), math.inf)
        low = min((g for t, g in after if t <= done), default=math.nan)
        dip = low / p.gbps if p.gbps > 0 else math.nan
        out.append(Transient(p.start, p.gbps, done - p.start, dip))
    return out


def collective_gbps(r: RunResult) -> float:
    """nccl-tests' bus bandwidth (Gb/s; nan if a message never arrived):
    the collective's size over its time, times 2(N-1)/N for a ring
    all-reduce, (N-1)/N for an all-to-all, 1 for sendrecv."""
    bw = collective(r)
    return float("nan") if bw is None or bw["busbw_gbps"] is None else bw["busbw_gbps"]


def delivered_once(r: RunResult) -> bool:
    return r.complete and r.events.get("delivered_twice", 0) == 0 and not r.errors


def congestion(r: RunResult) -> str:
    """What RoCE's congestion control saw in a run: the switches' ECN marks
    (each can draw a CNP, a DCQCN rate cut: at most one per QP per 50 µs)
    and PFC's pause frames."""
    pauses = f", {r.pfc['pause_frames']} PFC pauses" if r.pfc is not None else ""
    return f"{r.events.get('ecn_marked', 0)} ECN marks{pauses}"
