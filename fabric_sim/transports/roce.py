"""The RoCE baseline endpoint, configured as the MRC paper's RoCE runs
(section 5.2.7): RC semantics on one ECMP-hashed path per QP (the
`single_path` profile: the NIC sends every packet of a QP on its one EV),
go-back-N, DCQCN rate control (fabric_sim/transports/dcqcn.py), QP scaling by the
workload's striping of each message over several QPs.

- Sender: packets leave in PSN order, each QP paced at its DCQCN rate and
  the NIC at its line rate (one scheduler over the QPs: the NIC does not
  queue a QP's whole message on its port). At most MAX_OUTSTANDING
  unacknowledged packets per QP. A NAK (expected PSN) or a timeout
  rewinds to the oldest unacknowledged PSN and resends everything from
  there (go-back-N). The timeout is the QP's local ACK timeout as verbs
  set it (IBTA: 4.096 µs x 2^timeout, the same for every retry; the
  scenario's `rc`, NCCL's 4.29 s by default), in real time whatever the
  figure's scale; `retry_limit` (retry_cnt) timeouts in a row put the QP
  in error.
- Receiver: only the expected PSN is accepted (in-order placement); a later
  one is discarded and, once per gap, NAKed (IBTA's responder: no second
  NAK until the expected PSN arrives, so a lost NAK or a lost first resend
  is recovered by the sender's timeout); a duplicate is re-ACKed if it
  asks. ACKs are cumulative, requested every ACK_EVERY packets and on each
  message's last. A CE-marked arrival sends a CNP (an ACK with IBTA's BECN
  bit) at most once per DCQCN CNP interval; with DCQCN off (`dcqcn:
  false`, PFC alone) none, and every QP sends at line rate.

The packets are the MRC wire format (mrc_wire.packet): data as MRC's, the
ACK and NAK as IBTA's (opcode ACK with an AETH: its BTH PSN the last PSN
received in order, or for a NAK of a sequence error the expected one), data in the
non-trimmable class: switches drop, not trim, it over their threshold,
unless the fabric is lossless by PFC (fabric_sim/net/pfc.py). Under PFC the
NIC's port can be paused: the scheduler then holds the QPs of that port's
plane (`hold`) until the port resumes (`wake`), as a NIC's transmit
scheduler stops a paused priority; nothing is queued to be dropped.
"""

from __future__ import annotations

import heapq
import ipaddress
import itertools
from collections import Counter, deque
from collections.abc import Callable, Mapping

from fabric_sim.transports.dcqcn import CNP_INTERVAL_US, Dcqcn
from mrc_host.ev import EvProfile
from mrc_host.host import App, NoApp
from mrc_host.stats import Stats
from mrc_wire import packet as W
from mrc_wire.constants import (
    AETH_ACK,
    AETH_NAK_PSN_SEQ,
    DSCP_DEFAULTS,
    ECN_CE,
    ECT0,
    ETH_LEN,
    ICRC_LEN,
    IPV6_LEN,
    OP_ACK,
    OP_WRITE_LAST,
    OP_WRITE_ONLY,
    ev_plane,
)
from mrc_wire.entries import EvChange
from mrc_wire.pcie import Nic, QpCreate
from mrc_wire.psn import psn_add, psn_diff
from mrc_wire.segment import Segment, segments
from sim_core.sim import Sim

ACK_EVERY = 8
MAX_OUTSTANDING = 1024


