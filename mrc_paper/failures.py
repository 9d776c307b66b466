"""Figs. 9 to 11 of the MRC paper: bidirectional ib_write_bw while NIC
links, T0-T1 links, a T0 or a T1 switch fail and come back. Each phase
between events is held to the share of bandwidth the paper reports, the
packets each QP still sends onto dead paths to none, and the transient
after each event to the paper's "brief"."""

from __future__ import annotations

import functools

from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import Scenario
from mrc_paper import metrics as M
from mrc_paper.claims import EV_RETIRE_OFF, EV_STATE_OFF, PORT_BITMAP_OFF, Claim
from mrc_paper.experiments import Experiment, Finding, Runs
from mrc_wire.constants import ev_plane, ev_spine

STEP_TOL = 0.05  # Fig. 9a/9b: a phase within 5% of its expected share
BARELY = 0.95  # "barely moves", "no steady-state loss": at least 95% of the bandwidth before
T0_BAND = (0.82, 0.92)  # Fig. 10: one plane's share lost (7/8 = 0.875)
PEER_RTTS = 2  # nic-1 stops using a plane within this many base RTTs of nic-0's port going down
DEAD_SHARE = 0.01  # settled phases: at most this share of a QP's packets sent onto a plane that is down
MAPPED_OUT = 0.05  # Fig. 11: the failed T1's paths carry at most this share of what they carried before
BRIEF_S = 1.0  # Fig. 9a/9b: "a brief interruption of less than a second", at the figure's time scale
NO_GLITCH = ("No glitch at a NIC port's failure: the model's endpoint learns of its port the instant the link drops "
             "and remaps every QP at once; CX-8 takes up to a second (the paper's brief interruptions).")
LINK_BOUND = ("the NIC links are the bottleneck: whatever the senders do, the live links carry (8-k)/8, and a "
              "sender spraying blindly onto the dead plane loses that share and resends it at the same goodput "
              "(measured: the steps hold with EV state off); the dead-plane claim of the same figure tells it apart")
BACK_UP = ("after the links return every path works again, so nothing needs remapping: an ablated sender gets "
           "the full bandwidth back as well (measured)")
CUT_PATHS = ("packets of the traced QPs on the cut paths in the second half of each phase of the fault, against "
             "what those paths carried before it")

