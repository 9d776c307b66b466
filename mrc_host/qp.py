"""A QP's state: sender half (segments, in-flight packets in send order,
loss detection) and receiver half (a PSN window as a bitmask), with PSN
arithmetic modulo 2^24 everywhere (mrc_wire/psn.py, DESIGN.md section 7)."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Final

from mrc_host.cc import Aimd, CongestionControl
from mrc_host.ev import EvProfile
from mrc_host.placement import Placement
from mrc_host.qp_paths import QpPaths
from mrc_wire.constants import RX_WINDOW
from mrc_wire.psn import PSN_MASK, psn_add, psn_diff
from mrc_wire.segment import Cut, Segment

# An in-flight copy's EV before the NIC says which it took (health mode:
# its data plane picks the slot when it sends; Endpoint.sent_on).
UNSENT: Final = -1


class Inflight:
    """A copy of a packet sent and not yet acknowledged. An explicit
    __init__, not a dataclass's: compiled, a dataclass's generated __init__
    stays a Python call, and every packet sent makes one."""

    __slots__ = ("seg", "ev", "sent_at", "retx", "timeouts", "lost")

    def __init__(self, seg: Segment, ev: int, sent_at: float, retx: int = 0, timeouts: int = 0):
        self.seg, self.ev, self.sent_at = seg, ev, sent_at
        self.retx = retx  # how many times this PSN was sent before this copy
        self.timeouts = timeouts
        self.lost = False  # declared lost, queued for retransmission

    def __repr__(self) -> str:
        return (f"Inflight(seg={self.seg!r}, ev={self.ev}, sent_at={self.sent_at}, retx={self.retx}, "
                f"timeouts={self.timeouts}, lost={self.lost})")


class Pending:
    """A QP's packets not sent yet, in order: the messages' cuts
    (mrc_wire.segment.Cut), each packet made when it is taken."""

    def __init__(self) -> None:
        self.cuts: deque[Cut] = deque()
        self.next = 0  # the head cut's next packet

    def append(self, cut: Cut) -> None:
        self.cuts.append(cut)

    def popleft(self) -> Segment:
        cut = self.cuts[0]
        seg = cut.segment(self.next)
        self.next += 1
        if self.next == cut.count:
            self.cuts.popleft()
            self.next = 0
        return seg

    def head_psn(self) -> int:
        """The PSN of the next packet to be taken."""
        return psn_add(self.cuts[0].first_psn, self.next)

    def clear(self) -> None:
        self.cuts.clear()
        self.next = 0

    def __len__(self) -> int:
        return sum(c.count for c in self.cuts) - self.next

    def __bool__(self) -> bool:
        return bool(self.cuts)


@dataclass
class QueuePair:
    """One side's state of a connection: the sender's, and two parts acted
    on by others: `paths` (PathState's: reverse EVs, probes, the peer's
    ports) and `rx`, the receiver's host half (placement; the PSNs are the
    NIC's: nic_model/rx_track.py)."""

    qpn: int
    peer_qpn: int
    peer_addr: bytes
    profile: EvProfile
    cc: CongestionControl = field(default_factory=Aimd)
    start_psn: int = 0
    # sender half
    next_psn: int = 0
    snd_una: int = 0  # oldest PSN not known delivered
    psn_range: int = RX_WINDOW  # new PSNs go at most this far past snd_una (the peer NIC's window: SETH mpr)
    pending: Pending = field(default_factory=Pending)  # packets not sent yet
    retx_queue: deque[int] = field(default_factory=deque)  # PSNs to resend now
    inflight: dict[int, Inflight] = field(default_factory=dict)  # PSN -> Inflight (the latest copy)
    sendq: deque[Inflight] = field(default_factory=deque)  # Inflight copies in send order
    rack_time: float = -1.0  # send time of the latest copy known delivered
    sack_cum: int = 0  # cum_psn of the last SACK bitmap processed, and that bitmap
    sack_bits: int = 0
    ack_at: float = -1.0  # last ACK or SACK received
    # EV -> its copies in send order, not yet known delivered or lost. A
    # list, not a deque: it holds a few copies (an ACK takes them from the
    # front), and a QP has one per EV it sends on, where an empty deque is
    # 760 bytes (64 EVs: 48 KiB a QP, 0.4 GiB at 8,192 NICs).
    by_ev: dict[int, list[Inflight]] = field(default_factory=dict)
    srtt: float | None = None
    min_rtt: float | None = None
    error: str | None = None  # set when the QP gives up: reported, never silent
    ev_tx: Counter[int] = field(default_factory=Counter)  # EV -> data packets sent on it (activity traces)
    tx_active_at: float = -1.0  # last data sent
    # loss recovery's (recovery.py LossRecovery writes them, and only it)
    tlp_at: float = -1.0  # when the last tail-loss probe was sent
    reo_wnd: float = 0.0  # cross-path reorder window (LossRecovery.start), doubled on each spurious retransmission
    paths: QpPaths = field(default_factory=QpPaths)  # reverse EVs, probes, the peer's ports (paths.py acts on it)
    rx: Placement = field(default_factory=lambda: Placement(keep=False))  # the receiver's host half

    def __post_init__(self) -> None:
        self.next_psn = self.snd_una = self.sack_cum = self.start_psn & PSN_MASK

    @property
    def rx_bytes(self) -> int:
        """Bytes placed (what the timelines read of every transport's QPs)."""
        return self.rx.bytes

    def rtt_sample(self, rtt: float) -> None:
        """An RTT measured (an ACK of a first copy, a probe's reply)."""
        self.min_rtt = rtt if self.min_rtt is None else min(self.min_rtt, rtt)
        self.srtt = rtt if self.srtt is None else 0.875 * self.srtt + 0.125 * rtt

    def outstanding(self, inf: Inflight) -> bool:
        """Whether this copy is the PSN's latest, not acknowledged and not
        already queued for resending (copies go stale in sendq and by_ev)."""
        return not inf.lost and self.inflight.get(inf.seg.psn) is inf

    def acked(self, cum: int, bitmap: int, rack: float) -> float:
        """Take out what a SACK covers: every PSN before `cum`, and the bits
        of `bitmap` (PSN cum + 1 + i) not seen in an earlier SACK. The
        latest send time of a first copy among them, or `rack` (RACK's
        clock)."""
        inflight = self.inflight
        una = self.snd_una
        while psn_diff(cum, una) > 0:  # cumulative: everything before cum
            inf = inflight.pop(una, None)
            if inf is not None and inf.retx == 0 and inf.sent_at > rack:
                rack = inf.sent_at
            una = psn_add(una, 1)
        self.snd_una = una
        # Only SACK bits not seen in an earlier SACK (shifted to this cum):
        # those PSNs were already taken out. An older SACK (lower cum) adds nothing.
        shift = psn_diff(cum, self.sack_cum)
        if shift < 0:
            return rack
        b = bitmap & ~(self.sack_bits >> shift if shift < 64 else 0)
        self.sack_cum, self.sack_bits = cum, bitmap
        while b:
            low = b & -b
            inf = inflight.pop(psn_add(cum, low.bit_length()), None)
            if inf is not None and inf.retx == 0 and inf.sent_at > rack:
                rack = inf.sent_at
            b ^= low
        return rack

    def forget_done(self) -> None:
        """Drop the copies at the head of `sendq` that are no longer outstanding."""
        q = self.sendq
        while q and not self.outstanding(q[0]):
            q.popleft()

    def busy(self) -> bool:
        return self.error is None and bool(self.inflight or self.pending or self.retx_queue)
