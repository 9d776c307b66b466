"""P4Runtime targets: BMv2 started here (and, in testbed/remote.py, a
running device), driven through ptf's dataplane and verifiers on their
interfaces, with the same interface as the reference-model targets
(testbed/model_targets.py): the demo and the same short behaviour tests
run on both. Switch and NIC targets add their own counters and knobs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import finsy as fy
import ptf
import ptf.dataplane
import ptf.ptfutils
from ptf import testutils

from control_plane import nic_plan as N
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane.counters import NIC_DROP_COUNTER, NIC_DROP_ENUM, enum_members, read_drops, read_total
from control_plane.ev_control import NicEvControl, TableWriter, slot_deletes
from control_plane.ev_events import DigestListener
from control_plane.session import Session
from mrc_wire.constants import NIC_EVENTS
from mrc_wire.constants import SWITCH_EVENTS as EVENTS
from mrc_wire.entries import CongestionConfig, EcnProfile, EvChange
from testbed import nic_registers
from testbed.bmv2 import start_with_tables
from testbed.links import MAX_FRAME
from testbed.settle import SETTLE_TIMEOUT, Settler, nic_progress, switch_progress

POSITIVE_TIMEOUT = 2.0
NEGATIVE_TIMEOUT = 0.3
# Once a BMv2 target has settled every frame is already in ptf's queues:
# the negative check only has to look.
SETTLED_NEGATIVE_TIMEOUT = 0.01


class _PtfTest:
    """What ptf.testutils needs of a test object."""

    def __init__(self, dataplane: ptf.dataplane.DataPlane):
        self.dataplane = dataplane

    def before_send(self, pkt: bytes, device_number: int = 0, port_number: int = -1) -> None:
        pass

    def at_receive(self, pkt: bytes, device_number: int = 0, port_number: int = -1) -> None:
        pass

    def fail(self, msg: str) -> None:
        raise AssertionError(msg)


def ptf_dataplane(ifaces: dict[int, str]) -> ptf.dataplane.DataPlane:
    """A ptf DataPlane on device 0 with the given port -> interface map."""
    # qlen: frames ptf keeps per port until polled; a burst gathers them all at the end.
    # socket_recv_size: ptf reads 4,096 bytes by default, cutting a 4 KiB payload's frame.
    ptf.config.update({"relax": False, "platform": "eth", "qlen": 10_000, "socket_recv_size": MAX_FRAME})
    ptf.ptfutils.default_timeout = POSITIVE_TIMEOUT
    ptf.ptfutils.default_negative_timeout = NEGATIVE_TIMEOUT
    logging.getLogger("dataplane").setLevel(logging.WARNING)
    dp = ptf.dataplane.DataPlane(ptf.config)
    for port, iface in ifaces.items():
        dp.port_add(iface, 0, port)
    return dp


class PtfTarget:
    """A device driven through ptf on its interfaces. With a `settler`
    (BMv2, SWX), every check first waits until the device has finished with
    every frame sent (testbed/settle.py); without one (a running device),
    ptf's timeouts are all there is."""

    name = "device"
    settler: Settler | None = None
    # Whether a frame cut inside its headers is counted malformed (a P4
    # parser's PacketTooShort); not where the parser cannot see the frame's end.
    counts_cut_frames = True

    def __init__(self, ifaces: dict[int, str], ports: list[int]):
        self.ports = ports
        self.dataplane = ptf_dataplane(ifaces)
        self.test = _PtfTest(self.dataplane)

    def close(self) -> None:
        self.dataplane.kill()

    def dev_port(self, port: int) -> int:
        """The device's own number of a logical port (counter indices)."""
        return port

    def send(self, port: int, pkt: object) -> None:
        testutils.send_packet(self.test, port, pkt)
        if self.settler:
            self.settler.sent += 1

    def verify_packet(self, pkt: object, port: int) -> None:
        if self.settler:
            self.settler.wait()
        testutils.verify_packet(self.test, pkt, port)

    def verify_no_other_packets(self) -> None:
        if self.settler:
            self.settler.wait()
        testutils.verify_no_other_packets(self.test, timeout=SETTLED_NEGATIVE_TIMEOUT if self.settler else None)

    def burst(self, frames: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        if self.settler is None:
            return burst(self.dataplane, frames)
        return settled_burst(self.dataplane, frames, self.settler)

    def reset(self) -> None:
        if self.settler:
            self.settler.wait(strict=False)  # what a failed test left in flight
        self.dataplane.flush()

    def received(self) -> int:
        """Frames ptf has received on this target's ports so far."""
        return sum(self.dataplane.rx_counters[(0, p)] for p in self.ports)


class P4RuntimeTarget(PtfTarget):
    """A P4Runtime device driven through ptf on its interfaces. Subclasses
    own how the device is reached (started BMv2, or a running device)."""

    name = "bmv2"

    def __init__(self, session: Session, ifaces: dict[int, str], ports: list[int],
                 desired: list[fy.P4TableEntry], tables: Sequence[str], defaults: Sequence[str]):
        self.session = session
        self.desired, self.tables, self.defaults = desired, tables, defaults
        super().__init__(ifaces, ports)

    def close(self) -> None:
        super().close()
        self.session.close()

    def counter(self, name: str, index: int) -> int:
        return self.session.counter(name, index)[0]


class Bmv2Target(P4RuntimeTarget):
    """simple_switch_grpc, started here, running `program` with `desired`
    installed by our controller, driven through ptf on veth pairs."""

    def __init__(self, device_name: str, ports: list[int], program: str, desired: list[fy.P4TableEntry],
                 tables: Sequence[str], defaults: Sequence[str], extra: Sequence[Any] = ()):
        self.bmv2, session = start_with_tables(device_name, ports, program, desired, tables, defaults, list(extra))
        try:
            super().__init__(session, {p: self.bmv2.host_iface(p) for p in ports}, ports, desired, tables, defaults)
        except BaseException:
            session.close()
            self.bmv2.stop()
            raise

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.bmv2.stop()


class SwitchCounters:
    """What the switch suites read from a P4Runtime switch (mixed into a
    P4RuntimeTarget: uses its session, counter and dev_port)."""

    session: Session
    state: S.SwitchState
    tables_dirty: bool = False
    # The target's, declared here (annotations only: the target's own come first at run time).
    dev_port: Callable[[int], int]
    counter: Callable[[str, int], int]
    desired: list[fy.P4TableEntry]
    tables: Sequence[str]
    defaults: Sequence[str]

    def set_congestion(self, cfg: CongestionConfig) -> None:
        self.session.write([~P.to_p4(cfg)])

    def set_ecn_profile(self, profile: EcnProfile) -> None:
        """Write the marking profile of class `profile.cls` (ecn_profile);
        reset puts the planned ones back."""
        self.tables_dirty = True
        ent = P.to_p4(profile)
        planned = any(e.cls == profile.cls for e in self.state.ecn_profiles)
        self.session.write([~ent if planned else +ent])

    def drop_count(self, reason: str) -> int:
        return read_drops(self.session)[reason]

    def event_count(self, event: str) -> int:
        if event not in EVENTS:
            raise KeyError(f"unknown congestion event {event!r} (known: {', '.join(EVENTS)})")
        return read_total(self.session, event)

    def port_counts(self, port: int) -> tuple[int, int, int]:
        d = self.dev_port(port)
        return self.counter("port_rx", d), self.counter("port_tx", d), self.counter("port_drop", d)

    def port_bytes(self, port: int) -> tuple[int, int]:
        d = self.dev_port(port)
        return self.session.counter("port_rx", d)[1], self.session.counter("port_tx", d)[1]

    def high_queue_count(self, port: int) -> int:
        """Frames `port` sent from its high-priority queue (the queue the
        traffic manager used, read in egress)."""
        return self.counter("port_tx_high", self.dev_port(port))

    def delete_neighbour(self, port: int) -> None:
        """Take `port`'s port_neighbour entry out (reset puts it back)."""
        [nb] = [n for n in self.state.neighbours if n.port == port]
        self.tables_dirty = True
        self.session.write([-P.to_p4(replace(nb, port=self.dev_port(port)))])

    def restore_tables(self) -> None:
        if self.tables_dirty:
            self.session.reconcile(self.desired, self.tables, self.defaults)
            self.tables_dirty = False


class SwitchBmv2Target(SwitchCounters, Bmv2Target):
    def __init__(self, state: S.SwitchState, ports: list[int]):
        super().__init__(state.name, ports, "switch", [P.to_p4(e) for e in state.entries()],
                         P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        self.state = state
        self.dirty_ports: set[int] = set()
        self.settler = Settler(state.name, lambda: switch_progress(self.session, ports), self.received)

    def set_qdepth(self, port: int, depth: int) -> None:
        # PI has no P4Runtime register writes: BMv2's Thrift runtime does it.
        self.bmv2.runtime().register_write("port_qdepth", port, depth)
        self.dirty_ports.add(port)

    def at_depth(self, port: int, depth: int, frames: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        """Send each (in port, frame) with `port`'s data queue `depth` deep
        when it is decided, and return what came out. One at a time: each
        frame's egress writes the depth it really met into port_qdepth, so
        the depth is set again before the next and that one waits till
        the one before has left."""
        assert self.settler is not None
        for in_port, frame in frames:
            self.set_qdepth(port, depth)
            self.dataplane.send(0, in_port, frame)
            self.settler.sent += 1
            self.settler.wait()
        return drain(self.dataplane)

    def reset(self) -> None:
        """Between tests: empty queues, zero depths set by a test, planned config."""
        super().reset()
        if self.dirty_ports:
            for p in sorted(self.dirty_ports):
                self.bmv2.runtime().register_write("port_qdepth", p, 0)
            self.dirty_ports.clear()
        self.restore_tables()
        self.set_congestion(self.state.congestion)


class NicSlots:
    """The slot rewrites a NIC suite makes (retire, restore, delete), through
    its target's table writer (mixed into a NIC target)."""

    state: N.NicState
    _ev_control: NicEvControl | None = None  # the slots as written since the tables were planned

    def table_writer(self) -> TableWriter:
        raise NotImplementedError

    def delete_slots(self, qpn: int) -> None:
        """Take every slot_ev entry of QP `qpn` out (reset puts them back)."""
        self.table_writer().write(slot_deletes(self.state, qpn))

    def rewrite_slots(self, writes: Sequence[tuple[int, int]]) -> None:
        """Retire or restore EVs (absolute slots): one batched Write of
        slot_ev modifies, and ev_slots for a QP with path health."""
        if self._ev_control is None:
            self._ev_control = NicEvControl(self.table_writer(), self.state)
        self._ev_control.push_slots(writes)


class NicCounters(NicSlots):
    """What the NIC suites read and change on a P4Runtime NIC (mixed into
    a P4RuntimeTarget)."""

    session: Session
    counter: Callable[[str, int], int]  # the target's (an annotation only)

    def table_writer(self) -> TableWriter:
        return self.session

    def drop_count(self, reason: str) -> int:
        return self.counter(NIC_DROP_COUNTER, enum_members(self.session.switch.p4info, NIC_DROP_ENUM)[reason])

    def ev_count(self, ev: int) -> int:
        entry = fy.P4TableEntry("ev_stats", match=fy.Match(ev=ev))
        [ent] = self.session.read([fy.P4DirectCounterEntry(table_entry=entry)])
        return ent.data.packet_count if ent.data else 0

    def plane_count(self, plane: int) -> int:
        return self.counter("plane_tx", plane)

    def ev_bytes(self, ev: int) -> int:
        entry = fy.P4TableEntry("ev_stats", match=fy.Match(ev=ev))
        [ent] = self.session.read([fy.P4DirectCounterEntry(table_entry=entry)])
        return ent.data.byte_count if ent.data else 0

    def plane_bytes(self, plane: int) -> int:
        return self.session.counter("plane_tx", plane)[1]

    def nack_count(self, reason: int) -> int:
        return self.counter("nack_reasons", reason)

    def event_count(self, event: str) -> int:
        return self.counter("nic_events", NIC_EVENTS.index(event))




class NicBmv2Target(NicCounters, Bmv2Target):
    def __init__(self, state: N.NicState, ports: list[int]):
        super().__init__(state.name, ports, "nic", [P.to_p4(e) for e in state.entries()],
                         P.NIC_TABLES, P.NIC_DEFAULTS, [P.notice_session(state.notice)])
        self.state = state
        self.settler = Settler(state.name, lambda: nic_progress(self.session, ports), self.received)
        self.listener: DigestListener | None = None  # EV events (digests), from the first reset on

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
        super().close()

    def _index(self, qpn: int) -> int:
        [qp] = [q for q in self.state.peers if q.qpn == qpn]
        return qp.qp_index

    def set_bad(self, qpn: int, slots: int) -> None:
        """The host's word of local QP `qpn`'s slots assumed bad (PI has no P4Runtime register writes)."""
        self.bmv2.runtime().register_write("ev_bad", self._index(qpn), slots)

    def set_port_down(self, planes: int) -> None:
        self.bmv2.runtime().register_write("port_down", 0, planes)

    def health(self, qpn: int) -> tuple[int, int, int]:
        """(skip, bad, peer's planes down) of local QP `qpn`, read back."""
        rt, i = self.bmv2.runtime(), self._index(qpn)
        return rt.register_read("ev_skip", i), rt.register_read("ev_bad", i), rt.register_read("ev_peer_down", i)

    def ev_changes(self, expect: int = 0, wait: float = SETTLE_TIMEOUT) -> list[EvChange]:
        """The EV events (digests) since the last call; waits up to `wait`
        seconds for `expect` of them (they travel apart from the packets,
        through the P4Runtime stream). The settler's bound, not a delay: it
        returns once they are in, and a loaded machine gets the time a
        slow device does (it was 2 s)."""
        assert self.listener is not None
        got = self.listener.drain()
        end = time.monotonic() + wait
        while len(got) < expect and time.monotonic() < end:
            time.sleep(0.02)
            got += self.listener.drain()
        return got

    def reset(self) -> None:
        """Between tests: planned tables back (slots), rotation from slot 0."""
        super().reset()
        self.session.reconcile(self.desired, self.tables, self.defaults)
        rt = self.bmv2.runtime()
        for reg in nic_registers.ALL:  # none of the last test's PSNs, skips, bad slots or ports down
            rt.register_reset(reg)
        self._ev_control = None  # the slots as planned again
        if self.listener is None:
            self.listener = DigestListener(self.session)
        self.listener.drain()

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        """The host's write of local QP `qpn`'s reverse EV of `plane`: the
        rx_reverse register, indexed as the model's (nic_model/rx_track.py:
        receive index * 8 + plane). PI has no P4Runtime register writes."""
        [qp] = [q for q in self.state.peers if q.qpn == qpn]
        self.bmv2.runtime().register_write("rx_reverse", qp.qp_index * 8 + plane, ev)


def settled_burst(dp: ptf.dataplane.DataPlane, frames: list[tuple[int, bytes]], settler: Settler,
                  chunk: int = 16) -> list[tuple[int, bytes]]:
    """Send (port, frame) pairs in chunks, each sent once the device has
    finished the one before (no queue builds up, however slow the device
    is), and return every frame received (all in ptf's queues by then)."""
    out: list[tuple[int, bytes]] = []
    for i in range(0, len(frames), chunk):
        for port, frame in frames[i : i + chunk]:
            dp.send(0, port, frame)
            settler.sent += 1
        settler.wait()
        out += drain(dp)
    return out


def drain(dp: ptf.dataplane.DataPlane) -> list[tuple[int, bytes]]:
    """Every frame in ptf's queues (a settled device has nothing more in flight)."""
    out: list[tuple[int, bytes]] = []
    while isinstance(res := dp.poll(device_number=0, timeout=SETTLED_NEGATIVE_TIMEOUT), dp.PollSuccess):
        out.append((res.port, bytes(res.packet)))
    return out


def burst(dp: ptf.dataplane.DataPlane, frames: list[tuple[int, bytes]], quiet: float = 0.5,
          chunk: int = 16) -> list[tuple[int, bytes]]:
    """Send (port, frame) pairs in small paced chunks (no queue builds up),
    then gather every frame received until `quiet` seconds pass with none."""
    for i in range(0, len(frames), chunk):
        for port, frame in frames[i : i + chunk]:
            dp.send(0, port, frame)
        time.sleep(0.01)
    out: list[tuple[int, bytes]] = []
    while True:
        res = dp.poll(device_number=0, timeout=quiet)
        if not isinstance(res, dp.PollSuccess):
            return out
        out.append((res.port, bytes(res.packet)))
