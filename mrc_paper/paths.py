"""Figs. 12 to 14 of the MRC paper: one EV dropping 20% of its packets
(retired at once, its same-plane spare takes over), and two flows forced
onto one EV of a plane (ECN moves one of them to the other EV)."""

from __future__ import annotations

from fabric_sim.runner.run import RunResult
from mrc_host.ev import RESTORE_AFTER, make_ev
from mrc_paper import metrics as M
from mrc_paper.claims import ECN_ECHO_OFF, EV_RETIRE_OFF, Claim
from mrc_paper.experiments import Experiment, Finding, Runs
from mrc_paper.failures import transient_row
from mrc_wire.constants import ev_plane

LINE_SHARE = 0.95  # Fig. 12: goodput after the loss starts, of the payload line rate
RETIRE_RTTS = 3  # the lossy EV is retired within this many base RTTs
TAKEOVER = 0.9  # the spare carries at least this share of the plane's packets once the EV is retired
NEAR_LINE = 0.85  # Fig. 14: each flow's goodput at the end, of one plane's payload line rate
RESTORE_PROBES = RESTORE_AFTER
CLAIMS = [
    Claim("fig12.line", "fig12", "Fig. 12", "bandwidth stays at line rate while 20% of EV-A's packets are dropped",
          "steady goodput after the loss starts, of the payload line rate", f"at least {LINE_SHARE:.0%}",
          "EV retirement on loss", indistinct="20% loss on one of a QP's 8 paths is 2.5% of its packets, each "
          "resent at once on SACK: goodput holds without retiring the EV (measured: 0.987 with EV retirement "
          "off); fig13.retired and fig13.takeover tell retirement apart"),
    Claim("fig13.retired", "fig12", "Fig. 13", "when packet drop is induced on EV-A its status transitions "
          "immediately to inactive", "time from the loss's start to EV-A's retirement (ASSUMED_BAD)",
          f"within {RETIRE_RTTS} base RTTs", "EV retirement on loss", EV_RETIRE_OFF),
    Claim("fig13.takeover", "fig12", "Fig. 13", "EV-B is activated as a replacement",
          "EV-B's share of the plane's packets (EV-A and EV-B) from the retirement on", f"at least {TAKEOVER:.0%}",
          "EV retirement on loss (its spare refills the slot)", EV_RETIRE_OFF),
    Claim("fig13.stays_out", "fig12", "Fig. 13", "EV-A stays inactive for the rest of the run (its trace)",
          "times EV-A is retired after the loss starts", "exactly once (never restored)",
          "EV retirement, and restoring only a path that works", EV_RETIRE_OFF),
    Claim("fig14.moves", "fig14", "Fig. 14", "upon detecting congestion via ECN, client1's flow is migrated to "
          "EV-B while client2's continues on EV-A", "client1's packets on EV-B once both flows run",
          f"at least {TAKEOVER:.0%}", "ECN echoed per EV", ECN_ECHO_OFF, ablate_on="mrc"),
    Claim("fig14.rates", "fig14", "Fig. 14", "both client-server flows sustain near-peak bandwidth",
          "each flow's goodput once both run, of one plane's payload line rate", f"at least {NEAR_LINE:.2f} each",
          "ECN echoed per EV", ECN_ECHO_OFF, ablate_on="mrc"),
]


def lossy_evs(r: RunResult, flow: str, plane: int, t_loss: float) -> tuple[int, int]:
    """(EV-A, EV-B): the traced QP's EV of `plane` before the loss, and
    the one that carried the plane's packets most after it."""
    per_ev = r.timeline.ev_tx[flow]
    width = r.timeline.t[0]
    before = {ev: sum(n for t, n in zip(r.timeline.t, s, strict=True) if t <= t_loss) for ev, s in per_ev.items()}
    after = {ev: sum(n for t, n in zip(r.timeline.t, s, strict=True) if t - width >= t_loss)
             for ev, s in per_ev.items()}
    a = max((ev for ev in per_ev if ev_plane(ev) == plane), key=lambda ev: before[ev])
    b = max((ev for ev in per_ev if ev_plane(ev) == plane and ev != a), key=lambda ev: after[ev], default=a)
    return a, b


