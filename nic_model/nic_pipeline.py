"""Reference model of the MRC NIC pipeline, written from DESIGN.md section 5.

The embedded default where BMv2 is absent and a second oracle for
p4src/nic/. It holds the tables the controller plans (mrc_wire.entries)
and works on raw frames: port 0 faces the host, plane p uses its plane port.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Final, final

from mrc_wire import entries as N
from mrc_wire import packet as W
from mrc_wire.constants import (
    DATA_OPCODES,
    ECN_CE,
    EP_PORT_STATUS,
    ETH_LEN,
    EVR_CONGESTION,
    EVR_TRIMMED,
    EXT_LEN,
    HOST_PORT,
    NACK_BYTES,
    NACK_PSN_OOR_WINDOW,
    NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
    NIC_DROPS,  # noqa: F401 (re-exported)
    OP_ACK,
    OP_EP_REQUEST,
    OP_EP_RESPONSE,
    OP_NACK,
    OP_PROBE,
    OP_SACK,
    SETH_M_SKIP_ONCE,
)
from mrc_wire.usid import carrier_int, path_sids
from nic_model import rx_track
from nic_model.ev_health import EvHealth
from nic_model.rx_track import RxTrack


@final
class Output:
    """A frame out of the pipeline. A plain class, not a NamedTuple: the
    timed fabric makes millions, and compiled, a NamedTuple's constructor
    is a Python call (its generated __new__) where this one is native."""

    __slots__ = ("port", "frame", "high_priority", "pkt", "pad")

    def __init__(self, port: int, frame: bytes, high_priority: bool = False, pkt: W.Mrc | None = None,
                 pad: int = 0):
        self.port, self.frame = port, frame
        # The queue the frame is handed to: control and trimmed-class DSCPs go
        # to the high-priority queue, as at the switch.
        self.high_priority = high_priority
        # To the host: the packet as parsed by this pipeline (after the CE copy),
        # so a host model need not parse it again.
        self.pkt = pkt
        self.pad = pad  # zero bytes after `frame`, counted, not carried (mrc_wire.packet)

    def __repr__(self) -> str:
        return f"Output(port={self.port}, frame={self.frame!r}, high_priority={self.high_priority}, pad={self.pad})"


CONTROL_OPCODES: Final = (OP_ACK, OP_SACK, OP_NACK, OP_PROBE, OP_EP_REQUEST, OP_EP_RESPONSE)


class NicModel:
    """One NIC: install plan entries, then `process` frames (or `transmit`
    the host's packets). The outer headers of an (EV, destination) depend
    only on the tables and are built once and replayed (`cache`), as a
    megaflow cache would; `cache=False` builds them for every packet (the
    fuzz tests hold the two equal)."""

    def __init__(self, name: str = "nic", *, cache: bool = True, ecn_echo: bool = True):
        self.name = name
        self.cache = cache
        self.ecn_echo = ecn_echo  # False: the receiver does not echo CE (an ablation; the P4 always does)
        self.config = N.NicConfig.default()
        self.rows: dict[int, N.DestRow] = {}
        self.planes: dict[int, N.PlanePort] = {}
        self.qps: dict[int, N.QpEv] = {}
        self.slots: dict[int, int] = {}
        self.peers: dict[int, N.QpPeer] = {}  # local QP number -> its qp_peer entry
        self.rx = RxTrack()  # the receiver's registers (nic_model/rx_track.py)
        self.health = EvHealth()  # the path-health registers and ev_slots (nic_model/ev_health.py)
        self._slot_qp: dict[int, N.QpEv] = {}  # slot -> the QP whose range holds it (health QPs)
        self._pick_sink: Callable[[int, int, int], None] | None = None
        self.rotation: Counter[int] = Counter()
        # The P4's ev_stats and plane counters as plain numbers (one lookup
        # per packet, not four Counter updates); read as Counters below.
        self._ev_counts: dict[int, list[int]] = {}  # EV -> [packets, bytes]
        self._plane_pkts = [0] * 8
        self._plane_bytes = [0] * 8
        self.tx_count = self.rx_count = 0
        self.drops: Counter[str] = Counter()
        self.nacks: Counter[int] = Counter()
        self.other_events: Counter[str] = Counter()
        self._outer: dict[int, tuple[bytes, bytes]] = {}  # EV[10:0] << 32 | destination[31:0] -> headers

    def install(self, entries: Iterable[object]) -> None:
        for e in entries:
            if isinstance(e, (N.NicConfig, N.DestRow, N.PlanePort)):
                self._outer.clear()  # headers built from these tables: rebuilt on use
            match e:
                case N.NicConfig():
                    self.config = e
                case N.DestRow():
                    self.rows[e.row] = e
                case N.PlanePort():
                    self.planes[e.plane] = e
                case N.QpEv():
                    self._install_qp(e)
                case N.SlotEv():
                    self.write_slots([(e.slot, e.ev)])
                case N.QpPeer():
                    self.peers[e.qpn] = e
                    self.rx.ensure(e.qp_index)
                case N.EvStats() | N.NoticeSession() | N.EvSlots():
                    pass  # ev_slots: the model keeps it from slot_ev (write_slots)
                case _:
                    raise TypeError(f"not a NIC table entry: {e!r}")

    def _install_qp(self, e: N.QpEv) -> None:
        self.qps[e.qpn] = e
        if e.health:  # ev_slots of its range, from slot_ev as it stands
            self.health.ensure(e.qp_index)
            for s in range(e.base, e.base + e.mask + 1):
                self._slot_qp[s] = e
                if s in self.slots:
                    self.health.move(e.qp_index, s - e.base, None, self.slots[s])

    def write_slots(self, writes: Iterable[tuple[int, int]]) -> None:
        """Modify slot_ev entries, (slot, EV) each: what `install` does with
        SlotEv entries, without building one per write (the endpoint
        rewrites slots on every EV state change)."""
        slots, owner = self.slots, self._slot_qp
        for slot, ev in writes:
            qp = owner.get(slot) if owner else None
            if qp is not None:
                self.health.move(qp.qp_index, slot - qp.base, slots.get(slot), ev)
            slots[slot] = ev

    # ---- the host's writes and reads of path health (ev_health.p4) ----
    def set_bad(self, qpn: int, slots: int) -> None:
        """The host's word of local QP `qpn`'s slots assumed bad (ev_bad)."""
        qp = self.peers.get(qpn)
        if qp is not None:
            self.health.bad[qp.qp_index] = slots

    def set_port_down(self, planes: int) -> None:
        """The planes of this NIC's own ports that are down (port_down)."""
        self.health.port_down = planes

    def on_pick(self, sink: Callable[[int, int, int], None]) -> None:
        """Call `sink(peer QP, PSN, EV)` for each data packet of a health QP
        sent: the EV its data plane picked (the host's sender records it)."""
        self._pick_sink = sink

    def skipping(self, qpn: int) -> int:
        """Slots of local QP `qpn` its data plane will skip once (ev_skip)."""
        qp = self.peers.get(qpn)
        return self.health.skip[qp.qp_index].bit_count() if qp is not None and qp.health else 0

    def ev_changes(self) -> list[N.EvChange]:
        """The EV events the data plane made since the last call (its digests)."""
        out, self.health.changes = self.health.changes, []
        return out

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        """The host's write of local QP `qpn`'s reverse EV of `plane` (the
        rx_reverse register): where its SACKs for data on that plane go."""
        qp = self.peers.get(qpn)
        if qp is not None:
            self.rx.set_reverse(qp.qp_index, plane, ev)

    def uninstall(self, entries: Iterable[object]) -> None:
        """Delete entries by their key, as a P4Runtime delete would."""
        tables: dict[type, tuple[dict[Any, Any], str]] = {
            N.DestRow: (self.rows, "row"), N.PlanePort: (self.planes, "plane"), N.QpEv: (self.qps, "qpn"),
            N.SlotEv: (self.slots, "slot"), N.QpPeer: (self.peers, "qpn")}
        for e in entries:
            if type(e) not in tables:
                raise TypeError(f"not a deletable NIC table entry: {e!r}")
            table, key = tables[type(e)]
            table.pop(getattr(e, key), None)
            self._outer.clear()  # headers built from rows and planes: rebuilt on use

    # ---- the counters, as Counters (EVs or planes never counted are absent) ----
    @property
    def ev_tx(self) -> Counter[int]:
        return Counter({ev: c[0] for ev, c in self._ev_counts.items()})

    @property
    def ev_tx_bytes(self) -> Counter[int]:
        return Counter({ev: c[1] for ev, c in self._ev_counts.items()})

    @property
    def plane_tx(self) -> Counter[int]:
        return Counter({p: n for p, n in enumerate(self._plane_pkts) if n})

    @property
    def plane_tx_bytes(self) -> Counter[int]:
        return Counter({p: n for p, n in enumerate(self._plane_bytes) if n})

    @property
    def events(self) -> Counter[str]:
        """tx, rx, nack, notice, ce_copy, sack, duplicate, beyond_window."""
        rx = self.rx
        out = Counter({k: n for k, n in (("tx", self.tx_count), ("rx", self.rx_count), ("duplicate", rx.duplicates),
                                         ("beyond_window", rx.beyond)) if n})
        out.update(self.other_events)
        return out

    def _drop(self, reason: str) -> list[Output]:
        self.drops[reason] += 1
        return []

    def process(self, in_port: int, frame: bytes, pad: int = 0) -> list[Output]:
        """One frame (`pad` zero bytes after it counted, not carried)."""
        if len(frame) < 14:
            return self._drop("malformed")
        ipv6 = frame[12:14] == b"\x86\xdd"
        if in_port == HOST_PORT:
            return self.transmit(frame[14:], pad) if ipv6 else self._drop("not_mrc")
        return self._receive(frame, pad) if ipv6 else self._drop("not_encap")

    # ---- host to fabric ----------------------------------------------
    def transmit(self, raw: bytes, pad: int = 0) -> list[Output]:
        """A packet from the host (its IPv6 header on: the host port's
        Ethernet header carries nothing the pipeline reads but its type)."""
        if len(raw) < 40 or raw[0] >> 4 != 6 or W.cut_short(raw):
            return self._drop("malformed")
        m = W.parse(raw, pad)
        if m is None:
            return self._drop("not_mrc")
        qp = self.qps.get(m.dqpn)
        if qp is None:
            return self._drop("unknown_qp")
        if m.opcode in CONTROL_OPCODES:
            # Control (ACK, SACK, NACK, probe, endpoint request and response) goes on the EV the host wrote
            # into its inner headers: a reverse EV, or the EV a probe tests.
            return self._send(bytearray(raw), m.ev, m.dscp, 0, pad)
        else:
            turn = self.rotation[qp.qp_index]
            if qp.health:
                slot, self.rotation[qp.qp_index] = self.health.pick(qp, turn)
            else:
                slot = turn & qp.mask
                self.rotation[qp.qp_index] = (turn + 1) & 0xFFFF
            ev = self.slots.get(qp.base + slot)
            if ev is None:
                return self._drop("no_ev")
            if qp.health and self._pick_sink is not None:
                self._pick_sink(m.dqpn, m.psn, ev)
        # ECT(0) on data only: an opcode that is neither data nor control is
        # sprayed like data but not ECN-capable (as the P4: hdr.data invalid).
        return self._send(bytearray(raw), ev, m.dscp, 2 if m.opcode in DATA_OPCODES else 0, pad)

    def _send(self, inner: bytearray, ev: int, dscp: int, ecn: int, pad: int) -> list[Output]:
        inner[40:42] = (ev >> 16).to_bytes(2, "big")  # EV[31:16]: UDP source port
        inner[46:48] = b"\0\0"  # UDP checksum not recomputed (MRC relies on the ICRC)
        inner[2:4] = (ev & 0xFFFF).to_bytes(2, "big")  # EV[15:0]: low flow label
        out = self._encap(bytes(inner), ev, dscp=dscp, ecn=ecn, pad=pad)
        if out is None:
            return []
        # Bytes as the P4 counts them, in ingress: the host's frame before
        # encapsulation (the wire carries 40 more).
        host_bytes = ETH_LEN + len(inner) + pad
        c = self._ev_counts.get(ev)
        if c is None:
            c = self._ev_counts[ev] = [0, 0]
        c[0] += 1
        c[1] += host_bytes
        self._plane_pkts[ev & 7] += 1
        self._plane_bytes[ev & 7] += host_bytes
        self.tx_count += 1
        return [out]

    def _high(self, dscp: int) -> bool:
        c = self.config
        return dscp == c.dscp_control or dscp == c.dscp_trimmed or dscp == c.dscp_trimmed_lasthop

    def _encap(self, inner: bytes, ev: int, dscp: int, ecn: int, pad: int = 0) -> Output | None:
        """Carrier to the inner destination over the EV's plane and spine."""
        dst = int.from_bytes(inner[24:40], "big")
        row = self.rows.get((dst >> 16) & 0xFFFF)
        if row is None:
            self._drop("unknown_row")
            return None
        plane = self.planes.get(ev & 7)
        if plane is None:
            self._drop("no_plane")
            return None
        # Ethernet, next header, hop limit, source and carrier depend only on
        # the EV's plane and spine and the destination: built once, then reused.
        key = (ev & 0x7FF) << 32 | (dst & 0xFFFFFFFF)  # an int: hashed and compared without a tuple
        tail = self._outer.get(key)
        if tail is None:
            p, spine, k = ev & 7, (ev >> 3) & 0xFF, dst & 0x7FF
            c = self.config
            # same_row is the template's own word (the P4 reads it from dest_row).
            carrier = carrier_int(c.block, path_sids(p, c.my_row, c.my_row if row.same_row else row.row, k, spine))
            eth = plane.dst_mac.to_bytes(6, "big") + plane.src_mac.to_bytes(6, "big") + b"\x86\xdd"
            tail = (eth, bytes([41, 64]) + plane.src_addr.to_bytes(16, "big") + carrier.to_bytes(16, "big"))
            if self.cache:
                self._outer[key] = tail
        fl = int.from_bytes(inner[1:4], "big") & 0xFFFFF
        plen = int.from_bytes(inner[4:6], "big") + 40
        tc = (dscp << 2) | ecn
        vtf = ((6 << 28) | (tc << 20) | fl).to_bytes(4, "big") + plen.to_bytes(2, "big")
        return Output(plane.port, b"".join((tail[0], vtf, tail[1], inner)), self._high(dscp), None, pad)

    # ---- fabric to host ----------------------------------------------
    def _receive(self, frame: bytes, pad: int) -> list[Output]:
        outer, inner = frame[14:54], frame[54:]
        if len(outer) < 40 or outer[0] >> 4 != 6:
            return self._drop("malformed")
        if outer[6] != 41:
            return self._drop("not_encap")
        if len(inner) < 40 or inner[0] >> 4 != 6 or W.cut_short(inner):
            return self._drop("malformed")
        m = W.parse(inner, pad)
        if m is None or m.opcode not in EXT_LEN:
            return self._drop("bad_inner")
        c = self.config
        if int.from_bytes(inner[24:40], "big") != c.my_addr:
            return self._drop("not_for_me")
        odscp, oecn = outer[1] >> 6 | (outer[0] & 0xF) << 2, outer[1] >> 4 & 3
        if m.is_data and (odscp == c.dscp_trimmed or odscp == c.dscp_trimmed_lasthop):
            return self._nack(frame[:14], inner, m, odscp, pad)
        if oecn == ECN_CE and m.ecn:
            m = m.marked_ce()  # RFC 6040: CE reaches an ECT inner header
            self.other_events["ce_copy"] += 1
        qp = self.peers.get(m.dqpn)
        if qp is not None:
            if qp.offload:
                made = self._offloaded(frame, m, qp, pad)
                if made is not None:
                    return made
            if qp.health:
                self._evidence(qp, m)
        self.rx_count += 1
        return [Output(HOST_PORT, frame[:14] + m.raw, False, m, pad)]

    def _offloaded(self, frame: bytes, m: W.Mrc, qp: N.QpPeer, pad: int) -> list[Output] | None:
        """The receiver's part (rx_track.p4): what it makes of data and
        probes (None: the packet goes on to the host); a SACK for our data
        moves the reverse EV of its plane."""
        if m.is_data:
            return self._track(frame, m, qp, pad)
        if m.opcode == OP_PROBE:
            reply, ev = rx_track.on_probe(self.rx, qp, m, self.config.dscp_control)
            return self._made(reply, ev, "probe_answer")
        if m.opcode == OP_SACK and qp.follow and not m.probe_response:
            ev = m.sack()[0]  # our data got through on it: the reverse EV of its plane
            self.rx.set_reverse(qp.qp_index, ev & 7, ev)
        return None

    def _evidence(self, qp: N.QpPeer, m: W.Mrc) -> None:
        """Path health (ev_health.p4): what a packet for our sender says of
        its paths. A SACK's congestion mark or a TRIMMED NACK skips the EV
        once; the peer's port status (ERTH) says which planes are down there."""
        op = m.opcode
        if op == OP_SACK and qp.skip_on_mark and m.sack_mark == SETH_M_SKIP_ONCE and not m.probe_response:
            self.health.mark_skip(qp.qp_index, m.sack()[0], EVR_CONGESTION)
        elif op == OP_NACK:
            ev, reason, _ = m.nack()
            if reason == NACK_TRIMMED:
                self.health.mark_skip(qp.qp_index, ev, EVR_TRIMMED)
        elif op == OP_EP_REQUEST:
            ep_op, down = m.endpoint_op()
            if ep_op == EP_PORT_STATUS:
                self.health.port_status(qp.qp_index, down & 0xFF)

    def _track(self, frame: bytes, m: W.Mrc, qp: N.QpPeer, pad: int) -> list[Output]:
        """Receive step 3 (nic_model/rx_track.py): the QP's receive
        registers; the packet turned into a SACK or a window NACK on the
        reverse EV when one is due (a copy of new data to the host), else
        handed to the host."""
        kind, reply, ev = rx_track.on_data(self.rx, qp, m, self.config.dscp_control, self.ecn_echo)
        if reply is None:
            self.rx_count += 1
            return [Output(HOST_PORT, frame[:14] + m.raw, False, m, pad)]
        outs = self._made(reply, ev, "sack" if kind != rx_track.BEYOND else "nack")
        if outs and kind == rx_track.NEW:
            self.other_events["host_copy"] += 1
            outs.append(Output(HOST_PORT, frame[:14] + m.raw, False, m, pad))
        return outs

    def _made(self, inner: bytes, ev: int, kind: str) -> list[Output]:
        """A packet this NIC made (`kind`: sack, probe_answer, nack) on `ev`:
        counted by kind, not as the host's traffic (ev_tx, plane_tx)."""
        out = self._encap(rx_track.on_ev(inner, ev), ev, dscp=self.config.dscp_control, ecn=0)
        if out is None:
            return []
        self.other_events[kind] += 1
        if kind == "nack":
            self.nacks[NACK_PSN_OOR_WINDOW] += 1
        return [out]

    def _nack(self, eth: bytes, inner: bytes, m: W.Mrc, odscp: int, pad: int) -> list[Output]:
        c = self.config
        qp = self.peers.get(m.dqpn)
        if qp is None:
            return self._drop("unknown_qp")
        peer = qp.peer_qpn
        reason = NACK_TRIMMED if odscp == c.dscp_trimmed else NACK_TRIMMED_LASTHOP
        # The notice to the host: what arrived, decapsulated, trimmed DSCP.
        notice = bytearray(eth + inner)
        notice[14] = (notice[14] & 0xF0) | (odscp >> 2)
        notice[15] = ((odscp & 0x3) << 6) | (notice[15] & 0x3F)
        nack = W.nack_for(inner, peer, reason, c.dscp_control)  # over the reverse of the same path
        out = self._encap(nack, m.ev, dscp=c.dscp_control, ecn=0)
        if out is None:
            return []
        self.nacks[reason] += 1
        self.other_events["nack"] += 1
        self.other_events["notice"] += 1
        return [Output(out.port, out.frame[:NACK_BYTES], out.high_priority),
                Output(HOST_PORT, bytes(notice), False, W.parse(bytes(notice[14:]), pad), pad)]
