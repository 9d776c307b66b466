"""MRC's default ACKs (docs/nic.md "ACKs"): the NIC's receiver SACKs per
16 KiB of in-order payload (4 packets at a 4 KiB MTU), written once
(mrc_wire.constants.ACK_BYTES, which the scenario's `endpoint.ack_bytes`
and a QP as the host creates it, mrc_wire.pcie.QpCreate, default to), and a
sender that never waits on an ACK that coalescing holds back."""

from __future__ import annotations

from fabric_sim.scenario import EndpointCfg
from mrc_host.cc import Aimd
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.settings import HostConfig
from mrc_wire import packet as W
from mrc_wire.constants import ACK_BYTES, ECT0, OP_SACK, OP_WRITE_MIDDLE
from mrc_wire.pcie import QpCreate
from sim_core.sim import Sim
from tests.support.app import Recorder
from tests.support.nic_front import NicFront
from tests.support.path_fabric import PathFabric

A_ADDR, B_ADDR = "fd00:0:0:1::0:0", "fd00:0:0:1::1:1"
MTU = 4096


def test_the_default_is_16_kib_in_one_place():
    assert ACK_BYTES == 16384 and EndpointCfg().ack_bytes == ACK_BYTES and QpCreate(1, 2, (0,)).ack_bytes == ACK_BYTES \
        and HostConfig().ack_bytes == ACK_BYTES


def test_by_default_a_clean_message_gets_an_ack_per_4_full_packets():
    """16 in-order middle packets of 4 KiB, no CE, no ack request: ACKs on PSNs 3, 7, 11, 15 (cum 4 ... 16)."""
    sim, frames = Sim(), []
    nic = NicFront(B_ADDR, frames.append)
    b = Endpoint(sim, B_ADDR, nic.model, HostConfig(mtu=MTU))
    qp = b.connect(2, 1, A_ADDR, EvProfile.spread(planes=2, spines=4, slots=8))
    ev = EvProfile.spread(planes=2, spines=4, slots=8, salt=4).home[0]
    for psn in range(16):
        nic.receive(W.build(qp.peer_addr, b.addr_bytes, 8, ECT0, ev, OP_WRITE_MIDDLE, 2, psn,
                          W.data_ext(1, psn * MTU, 64 * MTU), bytes(MTU)))
    acks = [p.sack() for p in map(W.parse, frames) if p.opcode == OP_SACK]
    assert [(cum, psn) for _, _, cum, psn, _ in acks] == [(4, 3), (8, 7), (12, 11), (16, 15)]


class Pair:
    """A sends to B over the path fabric (10 µs each way, no rate) with a
    window of `cwnd` packets that stays so (AIMD grows per ACK: a fixed
    window compares the ACKs alone)."""

    def __init__(self, ack_bytes: int, cwnd: float):
        self.sim = Sim()
        self.fab = PathFabric(self.sim)
        app = Recorder(lambda: self.sim.now)
        self.done = app.at  # when each message was delivered
        self.a = Endpoint(self.sim, A_ADDR, self.fab.nic(A_ADDR), HostConfig(mtu=MTU, ack_bytes=ack_bytes))
        self.b = Endpoint(self.sim, B_ADDR, self.fab.nic(B_ADDR), HostConfig(mtu=MTU, ack_bytes=ack_bytes), app)
        self.a.connect(1, 2, B_ADDR, EvProfile.spread(planes=2, spines=4, slots=8),
                       cc=Aimd(cwnd=cwnd, max_cwnd=cwnd))
        self.b.connect(2, 1, A_ADDR, EvProfile.spread(planes=2, spines=4, slots=8))

    def run(self, messages: list[int]) -> list[float]:
        for size in messages:
            self.a.send_message(1, size)
        self.sim.run(until=10_000, stop=self.a.idle)
        return self.done


def test_a_message_not_a_multiple_of_16_kib_completes_without_a_timeout():
    """3 messages of 10.5 packets (40 KiB + 2 KiB: not a multiple of 16 KiB), a window of 6 packets:
    coalescing holds an ACK back until 4 packets arrived, yet the sender's ack requests (on the packet
    that fills its window, on a message's last) keep it going. Each message is delivered when it is with
    an ACK per packet (at 30, 70 and 110 µs: round trips of 20 µs), with 15 ACKs instead of 33; no
    timeout and no tail probe fired, nothing was resent."""
    size = 10 * MTU + 2048
    per_packet = Pair(ack_bytes=0, cwnd=6.0)
    coalesced = Pair(ack_bytes=ACK_BYTES, cwnd=6.0)
    assert per_packet.run([size] * 3) == [30.0, 70.0, 110.0]
    assert coalesced.run([size] * 3) == [30.0, 70.0, 110.0]
    assert (per_packet.fab.front(per_packet.b).sacks, coalesced.fab.front(coalesced.b).sacks) == (33, 15)
    assert (coalesced.a.stats.timeouts, coalesced.a.stats.tail_probes, coalesced.a.stats.retransmits) == (0, 0, 0)
