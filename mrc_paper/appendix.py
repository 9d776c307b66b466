"""The appendix's Fig. 19 (Cluster D, one 400 Gb/s plane): ib_write_bw
across racks while T0-T1 links of the sender's T0 fail and come back, at
400 Gb/s (one link left still carries it all) and at 100 Gb/s (the
throughput tracks the links left)."""

from __future__ import annotations

from collections.abc import Callable

from fabric_sim.runner.run import RunResult
from mrc_paper import metrics as M
from mrc_paper.claims import EV_RETIRE_OFF, Claim
from mrc_paper.experiments import Experiment, Finding, Runs
from mrc_paper.failures import BARELY, CUT_PATHS, MAPPED_OUT, STEP_TOL, dead_paths, hold_mapped, transient_row

TRACK = ("each phase's steady goodput / before, against the share of the T0's uplinks left (k of 4)",
         f"within {STEP_TOL:.0%} in every phase")


SINGLE_PLANE = ("What a trace of fig19b shows (endpoint state read at 110-300 µs): on a one-plane fabric the "
                "receiver has one reverse EV for all its ACKs; at the first cut it was on the cut spine, so every "
                "ACK is lost; the sender, window-blocked with all its packets unacknowledged, sends nothing new, so "
                "the receiver gets no data, sends no ACK, and its fresh reverse EV (found by a probe 14 µs later) "
                "goes unused; the tail probe, which would break this, waits for nothing to be pending. Only the "
                "retransmission timeout (10 base RTTs) restarts the flow, and it retires the EV of every copy in "
                "flight: healthy paths. Cluster B's eight planes hide it (another plane's reverse EV carries the "
                "ACKs).")


def _mapped(fig: str) -> Claim:
    return Claim(f"{fig}.mapped", fig, f"Fig. {fig[3:]}", "MRC is able to fail onto the remaining path",
                 CUT_PATHS, f"at most {MAPPED_OUT:.0%}", "EV retirement on loss", EV_RETIRE_OFF)


CLAIMS = [
    Claim("fig19a.flat", "fig19a", "Fig. 19a", "with sufficient capacity on the remaining T0-T1 link, MRC quickly "
          "recovers from failed links with no discernible impact on end-to-end throughput",
          "each phase's steady goodput / before", f"at least {BARELY:.0%} in every phase", "EV retirement on loss",
          EV_RETIRE_OFF),
    _mapped("fig19a"),
    Claim("fig19b.track", "fig19b", "Fig. 19b", "MRC fails onto the remaining paths, giving throughput that tracks "
          "the remaining available capacity", *TRACK, "EV retirement on loss", EV_RETIRE_OFF),
    _mapped("fig19b"),
    Claim("fig19c.track", "fig19c", "Fig. 19c", "dropping two links at once and bringing them back: MRC tracks the "
          "available capacity closely", *TRACK, "EV retirement on loss", EV_RETIRE_OFF),
    _mapped("fig19c"),
]


def _phases(f: Finding, r: RunResult) -> list[tuple[M.Phase, float]]:
    """(phase, its goodput / the first phase's), with the transients and delivery."""
    ph = M.phases(r)
    f.numbers["ratio"] = [p.gbps / ph[0].gbps for p in ph]
    f.numbers["delivered_once"] = M.delivered_once(r)
    f.row("before any failure, one direction", "≈ 390 Gb/s (of 400)", f"{ph[0].gbps:,.0f} Gb/s "
          f"({ph[0].gbps / M.line_goodput(r, bidirectional=False):.1%} of the payload line rate)")
    transient_row(f, r, "mrc")
    f.delivered("mrc", M.delivered_once(r))
    return [(p, p.gbps / ph[0].gbps) for p in ph]


def _trace(r: RunResult) -> tuple[float, int]:
    """How long goodput stalls after a cut (µs), and how many EVs on paths
    that still work were retired (by timeouts, not by their own losses)."""
    width, tl = r.timeline.t[0], r.timeline
    stall = run = 0.0
    for g in tl.goodput:
        run = run + width if g == 0 else 0.0
        stall = max(stall, run)
    flow = next(iter(tl.ev_log), None)
    live = sum(1 for t, ev, _, st in (tl.ev_log[flow] if flow is not None else []) if st == "ASSUMED_BAD"
               and (ev & 7, ev >> 3 & 0xFF) not in dead_paths(r.scenario, t))
    return stall, live


def restore_lags(r: RunResult) -> list[float]:
    """For each path that comes back (a link or switch up), µs until the
    traced QP's first EV on it is GOOD again (restored by good probes)."""
    flow = next(iter(r.timeline.ev_log), None)
    log = r.timeline.ev_log[flow] if flow is not None else []
    lags = []
    for e in sorted(r.scenario.events, key=lambda e: e.at_us):
        if not e.kind.endswith("_up"):
            continue
        back = dead_paths(r.scenario, e.at_us - 1e-6) - dead_paths(r.scenario, e.at_us)
        when = [t for t, ev, what, st in log if t >= e.at_us and what == "probe_ok" and st == "GOOD"
                and (ev & 7, ev >> 3 & 0xFF) in back]
        if when:
            lags.append(min(when) - e.at_us)
    return lags