CLAIMS = [
    Claim("fig09a.steps", "fig09a", "Fig. 9a", "throughput decreases as links are taken offline one at a time and "
          "recovers as they are restored", "each phase's goodput / the no-failure phase, against (8-k)/8",
          f"within {STEP_TOL:.0%} in every phase", "NIC port state (the plane's slots move to live planes)",
          indistinct=LINK_BOUND),
    Claim("fig09a.dead", "fig09a", "Fig. 9a", "MRC re-balances EVs across the remaining planes; both inbound and "
          "outbound QPs stabilize over the remaining links", "share of each traced QP's packets sent on a plane "
          "that is down, in every settled phase", f"at most {DEAD_SHARE:.0%}", "NIC port state, here and (bitmap) "
          "at the peer", EV_STATE_OFF),
    Claim("fig09a.peer", "fig09a", "Fig. 9a", "the link-state bitmap in SACK packets notifies the remote endpoint, "
          "prompting it to remap its EV set", "time from nic-0's port going down to nic-1's QP marking the plane down",
          f"within {PEER_RTTS} base RTTs, every port", "the port-state bitmap in SACKs", PORT_BITMAP_OFF),
    Claim("fig09a.brief", "fig09a", "Fig. 9a", "a brief interruption of less than a second ... after which both "
          "QPs stabilize over the remaining links", f"after each event, time to reach {M.RECOVERED:.0%} of the "
          "next phase's steady goodput", f"within {BRIEF_S:g} s at the figure's scale (at least one bin)",
          "NIC port state, and the bitmap at the peer", indistinct="the model remaps at the instant its port drops "
          "(no detection delay), and without the bitmap the peer retires the plane's EVs by their losses within a "
          "few RTTs: both inside one bin (measured: every transient one 10 µs bin with port_bitmap off; with EV "
          "state off the live links are still the bottleneck, as for fig09a.steps)"),
    Claim("fig09b.half", "fig09b", "Fig. 9b", "MRC quickly stabilizes at approximately half the nominal bandwidth "
          "when all four links are taken down", "the fault's steady goodput / before", f"0.5 within {STEP_TOL:.0%}",
          "NIC port state", indistinct=LINK_BOUND),
    Claim("fig09b.dead", "fig09b", "Fig. 9b", "MRC re-balances EVs across the remaining planes (as in 9a)",
          "share of each traced QP's packets sent on a plane that is down, in every settled phase",
          f"at most {DEAD_SHARE:.0%}", "NIC port state", EV_STATE_OFF),
    Claim("fig09b.back", "fig09b", "Fig. 9b", "rapidly recovers once the links are restored",
          f"steady goodput after / before, and the time to reach {M.RECOVERED:.0%} of it",
          f"at least {BARELY:.0%}, within {BRIEF_S:g} s at the figure's scale", "NIC port state (plane back up)",
          indistinct=BACK_UP),
    Claim("fig09c.flat", "fig09c", "Fig. 9c", "minimal impact on throughput even as active links are removed",
          "the worst phase's steady goodput / before", f"at least {BARELY:.0%}", "EV retirement on loss",
          indistinct="each cut path carries about 1/128 of a QP's packets: resending them without retiring the "
                     "path costs little while few links are down (measured: 0.968 with 4 of the 20 links down and "
                     "EV retirement off); fig09c.mapped tells retirement apart"),
    Claim("fig09c.mapped", "fig09c", "Fig. 9c", "as links are taken down, MRC maps out the affected EVs and "
          "retransmits lost packets over alternate paths", CUT_PATHS, f"at most {MAPPED_OUT:.0%}",
          "EV retirement on loss", EV_RETIRE_OFF),
    Claim("fig09d.flat", "fig09d", "Fig. 9d", "MRC reroutes traffic and recovers rapidly: negligible impact",
          "steady goodput while the 8 links are down / before", f"at least {BARELY:.0%}", "EV retirement on loss",
          EV_RETIRE_OFF),
    Claim("fig09d.mapped", "fig09d", "Fig. 9d", "MRC reroutes traffic (as in 9c, mapping out the affected EVs)",
          CUT_PATHS, f"at most {MAPPED_OUT:.0%}", "EV retirement on loss", EV_RETIRE_OFF),
    Claim("fig09d.back", "fig09d", "Fig. 9d", "negligible impact once the links are restored",
          "steady goodput after / before", f"at least {BARELY:.0%}", "EV restore by probes", indistinct=BACK_UP),
    Claim("fig10.share", "fig10", "Fig. 10", "after EV remapping the steady-state bandwidth drops by approximately "
          "100 Gb/s (one plane's share)", "the fault's steady goodput / before",
          f"{T0_BAND[0]}..{T0_BAND[1]} (7/8 = 0.875)", "NIC port state", indistinct=LINK_BOUND),
    Claim("fig10.dead", "fig10", "Fig. 10", "the EVs of the failed T0 leave the active EV set",
          "share of each traced QP's packets sent on the failed T0's plane, settled", f"at most {DEAD_SHARE:.0%}",
          "NIC port state", EV_STATE_OFF),
    Claim("fig10.back", "fig10", "Fig. 10", "(bandwidth returns when the switch does)", "steady goodput after / before",
          f"at least {BARELY:.0%}", "NIC port state (plane back up)", indistinct=BACK_UP),
    Claim("fig11.flat", "fig11", "Fig. 11", "no steady-state bandwidth degradation despite the failure",
          "the fault's steady goodput / before", f"at least {BARELY:.0%}", "EV retirement on loss",
          indistinct="the T1 carries 1/128 of the paths: resending its packets without retiring them costs under "
                     "1% (measured: 0.99 with EV retirement off); fig11.mapped tells retirement apart"),
    Claim("fig11.mapped", "fig11", "Fig. 11", "each QP is sprayed across many paths and the failed T1's EVs are "
          "removed, alternatives sustaining the capacity (5.2.2-5.2.3: MRC maps out the affected EVs)",
          CUT_PATHS,
          f"at most {MAPPED_OUT:.0%}", "EV retirement on loss", EV_RETIRE_OFF),
    Claim("fig11.back", "fig11", "Fig. 11", "once the T1 switch is restored, transient fluctuations subside",
          "steady goodput after / before", f"at least {BARELY:.0%}", "EV restore by probes", indistinct=BACK_UP),
]


