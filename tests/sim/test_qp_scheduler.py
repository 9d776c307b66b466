"""The NIC's QP scheduler (fabric_sim/net/qp_scheduler.py) on one port that
takes 1 µs per packet, with room for one queued data packet."""

from __future__ import annotations

import math
from collections import deque

from fabric_sim.net.qp_scheduler import QpScheduler
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile, make_ev
from mrc_host.qp import UNSENT, Inflight
from mrc_wire import packet as W
from mrc_wire.constants import OP_ACK, OP_WRITE_ONLY
from mrc_wire.segment import Segment
from sim_core.sim import Sim
from tests.support.spy_nic import SpyNic

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


class Nic:
    """The NIC the scheduler sits in: its pipeline (the port) and what it tells its host."""

    def __init__(self, port: Port):
        self.port, self.held_psns = port, []

    def tx(self, raw: bytes, pad: int) -> None:
        self.port.take(raw, pad)

    def held(self, peer_qpn: int, psn: int) -> None:
        self.held_psns.append((self.port.sim.now, peer_qpn, psn))


def pkt(dqpn: int, psn: int, dscp: int = DATA, op: int = OP_WRITE_ONLY) -> bytes:
    return W.build(A, B, dscp, 0, 0, op, dqpn, psn, W.data_ext(1, 0, 100), bytes(100))


def setup():
    sim = Sim()
    port = Port(sim)
    sched = QpScheduler(sim, Nic(port), {1: port}, depth=1, control_dscp=CONTROL)
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


def test_the_nic_is_told_of_a_packet_held_and_it_enters_the_pipeline_when_it_leaves():
    """PSN 1 of peer QP 7 waits behind PSN 0 (sent at once): the NIC is told it holds it (its host then
    runs no timer on it), and it enters the pipeline at 1 µs, whose completion gives its send time."""
    sim, port, sched = setup()
    sched.transmit(pkt(7, 0))
    sched.transmit(pkt(7, 1))
    assert sched.nic.held_psns == [(0.0, 7, 1)] and port.sent == [(0, 7, 0)]
    sim.run(until=10)
    assert sched.nic.held_psns == [(0.0, 7, 1)] and port.sent == [(0, 7, 0), (1, 7, 1)]


def test_a_copy_held_is_not_sent_until_the_nic_says_and_a_resend_keeps_its_own_time_while_it_waits():
    """What the NIC hands the host (mrc_wire.pcie.Host): a first copy held has no send time (no
    timer, no loss detection); a resend held keeps its hand-over time; the completion stamps both
    with the time they left and the EV they took; every copy sent counts on its EV, one whose
    PSN was acknowledged meanwhile too."""
    sim = Sim()
    ep = Endpoint(sim, A, SpyNic())
    qp = ep.connect(3, 7, B, EvProfile([make_ev(0, 0)], {0: []}))
    first, resend = Inflight(Segment(0, 1, 0, 1, OP_WRITE_ONLY, 1, None), UNSENT, 0.0), \
        Inflight(Segment(1, 1, 0, 1, OP_WRITE_ONLY, 1, None), UNSENT, 2.0, retx=1)
    qp.inflight.update({0: first, 1: resend})
    ep.on_held(3, 0)
    ep.on_held(3, 1)
    assert (first.sent_at, resend.sent_at) == (math.inf, 2.0)
    for psn, ev in ((0, 0x11), (1, 0x21), (5, 0x31)):  # PSN 5: acknowledged meanwhile, no record to stamp
        sim.call_at(3.0, ep.on_sent, 3, psn, ev)
    sim.run(until=4.0)
    assert (first.sent_at, resend.sent_at, first.ev, resend.ev) == (3.0, 3.0, 0x11, 0x21)
    assert qp.ev_tx == {0x11: 1, 0x21: 1, 0x31: 1}  # what the NIC put on each EV


def test_with_every_port_down_data_waits_for_the_next_packet_after_one_is_up():
    sim, port, sched = setup()
    port.up = False
    sched.transmit(pkt(7, 0))
    sim.run(until=5)
    assert port.sent == []
    port.up = True
    sched.transmit(pkt(9, 0, dscp=CONTROL, op=OP_ACK))
    assert [(q, psn) for _, q, psn in port.sent] == [(9, 0), (7, 0)]  # the ACK, then the data it let out
