"""ACK coalescing as UEC receivers do it (docs/nic.md "ACKs"), by the
receiver in B's NIC (nic_model/rx_track.py, its QP's `ack_bytes` from the
plan): a SACK once `ack_bytes` of payload arrived since the last one, and
at once on CE, on an arrival past the SACK bitmap's reach or one that
closes the first hole, on a duplicate and on the ack-request bit; the
sender sets that bit when its window fills, on a message's last packet
and on every resend. B alone behind its NIC's receive stage
(tests/support/nic_front.py): data frames written by hand, every frame
the NIC answers with captured."""

from __future__ import annotations

from mrc_host.cc import Aimd
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.settings import HostConfig
from mrc_wire import packet as W
from mrc_wire.constants import (
    DSCP_DEFAULTS,
    ECN_CE,
    ECT0,
    OP_SACK,
    OP_WRITE_FIRST,
    OP_WRITE_LAST,
    OP_WRITE_MIDDLE,
)
from sim_core.sim import Sim
from tests.support.nic_front import NicFront

A_ADDR, B_ADDR = "fd00:0:0:1::0:0", "fd00:0:0:1::1:1"
MTU = 1024
EV = EvProfile.spread(planes=2, spines=4, slots=8).home[0]
A_ADDR_B, B_ADDR_B = (
    bytes.fromhex("fd000000000000010000000000000000"),
    bytes.fromhex("fd000000000000010000000000010001"),
)


def sent_ev(frames: list[bytes], psn: int) -> int:
    return next(p.ev for p in map(W.parse, frames) if p.is_data and p.psn == psn)


class Receiver:
    def __init__(self, ack_bytes: int):
        self.sim = Sim()
        self.frames: list[bytes] = []
        self.nic = NicFront(B_ADDR, self.frames.append)
        self.b = Endpoint(self.sim, B_ADDR, self.nic.model, HostConfig(mtu=MTU, ack_bytes=ack_bytes))
        self.qp = self.b.connect(2, 1, A_ADDR, EvProfile.spread(planes=2, spines=4, slots=8, salt=4))
        self.a_addr = self.qp.peer_addr

    def data(self, psn: int, *, ecn: int = ECT0, ackreq: int = 0, op: int = OP_WRITE_MIDDLE, dscp: int = 8) -> None:
        """PSN `psn` of a 64-packet message, arriving now (DSCP TRIMMED: the NIC's notice of its trim)."""
        raw = W.build(self.a_addr, self.b.addr_bytes, dscp, ecn, EV, op, 2, psn,
                      W.data_ext(1, psn * MTU, 64 * MTU), bytes(MTU), ackreq=ackreq)
        self.nic.receive(raw)

    def acks(self) -> list[tuple[int, int, int]]:
        """(cum_psn, acked PSN, ecn_seen) of every SACK B's NIC sent."""
        out = []
        for p in map(W.parse, self.frames):
            if p.opcode == OP_SACK:
                _, mark, cum, psn, _ = p.sack()
                out.append((cum, psn, int(mark != 0)))
        return out


def test_an_ack_once_ack_bytes_of_payload_arrived():
    """4 KiB at 1 KiB a packet: PSNs 0-2 are coalesced, PSN 3 is ACKed (cum 4), then 4-6 wait again."""
    r = Receiver(ack_bytes=4 * MTU)
    for psn in range(7):
        r.data(psn, op=OP_WRITE_FIRST if psn == 0 else OP_WRITE_MIDDLE)
    assert r.acks() == [(4, 3, 0)]


def test_zero_ack_bytes_acks_every_packet():
    r = Receiver(ack_bytes=0)
    for psn in range(3):
        r.data(psn)
    assert r.acks() == [(1, 0, 0), (2, 1, 0), (3, 2, 0)]


def test_ce_is_acked_at_once():
    r = Receiver(ack_bytes=4 * MTU)
    r.data(0)
    r.data(1, ecn=ECN_CE)
    assert r.acks() == [(2, 1, 1)]


def test_the_ack_request_bit_is_answered_at_once():
    r = Receiver(ack_bytes=4 * MTU)
    r.data(0, ackreq=1)
    assert r.acks() == [(1, 0, 0)]


