"""The demo fabric as the suites see it: topology, the T0 under test, its
ports, and frames built the way a NIC or a neighbour switch would send them."""

from __future__ import annotations

from pathlib import Path

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import addressing as A
from control_plane import switch_plan as S
from control_plane import topology

REPO = Path(__file__).resolve().parents[2]
DEMO_TOPOLOGY = REPO / "bmv2_configs" / "topologies" / "demo.yaml"

TOPO = topology.load(DEMO_TOPOLOGY)
PLANE, ROW = 0, 0
T0 = S.t0_state(TOPO, PLANE, ROW)
T0_PORTS = sorted(n.port for n in T0.neighbours)
DOWNLINKS = [TOPO.t0_downlink_port(k) for k in range(TOPO.hosts_per_t0)]
UPLINKS = [TOPO.t0_uplink_port(j) for j in range(TOPO.t1_per_plane)]
NEIGHBOUR = {n.port: n for n in T0.neighbours}


def sid_t0(row: int, plane: int = PLANE) -> int:
    return A.usid(A.TIER_T0, plane, row)


def sid_t1(spine: int, plane: int = PLANE) -> int:
    return A.usid(A.TIER_T1, plane, spine)


def sid_dl(k: int, plane: int = PLANE) -> int:
    return A.usid(A.TIER_DL, plane, k)


def carrier(*sids: int) -> str:
    return str(A.carrier(TOPO, list(sids)))


def frame(dst: str, *, hlim: int = 64, tc: int = 0, fl: int = 0, size: int = 200, in_port: int = 0) -> Ether:
    """An IPv6 carrier as the neighbour on `in_port` sends it."""
    nb = NEIGHBOUR[in_port]
    pkt = (
        Ether(src=A.mac_str(nb.dst_mac), dst=A.mac_str(nb.src_mac))
        / IPv6(src=str(A.nic_address(TOPO, 0)), dst=dst, hlim=hlim, tc=tc, fl=fl, nh=17)
        / UDP(sport=4791, dport=4791)
    )
    pad = max(0, size - len(pkt))
    # Re-parse so lengths and the UDP checksum are fixed values: a switch
    # rewrites the DA but never recomputes the inner checksum.
    return Ether(bytes(pkt / bytes(i & 0xFF for i in range(pad))))


def _mac(*fields: tuple[int, int]) -> str:
    """A MAC from (value, bytes) fields, most significant first."""
    raw = b"".join(v.to_bytes(n, "big") for v, n in fields)
    return ":".join(f"{b:02x}" for b in raw)


def port_macs(out_port: int) -> tuple[str, str]:
    """(source, destination) MAC of a frame the T0 under test sends on
    `out_port`, from docs/topology.md, not from the planner: a switch port
    is 02:00:<uSID>:<port>, a NIC's port on plane p 02:01:<p>:<NIC>; uplink
    j faces T1 j's downlink towards this row, downlink k faces NIC row*H+k."""
    src = _mac((0x0200, 2), (sid_t0(ROW), 2), (out_port, 2))
    if out_port in UPLINKS:
        dst = _mac((0x0200, 2), (sid_t1(UPLINKS.index(out_port)), 2), (TOPO.t1_downlink_port(ROW), 2))
    else:
        dst = _mac((0x0201, 2), (PLANE, 1), (ROW * TOPO.hosts_per_t0 + DOWNLINKS.index(out_port), 3))
    return src, dst


def forwarded(pkt: Ether, out_port: int, dst: str | None = None, *, tc: int | None = None) -> Ether:
    """What `pkt` must look like leaving on `out_port`: MACs of the port
    and its peer, hop limit minus one, DA rewritten if `dst` is given."""
    exp = pkt.copy()
    exp[Ether].src, exp[Ether].dst = port_macs(out_port)
    exp[IPv6].hlim = pkt[IPv6].hlim - 1
    if dst is not None:
        exp[IPv6].dst = dst
    if tc is not None:
        exp[IPv6].tc = tc
    return exp