def fig12(runs: Runs) -> Finding:
    f = Finding("fig12")
    sc = runs.scenario
    [loss] = [e for e in sc.events if e.kind == "ev_loss"]
    flow, plane = f"{sc.topology.device(loss.args[0]).index}->{sc.workload.flows[0].dst}", loss.args[1]
    for name in runs.transports:
        r = runs.get(name)
        line = 2 * M.line_goodput(r, bidirectional=True)
        ph = M.phases(r)
        share = ph[1].gbps / line
        f.numbers[f"{name}_line_share"] = share
        f.numbers[f"{name}_delivered_once"] = M.delivered_once(r)
        f.numbers[f"{name}_retx"] = sum(r.retx.values())
        measured = f"{share:.3f} ({ph[1].gbps:,.0f} Gb/s); {sum(r.retx.values())} retransmissions"
        transient_row(f, r, name)
        if name == "mrc":
            f.hold("fig12.line", measured, share >= LINE_SHARE, "the lossy EV keeps its share of packets")
        else:
            f.row(f"{name} (ablation, not in the paper): goodput after the loss starts, of line rate", "-", measured)
        f.delivered(name, M.delivered_once(r))
    r = runs.get("mrc")
    a, b = lossy_evs(r, flow, plane, loss.at_us)
    retired = [t for t, ev in M.ev_events(r, flow, "ASSUMED_BAD") if ev == a and t >= loss.at_us]
    delay = retired[0] - loss.at_us if retired else float("inf")
    f.numbers.update(ev_a=a, ev_b=b, retire_us=delay, retirements=len(retired))
    f.hold("fig13.retired", f"after {delay:.1f} µs ({delay / r.base_rtt:.1f} base RTTs)",
           delay <= RETIRE_RTTS * r.base_rtt, "EV-A is never retired")
    on_b, on_a = (M.ev_share(r, flow, ev, loss.at_us + min(delay, M.steady_end(r)), M.steady_end(r)) for ev in (b, a))
    takeover = on_b / (on_b + on_a) if on_a + on_b else float("nan")
    f.numbers["takeover"] = takeover
    f.hold("fig13.takeover", f"{takeover:.1%} of them on EV-B", takeover >= TAKEOVER,
           "EV-A keeps the plane's packets")
    back = [t - loss.at_us for t, ev in M.ev_events(r, flow, "GOOD") if ev == a and t >= loss.at_us]
    f.numbers["ev_a_back_us"] = back
    f.hold("fig13.stays_out", f"EV-A retired {len(retired)} time(s)", len(retired) == 1,
           _returns(back, [t - loss.at_us for t in retired], r.transport.damping.max_doublings > 0))
    if "oblivious" in runs.transports:
        f.notes.append("Ablation: with EV state off the lossy EV keeps 1/8 of the QP's packets, each fifth one "
                       f"lost and resent: {f.numbers['oblivious_retx']} retransmissions against "
                       f"{f.numbers['mrc_retx']} for MRC.")
    return f


def _returns(back: list[float], retired: list[float], damped: bool) -> str:
    """fig13.stays_out's cause: EV-A's returns and retirements (µs after the loss starts)."""
    shown = ", ".join(f"{t:.0f}" for t in back[:12]) + (f" ... ({len(back) - 12} more)" if len(back) > 12 else "")
    out = (f"EV-A comes back {len(back)} time(s), {shown} µs after the loss starts: a restoration needs "
           f"{RESTORE_PROBES} good probes in a row, which a 20% loss allows about half the time; ")
    out += ("each failure soon after doubles what the next needs (damping)" if damped
            else "damping is off (transports[].damping.max_doublings 0)")
    in_at_end = bool(back) and (not retired or back[-1] > retired[-1])
    return out + ("; it is in at the end of the run" if in_at_end
                  else f"; out from {retired[-1]:.0f} µs on" if retired else "")


def fig14(runs: Runs) -> Finding:
    f = Finding("fig14")
    sc = runs.scenario
    f1, f2 = sc.workload.flows[:2]
    names = (f"{f1.src}->{f1.dst}", f"{f2.src}->{f2.dst}")
    ev_a = make_ev(f1.pin.plane, f1.pin.spines[0], salt=0)
    ev_b = make_ev(f1.pin.plane, f1.pin.backups[0], salt=1 << 20)
    for name in runs.transports:
        r = runs.get(name)
        t0, t1 = f2.start_us + M.settle_us(r), M.steady_end(r)
        line = M.line_goodput(r, bidirectional=False)
        moved = M.ev_share(r, names[0], ev_b, t0, t1)
        rates = [M.window_mean(r, r.timeline.flows[n], t0, t1) / line for n in names]
        f.numbers[name] = {"client1_on_ev_b": moved, "client2_on_ev_a": M.ev_share(r, names[1], ev_a, t0, t1),
                           "rates": rates, "delivered_once": M.delivered_once(r)}
        rate_txt = " / ".join(f"{x:.2f}" for x in rates)
        if name == "mrc":  # the model's defaults: what the claims are held on
            f.hold("fig14.moves", f"{moved:.1%}", moved >= TAKEOVER,
                   f"client1 still sent {1 - moved:.0%} of its packets on EV-A once both flows ran")
            f.hold("fig14.rates", rate_txt, min(rates) >= NEAR_LINE,
                   "the two flows share EV-A's spine link, each about half of it")
        else:
            f.row(f"{name} (an ablation, not the default): client1's packets on EV-B; each flow's goodput",
                  "all; both near line rate", f"{moved:.1%}; {rate_txt}")
        f.delivered(name, M.delivered_once(r))
    if "mrc-skip" in runs.transports:
        f.notes.append("Ablation `ecn_move: skip`: a marked EV is skipped for one rotation of the QP's slots; with "
                       "a one-EV rotation that is one packet, so client1 keeps returning to EV-A and the two flows "
                       f"share it (client1 sends {f.numbers['mrc-skip']['client1_on_ev_b']:.0%} on EV-B). The "
                       "default swaps the marked EV with the idle spare for good, as the paper's CX-8 does.")
    return f


EXPERIMENTS = [
    Experiment("fig12", "fig12", "Packet drop on one EV (16 paths: 2 per plane)", "fig12.yaml",
               "When 20% drop is imposed on EV-A its status turns inactive at once, EV-B is activated in its "
               "place, and bandwidth stays at line rate (Fig. 12); Fig. 13 traces EV-A and EV-B.", fig12),
    Experiment("fig14", "fig14", "Two flows forced onto one EV of a plane with two", "fig14.yaml",
               "ECN moves client1's flow from EV-A to EV-B while client2 stays on EV-A; both flows sustain "
               "near-peak bandwidth throughout.", fig14),
]