def test_a_trim_notice_does_not_send_the_ack_coalescing_held_back():
    """PSNs 0 and 1 arrive in order (2 KiB: held back); the NIC's notices that PSNs 2 and 3 were trimmed
    send nothing more (changed: the host's receiver flushed the held ACK on a trim; the NIC's NACK of
    the trim is on its way to the sender, and its receiver SACKs by its own rules alone). Their resends
    (which ask for an ACK) are answered at once, cum 4."""
    r = Receiver(ack_bytes=4 * MTU)
    r.data(0)
    r.data(1)
    r.data(2, dscp=DSCP_DEFAULTS["trimmed"])
    r.data(3, dscp=DSCP_DEFAULTS["trimmed_lasthop"])
    assert r.acks() == [] and r.b.stats.trim_notices == 2
    r.data(2)
    r.data(3, ackreq=1)
    assert r.acks() == [(4, 3, 0)]


def test_an_arrival_past_the_sack_bitmap_is_acked_at_once():
    """PSN 0 is missing: PSNs 1-64 are within the SACK bitmap's reach (cum 0 + 1 .. 64) and coalesced as
    in-order ones (an ACK per 4 KiB: PSNs 4, 8, ... 64, each SACKing what came before); PSN 66 is past it,
    ACKed at once (only its own ACK can name it), and so is PSN 65 after it."""
    r = Receiver(ack_bytes=4 * MTU)
    for psn in range(1, 65):
        r.data(psn)
    assert [psn for _, psn, _ in r.acks()] == list(range(4, 65, 4))
    r.data(66)
    r.data(65)
    assert r.acks()[16:] == [(0, 66, 0), (0, 65, 0)]


def test_the_arrival_that_closes_the_first_hole_is_acked_at_once():
    """PSN 0 is missing; PSNs 1 and 2 wait (2 KiB, within the bitmap); PSN 0 arrives: the cumulative PSN
    jumps to 3, ACKed at once. PSNs 3-5 are in order again and coalesced, PSN 6 makes 4 KiB."""
    r = Receiver(ack_bytes=4 * MTU)
    r.data(1)
    r.data(2)
    assert r.acks() == []
    r.data(0)
    assert r.acks() == [(3, 0, 0)]
    for psn in (3, 4, 5):
        r.data(psn)
    assert len(r.acks()) == 1
    r.data(6)
    assert r.acks()[1:] == [(7, 6, 0)]


def test_a_duplicate_is_acked_at_once():
    """A resend whose first copy got through, behind the cumulative point or among the PSNs past a hole:
    the sender learns at once that it was spurious."""
    r = Receiver(ack_bytes=4 * MTU)
    r.data(0)
    r.data(0)
    assert r.acks() == [(1, 0, 0)]
    r.data(2)  # past a hole, within the bitmap: coalesced
    r.data(2)  # a duplicate past the hole
    assert r.acks() == [(1, 0, 0), (1, 2, 0)]


def test_the_sender_requests_an_ack_when_its_window_fills_and_on_the_last_packet():
    """cwnd 4, an 8-packet message then a 2-packet one: PSNs 0-3 go out, PSN 3 (a middle packet)
    filling the window asks for an ACK; once ACKed, the message's last packet asks too."""
    sim, frames = Sim(), []
    a = Endpoint(sim, A_ADDR, NicFront(A_ADDR, frames.append).model, HostConfig(mtu=MTU))
    a.connect(1, 2, B_ADDR, EvProfile.spread(planes=2, spines=4, slots=8), cc=Aimd(cwnd=4.0))
    a.send_message(1, 8 * MTU)
    a.send_message(1, 2 * MTU)
    sent = [(p.psn, p.ackreq) for p in map(W.parse, frames) if p.is_data]
    assert sent == [(0, 0), (1, 0), (2, 0), (3, 1)]
    ack = W.build(B_ADDR_B, A_ADDR_B, 46, 0, 0, OP_SACK, 1, 3, W.sack_ext(sent_ev(frames, 3), 4, 3, 0))
    a.receive(ack)
    # The ACK grows AIMD's window by 1/4, to 4.25: PSNs 4-7 go out, 7 ending the first message
    # (and filling the window); the second message waits.
    ends = [(p.psn, p.ackreq, p.opcode) for p in map(W.parse, frames) if p.is_data][4:]
    assert ends == [(4, 0, OP_WRITE_MIDDLE), (5, 0, OP_WRITE_MIDDLE), (6, 0, OP_WRITE_MIDDLE), (7, 1, OP_WRITE_LAST)]
