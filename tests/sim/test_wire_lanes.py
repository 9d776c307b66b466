"""Frames on a wire wait in a FIFO per queue (fabric_sim.links.Lane), only
the first in the event heap: the heap stays one entry per busy wire, and
the frames still arrive exactly when, and in the order, one heap entry
per frame would give (equal times in the order they were sent)."""

import random

from fabric_sim.links import Egress
from fabric_sim.tally import on_wires
from sim_core.sim import Sim

SIZE = 1250  # bytes: 0.1 µs at 100 Gb/s


def _egress(sim: Sim, name: str, prop: float, log: list) -> Egress:
    def deliver(port: int, frame: bytes, pad: int) -> None:
        log.append((round(sim.now, 9), name, frame))
    return Egress(sim, name, 100.0, prop, deliver, 1, data_cap=100, high_cap=100, rng=random.Random(0))


def test_a_busy_wire_is_one_heap_entry_and_delivers_in_order():
    sim, log = Sim(), []
    eg = _egress(sim, "a", 1.0, log)
    for i in range(5):
        eg.send(bytes([i]) * SIZE, False)
    assert sim.pending() == 1  # the first frame; four wait behind it
    assert on_wires(sim, [eg]) == 5
    sim.run()
    # departures 0.1 .. 0.5 µs, 1 µs of propagation
    assert [(t, f[0]) for t, _, f in log] == [(1.1, 0), (1.2, 1), (1.3, 2), (1.4, 3), (1.5, 4)]
    assert on_wires(sim, [eg]) == 0


def _exact(sim: Sim, name: str, prop: float, log: list) -> Egress:
    """1.024 Gb/s: a 128-byte frame takes exactly 1 µs, so arrivals tie exactly."""
    def deliver(port: int, frame: bytes, pad: int) -> None:
        log.append((sim.now, name))
    return Egress(sim, name, 1.024, prop, deliver, 1, data_cap=100, high_cap=100, rng=random.Random(0))


def test_equal_arrivals_run_in_the_order_the_frames_were_sent():
    """a sends two frames (arriving at 2 and 3 µs), then b one (1 µs on the wire, 2 µs of propagation:
    3 µs). At 3 µs a's second frame, sent before b's, arrives first, though it entered the heap only when
    a's first arrived, after b's had: its place among equal times is the one it drew when it was sent."""
    sim, log = Sim(), []
    a, b = _exact(sim, "a", 1.0, log), _exact(sim, "b", 2.0, log)
    a.send(bytes(128), False)
    a.send(bytes(128), False)
    b.send(bytes(128), False)
    sim.run()
    assert log == [(2.0, "a"), (3.0, "a"), (3.0, "b")]
    log.clear()
    b.send(bytes(128), False)  # now b first, arriving at 6 µs (4 + 2); a's at 5 and 6: the tie goes to b
    a.send(bytes(128), False)
    a.send(bytes(128), False)
    sim.run()
    assert log == [(5.0, "a"), (6.0, "b"), (6.0, "a")]


def test_a_frame_due_before_those_waiting_overtakes_them():
    """The wire's added delay falls from 5 µs to 0 while two frames are on it: the third, due at 1.3 µs,
    arrives before them (5.1 and 5.2 µs), as a frame scheduled on its own would."""
    sim, log = Sim(), []
    eg = _egress(sim, "a", 1.0, log)
    eg.extra = 5.0
    eg.send(b"\x01" * SIZE, False)
    eg.send(b"\x02" * SIZE, False)
    eg.extra = 0.0
    eg.send(b"\x03" * SIZE, False)
    assert on_wires(sim, [eg]) == 3
    sim.run()
    assert [(t, f[0]) for t, _, f in log] == [(1.3, 3), (6.1, 1), (6.2, 2)]


def test_the_high_queue_has_its_own_lane():
    """A control frame sent behind two data frames leaves first (0.1 µs after the one on the wire) and
    arrives before the second data frame: the queues' wires are separate FIFOs."""
    sim, log = Sim(), []
    eg = _egress(sim, "a", 1.0, log)
    eg.send(b"\x01" * SIZE, False)
    eg.send(b"\x02" * SIZE, False)
    eg.send(b"\x09" * SIZE, True)
    assert sim.pending() == 2
    sim.run()
    assert [f[0] for _, _, f in log] == [1, 9, 2]
