"""Workloads: who sends to whom, and that each pattern runs to the end."""

from __future__ import annotations

from collections import Counter

from fabric_sim import report
from fabric_sim.runner.run import run
from fabric_sim.scenario import Workload, workload
from tests.sim.helpers import exactly_once, make


def test_permutation_is_a_derangement():
    msgs = workload.build(Workload(pattern="permutation", message_bytes=1000), 16, seed=5)
    assert sorted(m.src for m in msgs) == sorted(m.dst for m in msgs) == list(range(16))
    assert all(m.src != m.dst for m in msgs)


def test_all_to_all_and_incast_pairs():
    a2a = workload.build(Workload(pattern="all_to_all", message_bytes=1000, messages=2, hosts=4), 16, seed=1)
    assert Counter((m.src, m.dst) for m in a2a) == {(a, b): 2 for a in range(4) for b in range(4) if a != b}
    inc = workload.build(Workload(pattern="incast", message_bytes=1000, fan_in=5, target=3), 16, seed=1)
    assert (
        len(inc) == 5
        and {m.dst for m in inc} == {3}
        and len({m.src for m in inc}) == 5
        and 3 not in {m.src for m in inc}
    )


def test_all_to_all_posts_each_senders_peers_in_nccls_schedule_so_no_receiver_is_shared_per_step():
    # NCCL's p2p schedule: rank r sends to r+1, r+2, ... in turn. Posted in rank order instead, every
    # sender began on the same receiver (a rotating incast: RoCE's 16 QPs per pair, served in posting order,
    # then brought bursts of 16 packets from every rank to one NIC at once).
    n = 8
    a2a = workload.build(Workload(pattern="all_to_all", message_bytes=1000, hosts=n), 16, seed=1)
    order = {a: [m.dst for m in a2a if m.src == a] for a in range(n)}
    assert all(order[a] == [(a + d) % n for d in range(1, n)] for a in range(n))
    for step in range(n - 1):
        assert sorted(order[a][step] for a in range(n)) == list(range(n))  # a permutation at every step


def test_ring_allreduce_runs_2_n_minus_1_steps():
    msgs = workload.build(Workload(pattern="ring_allreduce", message_bytes=4000, hosts=4), 16, seed=1)
    assert len(msgs) == 2 * 3 * 4 and {m.size for m in msgs} == {1000}  # one slice per chunk this small
    assert [m for m in msgs if m.start is not None] == msgs[:4]  # only step 0 starts on its own
    assert all(m.dst == (m.src + 1) % 4 and m.after is not None for m in msgs)


def test_ring_allreduce_and_incast_complete_on_the_fabric():
    ring = make({"pattern": "ring_allreduce", "message_bytes": 400_000, "hosts": 8})
    r = run(ring, ring.transports[0])
    assert exactly_once(r)
    # Every step link: each slice of step s >= 1 is posted only once the same
    # slice of step s-1 has arrived at its sender (8 hosts, 2(8-1) steps).
    arrived = {(m.dst, m.step, m.loop, m.slice): m.done_at for m in r.messages}
    later = [m for m in r.messages if m.step > 0]
    assert len(later) == len([m for m in r.messages if m.step == 0]) * 13 and len(later) >= 104
    assert all(0 <= arrived[(m.src, m.step - 1, m.loop, m.slice)] <= m.posted_at + 1e-9 for m in later)
    inc = make({"pattern": "incast", "message_bytes": 200_000, "fan_in": 7, "target": 0},
               topology={"planes": 2, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 4,
                         "congestion": {"ecn_threshold": 8, "trim_threshold": 16}})
    r = run(inc, inc.transports[0])
    assert exactly_once(r)
    # Seven senders into one 200 Gb/s NIC: the last hop trims, the NICs NACK, and all of it ends near 7x the ideal.
    assert r.events.get("trimmed", 0) > 0 and r.retx["nack"] > 0 and not r.drops.get("link:queue_full")
    assert max(report.fcts(r)) <= 7 * report.ideal_fct(r, 200_000) * 1.5


def test_spread_placement_puts_every_ring_hop_across_racks():
    w = Workload(pattern="ring_allreduce", message_bytes=8000, hosts=8, placement="spread")
    msgs = workload.build(w, 16, seed=1, hosts_per_t0=4)
    assert {m.src for m in msgs} == set(range(8))
    assert all(m.src // 4 != m.dst // 4 for m in msgs)  # racks of 4 hosts
    packed = workload.build(Workload(pattern="ring_allreduce", message_bytes=8000, hosts=8), 16, seed=1, hosts_per_t0=4)
    assert sum(m.src // 4 != m.dst // 4 for m in packed[:8]) == 2
