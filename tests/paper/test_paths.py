"""Figs. 12 to 14: a lossy EV is retired and its spare takes over; ECN
moves a flow off a shared EV (tolerances in mrc_paper/paths.py)."""

from __future__ import annotations

from mrc_paper import paths as P
from tests.paper.helpers import raw, run


def test_fig12_a_lossy_ev_is_retired_within_rtts_its_spare_takes_over_at_line_rate():
    runs, f = run("fig12")
    r = runs.get("mrc")
    assert f.numbers["mrc_delivered_once"] and f.numbers["oblivious_delivered_once"]
    assert f.numbers["mrc_line_share"] >= P.LINE_SHARE
    assert f.numbers["retire_us"] <= P.RETIRE_RTTS * r.base_rtt
    assert f.numbers["takeover"] >= P.TAKEOVER
    assert f.numbers["ev_a"] & 7 == f.numbers["ev_b"] & 7 == 3, "EV-B is EV-A's same-plane spare"
    # Ablation: without EV state the lossy EV keeps its share of packets, a fifth of them lost.
    assert f.numbers["oblivious_retx"] > 5 * f.numbers["mrc_retx"]
    assert [f.result(c).ok for c in ("fig12.line", "fig13.retired", "fig13.takeover")] == [True] * 3
    # Fig. 13's EV-A stays out: damping doubles the good probes its next restoration needs each time it fails
    # again soon after one.
    assert f.numbers["retirements"] == 1 and f.result("fig13.stays_out").ok


def test_fig13_without_damping_ev_a_keeps_coming_back_and_the_claim_says_so():
    ts = [dict(t, damping={"max_doublings": 0}) for t in raw("fig12")["transports"] if t["name"] == "mrc"]
    _, f = run("fig12", transports=ts)
    stays = f.result("fig13.stays_out")
    assert f.numbers["retirements"] > 1 and len(f.numbers["ev_a_back_us"]) >= f.numbers["retirements"] - 1
    assert not stays.ok and "damping is off" in stays.cause and "comes back" in stays.cause


def test_fig14_with_the_defaults_ecn_moves_one_flow_to_the_other_ev_and_both_run_near_line_rate():
    """NSCC, the default ECN threshold and EV response: client1 moves to EV-B, client2 stays on EV-A, both
    near line rate. The ablation that only skips a marked EV for a rotation leaves them sharing EV-A."""
    _, f = run("fig14")
    m, skip = f.numbers["mrc"], f.numbers["mrc-skip"]
    assert m["delivered_once"] and skip["delivered_once"]
    assert m["client1_on_ev_b"] >= P.TAKEOVER and m["client2_on_ev_a"] == 1.0
    assert min(m["rates"]) >= P.NEAR_LINE
    assert skip["client1_on_ev_b"] < 0.5 and min(skip["rates"]) < P.NEAR_LINE
    # The claims are held on the defaults, and hold.
    assert f.result("fig14.moves").ok and f.result("fig14.rates").ok
