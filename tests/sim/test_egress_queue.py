"""The data queue's depth as a switch reads it: packets whose departure is
still ahead, the one on the wire included, however long the queue has
been running (departed entries are cut off in blocks); and the event
loop's garbage-collector setting around a run."""

import gc
import random

from fabric_sim.net.links import CallReceiver, Egress
from sim_core.sim import Sim, gc_frozen
from tests.sim.helpers import sized

SIZE = 1250  # bytes: 0.1 µs at 100 Gb/s


def _egress(sim: Sim) -> Egress:
    return Egress(sim, "a->b", 100.0, 0.5, CallReceiver(lambda port, frame: None), 1, data_cap=10_000, high_cap=10,
                  rng=random.Random(0))


def test_depth_counts_the_packets_not_yet_departed_across_block_cuts():
    """600 packets queued at 0 leave every 0.1 µs: at 30.05 µs, 300 have left (past the 16 at which the
    departed are cut off), 300 remain, the next leaving at 30.1 µs; at 59.95 µs one remains."""
    sim = Sim()
    eg = _egress(sim)
    for _ in range(600):
        eg.send(sized(SIZE), False)
    assert eg.depth() == 600
    sim.call_at(30.05, lambda: None)
    sim.run(until=30.05)
    assert eg.depth() == 300
    assert abs(eg.head_departure() - 30.1) < 1e-9
    sim.call_at(59.95, lambda: None)
    sim.run(until=59.95)
    assert eg.depth() == 1
    eg.send(sized(SIZE), False)  # queued behind the last: leaves at 60.1 µs
    assert eg.depth() == 2
    sim.call_at(60.2, lambda: None)
    sim.run(until=60.2)
    assert eg.depth() == 0 and eg.head_departure() is None


def test_a_full_data_queue_drops_after_block_cuts():
    sim = Sim()
    eg = _egress(sim)
    eg.data_cap = 300
    for _ in range(301):
        eg.send(sized(SIZE), False)
    assert eg.drops == {"queue_full": 1}
    sim.call_at(29.95, lambda: None)
    sim.run(until=29.95)  # 299 left: room for 299 more, not 300
    for _ in range(300):
        eg.send(sized(SIZE), False)
    assert eg.depth() == 300 and eg.drops == {"queue_full": 2}


def test_a_run_freezes_what_exists_pauses_the_collector_and_restores_it():
    assert gc.isenabled()
    with gc_frozen():
        assert gc.get_freeze_count() > 0
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_the_high_priority_queue_holds_high_cap_however_long_it_runs():
    """10 high-priority packets fit, the 11th is dropped; each round drains them all, and 30 rounds (300
    departures, past the 16 at which the departed are cut off) hold the same cap; half drained, 5 more fit."""
    sim = Sim()
    eg = _egress(sim)
    t = 0.0
    for round_ in range(30):
        for _ in range(11):
            eg.send(sized(SIZE), True)
        assert eg.drops == {"queue_full": round_ + 1}
        t += 1.05  # 10 x 0.1 µs: all gone
        sim.call_at(t, lambda: None)
        sim.run(until=t)
    for _ in range(10):
        eg.send(sized(SIZE), True)
    t += 0.55  # 5 of them have left
    sim.call_at(t, lambda: None)
    sim.run(until=t)
    for _ in range(6):
        eg.send(sized(SIZE), True)
    assert eg.drops == {"queue_full": 31} and eg.tx_pkts == 30 * 10 + 15


def test_a_busy_link_keeps_few_departed_entries():
    """1,000 packets, each sent as the one before leaves: the lists of both queues keep under 2 x 16 entries
    (each a boxed float: kept, they were most of a run's heap)."""
    sim = Sim()
    eg = _egress(sim)
    for i in range(1000):
        t = 0.1 * i + 0.05
        sim.call_at(t, lambda: None)
        sim.run(until=t)
        eg.send(sized(SIZE), i % 2 == 0)
    assert eg.depth() == 1
    assert len(eg.departures) < 32 and len(eg.hi_departures) < 32
