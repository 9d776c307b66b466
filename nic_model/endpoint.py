"""The MRC endpoint model: QPs with PSNs, messages segmented into RDMA-write
packets, SACK/NACK, retransmission, EV states and congestion response.

Packets are bytes (inner IPv6 / UDP / BTH / MRC extension / payload) so the
same endpoint can drive a NIC pipeline (BMv2 host port or a model). The EV
of each packet is written into the inner UDP source port (EV[31:16]) and the
low 16 bits of the flow label (EV[15:0]), and is echoed back in ACK, SACK
and NACK, so every signal is attributed to the path that caused it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Callable

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6

from nic_model import headers as H
from nic_model.ev import EvEvent, EvProfile
from nic_model.sim import Sim

DSCP = {"control": 46, "data": 8, "data_retx": 12, "trimmed": 16, "trimmed_lasthop": 18}
ECT0, CE = 2, 3


def ev_to_fields(ev: int) -> tuple[int, int]:
    """(UDP source port, flow label) carrying an EV."""
    return ev >> 16, ev & 0xFFFF




@dataclass
class CcState:
    """Window congestion control in the spirit of NSCC: multiplicative
    decrease on ECN, trims and delay over target (once per RTT at most),
    additive increase otherwise."""

    cwnd: float = 16.0
    min_cwnd: float = 1.0
    max_cwnd: float = 256.0
    target_delay: float = 40.0  # µs
    last_decrease: float = -1e9

    def on_ack(self, now: float, rtt: float | None, congested: bool) -> None:
        if congested or (rtt is not None and rtt > self.target_delay):
            if now - self.last_decrease >= (rtt or self.target_delay):
                factor = 0.7 if congested else max(0.5, self.target_delay / rtt)  # type: ignore[operator]
                self.cwnd = max(self.min_cwnd, self.cwnd * factor)
                self.last_decrease = now
        else:
            self.cwnd = min(self.max_cwnd, self.cwnd + 1.0 / self.cwnd)


@dataclass
class Segment:
    psn: int
    msg_id: int
    offset: int
    msg_len: int
    opcode: int
    payload: bytes


@dataclass
class Inflight:
    seg: Segment
    ev: int
    sent_at: float
    retx: int = 0


@dataclass
class Stats:
    sent: int = 0
    retransmits: int = 0
    timeouts: int = 0
    nacks: int = 0
    probes: int = 0
    delivered: int = 0
    duplicates: int = 0
    trim_notices: int = 0


@dataclass
class QueuePair:
    """One side's state of a connection (sender and receiver halves)."""

    qpn: int
    peer_qpn: int
    peer_addr: str
    profile: EvProfile
    cc: CcState = field(default_factory=CcState)
    next_psn: int = 0
    pending: list[Segment] = field(default_factory=list)
    retx_queue: list[int] = field(default_factory=list)
    inflight: dict[int, Inflight] = field(default_factory=dict)
    acked_below: int = 0
    # receiver half
    cum_psn: int = 0
    received: set[int] = field(default_factory=set)
    partial: dict[int, dict[int, bytes]] = field(default_factory=dict)
    delivered_msgs: set[int] = field(default_factory=set)
    probe_sent: dict[int, tuple[int, float]] = field(default_factory=dict)  # probe id -> (EV, time)