def _down(sc: Scenario, t: float) -> set[int]:
    """Planes down for the traced pair at time t: a NIC port or a T0 switch
    (the NICs of a T0-local pair share their T0s)."""
    down: set[int] = set()
    for e in sorted(sc.events, key=lambda e: e.at_us):
        if e.at_us > t:
            break
        if e.kind in ("nic_port_down", "nic_port_up"):
            (down.add if e.kind.endswith("down") else down.discard)(e.args[1])
        elif e.kind in ("switch_down", "switch_up") and sc.topology.device(e.args[0]).kind == "t0":
            (down.add if e.kind.endswith("down") else down.discard)(sc.topology.device(e.args[0]).plane)
    return down


def _base(f: Finding, r: RunResult, label: str) -> list[M.Phase]:
    ph = M.phases(r)
    line = 2 * M.line_goodput(r, bidirectional=True)
    f.numbers[f"{label}_gbps"] = [p.gbps for p in ph]
    f.numbers[f"{label}_ratio"] = [p.gbps / ph[0].gbps for p in ph]
    f.numbers[f"{label}_delivered_once"] = M.delivered_once(r)
    f.row(f"{label}: before any failure, both directions", "≈1,540 Gb/s (2 x ~770 of 800)",
          f"{ph[0].gbps:,.0f} Gb/s ({ph[0].gbps / line:.1%} of the payload line rate)")
    f.delivered(label, M.delivered_once(r))
    transient_row(f, r, label)
    return ph


def transient_row(f: Finding, r: RunResult, label: str) -> None:
    """The transient after each event, measured (metrics.transients), in µs
    and in the paper's seconds at the figure's scale."""
    tr = M.transients(r)
    f.numbers[f"{label}_recover_us"] = [x.recover_us for x in tr]
    f.numbers[f"{label}_dip"] = [x.dip for x in tr]
    if not tr:
        return
    scale = M.us_per_paper_s(r.scenario)
    worst = max(tr, key=lambda x: x.recover_us)
    secs = f" ({worst.recover_us / scale:.2f} s at the figure's scale)" if scale else ""
    f.row(f"{label}: transient after each event (to {M.RECOVERED:.0%} of the new steady state; bins of "
          f"{r.timeline.t[0]:g} µs)", "brief (< 1 s)", f"at most {worst.recover_us:.0f} µs{secs}, after the event "
          f"at {worst.at:,.0f} µs; lowest bin on the way {min(x.dip for x in tr):.2f} of the new steady state")


def _brief(r: RunResult) -> float:
    """The claim's 'less than a second', in µs at the figure's scale, never below one bin."""
    return max(BRIEF_S * (M.us_per_paper_s(r.scenario) or 0.0), r.timeline.t[0])


def _on_planes(planes: set[int], ev: int) -> bool:
    return ev_plane(ev) in planes


def _dead_share(r: RunResult) -> float:
    """The largest share of a traced QP's packets sent onto a plane down, over the settled faulty phases.
    A phase that ends at the next event's instant holds it in its last bin: a plane that event brings back
    counts as down in the bins before, not in that one (a packet sent on it the moment it returns would
    count as sent while down; fig09a: one packet at each of 4 returns, 1.5% of a phase)."""
    worst, tl = 0.0, r.timeline
    for p in M.phases(r)[1:]:
        down = _down(r.scenario, p.start)
        ends = [t for t in tl.t if t <= p.end]
        if not down or not ends:
            continue
        last = ends[-1]  # the phase's last bin, (last - width, last]
        still = down & _down(r.scenario, p.end) if last == p.end else down
        start, body = p.start + M.settle_us(r), last - tl.t[0]
        if body < start:
            continue
        for flow in tl.ev_tx:
            on, total = M.sent_on(r, flow, functools.partial(_on_planes, down), start, body)
            last_on, last_total = M.sent_on(r, flow, functools.partial(_on_planes, still), body, last)
            if total + last_total:
                worst = max(worst, (on + last_on) / (total + last_total))
    return worst


def _hold_dead(f: Finding, r: RunResult, claim: str) -> None:
    share = _dead_share(r)
    f.numbers["dead_share"] = share
    f.hold(claim, f"at most {share:.2%} of a QP's packets", share <= DEAD_SHARE,
           "the QPs keep sending onto the dead plane")


