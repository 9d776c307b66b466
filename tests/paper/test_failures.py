"""Figs. 9 to 11: throughput while links and switches fail, held to the
paper's shares (tolerances in mrc_paper/failures.py)."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from mrc_host.ev import make_ev
from mrc_paper import failures as F
from mrc_paper import metrics as M
from mrc_paper.experiments import Finding, Runs
from tests.paper.helpers import only, raw, run


@pytest.fixture(scope="module")
def fig09a_short() -> tuple[Runs, Finding]:
    # Three of nic-0's links down one at a time, then back: 7 phases of 120 µs.
    events = raw("fig09a")["events"]
    ups = [{"at_us": 480 + 120 * i, "nic_port_up": e["nic_port_down"]} for i, e in enumerate(reversed(events[:3]))]
    return run("fig09a", events=events[:3] + ups, workload__flows=[
        {"src": "nic-0", "dst": "nic-1", "messages": 76}, {"src": "nic-1", "dst": "nic-0", "messages": 76}])


def test_fig09a_each_nic_link_down_costs_one_planes_share_and_the_peer_learns_within_an_rtt(fig09a_short):
    runs, f = fig09a_short
    ratios = f.numbers["mrc_ratio"]
    assert len(ratios) == 7 and f.numbers["mrc_delivered_once"]
    for got, down in zip(ratios[1:], [1, 2, 3, 2, 1, 0], strict=True):
        assert abs(got / ((8 - down) / 8) - 1) <= F.STEP_TOL, (down, got, ratios)
    assert f.numbers["peer_delay_us"] <= F.PEER_RTTS * runs.get("mrc").base_rtt
    # The transient after each of the 6 events, measured: the model remaps at once, so each is one 10 µs bin.
    assert f.numbers["mrc_recover_us"] == [10.0] * 6 and min(f.numbers["mrc_dip"]) > 0.9
    assert [f.result(c).ok for c in ("fig09a.steps", "fig09a.dead", "fig09a.peer", "fig09a.brief")] == [True] * 4


def test_a_packet_on_a_plane_the_instant_it_comes_back_is_not_sent_onto_a_dead_plane(fig09a_short):
    """A phase's last bin holds the instant of the event that ends it: a
    packet sent there on the plane that event brings back is not counted as
    sent onto a dead plane; one on a plane still down is."""
    runs, _ = fig09a_short
    r = runs.get("mrc")
    assert F._dead_share(r) == 0.0
    p = next(p for p in M.phases(r) if p.end == 600.0)  # at 600 µs the last link down comes back
    back = F._down(r.scenario, p.start) - F._down(r.scenario, p.end)
    [plane], still = back, min(F._down(r.scenario, p.end))
    flow = next(iter(r.timeline.ev_tx))
    i = r.timeline.t.index(p.end)
    for on, dead in ((plane, False), (still, True)):
        per_ev = copy.deepcopy(r.timeline.ev_tx)
        per_ev[flow].setdefault(make_ev(on, 0), [0] * len(r.timeline.t))[i] += 1
        share = F._dead_share(dataclasses.replace(r, timeline=dataclasses.replace(r.timeline, ev_tx=per_ev)))
        assert (share > 0) == dead, (on, share)


def test_fig09b_four_links_flapping_together_halve_the_bandwidth_then_give_it_back():
    _, f = run("fig09b")
    before, down, after = f.numbers["mrc_ratio"]
    assert abs(down / 0.5 - 1) <= F.STEP_TOL and after >= F.BARELY and f.numbers["mrc_delivered_once"]


def test_fig09c_t0_t1_links_failing_one_by_one_barely_move_mrc_but_cost_oblivious_spraying():
    events = raw("fig09c")["events"][:4]
    flows = [{"src": "nic-0", "dst": "nic-4", "messages": 66}, {"src": "nic-4", "dst": "nic-0", "messages": 66}]
    _, f = run("fig09c", events=events, workload__flows=flows)
    assert f.numbers["mrc_delivered_once"] and f.numbers["oblivious_delivered_once"]
    assert f.numbers["mrc_worst"] >= F.BARELY
    # What path feedback buys: without EV state every dead path keeps its share of packets.
    assert f.numbers["oblivious_worst"] < f.numbers["mrc_worst"] - 0.02
    assert f.numbers["oblivious_retx"] > 10 * f.numbers["mrc_retx"]


def test_fig09d_eight_t0_t1_links_flapping_together_barely_move_throughput():
    _, f = run("fig09d")
    assert min(f.numbers["mrc_ratio"][1:]) >= F.BARELY and f.numbers["mrc_delivered_once"]


def test_fig10_a_t0_switch_down_costs_one_planes_share_of_the_no_failure_bandwidth():
    _, f = run("fig10")
    before, during, after = f.numbers["mrc_ratio"]
    lo, hi = F.T0_BAND
    assert lo <= during <= hi and after >= F.BARELY and f.numbers["mrc_delivered_once"]


def test_fig11_a_t1_switch_down_costs_no_steady_state_bandwidth():
    _, f = run("fig11")
    before, during, after = f.numbers["mrc_ratio"]
    assert during >= F.BARELY and after >= F.BARELY and f.numbers["mrc_delivered_once"]
    assert f.numbers["link_down_drops"] > 0, "the failure must have hit traffic"


def test_only_keeps_the_named_transports():
    assert [t["name"] for t in only("fig09c", "mrc")["transports"]] == ["mrc"]