class RoceQp:
    """One side of an RC connection: sender (segments from the oldest
    unacknowledged on) and receiver (the expected PSN)."""

    def __init__(self, qpn: int, peer_qpn: int, peer_addr: bytes, profile: EvProfile, line_gbps: float):
        self.qpn, self.peer_qpn, self.peer_addr, self.profile = qpn, peer_qpn, peer_addr, profile
        self.reverse = {ev_plane(profile.home[0]): profile.home[0]}  # ACKs take this QP's own path back
        self.cc = Dcqcn(line_gbps)
        self.segs: deque[Segment] = deque()  # from snd_una on
        self.nxt = 0  # index in segs of the next packet to send
        self.next_psn = 0
        self.sent_hi = 0  # PSN after the highest sent: below it, a send is a resend
        self.next_tx = 0.0  # pacing: when this QP may send again
        self.queued = False  # in the NIC scheduler
        self.progress_at = 0.0  # last forward progress (for the timeout)
        self.timeouts = 0  # in a row
        self.ackreq_at = -1e18
        self.error: str | None = None
        self.ev_tx: Counter[int] = Counter()
        # receiver
        self.expected = 0
        self.nak_for = -1  # the expected PSN a NAK was sent for (one per gap)
        self.cnp_at = -1e18
        self.rx_bytes = 0

    def can_send(self) -> bool:
        return self.error is None and self.nxt < len(self.segs) and self.nxt < MAX_OUTSTANDING

    def busy(self) -> bool:
        return self.error is None and bool(self.segs)


