"""The NIC's QP scheduler (fabric_sim/net/qp_scheduler.py) on one port that
takes 1 µs per packet, with room for one queued data packet."""

from __future__ import annotations

import math
from collections import deque
from types import SimpleNamespace

from fabric_sim.net.qp_scheduler import QpScheduler
from mrc_host.ev import EvProfile, make_ev
from mrc_host.qp import Inflight, QueuePair
from mrc_wire import packet as W
from mrc_wire.constants import OP_ACK, OP_WRITE_ONLY
from mrc_wire.segment import Segment
from sim_core.sim import Sim

A, B = bytes(16), bytes(15) + b"\x01"
DATA, CONTROL = 8, 46


class Port:
    """An egress port: each packet handed to it leaves 1 µs after the one before."""

    def __init__(self, sim: Sim):
        self.sim, self.up, self.departures, self.sent = sim, True, deque(), []

    def depth(self) -> int:
        while self.departures and self.departures[0] <= self.sim.now:
            self.departures.popleft()
        return len(self.departures)

    def head_departure(self) -> float | None:
        return self.departures[0] if self.departures else None

    def take(self, raw: bytes, pad: int) -> None:
        p = W.parse(raw, pad)
        self.sent.append((self.sim.now, p.dqpn, p.psn))
        if p.dscp != CONTROL:
            self.departures.append(max([self.sim.now, *self.departures]) + 1.0)


def pkt(dqpn: int, psn: int, dscp: int = DATA, op: int = OP_WRITE_ONLY) -> bytes:
    return W.build(A, B, dscp, 0, 0, op, dqpn, psn, W.data_ext(1, 0, 100), bytes(100))


def setup():
    sim = Sim()
    port = Port(sim)
    sched = QpScheduler(sim, port.take, {1: port}, depth=1, control_dscp=CONTROL)
    return sim, port, sched


def test_waiting_qps_go_to_the_wire_round_robin_as_the_port_drains():
    """QP 7 hands over PSNs 0-2 and QP 9 PSNs 0-1 at once: 7/0 goes at once, then one packet per QP in
    turn, each when the packet before it leaves: 7/1, 9/0, 7/2, 9/1 at 1, 2, 3 and 4 µs."""
    sim, port, sched = setup()
    for raw in (pkt(7, 0), pkt(7, 1), pkt(7, 2), pkt(9, 0), pkt(9, 1)):
        sched.transmit(raw)
    sim.run(until=10)
    assert port.sent == [(0, 7, 0), (1, 7, 1), (2, 9, 0), (3, 7, 2), (4, 9, 1)]


def test_control_packets_pass_the_waiting_data():
    sim, port, sched = setup()
    sched.transmit(pkt(7, 0))
    sched.transmit(pkt(7, 1))
    sched.transmit(pkt(9, 5, dscp=CONTROL, op=OP_ACK))
    assert port.sent == [(0, 7, 0), (0, 9, 5)]


def test_a_packet_is_stamped_sent_when_it_leaves_the_scheduler():
    """QP 3 (peer QP 7) is told its PSN 1 waits behind PSN 0 (sent at once, as the endpoint said),
    not sent (infinity: no timer runs on it), and then that it left at 1 µs, the start of its RTT."""
    sim, port, sched = setup()
    told = []
    qp = SimpleNamespace(peer_qpn=7, released=lambda psn, at: told.append((psn, at)))
    sched.serve(SimpleNamespace(qp_to={7: qp}.get))  # the endpoint's QP by its peer's number
    sched.transmit(pkt(7, 0))
    sched.transmit(pkt(7, 1))
    assert told == [(1, math.inf)]
    sim.run(until=10)
    assert told == [(1, math.inf), (1, 1.0)]


def test_a_qp_takes_a_release_time_for_its_latest_copy_and_a_resend_keeps_its_own_while_it_waits():
    qp = QueuePair(3, 7, bytes(16), EvProfile([make_ev(0, 0)], {0: []}))
    first, resend = Inflight(Segment(0, 1, 0, 1, OP_WRITE_ONLY, 1, None), 1, 0.0), \
        Inflight(Segment(1, 1, 0, 1, OP_WRITE_ONLY, 1, None), 1, 2.0, retx=1)
    qp.inflight.update({0: first, 1: resend})
    qp.released(0, math.inf)
    qp.released(1, math.inf)
    assert (first.sent_at, resend.sent_at) == (math.inf, 2.0)
    qp.released(0, 3.0)
    qp.released(1, 3.0)
    qp.released(5, 3.0)  # acknowledged meanwhile: nothing to tell
    assert (first.sent_at, resend.sent_at) == (3.0, 3.0)


def test_with_every_port_down_data_waits_for_the_next_packet_after_one_is_up():
    sim, port, sched = setup()
    port.up = False
    sched.transmit(pkt(7, 0))
    sim.run(until=5)
    assert port.sent == []
    port.up = True
    sched.transmit(pkt(9, 0, dscp=CONTROL, op=OP_ACK))
    assert [(q, psn) for _, q, psn in port.sent] == [(9, 0), (7, 0)]  # the ACK, then the data it let out
