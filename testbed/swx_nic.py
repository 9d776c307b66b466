"""The NIC's PNA program (p4src/nic/nic_pna.p4) on DPDK's SWX pipeline, as a
device the test bed drives: its tables from the planner's entries, the
mirror sessions its two-pass top sends through, its registers and
counters, the EV events ring, the frames it owes its ports; and as its
host's `mrc_wire.pcie.Nic` (`SwxNic`: the BMv2 NIC's driver over SWX's CLI).

Port 0 faces the host (PNA direction HOST_TO_NET), plane p is port 1 + p.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from control_plane import nic_plan as N
from control_plane import p4_entities as P
from mrc_wire.constants import HOST_PORT, NACK_BYTES, NIC_DROPS, NIC_EVENTS, SACK_FRAME_BYTES, TX_DONE_BYTES
from mrc_wire.entries import EvChange, PlanePort
from testbed import nic_registers
from testbed.bmv2_nic import Bmv2Nic
from testbed.settle import Progress
from testbed.swx import SwxPipeline

# nic_pna.p4's mirror sessions (tests/test_swx_nic.py holds them to it): a
# plane's is its base + the plane, on the plane's port.
TX_DONE_SESSION = 2  # the host port, cut to TX_DONE_BYTES: a transmit completion
PLANE_SESSIONS = 8  # whole: the host's data, sent before its second pass
NACK_SESSIONS = 16  # cut to NACK_BYTES
SACK_SESSIONS = 24  # cut to SACK_FRAME_BYTES (a SACK, or a probe's answer)
EV_RING_SIZE = 1024  # size.p4's
PLANES = nic_registers.PER_QP_CELLS["rx_reverse"]  # a QP's reverse EV of each plane


def mirror_sessions(planes: Sequence[PlanePort]) -> list[tuple[int, int, int]]:
    """(session, port, bytes it cuts to, 0: whole) of nic_pna.p4 for a NIC's plane ports."""
    out = [(TX_DONE_SESSION, HOST_PORT, TX_DONE_BYTES)]
    for p in planes:
        out += [(PLANE_SESSIONS + p.plane, p.port, 0), (NACK_SESSIONS + p.plane, p.port, NACK_BYTES),
                (SACK_SESSIONS + p.plane, p.port, SACK_FRAME_BYTES)]
    return out


class RingRegisters(Protocol):
    """Where the ring is read (a SwxPipeline)."""

    def register_read(self, name: str, index: int) -> int: ...

    def read_registers(self, name: str, indices: Sequence[int]) -> list[int]: ...


class EvRing:
    """The EV events nic_pna.p4 writes into its register ring, read back in
    order (what the v1model NIC sends as digests)."""

    def __init__(self, pipe: RingRegisters):
        self.pipe = pipe
        self.tail = pipe.register_read("ev_ring_head", 0)
        self.lost = 0  # events overwritten before they were read

    def drain(self) -> list[EvChange]:
        head = self.pipe.register_read("ev_ring_head", 0)
        if head - self.tail > EV_RING_SIZE:
            self.lost += head - self.tail - EV_RING_SIZE
            self.tail = head - EV_RING_SIZE
        cells = [i % EV_RING_SIZE for i in range(self.tail, head)]
        self.tail = head
        state = self.pipe.read_registers("ev_ring_state", cells)
        evs = self.pipe.read_registers("ev_ring_ev", cells)
        slots = self.pipe.read_registers("ev_ring_slots", cells)
        return [EvChange(s >> 40 & 0xFFFF, s >> 32 & 0xFF, ev, bits, s >> 24 & 0xFF, s >> 16 & 0xFF, s >> 8 & 0xFF,
                         s & 0xFF) for s, ev, bits in zip(state, evs, slots, strict=True)]


class SwxNicDevice:
    """nic_pna.p4 running on SWX with `state`'s tables and its mirror sessions."""

    def __init__(self, state: N.NicState, ports: Sequence[int], cpu: int = 0):
        self.state = state
        self.pipe = SwxPipeline(state.name, list(ports), "nic-pna", (HOST_PORT,), cpu)
        self.pipe.start()
        try:
            self.desired = [P.to_p4(e) for e in state.entries()]
            self.pipe.reconcile(self.desired, P.NIC_TABLES)
            for session, port, cut in mirror_sessions(state.planes):
                self.pipe.mirror(session, port, cut)
            self.events = EvRing(self.pipe)
        except BaseException:
            self.pipe.stop()
            raise

    def close(self) -> None:
        self.pipe.stop()

    def progress(self) -> Progress:
        """Frames whose first pass ended (ingress), and the frames they owe
        the ports (nic_pna.p4's swx_frames), counted as egress too: the
        counter is written before they leave (a second pass may run after
        later frames' first), so a settler waits until what it reads on the
        ports has them all."""
        done, owed = self.pipe.read_registers("swx_frames", [0, 1])
        return Progress(done, owed, owed)

    def reset(self) -> None:
        """The planned tables back, the planned QPs' registers cleared, port_down 0."""
        self.pipe.reconcile(self.desired, P.NIC_TABLES)
        for i in {p.qp_index for p in self.state.peers}:
            for reg in nic_registers.PER_QP:
                self.pipe.register_write(reg, i, 0)
            for reg, cells in nic_registers.PER_QP_CELLS.items():
                self.pipe.write_registers(reg, [(i * cells + k, 0) for k in range(cells)])
        for reg in nic_registers.NIC_WIDE:
            self.pipe.register_write(reg, 0, 0)
        self.events.drain()

    def counter(self, name: str, index: int) -> int:
        return self.pipe.register_read(name, index)

    def drop_count(self, reason: str) -> int:
        return self.counter("nic_drops", NIC_DROPS.index(reason))

    def event_count(self, event: str) -> int:
        return self.counter("nic_events", NIC_EVENTS.index(event))


class SwxNic(Bmv2Nic):
    """The SWX NIC as its host's `pcie.Nic`: the BMv2 NIC's driver with SWX's
    CLI for its tables and registers and the EV events ring for its digests."""

    def __init__(self, name: str, addr: bytes, device: SwxNicDevice):
        super().__init__(name, addr, device.pipe, device.pipe, device.pipe.iface(HOST_PORT), device.events)
