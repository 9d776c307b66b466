"""The MRC endpoint model: QPs with 24-bit PSNs, messages segmented into
RDMA-write packets, SACK/NACK, retransmission, EV states, reverse EV sets
and congestion response (DESIGN.md section 7, docs/nic.md).

Packets are bytes (inner IPv6 / UDP / BTH / MRC extension / payload, built
by mrc_wire.packet) so the same endpoint drives a NIC pipeline model, a
BMv2 NIC, or the path fabric. Every data packet's EV is echoed in its ACK,
SACK or NACK, so each signal is blamed on the path that caused it; ACKs and
SACKs and probe replies travel on the QP's reverse EV set (one EV per
plane, kept fresh by ACKs, arriving data and probes), not on the EV they
echo.

Loss detection, in the order it acts: a NACK (trimmed payload) resends at
once; a packet sent more than the reorder window before a packet known
delivered is lost (SACK-driven, RACK-style) and resent; a retransmission
timeout, backing off exponentially, resends; after `retry_limit` timeouts
of one PSN the QP goes to its error state, reported through `errors` and
to its application (`App.failed`). A real loss (not a trim) marks the EV ASSUMED_BAD.

The endpoint holds two parts of its own, each with its own state, built
with what it may do to a QP: `recovery` (recovery.py: timeouts, tail
probes, loss detection, suspect EVs) and `paths` (paths.py: probes, the
reverse EV set, port state here and at the peer).

Its NIC is a `mrc_wire.pcie.Nic` and nothing else: the endpoint posts
packets and writes NIC state through it, and takes what the NIC hands it
(`deliver`, `on_held`, `on_sent`, `on_ev_event`). The NIC picks each data
packet's EV and says which (`on_sent`): until then a copy's EV is UNSENT.
"""

from __future__ import annotations

import ipaddress
import math
import random
from collections import Counter
from typing import Final

from mrc_host.cc import Aimd, CongestionControl
from mrc_host.ev import EvEvent, EvProfile
from mrc_host.host import App, NoApp
from mrc_host.paths import PathState
from mrc_host.placement import Placement
from mrc_host.qp import UNSENT, Inflight, QueuePair
from mrc_host.qp_paths import ProbeKind
from mrc_host.recovery import LossRecovery
from mrc_host.settings import HostConfig
from mrc_host.stats import Stats
from mrc_wire import packet as W
from mrc_wire.constants import (
    ECT0,
    ICRC_LEN,
    NACK_TRIMMED,
    OP_EP_REQUEST,
    OP_EP_RESPONSE,
    OP_NACK,
    OP_SACK,
    OP_WRITE_LAST,
    OP_WRITE_ONLY,
    SETH_M_NONE,
    ev_plane,
)
from mrc_wire.entries import EvChange
from mrc_wire.pcie import Nic, QpCreate
from mrc_wire.psn import psn_add, psn_diff
from mrc_wire.segment import Cut, Segment
from sim_core.sim import Sim

ZEROS: Final = bytes(16384)

# TSETH and CC_STATE carry a sender's clock in 128 ns units (as the ns-3
# reading of MRC 1.0); the simulator's clock is in µs.
TS_PER_US: Final = 1000 / 128
DEFAULTS: Final = HostConfig()


def timestamp(now_us: float) -> int:
    """The 16-bit TSETH timestamp of time `now_us`."""
    return int(now_us * TS_PER_US) & 0xFFFF


def _addr(a: str | bytes) -> bytes:
    return a if isinstance(a, bytes) else ipaddress.IPv6Address(a).packed


