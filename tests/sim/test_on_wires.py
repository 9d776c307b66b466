"""What a run still holds when it stops (fabric_sim.net.tally.on_wires): the
frames on a wire, whether sent by a plain or a pausable egress, and the
frames a pausable egress still queues. The packet totals' check
(sent + NACKs == delivered + dropped + in flight) rests on it."""

import random

from fabric_sim.net.links import CallReceiver, Egress
from fabric_sim.net.pfc import PfcEgress
from fabric_sim.net.tally import on_wires
from mrc_wire.frame import Frame
from sim_core.sim import Sim
from tests.sim.helpers import sized


def _drop(port: int, frame: Frame) -> None:
    pass


def test_frames_on_a_wire_are_in_flight_until_they_arrive():
    # 100 Gb/s, 1 µs of propagation: 1,250-byte frames depart at 0.1, 0.2, 0.3 µs and arrive 1 µs later.
    sim = Sim()
    e = Egress(sim, "a->b", 100.0, 1.0, CallReceiver(_drop), 0, data_cap=64, high_cap=64, rng=random.Random(0))
    for _ in range(3):
        e.send(sized(1250), False)
    sim.call_at(5.0, lambda: None)  # a timer pending all along: not a frame
    sim.run(until=0.6)
    assert on_wires(sim, [e]) == 3
    sim.run(until=1.15)
    assert on_wires(sim, [e]) == 2
    sim.run(until=2.0)
    assert on_wires(sim, [e]) == 0 and sim.pending() == 1


def test_a_pausable_egress_counts_its_queue_and_its_wire():
    # 1,000-byte frames at 100 Gb/s take 0.08 µs each; 0.5 µs of propagation.
    sim = Sim()
    e = PfcEgress(sim, "a->b", 100.0, 0.5, CallReceiver(_drop), 0, data_cap=64, high_cap=64, rng=None)
    for _ in range(4):
        e.send(sized(1000), False)
    sim.run(until=0.2)  # two sent (on the wire), one serializing, one waiting: both still queued here
    assert e.queued() == 2
    assert on_wires(sim, [e]) == 2 + 2
    sim.run()
    assert on_wires(sim, [e]) == 0