class Endpoint:
    """An MRC endpoint on one NIC. `transmit` hands a packet to the NIC;
    the NIC calls `receive` with what arrives for this endpoint."""

    def __init__(self, sim: Sim, addr: str, transmit: Callable[[bytes], None], *,
                 mtu: int = 1024, rto: float = 200.0, probe_interval: float = 100.0,
                 on_message: Callable[[int, int, bytes], None] | None = None,
                 slot_sink: Callable[[int, list[tuple[int, int]]], None] | None = None):
        self.sim = sim
        self.addr = str(ipaddress.IPv6Address(addr))
        self.transmit = transmit
        self.mtu = mtu
        self.rto = rto
        self.probe_interval = probe_interval
        self.on_message = on_message or (lambda qpn, msg_id, data: None)
        # Where slot rewrites go (the NIC's slot_ev table), per QP number.
        self.slot_sink = slot_sink
        self._slots_pushed: dict[int, int] = {}
        self.qps: dict[int, QueuePair] = {}
        self.stats = Stats()
        self._msg_ids = 0
        self._probe_ids = 0
        self._timer_armed = False

    # ---- set-up -------------------------------------------------------
    def connect(self, qpn: int, peer_qpn: int, peer_addr: str, profile: EvProfile) -> QueuePair:
        qp = QueuePair(qpn, peer_qpn, str(ipaddress.IPv6Address(peer_addr)), profile)
        self.qps[qpn] = qp
        return qp

    # ---- sender -------------------------------------------------------
    def send_message(self, qpn: int, data: bytes) -> int:
        qp = self.qps[qpn]
        self._msg_ids += 1
        msg_id = self._msg_ids
        chunks = [data[i : i + self.mtu] for i in range(0, max(len(data), 1), self.mtu)] or [b""]
        for i, chunk in enumerate(chunks):
            if len(chunks) == 1:
                op = H.OP_WRITE_ONLY
            else:
                op = H.OP_WRITE_FIRST if i == 0 else H.OP_WRITE_LAST if i == len(chunks) - 1 else H.OP_WRITE_MIDDLE
            qp.pending.append(Segment(qp.next_psn, msg_id, i * self.mtu, len(data), op, chunk))
            qp.next_psn = (qp.next_psn + 1) & 0xFFFFFF
        self._pump(qp)
        return msg_id

    def _packet(self, qp: QueuePair, ev: int, dscp: int, ecn: int, bth: H.BTH, ext, payload: bytes = b"") -> bytes:
        sport, fl = ev_to_fields(ev)
        pkt = (IPv6(src=self.addr, dst=qp.peer_addr, tc=(dscp << 2) | ecn, fl=fl, hlim=64)
               / UDP(sport=sport, dport=H.ROCE_PORT) / bth / ext / payload)
        return bytes(pkt)

    def _send_segment(self, qp: QueuePair, seg: Segment, retx: bool) -> None:
        ev = qp.profile.next_ev()
        bth = H.BTH(opcode=seg.opcode, dqpn=qp.peer_qpn, psn=seg.psn, ackreq=1)
        ext = H.MRCData(msg_id=seg.msg_id, offset=seg.offset, msg_len=seg.msg_len)
        old = qp.inflight.get(seg.psn)
        qp.inflight[seg.psn] = Inflight(seg, ev, self.sim.now, (old.retx + 1) if old else 0)
        self.stats.sent += 1
        self.stats.retransmits += retx
        self.transmit(self._packet(qp, ev, DSCP["data_retx" if retx else "data"], ECT0, bth, ext, seg.payload))
        self._arm_timer()

    def _pump(self, qp: QueuePair) -> None:
        while qp.retx_queue:
            psn = qp.retx_queue.pop(0)
            if psn in qp.inflight:
                self._send_segment(qp, qp.inflight[psn].seg, retx=True)
        while qp.pending and len(qp.inflight) < int(qp.cc.cwnd):
            self._send_segment(qp, qp.pending.pop(0), retx=False)

    def _event(self, qp: QueuePair, ev: int, event: EvEvent) -> None:
        """Apply an EV event and push the slot rewrites it caused."""
        qp.profile.event(ev, event)
        if self.slot_sink is not None:
            done = self._slots_pushed.get(qp.qpn, 0)
            writes = qp.profile.slot_writes[done:]
            if writes:
                self._slots_pushed[qp.qpn] = done + len(writes)
                self.slot_sink(qp.qpn, writes)

    def _arm_timer(self) -> None:
        if not self._timer_armed:
            self._timer_armed = True
            self.sim.at(self.rto / 4, self._on_timer)

    def _on_timer(self) -> None:
        self._timer_armed = False
        busy = False
        for qp in self.qps.values():
            for psn, inf in list(qp.inflight.items()):
                if self.sim.now - inf.sent_at >= self.rto:
                    self.stats.timeouts += 1
                    self._event(qp, inf.ev, EvEvent.LOSS)  # a real loss: the path is suspect
                    qp.retx_queue.append(psn)
            self._probe(qp)
            self._pump(qp)
            busy |= bool(qp.inflight or qp.pending or qp.profile.probing())
        if busy:
            self._arm_timer()

    def _probe(self, qp: QueuePair) -> None:
        now = self.sim.now
        for pid, (ev, t) in list(qp.probe_sent.items()):
            if now - t >= self.rto:
                del qp.probe_sent[pid]
                self._event(qp, ev, EvEvent.PROBE_LOST)
        waiting = {ev for ev, _ in qp.probe_sent.values()}
        for ev in qp.profile.probing():
            if ev in waiting:
                continue
            self._probe_ids = (self._probe_ids + 1) & 0xFFFFFF
            qp.probe_sent[self._probe_ids] = (ev, now)
            self.stats.probes += 1
            self.transmit(self._packet(qp, ev, DSCP["control"], 0, H.BTH(opcode=H.OP_PROBE, dqpn=qp.peer_qpn),
                                       H.MRCProbe(ev=ev, probe_id=self._probe_ids)))

    # ---- receive ------------------------------------------------------
    def receive(self, raw: bytes) -> None:
        pkt = H.parse(raw)
        if pkt is None or pkt.ext is None:
            return
        qp = self.qps.get(pkt.bth.dqpn)
        if qp is None:
            return
        op = pkt.bth.opcode
        if op in H.DATA_OPCODES:
            self._on_data(qp, pkt)
        elif op in (H.OP_ACK, H.OP_SACK):
            self._on_ack(qp, pkt.ext)
        elif op == H.OP_NACK:
            self._on_nack(qp, pkt.ext)
        elif op == H.OP_PROBE:
            self._on_probe(qp, pkt)

    def _on_data(self, qp: QueuePair, pkt: H.Mrc) -> None:
        if pkt.dscp in (DSCP["trimmed"], DSCP["trimmed_lasthop"]):
            # The NIC's notice of a trimmed packet: its payload is gone and
            # the NIC has already NACKed it, so it is counted, not placed.
            self.stats.trim_notices += 1
            return
        psn, d = pkt.bth.psn, pkt.ext
        ev = pkt.ev
        duplicate = psn < qp.cum_psn or psn in qp.received
        if duplicate:
            self.stats.duplicates += 1
        else:
            qp.received.add(psn)
            while qp.cum_psn in qp.received:
                qp.received.discard(qp.cum_psn)
                qp.cum_psn += 1
            if d.msg_id not in qp.delivered_msgs:
                parts = qp.partial.setdefault(d.msg_id, {})
                parts[d.offset] = pkt.payload
                if sum(len(p) for p in parts.values()) >= d.msg_len:
                    data = b"".join(parts[o] for o in sorted(parts))
                    del qp.partial[d.msg_id]
                    qp.delivered_msgs.add(d.msg_id)
                    self.stats.delivered += 1
                    self.on_message(qp.qpn, d.msg_id, data)
        bitmap = 0
        for p in qp.received:
            if 0 < p - qp.cum_psn <= H.SACK_BITS:
                bitmap |= 1 << (p - qp.cum_psn - 1)
        ack = H.MRCAck(ev=ev, ecn_seen=int(pkt.ecn == CE), cum_psn=qp.cum_psn, ack_psn=psn, bitmap=bitmap)
        op = H.OP_SACK if bitmap else H.OP_ACK
        self.transmit(self._packet(qp, ev, DSCP["control"], 0, H.BTH(opcode=op, dqpn=qp.peer_qpn, psn=psn), ack))

    def _on_ack(self, qp: QueuePair, ack: H.MRCAck) -> None:
        now = self.sim.now
        rtt = None
        hit = qp.inflight.get(ack.ack_psn)
        if hit is not None and hit.ev == ack.ev:
            rtt = now - hit.sent_at
        for psn in [p for p in qp.inflight if p < ack.cum_psn]:
            del qp.inflight[psn]
        for bit in range(H.SACK_BITS):
            if ack.bitmap >> bit & 1:
                qp.inflight.pop(ack.cum_psn + 1 + bit, None)
        qp.inflight.pop(ack.ack_psn, None)
        self._event(qp, ack.ev, EvEvent.ECN if ack.ecn_seen else EvEvent.ACK)
        qp.cc.on_ack(now, rtt, bool(ack.ecn_seen))
        self._pump(qp)

    def _on_nack(self, qp: QueuePair, nack: H.MRCNack) -> None:
        self.stats.nacks += 1
        event = EvEvent.NACK_TRIMMED if nack.reason == H.NACK_TRIMMED else EvEvent.NACK_TRIMMED_LASTHOP
        self._event(qp, nack.ev, event)
        qp.cc.on_ack(self.sim.now, None, True)
        if nack.psn in qp.inflight:
            qp.retx_queue.append(nack.psn)  # the payload was cut: resend it now
        self._pump(qp)

    def _on_probe(self, qp: QueuePair, pkt: H.Mrc) -> None:
        pr = pkt.ext
        if not pr.reply:
            self.transmit(self._packet(qp, pr.ev, DSCP["control"], 0, H.BTH(opcode=H.OP_PROBE, dqpn=qp.peer_qpn),
                                       H.MRCProbe(ev=pr.ev, reply=1, probe_id=pr.probe_id)))
        elif pr.probe_id in qp.probe_sent:
            ev, _ = qp.probe_sent.pop(pr.probe_id)
            self._event(qp, ev, EvEvent.PROBE_OK)

    def idle(self) -> bool:
        return all(not q.inflight and not q.pending and not q.retx_queue for q in self.qps.values())
