"""Two NICs on BMv2, plane ports linked back to back through a filter that
drops every packet carrying one chosen EV. The endpoint model on each host
port exchanges a multi-packet message: it completes, and the EV is retired
(ASSUMED_BAD) and replaced in the NIC's slot table by an EV of its plane."""

from __future__ import annotations

import select
import socket
import threading
from collections import Counter

import finsy as fy
import pytest

from control_plane import nic_plan as N
from control_plane.targets import NicBmv2Target
from nic_model.endpoint import Endpoint
from nic_model.ev import EvProfile, EvState, ev_plane
from nic_model.realtime import RealClock
from ptf_tests.conftest import bmv2_skip_reason
from ptf_tests.lib.fabric import TOPO
from ptf_tests.lib.nic_fabric import HOST_MAC, NIC_MAC, PORTS, addr

PACKET_OUTGOING = 4
A_NIC, B_NIC, A_QPN, B_QPN = 0, 3, 1, 2


def _sock(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    s.setblocking(False)
    return s


def _recv(s: socket.socket) -> bytes | None:
    try:
        data, meta = s.recvfrom(9216)
    except BlockingIOError:
        return None
    return None if meta[2] == PACKET_OUTGOING else data


class Link(threading.Thread):
    """Plane ports of two NICs, back to back; frames whose inner EV is
    `drop_ev` are dropped. Records the EV of every frame it saw."""

    def __init__(self, pairs: list[tuple[str, str]], drop_ev: int):
        super().__init__(daemon=True)
        self.peer: dict[socket.socket, socket.socket] = {}
        self.side: dict[socket.socket, str] = {}
        for a, b in pairs:
            sa, sb = _sock(a), _sock(b)
            self.peer[sa], self.peer[sb] = sb, sa
            self.side[sa], self.side[sb] = "a", "b"
        self.drop_ev = drop_ev
        self.seen: Counter[int] = Counter()
        self.data_from: dict[str, Counter[int]] = {}
        self.dropped = 0
        self.running = True

    def run(self) -> None:
        while self.running:
            ready, _, _ = select.select(list(self.peer), [], [], 0.05)
            for s in ready:
                while (frame := _recv(s)) is not None:
                    ev = (int.from_bytes(frame[94:96], "big") << 16) | int.from_bytes(frame[56:58], "big")
                    self.seen[ev] += 1
                    if 0xC6 <= frame[102] <= 0xCB:  # inner BTH opcode: data
                        self.data_from.setdefault(self.side[s], Counter())[ev] += 1
                    if ev == self.drop_ev:
                        self.dropped += 1
                        continue
                    self.peer[s].send(frame)

    def stop(self) -> None:
        self.running = False
        self.join(2)


def _state(nic: int, qpn: int, peer_qpn: int, profile: EvProfile) -> N.NicState:
    backups = tuple(e for pool in profile.backups.values() for e in pool)
    return N.nic_state(TOPO, nic, [N.QpSpec(qpn, peer_qpn, tuple(profile.home), backups)])


@pytest.fixture
def two_nics():
    reason = bmv2_skip_reason("nic")
    if reason:
        pytest.skip(f"BMv2: {reason}")
    pa = EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8)
    pb = EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8)
    pa.mirror = pb.mirror = True
    nics = []
    try:
        nics.append(NicBmv2Target(_state(A_NIC, A_QPN, B_QPN, pa), PORTS))
        nics.append(NicBmv2Target(_state(B_NIC, B_QPN, A_QPN, pb), PORTS))
        for n in nics:
            n.dataplane.kill()  # this test uses its own sockets
        yield nics[0], nics[1], pa, pb
    finally:
        for n in nics:
            n.session.close()
            n.bmv2.stop()


def test_message_completes_while_one_ev_is_black_holed(two_nics):
    nic_a, nic_b, pa, pb = two_nics
    bad = pa.home[2]
    link = Link([(nic_a.bmv2.host_iface(N.plane_port(p)), nic_b.bmv2.host_iface(N.plane_port(p)))
                 for p in range(TOPO.planes)], drop_ev=bad)
    host = {A_NIC: _sock(nic_a.bmv2.host_iface(N.HOST_PORT)), B_NIC: _sock(nic_b.bmv2.host_iface(N.HOST_PORT))}
    eth = bytes.fromhex(NIC_MAC.replace(":", "")) + bytes.fromhex(HOST_MAC.replace(":", "")) + b"\x86\xdd"
    got: list[bytes] = []
    endpoints: dict[int, Endpoint] = {}

    def poll(timeout: float) -> None:
        ready, _, _ = select.select(list(host.values()), [], [], timeout)
        for nic, s in host.items():
            if s in ready:
                while (frame := _recv(s)) is not None:
                    endpoints[nic].receive(frame[14:])

    clock = RealClock(poll)
    predicted: Counter[int] = Counter()

    def send_a(raw: bytes) -> None:
        if 0xC6 <= raw[48] <= 0xCB:  # the EV the endpoint expects the NIC to pick
            predicted[(int.from_bytes(raw[40:42], "big") << 16) | int.from_bytes(raw[2:4], "big")] += 1
        host[A_NIC].send(eth + raw)

    endpoints[A_NIC] = Endpoint(clock, addr(A_NIC), send_a, rto=100_000,
                                slot_sink=lambda qpn, writes: nic_a.rewrite_slots(writes))
    endpoints[B_NIC] = Endpoint(clock, addr(B_NIC), lambda raw: host[B_NIC].send(eth + raw), rto=100_000,
                                on_message=lambda qpn, msg_id, data: got.append(data))
    endpoints[A_NIC].connect(A_QPN, B_QPN, addr(B_NIC), pa)
    endpoints[B_NIC].connect(B_QPN, A_QPN, addr(A_NIC), pb)
    link.start()
    try:
        data = bytes(i % 251 for i in range(48 * 1024))
        endpoints[A_NIC].send_message(A_QPN, data)
        clock.run(until=30e6, stop=lambda: bool(got) and endpoints[A_NIC].idle())
    finally:
        link.stop()
    assert got == [data], "the message did not arrive exactly once"
    assert link.dropped >= 1 and link.seen[bad] == link.dropped
    assert pa.state[bad] is EvState.ASSUMED_BAD
    # The NIC's slot table no longer names the EV; its stand-in is on the same plane.
    slots = {e.match["slot"]: e.action.args["ev"] for e in nic_a.session.read([fy.P4TableEntry("slot_ev")])}
    assert bad not in slots.values()
    stand_in = slots[2]
    assert stand_in != bad and ev_plane(stand_in) == ev_plane(bad)
    # The NIC chose, for every data packet, the EV the endpoint expected.
    assert link.data_from["a"] == predicted
    assert endpoints[A_NIC].stats.timeouts >= 1 and endpoints[A_NIC].stats.retransmits >= 1
