"""A switch's desired state (DESIGN.md section 4) as plain data.

Entries are the plain dataclasses of mrc_wire.entries. Route lists are shared by all switches of a plane and tier;
`to_p4` in p4_entities turns them into P4Runtime entities. Tables are O(ports): nothing here grows with NICs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from control_plane import addressing as A
from control_plane.topology import EcnRampProfile, EcnStepProfile, Topology
from mrc_wire.constants import CLASS_NAMES, CLASS_NORMAL, CLASS_PRIORITY, CLASS_TRIMMABLE, RAMP_ONE
from mrc_wire.entries import (
    CongestionConfig,
    DscpClass,
    EcnProfile,
    EcnRamp,
    EcnStep,
    MyUsid,
    PortNeighbour,
    UsidRoute,
)


@dataclass
class SwitchState:
    name: str
    sid: int
    my_usid: MyUsid
    congestion: CongestionConfig
    routes: list[UsidRoute] = field(default_factory=list)
    neighbours: list[PortNeighbour] = field(default_factory=list)
    dscp_classes: list[DscpClass] = field(default_factory=list)
    ecn_profiles: list[EcnProfile] = field(default_factory=list)

    def entries(self) -> list[object]:
        return [self.my_usid, *self.routes, *self.neighbours, *self.dscp_classes, *self.ecn_profiles,
                self.congestion]


def ecn_entry(cls: str, p: EcnStepProfile | EcnRampProfile) -> EcnProfile:
    """A topology's marking profile of class `cls` as its ecn_profile entry
    (the ramp's probability in units of 1 / RAMP_ONE, rounded, at least 1)."""
    if isinstance(p, EcnStepProfile):
        return EcnStep(CLASS_NAMES[cls], p.threshold)
    return EcnRamp(CLASS_NAMES[cls], p.kmin, p.kmax, max(1, round(p.pmax * RAMP_ONE)))


class Planner:
    """Plans switch states for one topology, caching what switches share."""

    def __init__(self, topo: Topology):
        self.topo = topo
        d = topo.dscp
        c = topo.congestion
        self.classes = [
            DscpClass(d["data_trimmable"], CLASS_TRIMMABLE),
            DscpClass(d["data_trimmable_retx"], CLASS_TRIMMABLE),
            DscpClass(d["data_no_trim"], CLASS_NORMAL),
            DscpClass(d["control"], CLASS_PRIORITY),
            DscpClass(d["trimmed"], CLASS_PRIORITY),
            DscpClass(d["trimmed_lasthop"], CLASS_PRIORITY),
        ]
        self.congestion = CongestionConfig(
            c.ecn_threshold, c.trim_threshold, c.trim_bytes, d["trimmed"], d["trimmed_lasthop"]
        )
        self.ecn_profiles = [ecn_entry(cls, p) for cls, p in c.ecn_profiles.items()]
        self._t0_routes: dict[int, list[UsidRoute]] = {}
        self._t1_routes: dict[int, list[UsidRoute]] = {}

    def _state(self, name: str, sid: int) -> SwitchState:
        return SwitchState(name, sid, MyUsid(A.locator48(self.topo, sid)), replace(self.congestion),
                           dscp_classes=list(self.classes), ecn_profiles=list(self.ecn_profiles))

    def t0_routes(self, plane: int) -> list[UsidRoute]:
        """Every T1 of the plane to its uplink, every downlink uSID to its port."""
        if plane not in self._t0_routes:
            t = self.topo
            self._t0_routes[plane] = [
                UsidRoute(A.locator48(t, A.usid(A.TIER_T1, plane, j)), t.t0_uplink_port(j))
                for j in range(t.t1_per_plane)
            ] + [
                UsidRoute(A.locator48(t, A.usid(A.TIER_DL, plane, k)), t.t0_downlink_port(k))
                for k in range(t.hosts_per_t0)
            ]
        return self._t0_routes[plane]

    def t1_routes(self, plane: int) -> list[UsidRoute]:
        if plane not in self._t1_routes:
            t = self.topo
            self._t1_routes[plane] = [
                UsidRoute(A.locator48(t, A.usid(A.TIER_T0, plane, r)), t.t1_downlink_port(r))
                for r in range(t.t0_per_plane)
            ]
        return self._t1_routes[plane]

    def t0_state(self, plane: int, row: int) -> SwitchState:
        t = self.topo
        sid = A.usid(A.TIER_T0, plane, row)
        state = self._state(A.t0_name(plane, row), sid)
        state.routes = self.t0_routes(plane)
        mine = A.switch_mac(sid, 0)
        t1_base = A.switch_mac(A.usid(A.TIER_T1, plane, 0), t.t1_downlink_port(row))
        up = t.t0_uplink_port(0)
        state.neighbours = [
            PortNeighbour(up + j, mine + up + j, t1_base + (j << 16), False) for j in range(t.t1_per_plane)
        ] + [
            PortNeighbour(
                t.t0_downlink_port(k), mine + t.t0_downlink_port(k), A.nic_mac(plane, row * t.hosts_per_t0 + k), True
            )
            for k in range(t.hosts_per_t0)
        ]
        return state

    def t1_state(self, plane: int, spine: int) -> SwitchState:
        t = self.topo
        sid = A.usid(A.TIER_T1, plane, spine)
        state = self._state(A.t1_name(plane, spine), sid)
        state.routes = self.t1_routes(plane)
        mine = A.switch_mac(sid, 0)
        t0_base = A.switch_mac(A.usid(A.TIER_T0, plane, 0), t.t0_uplink_port(spine))
        state.neighbours = [
            PortNeighbour(t.t1_downlink_port(r), mine + t.t1_downlink_port(r), t0_base + (r << 16), False)
            for r in range(t.t0_per_plane)
        ]
        return state

    def switch_state(self, name: str) -> SwitchState:
        """The desired state of the switch called `name` (e.g. t0-p0-r1)."""
        try:
            dev = self.topo.device(name)
        except ValueError as exc:
            raise ValueError(f"{exc}: not a switch") from None
        if not dev.is_switch:
            raise ValueError(f"{name!r} is a NIC, not a switch of topology {self.topo.name!r}")
        return self.t0_state(dev.plane, dev.index) if dev.kind == "t0" else self.t1_state(dev.plane, dev.index)


def t0_state(topo: Topology, plane: int, row: int) -> SwitchState:
    return Planner(topo).t0_state(plane, row)


def t1_state(topo: Topology, plane: int, spine: int) -> SwitchState:
    return Planner(topo).t1_state(plane, spine)


def switch_state(topo: Topology, name: str) -> SwitchState:
    return Planner(topo).switch_state(name)


def device_entries(topo: Topology, name: str) -> list[object]:
    """The switch's planned entries in the device's own port numbers: the
    topology's `port_map` for that device applied to every port field."""
    device = topo.devices.get(name)
    return map_ports(switch_state(topo, name).entries(), device.port_map if device else {})


def map_ports(entries: list[object], port_map: dict[int, int]) -> list[object]:
    """`entries` with every port field translated through `port_map`
    (logical -> device port); an empty map changes nothing."""
    if not port_map:
        return entries
    return [replace(e, port=port_map[e.port]) if isinstance(e, (UsidRoute, PortNeighbour)) else e for e in entries]


def switch_names(topo: Topology) -> list[str]:
    names = [A.t0_name(p, r) for p in range(topo.planes) for r in range(topo.t0_per_plane)]
    return names + [A.t1_name(p, j) for p in range(topo.planes) for j in range(topo.t1_per_plane)]
