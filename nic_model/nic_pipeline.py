"""Reference model of the MRC NIC pipeline, written from DESIGN.md section 5.

The embedded default where BMv2 is absent and a second oracle for
p4src/nic/. It holds the tables the controller plans (mrc_wire.entries)
and takes frames as bytes (`process`: the PTF model target, the fuzz tests)
or, from the timed fabric, the host's packet (`transmit`) and frames as
header fields (`receive`, mrc_wire.frame); what it sends to a plane port
is header fields, serialized only where asked (`Output.frame`). Port 0
faces the host, plane p uses its plane port.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Final, final

from mrc_wire import entries as N
from mrc_wire import packet as W
from mrc_wire.constants import (
    ECN_CE,
    EP_PORT_STATUS,
    ETH_LEN,
    EVR_CONGESTION,
    EVR_TRIMMED,
    EXT_LEN,
    HOST_PORT,
    IPPROTO_IPV6,
    IPV6_LEN,
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
from mrc_wire.frame import Frame, not_ipv6_frame, parse_frame
from mrc_wire.usid import SPINE_AT, carrier_int, path_sids, spine_sid
from nic_model import rx_track
from nic_model.ev_health import EvHealth
from nic_model.rx_track import RxTrack


@final
class Output:
    """A frame out of the pipeline. To a plane port: `wire`, its header
    fields (mrc_wire.frame). To the host: the packet as parsed by this
    pipeline (`pkt`, after the CE copy, so a host model need not parse it
    again) behind the Ethernet header it arrived with (`eth`). `frame`
    is either as bytes. A plain class, not a NamedTuple: the timed fabric
    makes millions, and compiled, a NamedTuple's constructor is a Python
    call (its generated __new__) where this one is native."""

    __slots__ = ("port", "wire", "high_priority", "pkt", "eth")

    def __init__(self, port: int, wire: Frame | None, high_priority: bool = False, pkt: W.Mrc | None = None,
                 eth: bytes = b""):
        self.port, self.wire, self.pkt, self.eth = port, wire, pkt, eth
        # The queue the frame is handed to: control and trimmed-class DSCPs go
        # to the high-priority queue, as at the switch.
        self.high_priority = high_priority

    @property
    def frame(self) -> bytes:
        """The frame as bytes (its `pad` zeros not carried)."""
        if self.wire is not None:
            return self.wire.to_bytes()
        assert self.pkt is not None  # a host output carries its packet
        return self.eth + self.pkt.raw

    @property
    def pad(self) -> int:
        """Zero bytes after `frame`, counted, not carried (mrc_wire.packet)."""
        if self.wire is not None:
            return self.wire.pad
        return 0 if self.pkt is None else self.pkt.pad

    def __repr__(self) -> str:
        return f"Output(port={self.port}, frame={self.frame!r}, high_priority={self.high_priority}, pad={self.pad})"


@final
class _Config:
    """What the pipeline reads of its nic_config entry on every packet, as
    native fields (the entry is a dataclass the compiled code reads
    generically); my_addr as the bytes a packet carries."""

    __slots__ = ("my_addr", "dscp_control", "dscp_trimmed", "dscp_trimmed_lasthop")

    def __init__(self, c: N.NicConfig):
        self.my_addr = c.my_addr.to_bytes(16, "big")
        self.dscp_control, self.dscp_trimmed, self.dscp_trimmed_lasthop = \
            c.dscp_control, c.dscp_trimmed, c.dscp_trimmed_lasthop


# The spine uSIDs as the 2 bytes a carrier holds, by plane << 8 | spine
# (EV[2:0], EV[10:3]): made once, shared by every NIC.
_SPINE_SIDS: Final = [spine_sid(p, s).to_bytes(2, "big") for p in range(8) for s in range(256)]


@final
class _Outer:
    """The encapsulation's fields that depend only on the EV's plane and
    the destination, and the plane's port: built once, then reused. The
    carrier is whole for a destination in our row (no spine on its path);
    across rows it is `head`, the EV's spine uSID, `tail`, put together
    per packet. (Cached per spine too, as it was, a NIC kept 512 of these
    per destination at 32 spines and 8,192 NICs.)"""

    __slots__ = ("eth", "src", "carrier", "head", "tail", "port")

    def __init__(self, eth: bytes, src: bytes, carrier: bytes | None, head: bytes, tail: bytes, port: int):
        self.eth, self.src, self.carrier, self.head, self.tail, self.port = eth, src, carrier, head, tail, port


def is_control(opcode: int) -> bool:
    """Whether `opcode` is control: ACK, SACK, NACK, probe, endpoint request
    or response (a literal tuple: compiled, six native compares, where a
    named tuple's `in` is a Python call)."""
    return opcode in (OP_ACK, OP_SACK, OP_NACK, OP_PROBE, OP_EP_REQUEST, OP_EP_RESPONSE)


class NicModel:
    """One NIC: install plan entries, then `process` frames (or `transmit`
    the host's packets). The outer headers of an (EV, destination) depend
    only on the tables and are built once and replayed (`cache`), as a
    megaflow cache would; `cache=False` builds them for every packet (the
    fuzz tests hold the two equal)."""

    def __init__(self, name: str = "nic", *, cache: bool = True, ecn_echo: bool = True, digests: bool = True):
        self.name = name
        self.cache = cache
        self.ecn_echo = ecn_echo  # False: the receiver does not echo CE (an ablation; the P4 always does)
        self.config = N.NicConfig.default()
        self._c = _Config(self.config)
        self.rows: dict[int, N.DestRow] = {}
        self.planes: dict[int, N.PlanePort] = {}
        self.qps: dict[int, N.QpEv] = {}
        self.slots: dict[int, int] = {}
        self.peers: dict[int, N.QpPeer] = {}  # local QP number -> its qp_peer entry
        self.rx = RxTrack()  # the receiver's registers (nic_model/rx_track.py)
        # The path-health registers and ev_slots (nic_model/ev_health.py);
        # `digests` False: its changes are counted, not kept for ev_changes.
        self.health = EvHealth(keep=digests)
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
        self._outer: dict[int, _Outer] = {}  # EV[2:0] << 32 | destination[31:0] -> headers

    def install(self, entries: Iterable[object]) -> None:
        for e in entries:
            if isinstance(e, (N.NicConfig, N.DestRow, N.PlanePort)):
                self._outer.clear()  # headers built from these tables: rebuilt on use
            match e:
                case N.NicConfig():
                    self.config = e
                    self._c = _Config(e)
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
        if not self.health.keep:
            raise RuntimeError(f"{self.name}: built with digests=False: its {self.health.digests} digests were "
                               "counted, not kept")
        return self.health.drain()

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
        """One frame as bytes (`pad` zero bytes after it counted, not carried)."""
        if len(frame) < ETH_LEN:
            return self._drop("malformed")
        if in_port == HOST_PORT:
            return self.transmit(frame[ETH_LEN:], pad) if frame[12:14] == b"\x86\xdd" else self._drop("not_mrc")
        why = not_ipv6_frame(frame)
        if why is not None:
            return self._drop("not_encap" if why == "not_ipv6" else why)
        return self.receive(parse_frame(frame, pad))

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
        if is_control(m.opcode):
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
        return self._send(bytearray(raw), ev, m.dscp, 2 if m.is_data else 0, pad)

    def _send(self, inner: bytearray, ev: int, dscp: int, ecn: int, pad: int) -> list[Output]:
        inner[40], inner[41] = (ev >> 24) & 0xFF, (ev >> 16) & 0xFF  # EV[31:16]: UDP source port
        inner[46] = inner[47] = 0  # UDP checksum not recomputed (MRC relies on the ICRC)
        inner[2], inner[3] = (ev >> 8) & 0xFF, ev & 0xFF  # EV[15:0]: low flow label
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

    @property
    def headers_cached(self) -> int:
        """(Plane, destination) pairs whose outer headers are cached."""
        return len(self._outer)

    def _high(self, dscp: int) -> bool:
        c = self._c
        return dscp == c.dscp_control or dscp == c.dscp_trimmed or dscp == c.dscp_trimmed_lasthop

    def _encap(self, inner: bytes, ev: int, dscp: int, ecn: int, pad: int = 0) -> Output | None:
        """Carrier to the inner destination over the EV's plane and spine."""
        # The destination's low 32 bits, byte by byte: compiled, native
        # arithmetic, where the whole 128-bit address would be a Python int.
        dst = (inner[36] << 24) | (inner[37] << 16) | (inner[38] << 8) | inner[39]
        # Ethernet, next header, hop limit, source, port and the carrier
        # but its spine uSID depend only on the EV's plane and the
        # destination: built once, then reused; a change to the tables they
        # come from clears them.
        key = (ev & 7) << 32 | dst  # an int: hashed and compared without a tuple
        outer = self._outer.get(key)
        if outer is None:
            outer = self._outer_for(dst, ev)
            if outer is None:
                return None
            if self.cache:
                self._outer[key] = outer
        carrier = outer.carrier
        if carrier is None:  # across rows: the EV's spine between
            carrier = outer.head + _SPINE_SIDS[(ev & 7) << 8 | (ev >> 3) & 0xFF] + outer.tail
        fl = ((inner[1] & 0xF) << 16) | (inner[2] << 8) | inner[3]
        plen = ((inner[4] << 8) | inner[5]) + IPV6_LEN
        return Output(outer.port, Frame(outer.eth, (dscp << 2) | ecn, fl, plen, IPPROTO_IPV6, 64, outer.src,
                                        carrier, inner, pad), self._high(dscp))

    def _outer_for(self, dst: int, ev: int) -> _Outer | None:
        """dest_row, plane_port and the carrier template for destination
        (its low 32 bits) `dst` on `ev`; None (counted) without a row or plane."""
        row = self.rows.get(dst >> 16)
        if row is None:
            self._drop("unknown_row")
            return None
        plane = self.planes.get(ev & 7)
        if plane is None:
            self._drop("no_plane")
            return None
        p, k = ev & 7, dst & 0x7FF
        c = self.config
        # same_row is the template's own word (the P4 reads it from dest_row).
        dst_row = c.my_row if row.same_row else row.row
        # The carrier of spine 0, cut where a spine's uSID goes (path_sids
        # has one only across rows).
        carrier = carrier_int(c.block, path_sids(p, c.my_row, dst_row, k, 0)).to_bytes(16, "big")
        whole = carrier if dst_row == c.my_row else None
        eth = plane.dst_mac.to_bytes(6, "big") + plane.src_mac.to_bytes(6, "big") + b"\x86\xdd"
        return _Outer(eth, plane.src_addr.to_bytes(16, "big"), whole, carrier[:SPINE_AT], carrier[SPINE_AT + 2:],
                      plane.port)

    # ---- fabric to host ----------------------------------------------
    def receive(self, f: Frame) -> list[Output]:
        """A frame from a plane port, as header fields (the timed fabric's)."""
        if f.nh != IPPROTO_IPV6:
            return self._drop("not_encap")
        inner, pad = f.inner, f.pad
        if len(inner) < IPV6_LEN or inner[0] >> 4 != 6 or W.cut_short(inner):
            return self._drop("malformed")
        m = W.parse(inner, pad)
        if m is None or m.opcode not in EXT_LEN:
            return self._drop("bad_inner")
        c = self._c
        if inner[24:40] != c.my_addr:
            return self._drop("not_for_me")
        odscp, oecn = f.tc >> 2, f.tc & 3
        if m.is_data and (odscp == c.dscp_trimmed or odscp == c.dscp_trimmed_lasthop):
            return self._nack(f.eth, inner, m, odscp, pad)
        if oecn == ECN_CE and m.ecn:
            m = m.marked_ce()  # RFC 6040: CE reaches an ECT inner header
            self.other_events["ce_copy"] += 1
        qp = self.peers.get(m.dqpn)
        if qp is not None:
            if qp.offload:
                made = self._offloaded(f.eth, m, qp)
                if made is not None:
                    return made
            if qp.health:
                self._evidence(qp, m)
        self.rx_count += 1
        return [Output(HOST_PORT, None, False, m, f.eth)]

    def _offloaded(self, eth: bytes, m: W.Mrc, qp: N.QpPeer) -> list[Output] | None:
        """The receiver's part (rx_track.p4): what it makes of data and
        probes (None: the packet goes on to the host); a SACK for our data
        moves the reverse EV of its plane."""
        if m.is_data:
            return self._track(eth, m, qp)
        if m.opcode == OP_PROBE:
            reply, ev = rx_track.on_probe(self.rx, qp, m, self._c.dscp_control)
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

    def _track(self, eth: bytes, m: W.Mrc, qp: N.QpPeer) -> list[Output]:
        """Receive step 3 (nic_model/rx_track.py): the QP's receive
        registers; the packet turned into a SACK or a window NACK on the
        reverse EV when one is due (a copy of new data to the host), else
        handed to the host."""
        kind, reply, ev = rx_track.on_data(self.rx, qp, m, self._c.dscp_control, self.ecn_echo)
        if reply is None:
            self.rx_count += 1
            return [Output(HOST_PORT, None, False, m, eth)]
        outs = self._made(reply, ev, "sack" if kind != rx_track.BEYOND else "nack")
        if outs and kind == rx_track.NEW:
            self.other_events["host_copy"] += 1
            outs.append(Output(HOST_PORT, None, False, m, eth))
        return outs

    def _made(self, inner: bytes, ev: int, kind: str) -> list[Output]:
        """A packet this NIC made (`kind`: sack, probe_answer, nack) on `ev`:
        counted by kind, not as the host's traffic (ev_tx, plane_tx)."""
        out = self._encap(rx_track.on_ev(inner, ev), ev, dscp=self._c.dscp_control, ecn=0)
        if out is None:
            return []
        self.other_events[kind] += 1
        if kind == "nack":
            self.nacks[NACK_PSN_OOR_WINDOW] += 1
        return [out]

    def _nack(self, eth: bytes, inner: bytes, m: W.Mrc, odscp: int, pad: int) -> list[Output]:
        c = self._c
        qp = self.peers.get(m.dqpn)
        if qp is None:
            return self._drop("unknown_qp")
        peer = qp.peer_qpn
        reason = NACK_TRIMMED if odscp == c.dscp_trimmed else NACK_TRIMMED_LASTHOP
        # The notice to the host: what arrived, decapsulated, trimmed DSCP.
        notice = bytearray(inner)
        notice[0] = (notice[0] & 0xF0) | (odscp >> 2)
        notice[1] = ((odscp & 0x3) << 6) | (notice[1] & 0x3F)
        nack = W.nack_for(inner, peer, reason, c.dscp_control)  # over the reverse of the same path
        out = self._encap(nack, m.ev, dscp=c.dscp_control, ecn=0)
        if out is None:
            return []
        self.nacks[reason] += 1
        self.other_events["nack"] += 1
        self.other_events["notice"] += 1
        return [out, Output(HOST_PORT, None, False, W.Mrc(bytes(notice), pad), eth)]
