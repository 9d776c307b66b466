"""Reference model of the MRC NIC pipeline, written from DESIGN.md section 5:
the NIC's main control (p4src/nic/main.p4), composed of its stages, one
module each, named after its P4 file: the parser and its one drop action
(parser.py), transmit and spray (tx.py), the rotation and path health
(ev_health.py), encapsulation (encap.py), decapsulation (decap.py), trimmed
data to NACK (trim_nack.py) and the receiver (rx_track.py).

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
from collections.abc import Iterable, Sequence
from typing import Any

from mrc_wire import entries as N
from mrc_wire import packet as W
from mrc_wire.constants import (
    ETH_LEN,
    HOST_PORT,
    IPV6_LEN,
    NACK_PSN_OOR_WINDOW,
    NIC_DROPS,  # noqa: F401 (re-exported)
    OP_PROBE,
    OP_SACK,
    TX_DONE_BYTES,
    UDP_LEN,
)
from mrc_wire.frame import Frame
from mrc_wire.pcie import Host, QpCreate
from mrc_wire.qp_table import QpTable
from nic_model import parser, reply, rx_track, trim_nack
from nic_model.decap import Decap
from nic_model.encap import Encap
from nic_model.ev_health import EvHealth
from nic_model.outputs import Output, Settings, Wire
from nic_model.parser import Drops
from nic_model.rx_track import RxTrack
from nic_model.tx import Spray, Transmit, is_control

# Re-exported: what the pipeline's users name through it.
__all__ = ["NicModel", "Output", "Wire", "is_control"]


def completion(eth: bytes, inner: bytes) -> Output:
    """The transmit completion of a data packet sent as `inner` (its EV
    written in): back to the host port, cut to its headers (TX_DONE_BYTES)."""
    return Output(HOST_PORT, None, False, W.Mrc(inner[:TX_DONE_BYTES - ETH_LEN]), eth)


class NicModel:
    """One NIC: install plan entries, then `process` frames (or `transmit`
    the host's packets). The outer headers of an (EV, destination) depend
    only on the tables and are built once and replayed (`cache`, encap.py);
    `cache=False` builds them for every packet (the fuzz tests hold the
    two equal).

    It is a `mrc_wire.pcie.Nic` too: a host attached to it posts packets
    (`post`), creates its QPs (`create_qp`: their index and slot range
    allocated here, mrc_wire.qp_table) and writes their state; the NIC
    hands that host what arrives for it (`on_wire`), the EV each data
    packet took (`on_sent`) and, when it keeps digests, its EV events.
    Frames to the plane ports go to the `Wire` it is connected to."""

    def __init__(self, name: str = "nic", *, cache: bool = True, ecn_echo: bool = True, digests: bool = True):
        self.name = name
        self.ecn_echo = ecn_echo  # False: the receiver does not echo CE (an ablation; the P4 always does)
        self._drops = Drops()
        self.settings = Settings(N.NicConfig.default())
        # The rotation and the path-health registers and ev_slots
        # (ev_health.py); `digests` False: its changes are counted, not kept.
        self.health = EvHealth(keep=digests)
        self.tx_qps = Transmit()
        self.spray = Spray(self.health)
        self.encap = Encap(self.settings, self._drops, cache)
        self.decap = Decap(self._drops)
        self.rx = RxTrack()  # the receiver's registers (rx_track.py)
        self.table = QpTable(name)  # the QPs created through the host's create_qp
        self.host: Host | None = None
        self.wire: Wire | None = None
        self._handed: list[N.EvChange] = []  # digests handed to the host, kept for ev_changes
        self.rx_count = 0
        self.nacks: Counter[int] = Counter()
        self.other_events: Counter[str] = Counter()

    # ---- the tables, as a controller reads them -----------------------------
    @property
    def config(self) -> N.NicConfig:
        return self.settings.entry

    @property
    def rows(self) -> dict[int, N.DestRow]:
        return self.encap.rows

    @property
    def planes(self) -> dict[int, N.PlanePort]:
        return self.encap.planes

    @property
    def qps(self) -> dict[int, N.QpEv]:
        """qp_ev: keyed by the peer's QP number."""
        return self.tx_qps.qps

    @property
    def slots(self) -> dict[int, int]:
        return self.spray.slots

    @property
    def peers(self) -> dict[int, N.QpPeer]:
        """qp_peer: keyed by the local QP number."""
        return self.decap.peers

    @property
    def drops(self) -> Counter[str]:
        return self._drops.by_reason

    def install(self, entries: Iterable[object]) -> None:
        for e in entries:
            match e:
                case N.NicConfig():
                    self.settings = Settings(e)
                    self.encap.changed(self.settings)  # headers built from it: rebuilt on use
                case N.DestRow():
                    self.encap.rows[e.row] = e
                    self.encap.changed()
                case N.PlanePort():
                    self.encap.planes[e.plane] = e
                    self.encap.changed()
                case N.QpEv():
                    self.tx_qps.qps[e.qpn] = e
                    self.health.add_qp(e.qp_index)
                    self.spray.add_qp(e)
                case N.SlotEv():
                    self.spray.write([(e.slot, e.ev)])
                case N.QpPeer():
                    self.decap.add(e)
                    self.rx.ensure(e.qp_index)
                case N.EvStats() | N.NoticeSession() | N.EvSlots():
                    pass  # ev_slots: the model keeps it from slot_ev (Spray.write)
                case _:
                    raise TypeError(f"not a NIC table entry: {e!r}")

    def uninstall(self, entries: Iterable[object]) -> None:
        """Delete entries by their key, as a P4Runtime delete would."""
        tables: dict[type, tuple[dict[Any, Any], str]] = {
            N.DestRow: (self.encap.rows, "row"), N.PlanePort: (self.encap.planes, "plane"),
            N.QpEv: (self.tx_qps.qps, "qpn"), N.SlotEv: (self.spray.slots, "slot")}
        for e in entries:
            if isinstance(e, N.QpPeer):
                self.decap.remove(e.qpn)
                continue
            if type(e) not in tables:
                raise TypeError(f"not a deletable NIC table entry: {e!r}")
            table, key = tables[type(e)]
            table.pop(getattr(e, key), None)
            self.encap.changed()  # headers built from rows and planes: rebuilt on use

    # ---- the host's side (mrc_wire.pcie.Nic) ----------------------------
    def attach(self, host: Host) -> None:
        self.host = host

    def connect(self, wire: Wire) -> None:
        """Frames to the plane ports go to `wire` (`post`, `on_wire`)."""
        self.wire = wire

    def post(self, raw: bytes, pad: int = 0) -> None:
        """A packet from the attached host: `transmit`, its frames to the wire."""
        self._emit(self.transmit(raw, pad))

    def on_wire(self, frame: Frame) -> None:
        """A frame from a plane port: `receive`, to the wire and the host."""
        self._emit(self.receive(frame))

    def _emit(self, outs: list[Output]) -> None:
        for o in outs:
            if o.port == HOST_PORT:
                if self.host is not None and o.pkt is not None:
                    self.host.deliver(o.pkt)
            elif self.wire is not None:
                self.wire.send(o)

    def create_qp(self, qp: QpCreate) -> None:
        """The host creates QP `qp.qpn`: its index and slot range allocated
        (mrc_wire.qp_table), its entries installed, its receiver started."""
        e = self.table.create(qp)
        self.install(e.entries())
        self.rx.start(e.index, qp.start_psn)

    def destroy_qp(self, qpn: int) -> None:
        e = self.table.destroy(qpn)
        self.uninstall([e.qp_ev, e.peer, *e.slots])
        self.spray.drop_qp(e.qp_ev)
        self.health.forget(e.index, [(s.slot - e.base, s.ev) for s in e.slots])

    def local_qpn(self, peer_qpn: int) -> int | None:
        """The local QP whose peer is `peer_qpn` (what the host's packets name in BTH.dqpn)."""
        return self.decap.local_qpn(peer_qpn)

    def _qp_ev(self, qpn: int) -> N.QpEv | None:
        """The qp_ev entry of local QP `qpn` (keyed by its peer's number)."""
        peer = self.decap.peers.get(qpn)
        return self.tx_qps.qps.get(peer.peer_qpn) if peer is not None else None

    def write_slots(self, qpn: int, writes: Sequence[tuple[int, int]]) -> None:
        """Local QP `qpn`'s slots rewritten, (slot within the QP, EV) each."""
        qp = self._qp_ev(qpn)
        if qp is not None:
            base = qp.base
            self.spray.write([(base + s, ev) for s, ev in writes])

    def set_bad(self, qpn: int, slots: int) -> None:
        """The host's word of local QP `qpn`'s slots assumed bad (ev_bad)."""
        qp = self.decap.peers.get(qpn)
        if qp is not None:
            self.health.bad[qp.qp_index] = slots

    def set_port_down(self, planes: int) -> None:
        """The planes of this NIC's own ports that are down (port_down)."""
        self.health.port_down = planes

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        """The host's write of local QP `qpn`'s reverse EV of `plane` (the
        rx_reverse register): where its SACKs for data on that plane go."""
        qp = self.decap.peers.get(qpn)
        if qp is not None:
            self.rx.set_reverse(qp.qp_index, plane, ev)

    def skipping(self, qpn: int) -> int:
        """Slots of local QP `qpn` its data plane will skip once (ev_skip)."""
        qp = self.decap.peers.get(qpn)
        return self.health.skip[qp.qp_index] if qp is not None and qp.health else 0

    def set_turn(self, qp_index: int, turn: int) -> None:
        """A write of a QP's qp_rotation register (a target's stands elsewhere)."""
        self.health.set_turn(qp_index, turn)

    def ev_changes(self) -> list[N.EvChange]:
        """The EV events the data plane made since the last call (its digests)."""
        if not self.health.keep:
            raise RuntimeError(f"{self.name}: built with digests=False: its {self.health.digests} digests were "
                               "counted, not kept")
        out, self._handed = self._handed + self.health.drain(), []
        return out

    def _hand_over(self) -> None:
        """Digests the data plane just made, to the attached host (kept for ev_changes too)."""
        host = self.host
        assert host is not None
        for c in self.health.drain():
            self._handed.append(c)
            qpn = self.decap.qpn_of_index(c.qp_index)
            if qpn is not None:
                host.on_ev_event(qpn, c)

    # ---- the counters ---------------------------------------------------------
    @property
    def ev_tx(self) -> Counter[int]:
        return self.spray.ev_tx()

    @property
    def ev_tx_bytes(self) -> Counter[int]:
        return self.spray.ev_tx_bytes()

    @property
    def plane_tx(self) -> Counter[int]:
        return self.spray.plane_tx()

    @property
    def plane_tx_bytes(self) -> Counter[int]:
        return self.spray.plane_tx_bytes()

    @property
    def headers_cached(self) -> int:
        """(Plane, destination) pairs whose outer headers are cached."""
        return self.encap.cached

    @property
    def events(self) -> Counter[str]:
        """tx, rx, nack, notice, ce_copy, sack, duplicate, beyond_window, host_copy, tx_done."""
        rx = self.rx
        out = Counter({k: n for k, n in (("tx", self.spray.count), ("rx", self.rx_count), ("duplicate", rx.duplicates),
                                         ("beyond_window", rx.beyond), ("ce_copy", self.decap.ce_copies)) if n})
        out.update(self.other_events)
        return out

    def process(self, in_port: int, frame: bytes, pad: int = 0) -> list[Output]:
        """One frame as bytes (`pad` zero bytes after it counted, not carried).
        A data packet the host sent comes back to the host port as its
        transmit completion (as the P4's egress makes it)."""
        if in_port == HOST_PORT:
            raw = parser.from_host(frame, self._drops)
            return self.with_completion(frame, self.transmit(raw, pad)) if raw is not None else []
        f = parser.from_fabric(frame, pad, self._drops)
        return self.receive(f) if f is not None else []

    def with_completion(self, frame: bytes, outs: list[Output]) -> list[Output]:
        """What the host's `frame` made (`transmit`'s outputs) and, if it was
        data the NIC sent, its transmit completion to the host port (counted
        as the event tx_done)."""
        sent = outs[0].wire if outs else None
        if sent is not None and W.is_data_opcode(frame[ETH_LEN + IPV6_LEN + UDP_LEN]):
            outs.append(completion(frame[:ETH_LEN], sent.inner))
            self.other_events["tx_done"] += 1
        return outs

    @property
    def turns(self) -> list[int]:
        """qp_rotation: each QP's turn, by QP index."""
        return list(self.health.turns)

    # ---- host to fabric ----------------------------------------------
    def transmit(self, raw: bytes, pad: int = 0) -> list[Output]:
        """A packet from the host (its IPv6 header on)."""
        m = parser.host_packet(raw, pad, self._drops)
        if m is None:
            return []
        qp = self.tx_qps.qps.get(m.dqpn)
        if qp is None:
            self._drops.drop("unknown_qp")
            return []
        if is_control(m.opcode):
            # Control (ACK, SACK, NACK, probe, endpoint request and response) goes on the EV the host wrote
            # into its inner headers: a reverse EV, or the EV a probe tests.
            return self._send(bytearray(raw), m.ev, m.dscp, 0, pad)
        slot = self.health.pick(qp)  # the rotation's pick (ev_health.py)
        ev = self.spray.slots.get(qp.base + slot)
        if ev is None:
            self._drops.drop("no_ev")
            return []
        host = self.host
        if host is not None:
            local = self.decap.local_qpn(m.dqpn)
            if local is not None:
                host.on_sent(local, m.psn, ev)  # the completion: the EV the data plane picked
            if qp.health and self.health.changes:
                self._hand_over()
        # ECT(0) on data only: an opcode that is neither data nor control is
        # sprayed like data but not ECN-capable (as the P4: hdr.data invalid).
        return self._send(bytearray(raw), ev, m.dscp, 2 if m.is_data else 0, pad)

    def _send(self, inner: bytearray, ev: int, dscp: int, ecn: int, pad: int) -> list[Output]:
        Spray.on_ev(inner, ev)
        out = self.encap.encap(bytes(inner), ev, dscp, ecn, pad)
        if out is None:
            return []
        self.spray.counted(ev, len(inner), pad)
        return [out]

    # ---- fabric to host ----------------------------------------------
    def receive(self, f: Frame) -> list[Output]:
        """A frame from a plane port, as header fields (the timed fabric's)."""
        m = parser.inner_packet(f, self._drops)
        if m is None:
            return []
        s, decap = self.settings, self.decap
        if not decap.for_me(m, s):
            return []
        odscp = f.tc >> 2
        if trim_nack.trimmed(odscp, m, s):
            return self._nack(f.eth, m, odscp, f.pad)
        m = decap.ce_copied(f, m)
        qp = decap.peers.get(m.dqpn)
        if qp is not None:
            if qp.offload:
                made = self._offloaded(f.eth, m, qp)
                if made is not None:
                    return made
            if qp.health:
                self.health.evidence(qp, m)
                if self.health.changes and self.host is not None:
                    self._hand_over()
        self.rx_count += 1
        return [Output(HOST_PORT, None, False, m, f.eth)]

    def _offloaded(self, eth: bytes, m: W.Mrc, qp: N.QpPeer) -> list[Output] | None:
        """The receiver's part (rx_track.p4): what it makes of data and
        probes (None: the packet goes on to the host); a SACK for our data
        moves the reverse EV of its plane."""
        if m.is_data:
            return self._track(eth, m, qp)
        if m.opcode == OP_PROBE:
            reply, ev = rx_track.on_probe(self.rx, qp, m, self.settings.dscp_control)
            return self._made(reply, ev, "probe_answer")
        if m.opcode == OP_SACK and qp.follow and not m.probe_response:
            ev = m.sack()[0]  # our data got through on it: the reverse EV of its plane
            self.rx.set_reverse(qp.qp_index, ev & 7, ev)
        return None

    def _track(self, eth: bytes, m: W.Mrc, qp: N.QpPeer) -> list[Output]:
        """Receive step 3 (rx_track.py): the QP's receive registers; the
        packet turned into a SACK or a window NACK on the reverse EV when
        one is due (a copy of new data to the host), else handed to the host."""
        kind, reply, ev = rx_track.on_data(self.rx, qp, m, self.settings.dscp_control, self.ecn_echo)
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
        out = self.encap.encap(reply.on_ev(inner, ev), ev, self.settings.dscp_control, 0)
        if out is None:
            return []
        self.other_events[kind] += 1
        if kind == "nack":
            self.nacks[NACK_PSN_OOR_WINDOW] += 1
        return [out]

    def _nack(self, eth: bytes, m: W.Mrc, odscp: int, pad: int) -> list[Output]:
        """Receive step 2 (trim_nack.py): the NACK over the reverse of the
        same path, and the notice to the host."""
        s = self.settings
        qp = self.decap.peers.get(m.dqpn)
        if qp is None:
            self._drops.drop("unknown_qp")
            return []
        inner = m.raw
        out = self.encap.encap(trim_nack.nack(inner, qp.peer_qpn, odscp, s), m.ev, s.dscp_control, 0)
        if out is None:
            return []
        self.nacks[trim_nack.reason(odscp, s)] += 1
        self.other_events["nack"] += 1
        self.other_events["notice"] += 1
        return [out, Output(HOST_PORT, None, False, W.Mrc(trim_nack.notice(inner, odscp), pad), eth)]