class RoceEndpoint(W.PacketHost):
    """The RoCE transport of one NIC; the same interfaces as the MRC
    endpoint towards its NIC (mrc_wire.pcie) and the run's driver."""

    def __init__(self, sim: Sim, addr: bytes, nic: Nic, *, line_gbps: float, mtu: int = 4096, rto: float = 50.0,
                 retry_limit: int = 8, dscp: Mapping[str, int] | None = None, app: App | None = None,
                 dcqcn: bool = True):
        self.sim, self.addr_bytes, self.nic = sim, addr, nic
        self.addr = str(ipaddress.IPv6Address(addr))
        self.line_gbps, self.mtu, self.rto, self.retry_limit = line_gbps, mtu, rto, retry_limit
        d = {**DSCP_DEFAULTS, **(dscp or {})}
        self.dscp_data, self.dscp_control = d["data_no_trim"], d["control"]
        self.app: App = app if app is not None else NoApp()
        self.dcqcn = dcqcn  # False: PFC alone (the notification point sends no CNP, every QP stays at line rate)
        self.qps: dict[int, RoceQp] = {}
        self.stats = Stats()
        self.errors: list[tuple[int, str]] = []
        self._msg_ids = 0
        self._ready: list[tuple[float, int, RoceQp]] = []  # the NIC scheduler: (may send at, seq, QP)
        self._seq = itertools.count()
        self._free_at = 0.0  # the NIC's port is busy until then
        self._wake_at: float | None = None
        self._gen = 0
        self._timer = False
        self.hold: Callable[[int], bool] | None = None  # plane -> its port is paused (PFC); None: never
        self._held: list[RoceQp] = []  # QPs waiting for their paused port
        nic.attach(self)

    def connect(self, qpn: int, peer_qpn: int, peer_addr: bytes, profile: EvProfile, cc: object = None) -> RoceQp:
        """QP `qpn` on its one path; created on the NIC, whose receiver is
        not run for it (RC's go-back-N receiver is this host's)."""
        qp = self.qps[qpn] = RoceQp(qpn, peer_qpn, peer_addr, profile, self.line_gbps)
        self.nic.create_qp(QpCreate(qpn, peer_qpn, tuple(profile.home), profile.spares(), offload=False,
                                    follow=False))
        return qp

    def port_down(self, plane: int) -> None:
        """RoCE has no notion of planes: a dead port is loss until routing moves the path."""

    def port_up(self, plane: int) -> None:
        pass

    def pause_on(self, paused: Callable[[int], bool]) -> None:
        """Hold a QP's packets while `paused(plane)` says its port is (PFC)."""
        self.hold = paused

    # ---- what the NIC hands over besides packets (mrc_wire.pcie.Host) ----
    def on_held(self, qpn: int, psn: int) -> None:
        pass  # RoCE paces itself: the NIC's QP scheduler never holds its data

    def on_sent(self, qpn: int, psn: int, ev: int) -> None:
        pass  # its one path: the EV says nothing new

    def on_ev_event(self, qpn: int, change: EvChange) -> None:
        pass  # no path health in the data plane for its QPs

    def on_port(self, plane: int, up: bool) -> None:
        (self.port_up if up else self.port_down)(plane)

    # ---- sender --------------------------------------------------------
    def reroute(self, qpn: int, ev: int) -> None:
        """Routing moved QP `qpn` to the path `ev` (after a fault): its slot
        in the NIC, and its ACKs' path."""
        qp = self.qps[qpn]
        qp.profile.rehome(0, ev)
        self.nic.write_slots(qpn, qp.profile.take_writes())
        qp.reverse = {ev_plane(ev): ev}

    def send_message(self, qpn: int, size: int) -> int:
        qp = self.qps[qpn]
        if qp.error is not None:
            raise RuntimeError(f"QP {qpn} is in error: {qp.error}")
        self._msg_ids = (self._msg_ids + 1) & 0xFFFFFFFF
        segs = segments(qp.next_psn, self._msg_ids, size, self.mtu)
        qp.segs.extend(segs)
        qp.next_psn = psn_add(qp.next_psn, len(segs))
        self._schedule(qp)
        return self._msg_ids

    def _schedule(self, qp: RoceQp | None = None) -> None:
        """Queue `qp` if it can send, and have the NIC wake when its port
        is free and the first queued QP's pacing allows (earlier than
        planned, if a QP became ready sooner: the older wake-up is void)."""
        if qp is not None and not qp.queued and qp.can_send():
            qp.queued = True
            heapq.heappush(self._ready, (qp.next_tx, next(self._seq), qp))
        if self._ready:
            t = max(self._free_at, self._ready[0][0], self.sim.now)
            if self._wake_at is None or t < self._wake_at:
                self._wake_at, self._gen = t, self._gen + 1
                self.sim.call_at(t, self._tx, self._gen)

    def _tx(self, gen: int) -> None:
        """The NIC sends one packet of the QP whose turn it is."""
        if gen != self._gen:
            return
        self._wake_at = None
        now = self.sim.now
        hold = self.hold
        while self._ready and self._ready[0][0] <= now:
            _, _, qp = heapq.heappop(self._ready)
            if hold is not None and qp.can_send() and hold(ev_plane(qp.profile.slots[0])):
                self._held.append(qp)  # still `queued`: wake() puts it back
                continue
            qp.queued = False
            if qp.can_send():
                self._send(qp, now)
                self._schedule(qp)
                return
        self._schedule()

    def wake(self) -> None:
        """A paused port resumed: the QPs held for it compete again."""
        held, self._held = self._held, []
        for qp in held:
            qp.queued = False
            self._schedule(qp)

    def _send(self, qp: RoceQp, now: float) -> None:
        seg = qp.segs[qp.nxt]
        if qp.nxt == 0:
            qp.progress_at = now  # the oldest outstanding packet leaves now
        qp.nxt += 1
        resend = psn_diff(seg.psn, qp.sent_hi) < 0
        if not resend:
            qp.sent_hi = psn_add(seg.psn, 1)
        ev = qp.profile.slots[0]
        qp.ev_tx[ev] += 1
        self.stats.sent += 1
        self.stats.retransmits += resend
        self.stats.retx_nack += resend
        # An ACK every ACK_EVERY packets, on each message's last, and at a slow rate at least every
        # rto/8, so an ACK is never a timeout away.
        ackreq = int(seg.psn % ACK_EVERY == ACK_EVERY - 1 or seg.opcode in (OP_WRITE_LAST, OP_WRITE_ONLY)
                     or now - qp.ackreq_at >= self.rto / 8)
        if ackreq:
            qp.ackreq_at = now
        # The payload's zeros are counted, not built (mrc_wire.packet): the NIC takes (headers, pad).
        pad = seg.length + ICRC_LEN
        raw = W.build(self.addr_bytes, qp.peer_addr, self.dscp_data, ECT0, ev, seg.opcode, qp.peer_qpn, seg.psn,
                      W.data_ext(seg.msg_id, seg.offset, seg.msg_len, 0, qp.peer_qpn), ackreq=ackreq, pad=pad)
        wire = (len(raw) + pad + ETH_LEN + IPV6_LEN) * 8e-3  # kbit: the NIC adds Ethernet and the outer header
        self._free_at = now + wire / self.line_gbps
        qp.next_tx = now + wire / qp.cc.rate(now)
        self.nic.post(raw, pad)
        self._arm_timer()

    # ---- timeouts ------------------------------------------------------
    def _arm_timer(self) -> None:
        if not self._timer:
            self._timer = True
            self.sim.at(self.rto / 4, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = False
        now = self.sim.now
        for qp in self.qps.values():
            if qp.error is None and qp.nxt and now - qp.progress_at >= self.rto:
                qp.timeouts += 1
                self.stats.timeouts += 1
                if qp.timeouts > self.retry_limit:
                    qp.error = f"PSN {qp.segs[0].psn} not acknowledged after {self.retry_limit} timeouts"
                    self.errors.append((qp.qpn, qp.error))
                    self.stats.errors += 1
                    continue
                qp.nxt, qp.progress_at = 0, now  # go back to the oldest unacknowledged PSN
                self._schedule(qp)
        if any(q.busy() for q in self.qps.values()):
            self._arm_timer()

    # ---- receive -------------------------------------------------------
    def deliver(self, pkt: W.Mrc) -> None:
        """A packet from the NIC, already parsed by it."""
        qp = self.qps.get(pkt.dqpn)
        if qp is None:
            return
        if pkt.is_data:
            self._on_data(qp, pkt)
        elif pkt.opcode == OP_ACK:
            syndrome, _ = pkt.aeth()
            if syndrome == AETH_NAK_PSN_SEQ:
                self.stats.nacks += 1
                self._acked(qp, pkt.psn)
                qp.nxt = 0  # go-back-N: everything from the expected PSN again
                self._schedule(qp)
                return
            self._acked(qp, psn_add(pkt.psn, 1))
            if pkt.becn:
                qp.cc.cnp(self.sim.now)

    def _acked(self, qp: RoceQp, cum: int) -> None:
        """Everything before `cum` arrived."""
        n = 0
        while qp.segs and psn_diff(cum, qp.segs[0].psn) > 0:
            qp.segs.popleft()
            n += 1
        if n:
            qp.nxt = max(0, qp.nxt - n)
            qp.progress_at, qp.timeouts = self.sim.now, 0
            self._schedule(qp)

    def _on_data(self, qp: RoceQp, pkt: W.Mrc) -> None:
        now = self.sim.now
        if self.dcqcn and pkt.ecn == ECN_CE and now - qp.cnp_at >= CNP_INTERVAL_US:
            qp.cnp_at = now
            self._ack(qp, AETH_ACK, psn_add(qp.expected, -1), becn=1)
        d = psn_diff(pkt.psn, qp.expected)
        if d > 0:  # out of sequence: discarded, the gap NAKed once
            self.stats.out_of_window += 1
            if qp.nak_for != qp.expected:
                qp.nak_for = qp.expected
                self._ack(qp, AETH_NAK_PSN_SEQ, qp.expected)
            return
        if d < 0:
            self.stats.duplicates += 1
        else:
            msg_id, offset, msg_len = pkt.data()
            n = pkt.payload_len
            self.app.placed(qp.qpn, msg_id, offset, n)
            qp.rx_bytes += n
            self.stats.rx_bytes += n
            qp.expected = psn_add(qp.expected, 1)
            if offset + n >= msg_len:  # in order: the last packet completes the message
                self.stats.delivered += 1
                self.app.delivered(qp.qpn, msg_id, None)
        if pkt.ackreq:
            self._ack(qp, AETH_ACK, psn_add(qp.expected, -1))

    def _ack(self, qp: RoceQp, syndrome: int, psn: int, becn: int = 0) -> None:
        """An ACK (AETH `syndrome`: ACK or NAK) naming `psn`, BECN set for a CNP."""
        self.stats.acks_sent += 1
        ev = next(iter(qp.reverse.values()))
        self.nic.post(W.build(self.addr_bytes, qp.peer_addr, self.dscp_control, 0, ev, OP_ACK, qp.peer_qpn, psn,
                              W.aeth_ext(syndrome), becn=becn), 0)

    def idle(self) -> bool:
        return not any(q.busy() for q in self.qps.values())