def dead_paths(sc: Scenario, t: float) -> set[tuple[int, int]]:
    """(plane, spine) paths cut at time t by a T0-T1 link or a T1 switch
    down (the cross-T1 pair's paths cross both T0 groups)."""
    dead: set[tuple[int, int]] = set()
    for e in sorted(sc.events, key=lambda e: e.at_us):
        if e.at_us > t:
            break
        names = e.args if e.kind.startswith("link_") else (e.args[0],) if e.kind.startswith("switch_") else ()
        t1s = [sc.topology.device(n) for n in names if sc.topology.device(n).kind == "t1"]
        for d in t1s:
            (dead.add if e.kind.endswith("down") else dead.discard)((d.plane, d.index))
    return dead


def hold_mapped(f: Finding, r: RunResult, claim: str) -> None:
    """Packets the traced QPs still send through cut paths in the second
    half of each faulty phase, against what those paths carried before any
    fault. The first half is left out: a QP retires an EV when it loses a
    packet on it, and a rotation of 256 EVs takes tens of µs to reach them all."""
    first = min(e.at_us for e in r.scenario.events)
    worst, at = 0.0, first
    for p in M.phases(r)[1:]:
        dead = dead_paths(r.scenario, p.start)
        if not dead:
            continue
        def on(ev: int, dead: set[tuple[int, int]] = dead) -> bool:
            return (ev_plane(ev), ev_spine(ev)) in dead

        before = sum(M.share_on(r, fl, on, M.settle_us(r), first) for fl in r.timeline.ev_tx)
        during = sum(M.share_on(r, fl, on, (p.start + p.end) / 2, p.end) for fl in r.timeline.ev_tx)
        if before and during / before >= worst:
            worst, at = during / before, p.start
    f.numbers["dead_paths_kept"] = worst
    f.hold(claim, f"at most {worst:.1%} of what the cut paths carried before (phase from {at:,.0f} µs)",
           worst <= MAPPED_OUT, "the QPs keep sending on the cut paths' EVs, each packet lost and resent")


def _during_after(f: Finding, r: RunResult) -> tuple[float, float]:
    ph = _base(f, r, "mrc")
    return ph[1].gbps / ph[0].gbps, ph[2].gbps / ph[0].gbps


def fig09a(runs: Runs) -> Finding:
    r, f = runs.get("mrc"), Finding("fig09a")
    ph = _base(f, r, "mrc")
    planes = r.scenario.topology.planes
    errs, got_all = [], []
    for p in ph[1:]:
        k = len(_down(r.scenario, p.start))
        want, got = (planes - k) / planes, p.gbps / ph[0].gbps
        errs.append(abs(got / want - 1))
        got_all.append(f"{got:.3f} ({k} down)")
    f.numbers["worst_step_error"] = max(errs)
    f.hold("fig09a.steps", "; ".join(got_all) + f"; worst error {max(errs):.1%}", max(errs) <= STEP_TOL,
           "a phase is off its share of the live links")
    _hold_dead(f, r, "fig09a.dead")
    delays = []
    for e in r.scenario.events:
        if e.kind == "nic_port_down":
            t = [t for t, ev in M.ev_events(r, "1->0", "PLANE_DOWN") if t >= e.at_us and ev & 7 == e.args[1]]
            delays.append(t[0] - e.at_us if t else float("inf"))
    f.numbers["peer_delay_us"] = max(delays)
    f.hold("fig09a.peer", f"after at most {max(delays):.2f} µs ({max(delays) / r.base_rtt:.2f} base RTTs)",
           max(delays) <= PEER_RTTS * r.base_rtt, "nic-1 never marks the plane down: it learns nothing of the port")
    worst = max(f.numbers["mrc_recover_us"])
    f.hold("fig09a.brief", f"at most {worst:.0f} µs (limit {_brief(r):.0f} µs)", worst <= _brief(r),
           "goodput stays below the new steady state for longer than the paper's second")
    f.notes.append(NO_GLITCH)
    return f


def fig09b(runs: Runs) -> Finding:
    r, f = runs.get("mrc"), Finding("fig09b")
    down, after = _during_after(f, r)
    f.hold("fig09b.half", f"{down:.3f}", abs(down / 0.5 - 1) <= STEP_TOL, "the fault's steady state is off half")
    _hold_dead(f, r, "fig09b.dead")
    back = f.numbers["mrc_recover_us"][-1]
    f.hold("fig09b.back", f"{after:.3f}, reached {M.RECOVERED:.0%} of it after {back:.0f} µs (limit "
           f"{_brief(r):.0f} µs)", after >= BARELY and back <= _brief(r), "the restored links stay unused")
    f.notes.append(NO_GLITCH)
    return f


