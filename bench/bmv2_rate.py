"""BMv2 packets per second of the switch program vs a bare L2 forwarding
program, in the same run: one stream of carriers in on a downlink and out
of an uplink, sent from a raw socket, counted on the other side. And the
NIC program's: the host's data sprayed by the plain rotation and by the
rotation with path health, and data from the fabric through the receiver
(each becoming a SACK or going to the host), beside the same L2 baseline."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Callable

import finsy as fy
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import addressing as A
from control_plane import nic_plan as N
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane import topology
from control_plane.session import Session
from control_plane.topology import Device
from testbed import toolchain
from testbed.bmv2 import Bmv2Switch

DEMO = topology.load(toolchain.REPO / "bmv2_configs" / "topologies" / "demo.yaml")
PACKETS = 20000
IN_PORT, OUT_PORT = 0, 2


def frame() -> bytes:
    sids = [A.usid(A.TIER_T0, 0, 0), A.usid(A.TIER_T1, 0, 0), A.usid(A.TIER_T0, 0, 1), A.usid(A.TIER_DL, 0, 0)]
    pkt = (Ether(src="02:01:00:00:00:00", dst="02:00:40:00:00:00")
           / IPv6(src="fd00:0:0:1::", dst=str(A.carrier(DEMO, sids)), hlim=64)
           / UDP(sport=1, dport=4791) / bytes(200))
    return bytes(pkt)


def measure(iface: Callable[[int], str], frames: list[bytes], in_port: int = IN_PORT,
            out_ports: tuple[int, ...] = (OUT_PORT,)) -> tuple[float, int]:
    """(received packets per second, received count) for PACKETS sent, the
    frames in turn, into `in_port`; counted on every port of `out_ports`
    (`iface`: a port's interface on this side, a veth's or a TAP's)."""
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((iface(in_port), 0))
    got = [0, 0.0]
    lock = threading.Lock()

    def receive(port: int) -> None:
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        rx.bind((iface(port), 0))
        rx.settimeout(1.0)
        while True:
            try:
                _, addr = rx.recvfrom(2048)
            except TimeoutError:
                rx.close()
                return
            if addr[2] == socket.PACKET_OUTGOING:
                continue  # our own frame, sent on this port (the receiver's case sends on a port it counts)
            with lock:
                got[0] += 1
                got[1] = time.perf_counter()

    threads = [threading.Thread(target=receive, args=(p,)) for p in out_ports]
    for t in threads:
        t.start()
    start = time.perf_counter()
    for i in range(PACKETS):
        tx.send(frames[i % len(frames)])
        if i % 64 == 63:
            time.sleep(0.0005)  # let BMv2's input thread keep up
    for t in threads:
        t.join()
    tx.close()
    return (got[0] / (got[1] - start) if got[0] else 0.0), int(got[0])


def _program(name: str, setup: Callable[[Session], None], frames: list[bytes] | None = None, in_port: int = IN_PORT,
             out_ports: tuple[int, ...] = (OUT_PORT,)) -> tuple[float, int]:
    p4info, blob = toolchain.artifacts(name)
    with Bmv2Switch(f"bench-{name}", ports=sorted({in_port, *out_ports}), log=False) as sw:
        with Session(Device(name, sw.grpc_addr, sw.device_id), p4info, blob) as s:
            setup(s)
            return measure(sw.host_iface, frames or [frame()], in_port, out_ports)


def _switch_setup(s: Session) -> None:
    state = S.t0_state(DEMO, 0, 0)
    # Thresholds out of reach: measure forwarding, not congestion drops.
    state.congestion = dataclasses.replace(state.congestion, ecn_threshold=2**19 - 1, trim_threshold=2**19 - 1)
    s.reconcile([P.to_p4(e) for e in state.entries()], P.SWITCH_TABLES, P.SWITCH_DEFAULTS)


def _l2_setup(s: Session) -> None:
    s.write(
        [+fy.P4TableEntry("port_forward", match=fy.Match(port=IN_PORT), action=fy.Action("forward", port=OUT_PORT))]
    )


def _nic_setup(s: Session) -> None:
    from ptf_tests.lib import nic_fabric as NF

    s.reconcile([P.to_p4(e) for e in NF.NIC.entries()], P.NIC_TABLES, P.NIC_DEFAULTS)


def nic_cases() -> list[tuple[str, list[bytes], int, tuple[int, ...]]]:
    """(what, frames, in port, out ports) of the NIC program's streams."""
    from ptf_tests.lib import nic_fabric as NF
    from ptf_tests.lib.fabric import TOPO

    planes = tuple(N.plane_port(p) for p in range(TOPO.planes))
    host = N.HOST_PORT
    plain = [bytes(NF.host_data(psn=i, qpn=NF.PEER_QPN)) for i in range(64)]
    health = [bytes(NF.host_data(psn=i, qpn=NF.HEALTH_PEER_QPN)) for i in range(64)]
    # New PSNs in order, each with the ack-request bit: each becomes a SACK and a copy to the host.
    rx = [bytes(NF.from_fabric(NF.PEER, NF.ME, NF.PROFILE.home[0], psn=i)) for i in range(PACKETS)]
    return [("host data, plain rotation", plain, host, planes),
            ("host data, rotation with path health", health, host, planes),
            ("fabric data through the receiver (SACK and host copy each)", rx, N.plane_port(0), (host, *planes))]


def _unavailable(program: str) -> str | None:
    """Why `program` cannot be measured beside the L2 baseline here, or None."""
    missing = [n for n in (program, "l2fwd") if not toolchain.artifacts(n)[1].exists()]
    return toolchain.bmv2_unavailable() or (", ".join(missing) + " JSON missing" if missing else None)


def nic_rates() -> list[str]:
    out = ["## BMv2 packet rate of the NIC program (frames out per second)"]
    why = _unavailable("nic")
    if why:
        return out + [f"skipped: {why}"]
    l2_pps, _ = _program("l2fwd", _l2_setup)
    out.append(f"- bare L2 beside it: {l2_pps:,.0f} pkt/s")
    for what, frames, in_port, out_ports in nic_cases():
        pps, n = _program("nic", _nic_setup, frames, in_port, out_ports)
        out.append(f"- {what}: {pps:,.0f} frames/s out ({n} for {PACKETS} in; {pps / l2_pps:.2f} of L2)"
                   if l2_pps else f"- {what}: {pps:,.0f} frames/s out")
    return out


def run() -> list[str]:
    out = ["## BMv2 packet rate, switch program vs bare L2 forwarding"]
    why = _unavailable("switch")
    if why:
        return out + [f"skipped: {why}"]
    l2_pps, l2_n = _program("l2fwd", _l2_setup)
    sw_pps, sw_n = _program("switch", _switch_setup)
    out += [
        f"- sent {PACKETS} frames of {len(frame())} bytes per program",
        f"- bare L2: {l2_pps:,.0f} pkt/s ({l2_n} received)",
        f"- MRC switch: {sw_pps:,.0f} pkt/s ({sw_n} received)",
        f"- switch / L2 rate: {sw_pps / l2_pps:.2f}" if l2_pps else "- L2 baseline received nothing",
    ]
    return out + [""] + nic_rates()
