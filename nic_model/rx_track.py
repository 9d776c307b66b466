"""The MRC receiver in the NIC's data plane, stage for stage as
p4src/nic/rx_track.p4 (DESIGN.md section 5, receive step 3; docs/nic.md,
"The receiver in the pipeline").

Per QP, in registers (arrays indexed by the QP's receive index): the
cumulative PSN (`cum`, the first PSN not received), a circular bitmap of
RX_WORDS 64-bit words (bit psn % 64 of word (psn / 64) % RX_WORDS; every
bit of a PSN below `cum` is 0, so the ring is reused as `cum` moves),
payload bytes since the last SACK, payload bytes received, the PSNs held
out of order, and the reverse EV of each plane (where the QP's SACKs go).

A data packet is new, a duplicate (its bit set, or behind `cum`), or
beyond the window (RX_WINDOW PSNs from `cum`). `cum` then advances over
the received PSNs: RX_ADVANCE_STEPS words at most per packet (a P4
pipeline has no loops: each step is one word's register access and one
lookup of the trailing-ones table); what is left is caught up by the next
packets. A SACK goes at once on a duplicate, a CE mark, the ack-request
bit, a hole opening or closing, else once `ack_bytes` of payload arrived;
its bitmap is PSNs cum+1 .. cum+64 (sack_offset 2 from cack_psn).
"""

from __future__ import annotations

from typing import Final, final

from mrc_wire import packet as W
from mrc_wire.constants import (
    ECN_CE,
    NACK_PSN_OOR_WINDOW,
    OP_SACK,
    PSN_MOD,
    RX_ADVANCE_STEPS,
    RX_WINDOW,
    RX_WORDS,
    SACK_BITS,
    SETH_M_NONE,
    SETH_M_SKIP_ONCE,
    ev_plane,
)
from mrc_wire.entries import QpPeer
from nic_model.reply import on_ev as on_ev

_HALF: Final = PSN_MOD >> 1
_MASK: Final = PSN_MOD - 1
_ONES: Final = (1 << 64) - 1
NEW: Final = 0
DUPLICATE: Final = 1
BEYOND: Final = 2


def trailing_ones(x: int) -> int:
    """The count of consecutive 1 bits of `x` from bit 0 (the P4's ternary
    table `trailing_ones`: 65 entries)."""
    return ((x ^ _ONES) & -(x ^ _ONES)).bit_length() - 1 if x != _ONES else 64


@final
class Verdict:
    """What the receiver decided of one data packet (a plain class: a
    NamedTuple's constructor is a Python call, compiled)."""

    __slots__ = ("kind", "sack", "reverse_ev", "cum", "bitmap", "ooo", "rcvd")

    def __init__(self, kind: int, sack: bool, reverse_ev: int, cum: int, bitmap: int, ooo: int, rcvd: int):
        self.kind = kind  # NEW, DUPLICATE or BEYOND
        self.sack = sack  # a SACK goes now
        self.reverse_ev = reverse_ev  # the EV the SACK (or the window NACK) leaves on
        self.cum = cum  # after the update
        self.bitmap = bitmap  # PSNs cum+1 .. cum+64
        self.ooo = ooo  # PSNs held out of order
        self.rcvd = rcvd  # payload bytes received (CC_STATE counts 256-byte units of it)


