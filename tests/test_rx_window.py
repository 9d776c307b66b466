"""The receiver's PSN window, now the NIC's (nic_model/rx_track.py): 1,024
PSNs ahead of the cumulative point (RX_WORDS 16 words of 64 bits), on both
sides of its edge and across the 24-bit wrap; a PSN past it is answered
with a NACK PSN_OOR_WINDOW and not handed to the host (changed: the
host's receiver took 65,536 PSNs and dropped the rest silently); the
sender keeps its new PSNs inside it. The numbers are literal so that a
changed window fails here."""

import random

from mrc_host.cc import Aimd
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.settings import HostConfig
from mrc_wire import packet as W
from mrc_wire.constants import ECT0, NACK_PSN_OOR_WINDOW, OP_NACK, OP_SACK, OP_WRITE_ONLY
from mrc_wire.entries import QpPeer
from nic_model import rx_track as R
from sim_core.sim import Sim
from tests.support.nic_front import NicFront

REVERSE_EV = 0x50001  # plane 1
A_ADDR, B_ADDR = bytes.fromhex("fd000000000000010000000000000000"), bytes.fromhex("fd000000000000010000000000010001")


def _rx(start: int) -> R.RxTrack:
    rx = R.RxTrack()
    rx.start(0, start)
    return rx


def _data(rx: R.RxTrack, psn: int) -> int:
    return rx.data(0, psn, 0x10001, False, False, 1024, 16384, False).kind


def test_the_last_psn_inside_the_window_is_accepted_and_the_first_past_it_refused():
    for start in (0, (1 << 24) - 10):  # and across the wrap
        rx = _rx(start)
        last, past = (start + 1_023) % (1 << 24), (start + 1_024) % (1 << 24)
        assert _data(rx, past) == R.BEYOND, start  # not recorded, counted
        assert _data(rx, last) == R.NEW and rx.ooo[0] == 1
        assert _data(rx, last) == R.DUPLICATE  # a second copy
        assert rx.cum[0] == start and (rx.beyond, rx.duplicates) == (1, 1)


def test_the_window_moves_with_the_cumulative_point():
    """PSN 1,024 is 1,023 past the new cumulative point 1, in the ring's word 0 again (PSN 0's, cleared)."""
    rx = _rx(0)
    assert _data(rx, 0) == R.NEW and rx.cum[0] == 1
    assert _data(rx, 1_024) == R.NEW
    assert _data(rx, 1_025) == R.BEYOND


def test_a_psn_past_the_window_is_nacked_psn_oor_window_on_the_reverse_ev():
    """The NIC's answer: a NACK naming the PSN, reason PSN_OOR_WINDOW, echoing the EV the data came on,
    on the QP's reverse EV of that plane, to the sender's QP; nothing for the host."""
    rx = _rx(0)
    rx.set_reverse(0, 1, REVERSE_EV)
    qp = QpPeer(2, 1, 0, True, True, 16384)
    data = W.Mrc(W.build(A_ADDR, B_ADDR, 8, ECT0, 0x30009, OP_WRITE_ONLY, 2, 1_024, W.data_ext(1, 0, 64), bytes(64)))
    kind, nack, ev = R.on_data(rx, qp, data, 46)
    assert nack is not None
    m = W.Mrc(R.on_ev(nack, ev))  # as the NIC sends it: on the reverse EV
    assert (kind, ev, m.ev, m.opcode, m.dqpn, m.dscp) == (R.BEYOND, REVERSE_EV, REVERSE_EV, OP_NACK, 1, 46)
    assert (m.src, m.dst) == (B_ADDR, A_ADDR)
    assert m.nack() == (0x30009, NACK_PSN_OOR_WINDOW, 1_024)
    assert rx.reverse[1] == REVERSE_EV  # a packet refused confirms no path


def test_the_sender_never_sends_a_new_psn_1024_or_more_past_its_cumulative_point():
    """MRC's maximum PSN range (the peer NIC's window, SETH mpr): a window of 4,096 packets and a
    2,000-packet message, yet PSNs 0-1,023 alone go out (new: the sender was bounded by its window
    alone); the SACK of PSN 0 (cum 1) lets out PSN 1,024 and no more."""
    sim, frames = Sim(), []
    a = Endpoint(sim, "fd00:0:0:1::0:0", NicFront("fd00:0:0:1::0:0", frames.append).model, HostConfig(mtu=1024))
    a.connect(1, 2, "fd00:0:0:1::1:1", EvProfile.spread(planes=2, spines=4, slots=8),
              cc=Aimd(cwnd=4096.0, max_cwnd=4096.0))
    a.send_message(1, 2000 * 1024)
    sent = [p for p in map(W.parse, frames) if p.is_data]
    assert [p.psn for p in sent] == list(range(1_024))
    a.receive(W.build(B_ADDR, A_ADDR, 46, 0, 0, OP_SACK, 1, 0, W.sack_ext(sent[0].ev, 1, 0, 0)))
    assert [p.psn for p in map(W.parse, frames[len(sent):]) if p.is_data] == [1_024]


def test_on_ev_writes_the_ev_and_returns_a_packet_already_on_it_as_it_is():
    rng = random.Random(5)
    for _ in range(200):
        p = rng.randbytes(64)
        ev = rng.getrandbits(32)
        want = bytearray(p)
        want[40:42] = (ev >> 16).to_bytes(2, "big")
        want[1] &= 0xF0
        want[2:4] = (ev & 0xFFFF).to_bytes(2, "big")
        got = R.on_ev(p, ev)
        assert got == bytes(want)
        assert R.on_ev(got, ev) is got  # already on it: nothing made