class Endpoint(W.PacketHost):
    """An MRC endpoint on one NIC (`nic`), configured by `cfg`, reporting
    to `app`. Times in µs. With `cfg.elide`, a simulated payload's zeros
    are not built: the NIC gets the headers and the count of zeros,
    `post(raw, pad)` (mrc_wire.packet; the timed fabric's models carry no
    zeros)."""

    def __init__(self, sim: Sim, addr: str | bytes, nic: Nic, cfg: HostConfig = DEFAULTS, app: App | None = None):
        self.sim = sim
        self.addr_bytes = _addr(addr)
        self.addr = str(ipaddress.IPv6Address(self.addr_bytes))
        self.nic = nic
        self.cfg = cfg
        self.mtu = cfg.mtu
        rto = cfg.rto
        self._tick = min(rto / 4, cfg.probe_interval)  # the timer's period: timeouts, tail probes, probes
        d = cfg.classes()
        self.dscp_control, self.dscp_data, self.dscp_retx = d["control"], d["data_trimmable"], d["data_trimmable_retx"]
        self.dscp_trimmed = (d["trimmed"], d["trimmed_lasthop"])
        self.keep_payload = cfg.keep_payload
        self.elide = cfg.elide
        self.ablate = cfg.ablate
        self.app: App = app if app is not None else NoApp()
        self._bad_pushed: dict[int, int] = {}
        self.qps: dict[int, QueuePair] = {}
        self.stats = Stats()
        self.errors: list[tuple[int, str]] = []
        self.ev_events: Counter[int] = Counter()  # the NIC's EV events, by reason (EVR_*)
        self._msg_ids = 0
        self._timer_armed = False
        self.paths = PathState(sim, self.stats, self.qps, probe_interval=cfg.probe_interval, probe_timeout=rto,
                               ignore_peer_ports="port_bitmap" in cfg.ablate, rng=random.Random(cfg.seed),
                               send_control=self._send_control, event=self._event, push_slots=self._push_slots,
                               set_reverse=self._set_reverse,
                               lost=self._lost, pump=self._pump, arm_timer=self._arm_timer)
        self.recovery = LossRecovery(sim, self.stats, rto=rto,
                                     rto_max=cfg.rto_max if cfg.rto_max is not None else 64 * rto,
                                     retry_limit=cfg.retry_limit,
                                     reorder_window=cfg.reorder_window if cfg.reorder_window is not None else rto / 4,
                                     send=self._send_segment, lost=self._lost, fail=self._fail, event=self._event,
                                     pump=self._pump, probe=self.paths.send_probe)
        # Called for every ACK or data packet: bound once here, not looked up through the parts each time.
        self._same_path_losses = self.recovery.same_path_losses
        self._detect_losses = self.recovery.detect_losses
        self._control_ev = self.paths.control_ev
        nic.attach(self)

    # ---- set-up -------------------------------------------------------
    def connect(self, qpn: int, peer_qpn: int, peer_addr: str | bytes, profile: EvProfile, *,
                start_psn: int = 0, cc: CongestionControl | None = None) -> QueuePair:
        """QP `qpn` to QP `peer_qpn` at `peer_addr`, over `profile`'s EVs:
        created on the NIC (its slots, its receiver, its path health), its
        reverse EVs written there."""
        qp = QueuePair(qpn, peer_qpn, _addr(peer_addr), profile, cc or Aimd(), start_psn=start_psn,
                       rx=Placement(self.keep_payload))
        self.nic.create_qp(QpCreate(qpn, peer_qpn, tuple(profile.home), profile.spares(), True, profile.enabled,
                                    self.cfg.ack_bytes, profile.health, profile.min_active, profile.health,
                                    start_psn))
        self.recovery.start(qp)
        qp.paths.begin(profile.home, self.sim.now)  # one rotation EV per plane, trusted from now
        self.qps[qpn] = qp
        for p, ev in qp.paths.reverse.items():
            self._set_reverse(qp, p, ev)
        return qp

    def disconnect(self, qpn: int) -> None:
        """QP `qpn` destroyed, here and on the NIC (what it had in flight is forgotten)."""
        self.qps.pop(qpn)
        self._bad_pushed.pop(qpn, None)
        self.nic.destroy_qp(qpn)

    def _set_reverse(self, qp: QueuePair, plane: int, ev: int) -> None:
        """`ev` becomes the reverse EV of `plane`, confirmed now, here and in the NIC."""
        qp.paths.confirm(ev, self.sim.now)
        self.nic.set_reverse(qp.qpn, plane, ev)

    # ---- sender -------------------------------------------------------
    def set_control_path(self, qpn: int, ev: int) -> None:
        """Control packets of QP `qpn` travel on `ev` alone from now on: the
        NIC's SACKs too, for data on any plane."""
        qp = self.qps[qpn]
        qp.paths.only(ev)
        for p in range(8):
            self.nic.set_reverse(qpn, p, ev)

    def reroute(self, qpn: int, ev: int) -> None:
        """The single-path baseline's routing moved QP `qpn` to the one path
        `ev`: its slot, in the profile and the NIC, and its control path."""
        qp = self.qps[qpn]
        qp.profile.rehome(0, ev)
        self._push_slots(qp)
        self.set_control_path(qpn, ev)

    def send_message(self, qpn: int, data: bytes | int) -> int:
        """Queue a message: bytes, or an int for that many simulated bytes."""
        qp = self.qps[qpn]
        if qp.error is not None:
            raise RuntimeError(f"QP {qpn} is in error: {qp.error}")
        self._msg_ids = (self._msg_ids + 1) & 0xFFFFFFFF
        msg_id = self._msg_ids
        cut = Cut(qp.next_psn, msg_id, data, self.mtu)
        qp.pending.append(cut)
        qp.next_psn = psn_add(qp.next_psn, cut.count)
        self._pump(qp)
        return msg_id

    def _send_segment(self, qp: QueuePair, seg: Segment, retx: bool) -> None:
        # The NIC's data plane picks the EV when it sends the copy, and says which (on_sent).
        old = qp.inflight.get(seg.psn)
        inf = Inflight(seg, UNSENT, self.sim.now, (old.retx + 1) if old else 0, old.timeouts if old else 0)
        qp.inflight[seg.psn] = inf
        qp.sendq.append(inf)
        qp.tx_active_at = self.sim.now
        self.stats.sent += 1
        self.stats.retransmits += retx
        # Ask for an ACK when the window is full (nothing more goes out until
        # one comes), on each message's last packet, and on every resend.
        ackreq = int(retx or len(qp.inflight) >= qp.cc.window() or seg.opcode in (OP_WRITE_LAST, OP_WRITE_ONLY))
        # zeros counted, not built: the payload's and the ICRC's
        pad = seg.length + ICRC_LEN if seg.payload is None and self.elide else 0
        payload = seg.payload if seg.payload is not None else b"" if pad else ZEROS[:seg.length]
        ext = W.data_ext(seg.msg_id, seg.offset, seg.msg_len, timestamp(self.sim.now), qp.peer_qpn)
        raw = W.build(self.addr_bytes, qp.peer_addr, self.dscp_retx if retx else self.dscp_data, ECT0, 0,
                      seg.opcode, qp.peer_qpn, seg.psn, ext, payload, ackreq=ackreq, pad=pad, retx=int(retx))
        self.nic.post(raw, pad)
        self._arm_timer()

    def _on_ev(self, qp: QueuePair, inf: Inflight) -> None:
        q = qp.by_ev.get(inf.ev)
        if q is None:
            q = qp.by_ev[inf.ev] = []
        q.append(inf)

    # ---- what the NIC hands over (mrc_wire.pcie.Host) ---------------------
    def on_held(self, qpn: int, psn: int) -> None:
        """The NIC's scheduler holds the latest copy of `psn`: no timer and
        no loss detection run on it meanwhile (a resend keeps its hand-over
        time: an ACK of an earlier copy on the same EV would otherwise take
        the record's infinite send time for its own)."""
        qp = self.qps.get(qpn)
        inf = qp.inflight.get(psn) if qp is not None else None
        if inf is not None and inf.retx == 0:
            inf.sent_at = math.inf

    def on_sent(self, qpn: int, psn: int, ev: int) -> None:
        """The NIC sent the latest copy of `psn` now, on `ev` (its data
        plane picked the slot): the copy's send time and EV."""
        qp = self.qps.get(qpn)
        if qp is None:
            return
        if not qp.profile.health:
            qp.profile.turn()  # a turn of the plain rotation: a skip by rewrite may end
        qp.ev_tx[ev] += 1  # every copy the NIC sent, one its PSN's ACK overtook too
        inf = qp.inflight.get(psn)
        if inf is not None:
            inf.sent_at = self.sim.now
            if inf.ev == UNSENT:
                inf.ev = ev
                self._on_ev(qp, inf)

    def on_ev_event(self, qpn: int, change: EvChange) -> None:
        """A change the NIC's path health made to one of our QPs (counted;
        the host's profile learns its EVs' state from its own packets)."""
        self.ev_events[change.reason] += 1

    def _pump(self, qp: QueuePair) -> None:
        if qp.error is not None:
            return
        while qp.retx_queue:
            inf = qp.inflight.get(qp.retx_queue.popleft())
            if inf is not None:
                self._send_segment(qp, inf.seg, retx=True)
        # New PSNs within the window the receiver's NIC tracks (MRC's maximum
        # PSN range from the cumulative point), so none is beyond its bitmap.
        cwnd, limit = qp.cc.window(), qp.psn_range
        while qp.pending and len(qp.inflight) < cwnd and psn_diff(qp.pending.head_psn(), qp.snd_una) < limit:
            self._send_segment(qp, qp.pending.popleft(), retx=False)

    def _lost(self, qp: QueuePair, inf: Inflight, event: EvEvent | None) -> None:
        """Queue the PSN of `inf` for resending; blame its EV for a real loss."""
        inf.lost = True
        qp.retx_queue.append(inf.seg.psn)
        if event is not None:
            self._event(qp, inf.ev, event)

    def _event(self, qp: QueuePair, ev: int, event: EvEvent) -> None:
        """Apply an EV event and push the slot rewrites it caused."""
        if event is EvEvent.LOSS and "ev_retire" in self.ablate:
            return
        qp.profile.event(ev, event, self.sim.now)
        self._push_slots(qp)

    def push_slots(self, qpn: int) -> None:
        """Write what QP `qpn`'s profile decided (the controller changed it) into the NIC."""
        self._push_slots(self.qps[qpn])

    # ---- the controller's endpoint operations (mrc_host/ctl.py) -------------------
    def qp_to_address(self, addr: bytes) -> int | None:
        """A QP of ours to the NIC at `addr` (the lowest numbered), or None."""
        return min((q.qpn for q in self.qps.values() if q.peer_addr == addr), default=None)

    def probe_ev(self, qpn: int, ev: int) -> int:
        """EV_PROBE: probe `ev` over QP `qpn` (its peer's NIC answers); a handle for `answered`."""
        return self.paths.send_probe(self.qps[qpn], ev, ProbeKind.ENDPOINT)

    def announce(self, qpn: int) -> int:
        """PORT_STATUS_UPDATE: our ports, to QP `qpn`'s peer; a handle for `answered`."""
        return self.paths.announce(self.qps[qpn])

    def answered(self, handle: int) -> float | None:
        """When the answer to `probe_ev` or `announce` came, or None."""
        return self.paths.answers.get(handle)

    def _push_slots(self, qp: QueuePair) -> None:
        """Write what the profile decided into the NIC: slots marked bad, slots rewritten."""
        bad = qp.profile.bad_slots
        if bad != self._bad_pushed.get(qp.qpn, 0):
            self._bad_pushed[qp.qpn] = bad
            self.nic.set_bad(qp.qpn, bad)
        if qp.profile.slot_writes:
            self.nic.write_slots(qp.qpn, qp.profile.take_writes())

    def _send_control(self, qp: QueuePair, ev: int, op: int, psn: int, ext: bytes) -> None:
        """A probe, probe reply or endpoint request to the peer, in the
        control class (a SACK is built in place: it is on every data
        packet's path)."""
        self.nic.post(W.build(self.addr_bytes, qp.peer_addr, self.dscp_control, 0, ev, op, qp.peer_qpn, psn, ext))

    def _fail(self, qp: QueuePair, reason: str) -> None:
        qp.error = reason
        qp.pending.clear()
        qp.retx_queue.clear()
        self.stats.errors += 1
        self.errors.append((qp.qpn, reason))
        self.app.failed(qp.qpn, reason)

    # ---- port state (paths.py) ------------------------------------------------
    def port_down(self, plane: int) -> None:
        """This NIC's port of `plane` went down (PathState.port_down); in
        health mode the NIC's data plane passes over its slots."""
        self.paths.port_down(plane)
        self.nic.set_port_down(self.paths.ports_down)

    def port_up(self, plane: int) -> None:
        self.paths.port_up(plane)
        self.nic.set_port_down(self.paths.ports_down)

    def on_port(self, plane: int, up: bool) -> None:
        """The NIC says its port of `plane` went down or came back."""
        (self.port_up if up else self.port_down)(plane)

    # ---- timers (recovery.py: timeouts, tail probes; paths.py: probes) ------
    def _arm_timer(self) -> None:
        if not self._timer_armed:
            self._timer_armed = True
            self.sim.at(self._tick, self._on_timer)

    def _on_timer(self) -> None:
        self._timer_armed = False
        now = self.sim.now
        busy = False
        rec, probe = self.recovery, self.paths.probe
        quiet = 2 * self.paths.probe_interval  # a receiver keeps ticking this long after data
        for qp in self.qps.values():
            if qp.error is None:
                rec.tail_probe(qp, now)
                rec.timeouts(qp, now)
                probe(qp, now)
                self._pump(qp)
            busy |= qp.busy() or bool(qp.profile.probing()) or bool(qp.paths.probes) \
                or now - qp.rx.active_at < quiet
        if busy or self.paths.announcing():
            self._arm_timer()

    # ---- receive --------------------------------------------------------------
    def deliver(self, pkt: W.Mrc) -> None:
        """A packet from the NIC, already parsed by it."""
        qp = self.qps.get(pkt.dqpn)
        if qp is None:
            return
        op = pkt.opcode
        if pkt.is_data:
            self._on_data(qp, pkt)
        elif op == OP_SACK:
            if pkt.probe_response:
                self.paths.on_probe_reply(qp, pkt)
            else:
                self._on_ack(qp, pkt)
        elif op == OP_NACK:
            self._on_nack(qp, pkt)
        elif op == OP_EP_REQUEST:
            self.paths.on_endpoint_request(qp, pkt)
        elif op == OP_EP_RESPONSE:
            self.paths.on_endpoint_response(qp, pkt)

    def _on_data(self, qp: QueuePair, pkt: W.Mrc) -> None:
        """A data packet the NIC's receiver found new (nic_model/rx_track.py:
        it tracks the PSNs, drops duplicates and SACKs): placed, and its
        message delivered once complete. A trimmed packet's notice (the NIC
        has NACKed it) is counted, not placed."""
        if pkt.dscp in self.dscp_trimmed:
            self.stats.trim_notices += 1
            return
        rx = qp.rx
        rx.heard(self.sim.now)
        self._arm_timer()  # a receiver that sends nothing still probes its reverse set on the tick
        msg_id, offset, msg_len = pkt.data()
        n = pkt.payload_len
        # The payload only where it is kept: built, a simulated payload is
        # kilobytes of zeros made for nothing.
        placed = rx.place(msg_id, offset, n, pkt.payload if rx.keep else b"")
        if placed >= 0:
            self.app.placed(qp.qpn, msg_id, offset, n)
            self.stats.rx_bytes += n
            if placed >= msg_len:
                self.stats.delivered += 1
                self.app.delivered(qp.qpn, msg_id, rx.take(msg_id))
        self._heard_on(qp, pkt.ev)

    def _heard_on(self, qp: QueuePair, ev: int) -> None:
        """Data just came in on `ev`: its path (plane and spine, the same
        switches both ways) works, so it becomes its plane's reverse EV,
        confirmed now (the host's view, for its probes of the reverse set;
        the NIC's receiver moves its own rx_reverse register the same way).
        With EV state on only: the single-path baseline keeps the control
        path its routing hashed (set_control_path), and oblivious spraying
        keeps the probed set (docs/nic.md, "Reverse EV set")."""
        p = ev_plane(ev)
        if p in qp.paths.reverse and qp.profile.enabled:
            qp.paths.confirm(ev, self.sim.now)

    def _on_ack(self, qp: QueuePair, pkt: W.Mrc) -> None:
        if qp.error is not None:
            return
        now = self.sim.now
        ev, mark, cum, ack_psn, bitmap = pkt.sack()
        ecn_seen = mark != SETH_M_NONE
        before = len(qp.inflight)  # for the bytes this ACK acknowledges (congestion control)
        qp.ack_at = now
        rtt = None
        rack = qp.rack_time
        hit = qp.inflight.get(ack_psn)
        if hit is not None and hit.ev == ev:  # this very copy arrived
            rack = max(rack, hit.sent_at)
            if hit.retx == 0:
                rtt = now - hit.sent_at
                qp.rtt_sample(rtt)
        elif hit is not None:
            if hit.retx:
                self.recovery.spurious(qp)  # an earlier copy arrived after all
            hit = None
        inflight = qp.inflight
        before = len(inflight)
        inflight.pop(ack_psn, None)
        qp.rack_time = qp.acked(cum, bitmap, rack)
        if hit is not None:
            # After the cumulative PSN and the bitmap, not before: a copy on the
            # same EV that they cover arrived (its own ACK late, or coalesced
            # into this one) and is no loss to blame the EV for.
            self._same_path_losses(qp, hit)
        if ev_plane(ev) in qp.paths.reverse and ev in qp.profile.state:
            qp.paths.confirm(ev, now)  # our packet got through on it: a good reverse EV
        self._event(qp, ev, EvEvent.ECN if ecn_seen else EvEvent.ACK)
        qp.cc.on_ack(now, (before - len(inflight)) * self.mtu, rtt, bool(ecn_seen), len(inflight) * self.mtu)
        self._detect_losses(qp)
        self._pump(qp)

    def _on_nack(self, qp: QueuePair, pkt: W.Mrc) -> None:
        ev, reason, psn = pkt.nack()
        self.stats.nacks += 1
        self._event(qp, ev, EvEvent.NACK_TRIMMED if reason == NACK_TRIMMED else EvEvent.NACK_TRIMMED_LASTHOP)
        cut = qp.inflight.get(psn)
        if cut is not None and cut.ev != ev:
            cut = None  # a later copy of the PSN, not the one that was cut
        qp.cc.on_nack(self.sim.now, cut.seg.length if cut is not None else self.mtu,
                      self.sim.now - cut.sent_at if cut is not None and cut.retx == 0 else None,
                      len(qp.inflight) * self.mtu)
        if cut is not None and not cut.lost:
            self.stats.retx_nack += 1
            self._lost(qp, cut, None)  # a trim is congestion, not a broken path
        self._pump(qp)

    def idle(self) -> bool:
        return not any(q.busy() for q in self.qps.values())
