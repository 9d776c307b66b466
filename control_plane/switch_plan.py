"""A switch's desired state (DESIGN.md section 4) as plain data.

One small dataclass per entry kind; `to_p4` in p4_entities turns them into
P4Runtime entities. Tables are O(ports): nothing here grows with NICs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from control_plane import addressing as A
from control_plane.topology import Topology

# Traffic classes of the dscp_class table (p4src/switch/types.p4).
CLASS_NORMAL = 0
CLASS_TRIMMABLE = 1
CLASS_PRIORITY = 2


@dataclass(frozen=True)
class MyUsid:
    locator: int  # 48-bit block:uSID


@dataclass(frozen=True)
class UsidRoute:
    locator: int
    port: int


@dataclass(frozen=True)
class PortNeighbour:
    port: int
    src_mac: int
    dst_mac: int
    host_facing: bool


@dataclass(frozen=True)
class DscpClass:
    dscp: int
    cls: int


@dataclass(frozen=True)
class CongestionConfig:
    ecn_threshold: int
    trim_threshold: int
    trim_bytes: int
    dscp_trimmed: int
    dscp_trimmed_lasthop: int


@dataclass
class SwitchState:
    name: str
    sid: int
    my_usid: MyUsid
    congestion: CongestionConfig
    routes: list[UsidRoute] = field(default_factory=list)
    neighbours: list[PortNeighbour] = field(default_factory=list)
    dscp_classes: list[DscpClass] = field(default_factory=list)

    def entries(self) -> list[object]:
        return [self.my_usid, *self.routes, *self.neighbours, *self.dscp_classes, self.congestion]


def _common(topo: Topology, name: str, sid: int) -> SwitchState:
    d = topo.dscp
    classes = [
        DscpClass(d["data_trimmable"], CLASS_TRIMMABLE),
        DscpClass(d["data_trimmable_retx"], CLASS_TRIMMABLE),
        DscpClass(d["data_no_trim"], CLASS_NORMAL),
        DscpClass(d["control"], CLASS_PRIORITY),
        DscpClass(d["trimmed"], CLASS_PRIORITY),
        DscpClass(d["trimmed_lasthop"], CLASS_PRIORITY),
    ]
    c = topo.congestion
    cong = CongestionConfig(c.ecn_threshold, c.trim_threshold, c.trim_bytes, d["trimmed"], d["trimmed_lasthop"])
    return SwitchState(name, sid, MyUsid(A.locator48(topo, sid)), cong, dscp_classes=classes)


def t0_state(topo: Topology, plane: int, row: int) -> SwitchState:
    sid = A.usid(A.TIER_T0, plane, row)
    state = _common(topo, A.t0_name(plane, row), sid)
    for j in range(topo.t1_per_plane):
        port = topo.t0_uplink_port(j)
        peer = A.usid(A.TIER_T1, plane, j)
        state.routes.append(UsidRoute(A.locator48(topo, peer), port))
        state.neighbours.append(PortNeighbour(port, A.switch_mac(sid, port), A.switch_mac(peer, topo.t1_downlink_port(row)), False))
    for k in range(topo.hosts_per_t0):
        port = topo.t0_downlink_port(k)
        state.routes.append(UsidRoute(A.locator48(topo, A.usid(A.TIER_DL, plane, k)), port))
        nic = row * topo.hosts_per_t0 + k
        state.neighbours.append(PortNeighbour(port, A.switch_mac(sid, port), A.nic_mac(plane, nic), True))
    return state


def t1_state(topo: Topology, plane: int, spine: int) -> SwitchState:
    sid = A.usid(A.TIER_T1, plane, spine)
    state = _common(topo, A.t1_name(plane, spine), sid)
    for r in range(topo.t0_per_plane):
        port = topo.t1_downlink_port(r)
        peer = A.usid(A.TIER_T0, plane, r)
        state.routes.append(UsidRoute(A.locator48(topo, peer), port))
        state.neighbours.append(PortNeighbour(port, A.switch_mac(sid, port), A.switch_mac(peer, topo.t0_uplink_port(spine)), False))
    return state


_NAME = re.compile(r"^(t0|t1)-p(\d+)-[rs](\d+)$")


def switch_state(topo: Topology, name: str) -> SwitchState:
    """The desired state of the switch called `name` (e.g. t0-p0-r1)."""
    m = _NAME.match(name)
    kind, plane, index = (m.group(1), int(m.group(2)), int(m.group(3))) if m else ("", -1, -1)
    limit = topo.t0_per_plane if kind == "t0" else topo.t1_per_plane
    if not m or not 0 <= plane < topo.planes or not 0 <= index < limit or name != (
        A.t0_name(plane, index) if kind == "t0" else A.t1_name(plane, index)
    ):
        raise ValueError(f"{name!r} is not a switch of topology {topo.name!r}")
    return t0_state(topo, plane, index) if kind == "t0" else t1_state(topo, plane, index)


def switch_names(topo: Topology) -> list[str]:
    names = [A.t0_name(p, r) for p in range(topo.planes) for r in range(topo.t0_per_plane)]
    return names + [A.t1_name(p, j) for p in range(topo.planes) for j in range(topo.t1_per_plane)]