class RxTrack:
    """The receive registers of every offloaded QP of one NIC."""

    __slots__ = ("cum", "words", "unacked", "rcvd", "ooo", "reverse", "duplicates", "beyond", "reorder")

    def __init__(self) -> None:
        # Registers of the QPs with receive indices 0 .. n-1 (grown as QPs
        # are installed: a model of 1,024 NICs holds what its QPs use, not
        # the P4's NIC_MAX_QPS of each).
        self.cum: list[int] = []
        self.words: list[int] = []
        self.unacked: list[int] = []
        self.rcvd: list[int] = []
        self.ooo: list[int] = []
        self.reverse: list[int] = []  # (QP, plane) -> EV: [q * 8 + plane]
        self.duplicates = 0
        self.beyond = 0
        self.reorder = [0] * 25  # arrivals d PSNs past cum, by d's bit length (d = 0 in [0])

    def ensure(self, q: int) -> None:
        """Registers for receive index `q` (zero, as the P4's at start-up)."""
        n = q + 1 - len(self.cum)
        if n > 0:
            for a in (self.cum, self.unacked, self.rcvd, self.ooo):
                a.extend([0] * n)
            self.words.extend([0] * (n * RX_WORDS))
            self.reverse.extend([0] * (n * 8))

    def set_reverse(self, q: int, plane: int, ev: int) -> None:
        """The host's write of a QP's reverse EV of `plane`."""
        self.ensure(q)
        self.reverse[q * 8 + plane] = ev

    def start(self, q: int, psn: int) -> None:
        """A QP (re)connected: nothing received before `psn`."""
        self.ensure(q)
        self.cum[q] = psn & _MASK
        base = q * RX_WORDS
        self.words[base:base + RX_WORDS] = [0] * RX_WORDS
        self.unacked[q] = self.rcvd[q] = self.ooo[q] = 0

    def data(self, q: int, psn: int, ev: int, ce: bool, ackreq: bool, length: int, ack_bytes: int,
             follow: bool) -> Verdict:
        """One data packet of QP `q` (its receive index) with `length` bytes of payload."""
        cum = self.cum[q]
        d = (psn - cum) & _MASK
        held = self.ooo[q]
        kind = self._mark(q, psn, d)
        cum = self._advance(q, cum)
        self.cum[q] = cum
        gap = d > SACK_BITS or (d == 0 and held != 0)
        sack = kind == DUPLICATE or ce or ackreq or gap
        if kind == NEW:
            self.rcvd[q] = (self.rcvd[q] + length) & 0xFFFFFFFF
            self.reorder[min(d.bit_length(), 24)] += 1
            if not sack:
                self.unacked[q] += length
                sack = self.unacked[q] >= ack_bytes
        if sack:
            self.unacked[q] = 0
        slot = q * 8 + ev_plane(ev)
        reverse_ev = self.reverse[slot]
        if follow and kind != BEYOND:
            self.reverse[slot] = ev  # data got through on ev: its path works both ways
        return Verdict(kind, sack, reverse_ev, cum, self.bitmap(q, cum), self.ooo[q], self.rcvd[q])

    def _mark(self, q: int, psn: int, d: int) -> int:
        if d >= _HALF:
            self.duplicates += 1
            return DUPLICATE  # behind the cumulative point
        if d >= RX_WINDOW:
            self.beyond += 1
            return BEYOND
        i = q * RX_WORDS + ((psn >> 6) & (RX_WORDS - 1))
        word = self.words[i]
        bit = 1 << (psn & 63)
        if word & bit:
            self.duplicates += 1
            return DUPLICATE
        self.words[i] = word | bit
        self.ooo[q] += 1
        return NEW

    def _advance(self, q: int, cum: int) -> int:
        """`cum` moved over the received PSNs, RX_ADVANCE_STEPS words at most."""
        for _ in range(RX_ADVANCE_STEPS):
            i = q * RX_WORDS + ((cum >> 6) & (RX_WORDS - 1))
            o = cum & 63
            word = self.words[i]
            t = trailing_ones(word >> o)
            if t == 0:
                break
            cum = (cum + t) & _MASK
            self.ooo[q] -= t
            if o + t < 64:
                self.words[i] = word & ~((1 << (o + t)) - 1) & _ONES  # the PSNs passed: 0 again
                break
            self.words[i] = 0  # the whole word passed: the ring's next turn starts clean
        return cum

    def bitmap(self, q: int, cum: int) -> int:
        """PSNs cum+1 .. cum+64 received, bit 0 first: two words of the ring."""
        base = q * RX_WORDS
        w = cum >> 6
        lo = self.words[base + (w & (RX_WORDS - 1))]
        hi = self.words[base + ((w + 1) & (RX_WORDS - 1))]
        o = cum & 63
        return ((lo >> (o + 1)) | (hi << (63 - o))) & _ONES


