"""A BMv2 NIC as its host's `mrc_wire.pcie.Nic`: the same boundary the
reference model and the timed fabric's NIC offer, so the host transport
and the OCP-shaped API (mrc_host) run on BMv2 unchanged.

- Posted packets go out on the NIC's host port (a raw socket on the host
  side of its veth pair), whole: BMv2 carries every byte, so a simulated
  payload's zeros are put back.
- QP create and destroy are P4Runtime writes of the QP's entries, one
  batched Write each (mrc_wire.qp_table allocates them, as in the model);
  slot rewrites are slot_ev modifies with ev_slots kept beside them.
- Registers (reverse EVs, slots marked bad, ports down, the receiver's
  start) are written over BMv2's Thrift runtime: PI writes no registers.
- What the host port brings back is handed to the host by `poll`: the
  data plane's transmit completions (a copy of each data packet it sent,
  cut to its headers, its EV written in: p4src/nic/main.p4) as `on_sent`,
  everything else as a packet. EV events (digests) come on the P4Runtime
  stream when a listener is given.
"""

from __future__ import annotations

import select
import socket
from collections.abc import Sequence
from typing import Protocol

from control_plane import p4_entities as P
from control_plane.ev_control import TableWriter, rewrite
from mrc_wire import packet as W
from mrc_wire.constants import DATA_OPCODES, ETH_LEN, RX_WORDS
from mrc_wire.entries import EvChange
from mrc_wire.pcie import Host, QpCreate
from mrc_wire.qp_table import QpTable
from testbed.links import recv

# The host's Ethernet header on its port (the NIC reads only its type).
ETH = bytes.fromhex("02aa00000002") + bytes.fromhex("02aa00000001") + b"\x86\xdd"
RX_REGISTERS = ("rx_cum", "rx_unacked", "rx_rcvd", "rx_ooo")  # a QP's receiver registers, by its index


class Registers(Protocol):
    """BMv2's Thrift runtime (testbed.bmv2_thrift.Runtime)."""

    def register_write(self, name: str, index: int, value: int) -> None: ...

    def register_read(self, name: str, index: int) -> int: ...


class Digests(Protocol):
    """Where the NIC's EV event digests arrive (control_plane.ev_events.DigestListener)."""

    def drain(self) -> list[EvChange]: ...


class Bmv2Nic:
    def __init__(self, name: str, addr: bytes, session: TableWriter, runtime: Registers, host_iface: str,
                 digests: Digests | None = None):
        self.name, self.addr = name, addr
        self.session, self.runtime, self.digests = session, runtime, digests
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.sock.bind((host_iface, 0))
        self.sock.setblocking(False)
        self.table = QpTable(name)
        self.host: Host | None = None
        self._slots: dict[int, list[int]] = {}  # health QP -> its slots as written (what ev_slots is kept equal to)
        self.posted = 0  # packets the host posted (frames into the NIC's host port)
        self.completions = 0  # transmit completions handed over
        self.read = 0  # frames read from the NIC's host port (completions, data, notices)

    def close(self) -> None:
        self.sock.close()

    def fileno(self) -> int:
        return self.sock.fileno()

    # ---- mrc_wire.pcie.Nic --------------------------------------------------
    def attach(self, host: Host) -> None:
        self.host = host

    def post(self, raw: bytes, pad: int = 0) -> None:
        self.posted += 1
        self.sock.send(ETH + raw + bytes(pad))

    def create_qp(self, qp: QpCreate) -> None:
        e = self.table.create(qp)
        try:
            self.session.write([+P.to_p4(x) for x in e.entries()])
        except BaseException:
            self.table.destroy(qp.qpn)  # nothing half-created: the NIC refused it whole
            raise
        i = e.index
        for reg in RX_REGISTERS:
            self.runtime.register_write(reg, i, qp.start_psn if reg == "rx_cum" else 0)
        for w in range(RX_WORDS):
            self.runtime.register_write("rx_word", i * RX_WORDS + w, 0)
        for reg in ("qp_rotation", "ev_skip", "ev_bad", "ev_peer_down"):
            self.runtime.register_write(reg, i, 0)
        if qp.health:
            self._slots[qp.qpn] = list(qp.evs)

    def destroy_qp(self, qpn: int) -> None:
        e = self.table.destroy(qpn)
        self.session.write([-P.to_p4(x) for x in (e.peer, e.qp_ev, *e.slots, *e.ev_slots, *e.ev_stats)])
        self._slots.pop(qpn, None)

    def write_slots(self, qpn: int, writes: Sequence[tuple[int, int]]) -> None:
        e = self.table.get(qpn)
        if e is None or not writes:
            return
        updates, after = rewrite(e.index, e.base, self._slots.get(qpn), writes)
        if after is not None:
            self._slots[qpn] = after
        self.session.write(updates)

    def _index(self, qpn: int) -> int | None:
        e = self.table.get(qpn)
        return e.index if e is not None else None

    def set_bad(self, qpn: int, slots: int) -> None:
        i = self._index(qpn)
        if i is not None:
            self.runtime.register_write("ev_bad", i, slots)

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        i = self._index(qpn)
        if i is not None:
            self.runtime.register_write("rx_reverse", i * 8 + plane, ev)

    def set_port_down(self, planes: int) -> None:
        self.runtime.register_write("port_down", 0, planes)

    def skipping(self, qpn: int) -> int:
        i = self._index(qpn)
        return self.runtime.register_read("ev_skip", i) if i is not None else 0

    # ---- what the NIC hands its host -----------------------------------------
    def poll(self, timeout: float = 0.0) -> int:
        """Hand the host what the host port and the digest stream brought
        (waiting up to `timeout` s for the first); how many."""
        n = 0
        if timeout > 0:
            select.select([self.sock], [], [], timeout)
        while (frame := recv(self.sock)) is not None:
            self.read += 1
            self._hand(frame[ETH_LEN:])
            n += 1
        if self.digests is not None and self.host is not None:
            for c in self.digests.drain():
                qpn = self.table.qpn_of_index(c.qp_index)
                if qpn is not None:
                    self.host.on_ev_event(qpn, c)
                    n += 1
        return n

    def _hand(self, raw: bytes) -> None:
        pkt = W.parse(raw)
        host = self.host
        if pkt is None or host is None:
            return
        if pkt.src == self.addr and pkt.opcode in DATA_OPCODES:
            qpn = self.table.local_of(pkt.dqpn)  # our own data, back as its completion
            if qpn is not None:
                self.completions += 1
                host.on_sent(qpn, pkt.psn, pkt.ev)
            return
        host.deliver(pkt)
