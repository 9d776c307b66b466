"""Simulator features the paper's experiments need: explicit flows, EV
pinning, receive-side loss at every NIC, loss on one EV, EV traces."""

from __future__ import annotations

from fabric_sim.runner.run import run
from mrc_wire.constants import ev_plane, ev_spine
from tests.sim.helpers import exactly_once, make

TWO_RACKS = {"planes": 2, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 2}


def test_receive_side_loss_drops_only_what_enters_nics_and_everything_arrives_once():
    sc = make({"pattern": "permutation", "message_bytes": 200_000},
              events=[{"at_us": 0, "nic_rx_loss": {"rate": 0.02}}])
    fabs = []
    r = run(sc, sc.transports[0], hooks=[(0.0, fabs.append)])
    lossy = {e.name for e in fabs[0].egresses() if e.drops.get("random_loss")}
    assert lossy and all(n.startswith("t0-") and "->nic-" in n for n in lossy)
    assert exactly_once(r) and r.retx["sack"] > 0


def test_flows_with_a_pin_use_only_the_pinned_spine_and_the_trace_counts_every_packet():
    flows = [{"src": "nic-0", "dst": "nic-2", "messages": 2, "pin": {"plane": 1, "spines": [1], "backups": [0]}},
             {"src": "nic-1", "dst": "nic-3", "start_us": 5}]
    sc = make({"pattern": "flows", "message_bytes": 100_000, "flows": flows}, topology=TWO_RACKS)
    r = run(sc, sc.transports[0])
    assert exactly_once(r) and len(r.messages) == 3
    pinned = r.timeline.ev_tx["0->2"]
    assert {(ev_plane(e), ev_spine(e)) for e in pinned} == {(1, 1)}
    assert sum(sum(s) for s in pinned.values()) >= 2 * 100_000 // 4096
    assert all(len(s) == len(r.timeline.t) for s in pinned.values())
    assert {ev_plane(e) for e in r.timeline.ev_tx["1->3"]} == {0, 1}  # not pinned: both planes
    assert min(m.posted_at for m in r.messages if m.src == 1) == 5


def test_loss_on_one_ev_retires_it_with_a_timestamp_and_its_spare_carries_the_rest():
    flows = [{"src": "nic-0", "dst": "nic-2", "messages": 20, "pin": {"plane": 0, "spines": [0], "backups": [1]}}]
    # One EV in the rotation: no floor (ev_min_active 0), or the loss could not retire it.
    sc = make({"pattern": "flows", "message_bytes": 100_000, "flows": flows}, topology=TWO_RACKS,
              transports=[{"name": "mrc", "kind": "mrc", "evs_per_qp": 16, "ev_min_active": 0}],
              events=[{"at_us": 20, "ev_loss": {"nic": "nic-0", "plane": 0, "rate": 0.5}}])
    r = run(sc, sc.transports[0])
    assert exactly_once(r) and r.drops.get("link:ev_loss")
    retired = [(t, ev) for t, ev, event, st in r.timeline.ev_log["0->2"] if st == "ASSUMED_BAD"]
    assert retired and 20 <= retired[0][0] < 20 + 3 * r.base_rtt  # within a few RTTs
    a = retired[0][1]
    [b] = [ev for ev in r.timeline.ev_tx["0->2"] if ev != a]
    assert ev_spine(b) == 1 and sum(r.timeline.ev_tx["0->2"][b]) > sum(r.timeline.ev_tx["0->2"][a])