def on_data(rx: RxTrack, qp: QpPeer, m: W.Mrc, dscp_control: int, ecn_echo: bool = True) -> tuple[int, bytes | None,
                                                                                                  int]:
    """A data packet of an offloaded QP, decapsulated (its CE copied):
    (its kind, the inner packet the NIC answers with or None, the EV that
    answer takes). The answer is a SACK when one is due, or for a packet
    beyond the window a NACK (PSN_OOR_WINDOW: the data packet turned
    round, as a trimmed one); it leaves on the QP's reverse EV of the
    plane the data came on. `ecn_echo` False: CE is not echoed (an ablation)."""
    rx.ensure(qp.qp_index)
    ce = m.ecn == ECN_CE
    v = rx.data(qp.qp_index, m.psn, m.ev, ce, bool(m.ackreq), m.payload_len, qp.ack_bytes, qp.follow)
    peer = qp.peer_qpn
    if v.kind == BEYOND:
        return BEYOND, W.nack_for(m.raw, peer, NACK_PSN_OOR_WINDOW, dscp_control), v.reverse_ev
    if not v.sack:
        return v.kind, None, 0
    mark = SETH_M_SKIP_ONCE if ce and ecn_echo else SETH_M_NONE
    ext = W.sack_ext(m.ev, v.cum, m.psn, v.bitmap, m=mark, spdcid=m.dqpn, dpdcid=peer, mpr=RX_WINDOW >> 7,
                     ts=m.tx_timestamp(), ooo=v.ooo, rcvd=(v.rcvd >> 8) & 0xFFFFFF)
    return v.kind, W.build(m.dst, m.src, dscp_control, 0, v.reverse_ev, OP_SACK, peer, (v.cum - 1) & _MASK, ext), \
        v.reverse_ev


def on_probe(rx: RxTrack, qp: QpPeer, m: W.Mrc, dscp_control: int) -> tuple[bytes, int]:
    """A probe of an offloaded QP, answered by the NIC: a SACK with its
    probe-response bit, echoing the probed EV (the probe's own) and the
    probe id, with the QP's receive state; on the QP's reverse EV of the
    probe's plane."""
    q = qp.qp_index
    rx.ensure(q)
    cum = rx.cum[q]
    ev = rx.reverse[q * 8 + ev_plane(m.ev)]
    ext = W.probe_reply_ext(m.ev, m.probe_id(), cum, rx.bitmap(q, cum), spdcid=m.dqpn, dpdcid=qp.peer_qpn,
                            mpr=RX_WINDOW >> 7, ooo=rx.ooo[q], rcvd=(rx.rcvd[q] >> 8) & 0xFFFFFF)
    return W.build(m.dst, m.src, dscp_control, 0, ev, OP_SACK, qp.peer_qpn, (cum - 1) & _MASK, ext), ev


def p4_entries() -> str:
    """The const entries of the P4's trailing-ones tables
    (p4src/nic/trailing_ones.inc, held equal by a test): one per count."""
    lines = ["// Generated by `python -m nic_model.rx_track`: the trailing-ones table's",
             "// entries (nic_model/rx_track.py trailing_ones), one per count 0..64,",
             "// disjoint: bits 0..t-1 set and bit t clear (t = 64: every bit set).",
             "// The includer defines ONES(t), the action call of one entry."]
    for t in range(65):
        value, mask = ((1 << t) - 1, (1 << (t + 1)) - 1) if t < 64 else (_ONES, _ONES)
        lines.append(f"0x{value:016X} &&& 0x{mask:016X} : ONES({t});")
    return "\n".join(lines) + "\n"


def p4_reorder_entries() -> str:
    """The const entries of the P4's reorder_bucket table
    (p4src/nic/reorder_buckets.inc, held equal by a test): a new arrival d
    PSNs past the cumulative PSN counts in bucket d.bit_length(), as
    `RxTrack.reorder` does, for any window."""
    lines = ["// Generated by `python -m nic_model.rx_track reorder`: the reorder_bucket",
             "// table's entries (nic_model/rx_track.py, RxTrack.reorder), one per bucket",
             "// 0..24, disjoint: a 24-bit distance's highest set bit is bit b - 1 (b = 0: zero).",
             "// The includer defines BUCKET(b), the action call of one entry."]
    for b in range(25):
        value, mask = (0, _MASK) if b == 0 else (1 << (b - 1), (_MASK >> (b - 1)) << (b - 1))
        lines.append(f"0x{value:06X} &&& 0x{mask:06X} : BUCKET({b});")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    print(p4_reorder_entries() if sys.argv[1:] == ["reorder"] else p4_entries(), end="")
