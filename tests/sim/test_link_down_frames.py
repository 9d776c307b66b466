"""A link that goes down loses what is on it and what is sent to it, and
counts every such frame as `link_down`; frames sent before are delivered."""

import random

from fabric_sim.net.links import CallReceiver, Egress
from sim_core.sim import Sim
from tests.sim.helpers import sized


def _egress(sim: Sim, got: list) -> Egress:
    # 100 Gb/s, 1 µs of propagation: a 1,250-byte frame takes 0.1 µs to send.
    return Egress(sim, "a->b", 100.0, 1.0, CallReceiver(lambda port, frame: got.append((sim.now, frame))), 3,
                  data_cap=64, high_cap=64, rng=random.Random(0))


def test_frames_on_the_wire_when_the_link_goes_down_are_counted_lost():
    sim, got = Sim(), []
    e = _egress(sim, got)
    for i in range(3):
        e.send(sized(1250, i), False)  # arrive at 1.1, 1.2, 1.3 µs
    sim.call_at(1.15, e.set_up, False)  # the first has arrived, two are on the wire
    sim.run(until=10.0)
    assert [f.eth[0] for _, f in got] == [0] and e.drops == {"link_down": 2}
    e.send(sized(100), False)  # sent while down: lost at once
    e.send(sized(100), True)
    assert e.drops == {"link_down": 4} and e.tx_pkts == 3


def test_frames_sent_after_the_link_comes_back_arrive():
    sim, got = Sim(), []
    e = _egress(sim, got)
    e.set_up(False)
    e.set_up(True)
    e.send(sized(1250), False)
    sim.run(until=10.0)
    assert len(got) == 1 and abs(got[0][0] - 1.1) < 1e-9 and e.drops == {}