def fig09c(runs: Runs) -> Finding:
    f = Finding("fig09c")
    for name in runs.transports:
        r = runs.get(name)
        ph = _base(f, r, name)
        worst = min(p.gbps for p in ph[1:]) / ph[0].gbps
        f.numbers[f"{name}_worst"] = worst
        f.numbers[f"{name}_retx"] = sum(r.retx.values())
        if name == "mrc":
            f.hold("fig09c.flat", f"{worst:.3f}; {sum(r.retx.values()):,} retransmissions", worst >= BARELY,
                   "dead paths keep their share of each QP's packets, each lost and resent")
            hold_mapped(f, r, "fig09c.mapped")
        else:
            f.row(f"{name} (ablation, not in the paper): worst phase as T0-T1 links go down one by one", "-",
                  f"{worst:.3f}; {sum(r.retx.values()):,} retransmissions")
    if "oblivious" in runs.transports:
        f.notes.append("Ablation: with EV state off (oblivious spraying, as RPS or NDP) every dead path keeps its "
                       "share of each QP's packets, each lost and resent; bandwidth falls with every link "
                       f"(worst phase {f.numbers['oblivious_worst']:.3f} of the start) where MRC's stays flat.")
    return f


def fig09d(runs: Runs) -> Finding:
    r, f = runs.get("mrc"), Finding("fig09d")
    during, after = _during_after(f, r)
    f.hold("fig09d.flat", f"{during:.3f}", during >= BARELY, "the dead links' paths keep losing packets")
    hold_mapped(f, r, "fig09d.mapped")
    f.hold("fig09d.back", f"{after:.3f}", after >= BARELY, "the restored paths stay unused")
    return f


def fig10(runs: Runs) -> Finding:
    r, f = runs.get("mrc"), Finding("fig10")
    during, after = _during_after(f, r)
    lo, hi = T0_BAND
    f.hold("fig10.share", f"{during:.3f}", lo <= during <= hi, "the fault's steady state is off one plane's share")
    _hold_dead(f, r, "fig10.dead")
    f.hold("fig10.back", f"{after:.3f}", after >= BARELY, "the plane stays unused after the switch returns")
    f.notes.append(NO_GLITCH)
    return f


def fig11(runs: Runs) -> Finding:
    r, f = runs.get("mrc"), Finding("fig11")
    during, after = _during_after(f, r)
    f.hold("fig11.flat", f"{during:.3f}", during >= BARELY, "the failed T1's paths keep losing packets")
    hold_mapped(f, r, "fig11.mapped")
    f.hold("fig11.back", f"{after:.3f}", after >= BARELY, "the T1's paths stay unused after it returns")
    f.numbers["link_down_drops"] = r.drops.get("link:link_down", 0)
    return f


EXPERIMENTS = [
    Experiment("fig09a", "fig09", "(a) T0-local: NIC-T0 links fail one by one, then recover", "fig09a.yaml",
               "Throughput steps down as each NIC-T0 link is taken offline and recovers as they are restored; "
               "the remote endpoint remaps its EVs when the link-state bitmap in SACKs says the port is down; "
               "brief interruptions (< 1 s) at each step.", fig09a),
    Experiment("fig09b", "fig09", "(b) T0-local: four NIC links flap together", "fig09b.yaml",
               "Stabilizes at about half the bandwidth while four of eight links are down, recovers rapidly "
               "when they return.", fig09b),
    Experiment("fig09c", "fig09", "(c) Cross-T1: 20 T0-T1 links fail one by one", "fig09c.yaml",
               "Minimal impact on throughput as twenty active T0-T1 links are taken down one per second.",
               fig09c),
    Experiment("fig09d", "fig09", "(d) Cross-T1: 8 T0-T1 links flap together", "fig09d.yaml",
               "Eight T0-T1 links down together and restored after a few seconds: negligible impact.", fig09d),
    Experiment("fig10", "fig10", "T0-local ib_write_bw during a T0 switch failure", "fig10.yaml",
               "After EV remapping the steady state drops by about 100 Gb/s (one plane's share), tracking the "
               "remaining capacity, as in Fig. 9a.", fig10),
    Experiment("fig11", "fig11", "Cross-T1 ib_write_bw during a T1 switch failure and recovery", "fig11.yaml",
               "No steady-state bandwidth degradation with four QPs; after the T1 returns, transient "
               "fluctuations subside.", fig11),
]