# A path used again later than this many base RTTs after it returns is late: more than a probe interval (2
# base RTTs by default) and the probe's round trip.
LATE_RTTS = 5


def cause(stall: float, live: int, timeouts: int, sacks: int, lags: list[float] | None = None,
          rtt: float = float("inf"), swaps: tuple[int, int] = (0, 0)) -> str:
    """What the measurements say when a Fig. 19 claim fails: each part only
    when its number shows it (a stall; healthy EVs retired, by timeouts or
    not; ECN swaps after the last return that there were none of before the
    first cut, `swaps`). With neither a stall nor timeouts retiring healthy
    EVs, the shortfall is the rate on the links left."""
    parts = [f"goodput stalls for up to {stall:.0f} µs after a cut"] if stall > 0 else []
    if live and timeouts:
        parts.append(f"{live} retirements hit EVs whose paths still work ({timeouts} resends by timeout against "
                     f"{sacks} by SACK): the sender's timeouts retire healthy paths")
    elif live:
        parts.append(f"{live} retirements hit EVs whose paths still work, with no resend by timeout "
                     f"({sacks} by SACK)")
    else:
        parts.append(f"no EV on a working path is retired ({timeouts} resends by timeout, {sacks} by SACK)")
    if lags and max(lags) > LATE_RTTS * rtt:
        parts.append("a path that comes back is used again only when good probes restore its EVs: "
                     + ", ".join(f"{x:.0f}" for x in lags) + " µs after it returns, of each phase's "
                     "length, so the phases that gain capacity average below their share")
    elif lags:
        parts.append("a path that comes back is used again " + ", ".join(f"{x:.0f}" for x in lags)
                     + " µs after it returns (its first answered probe), and the rate on the links left still "
                     "falls short of their share " + _congested(swaps))
    elif not stall and not (live and timeouts):
        parts.append("the rate on the links left falls short of their share (not traced further)")
    return "; ".join(parts)


def _congested(swaps: tuple[int, int]) -> str:
    before, after = swaps
    if after > before:
        return (f"with congestion there was none of before the cuts: {after:,} ECN swaps after the last return "
                f"against {before:,} before the first cut (each puts a spare, of any spine, in a marked EV's slots)")
    return "(not traced further)"


def ecn_swaps(r: RunResult) -> tuple[int, int]:
    """The traced QP's ECN swaps (a spare taking a marked EV's slots) before
    the first event and from the last one on."""
    flow = next(iter(r.timeline.ev_log), None)
    log = r.timeline.ev_log[flow] if flow is not None else []
    at = sorted(e.at_us for e in r.scenario.events)
    if not at:
        return 0, 0
    ecn = [t for t, _, what, st in log if what == "ecn" and st == "GOOD"]
    return sum(1 for t in ecn if t < at[0]), sum(1 for t in ecn if t >= at[-1])


def timeouts_retire_healthy(live: int, timeouts: int) -> bool:
    """The signature of the one-plane stall SINGLE_PLANE describes."""
    return live > 0 and timeouts > 0


def _cause(r: RunResult) -> str:
    stall, live = _trace(r)
    return cause(stall, live, r.retx["timeout"], r.retx["sack"], restore_lags(r), r.base_rtt, ecn_swaps(r))


def _flat(key: str) -> Callable[[Runs], Finding]:
    def measure(runs: Runs) -> Finding:
        r, f = runs.get("mrc"), Finding(key)
        ratios = [x for _, x in _phases(f, r)[1:]]
        f.hold(f"{key}.flat", ", ".join(f"{x:.3f}" for x in ratios), min(ratios) >= BARELY, _cause(r))
        hold_mapped(f, r, f"{key}.mapped")
        return f
    return measure


def _track(key: str) -> Callable[[Runs], Finding]:
    def measure(runs: Runs) -> Finding:
        r, f = runs.get("mrc"), Finding(key)
        got, errs = [], []
        for p, x in _phases(f, r)[1:]:
            want = (4 - len(dead_paths(r.scenario, p.start))) / 4
            errs.append(abs(x / want - 1))
            got.append(f"{x:.3f} (of {want:.2f})")
        f.hold(f"{key}.track", "; ".join(got), max(errs) <= STEP_TOL, _cause(r))
        if max(errs) > STEP_TOL and timeouts_retire_healthy(_trace(r)[1], r.retx["timeout"]):
            f.notes.append(SINGLE_PLANE)
        hold_mapped(f, r, f"{key}.mapped")
        return f
    return measure


EXPERIMENTS = [
    Experiment("fig19a", "fig19", "(a) Cluster D: three of four 400 Gb/s T0-T1 links fail", "fig19a.yaml",
               "No discernible impact on end-to-end throughput: one T0-T1 link left carries it all.", _flat("fig19a")),
    Experiment("fig19b", "fig19", "(b) Cluster D: three of four 100 Gb/s T0-T1 links fail and return", "fig19b.yaml",
               "Throughput tracks the remaining available capacity as links fail and come back.", _track("fig19b")),
    Experiment("fig19c", "fig19", "(c) Cluster D: two of four 100 Gb/s T0-T1 links fail together and return",
               "fig19c.yaml", "MRC tracks the available capacity closely.", _track("fig19c")),
]
