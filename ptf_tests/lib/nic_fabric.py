"""The NIC under test: NIC 0 of the demo topology (row 0, downlink 0), its
QP 1 to NIC 3 (row 1, downlink 1), an MRC QP whose receiver the NIC runs
(offload: its data is SACKed by the NIC), and QP 3 to NIC 3's QP 4, whose
receiver is its host's (offload False, as the RoCE baseline's: the NIC
only decapsulates its data), and frames as the host or the fabric sends
them. Expected packets are built here from DESIGN.md, not from the
pipeline model."""

from __future__ import annotations

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Packet

from control_plane import addressing as A
from control_plane import nic_plan as N
from mrc_host.ev import EvProfile
from ptf_tests.lib import headers as H
from ptf_tests.lib.fabric import TOPO

ME, PEER, SAME_ROW_PEER = 0, 3, 1
QPN, PEER_QPN = 1, 2
PROFILE = EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8)
QP = N.QpCreate(QPN, PEER_QPN, tuple(PROFILE.home), tuple(e for pool in PROFILE.backups.values() for e in pool))
HOST_RX_QPN, HOST_RX_PEER_QPN = 3, 4
HOST_RX_QP = N.QpCreate(HOST_RX_QPN, HOST_RX_PEER_QPN, tuple(PROFILE.home), offload=False, follow=False)
# QP 5 to NIC 3's QP 6: its path health kept by the NIC's data plane (a
# congestion mark skips an EV once), at least two slots usable.
HEALTH_QPN, HEALTH_PEER_QPN = 5, 6
HEALTH_QP = N.QpCreate(HEALTH_QPN, HEALTH_PEER_QPN, tuple(PROFILE.home), health=True, min_active=2, skip_on_mark=True)
NIC = N.nic_state(TOPO, ME, [QP, HOST_RX_QP, HEALTH_QP])
PORTS = [N.HOST_PORT] + [N.plane_port(p) for p in range(TOPO.planes)]
HOST_MAC, NIC_MAC = "02:aa:00:00:00:01", "02:aa:00:00:00:02"
D = TOPO.dscp


def addr(nic: int) -> str:
    return str(A.nic_address(TOPO, nic))


def host_data(
    dst: int = PEER, psn: int = 5, payload: bytes = bytes(range(64)), qpn: int = PEER_QPN, fl: int = 0x30000
) -> Ether:
    """A data packet as the host transport hands it to its NIC. BTH.dqp is
    the peer's QP; the NIC's qp_ev table is keyed by it."""
    return Ether(src=HOST_MAC, dst=NIC_MAC) / _inner(addr(ME), addr(dst), qpn, psn, payload, fl, D["data_trimmable"], 2)


def host_control(opcode: int, ext: Packet, path_ev: int, dst: int = PEER) -> Ether:
    """An ACK/SACK/NACK/probe as the host hands it over, on the path
    `path_ev` written in its inner UDP source port and flow label."""
    inner = (IPv6(src=addr(ME), dst=addr(dst), tc=D["control"] << 2, fl=path_ev & 0xFFFF, hlim=64)
             / UDP(sport=path_ev >> 16, dport=H.ROCE_PORT, chksum=0)
             / H.BTH(opcode=opcode, dqp=PEER_QPN, psn=7) / ext / H.ICRC)
    return Ether(src=HOST_MAC, dst=NIC_MAC) / IPv6(bytes(inner))


def _inner(src: str, dst: str, qpn: int, psn: int, payload: bytes, fl: int, dscp: int, ecn: int,
           ackreq: int = 1) -> IPv6:
    pkt = (IPv6(src=src, dst=dst, tc=(dscp << 2) | ecn, fl=fl, hlim=64)
           / UDP(sport=0, dport=H.ROCE_PORT, chksum=0)
           / H.BTH(opcode=H.OP_WRITE_ONLY, dqp=qpn, psn=psn, a=ackreq, ts=1)
           / H.data_headers(1, 0, len(payload), ts=0x2A5) / payload / H.ICRC)
    return IPv6(bytes(pkt))


TX_DONE_BYTES = 14 + 40 + 8 + 12 + 4 + 4 + 16 + 4  # Ethernet, IPv6, UDP, BTH, METH, TSETH, RETH, ImmDt (docs/nic.md)


def completion(host_frame: Packet, ev: int) -> bytes:
    """The transmit completion of a data packet the host sent (docs/nic.md,
    "what crosses PCIe"): that frame back on the host port, the EV the data
    plane picked in its UDP source port and the low 16 bits of its flow
    label, its UDP checksum zero, cut to its headers."""
    f = Ether(bytes(host_frame))
    f[UDP].sport = ev >> 16
    f[UDP].chksum = 0
    f[IPv6].fl = (f[IPv6].fl & 0xF0000) | (ev & 0xFFFF)
    return bytes(f)[:TX_DONE_BYTES]


def split(outputs: list[tuple[int, bytes]]) -> tuple[list[tuple[int, bytes]], list[bytes]]:
    """(what went to the plane ports, the completions the host port got)."""
    return [(p, f) for p, f in outputs if p != N.HOST_PORT], [f for p, f in outputs if p == N.HOST_PORT]


def carrier(plane: int, src_nic: int, dst_nic: int, spine: int) -> str:
    H_ = TOPO.hosts_per_t0
    return str(A.path_carrier(TOPO, plane, src_nic // H_, dst_nic // H_, dst_nic % H_, spine))


def encapsulated(inner: IPv6, ev: int, src_nic: int, dst_nic: int, dscp: int, ecn: int) -> Ether:
    """The frame a NIC sends for `inner` on EV `ev` (DESIGN.md section 5)."""
    p, spine = ev & 7, (ev >> 3) & 0xFF
    inner = inner.copy()
    inner[UDP].sport = ev >> 16
    inner.fl = (inner.fl & 0xF0000) | (ev & 0xFFFF)
    k = src_nic % TOPO.hosts_per_t0
    t0 = A.usid(A.TIER_T0, p, src_nic // TOPO.hosts_per_t0)
    outer = IPv6(src=str(A.carrier(TOPO, [t0, A.usid(A.TIER_DL, p, k)])), dst=carrier(p, src_nic, dst_nic, spine),
                 tc=(dscp << 2) | ecn, fl=inner.fl, nh=41, hlim=64, plen=len(bytes(inner)))
    eth = Ether(
        src=A.mac_str(A.nic_mac(p, src_nic)), dst=A.mac_str(A.switch_mac(t0, TOPO.t0_downlink_port(k))), type=0x86DD
    )
    return Ether(bytes(eth) + bytes(outer)[:40] + bytes(inner))


def from_fabric(src_nic: int, dst_nic: int, ev: int, *, outer_dscp: int | None = None, outer_ecn: int = 0,
                inner_ecn: int = 2, payload: bytes = bytes(200), psn: int = 9, qpn: int = QPN,
                ackreq: int = 1) -> Ether:
    """A data packet from `src_nic` to `dst_nic` as it arrives off the fabric."""
    inner = _inner(addr(src_nic), addr(dst_nic), qpn, psn, payload, 0, D["data_trimmable"], inner_ecn, ackreq)
    frame = encapsulated(
        inner, ev, src_nic, dst_nic, D["data_trimmable"] if outer_dscp is None else outer_dscp, outer_ecn
    )
    return frame
