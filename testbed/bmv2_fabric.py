"""A BMv2 fabric: every switch of a topology and the NICs asked for as
simple_switch_grpc, each with its own tables from our controller (a
NIC's QPs are its host's to create: testbed/bmv2_nic.py), every cable a
relay between BMv2 ports that can be cut and mended. The scenario runner
(fabric_sim/runner/on_bmv2.py), the end-to-end suite and the live fabric
(testbed/live.py) start it."""

from __future__ import annotations

import select
from collections.abc import Sequence

import finsy as fy

from control_plane import addressing as A
from control_plane import nic_plan
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane.ev_events import DigestListener
from control_plane.session import Session
from control_plane.topology import Topology
from mrc_wire import ids
from mrc_wire.constants import HOST_PORT, plane_port
from sim_core.realtime import RealClock
from testbed.bmv2 import Bmv2Switch, start_with_tables
from testbed.bmv2_nic import Bmv2Nic
from testbed.links import Link


class Bmv2Fabric:
    """The devices, their sessions and the relay; what Reconverger needs."""

    def __init__(self, topo: Topology, nics: list[int]):
        self.topo = topo
        self.devices: dict[str, Bmv2Switch] = {}
        self.sessions: dict[str, Session] = {}
        self.nics: dict[int, Bmv2Nic] = {}
        self.cables: dict[frozenset[ids.DeviceId], tuple[str, str]] = {}  # device ids -> relay cable (iface a, iface b)
        self.sim: RealClock | None = None
        try:
            self._start(nics)
        except BaseException:
            self.stop()
            raise

    def _device(self, name: str, ports: list[int], program: str, entries: Sequence[object], tables: Sequence[str],
                defaults: Sequence[str], extra: Sequence[fy.P4CloneSessionEntry] = ()) -> None:
        self.devices[name], self.sessions[name] = start_with_tables(
            name, ports, program, [P.to_p4(e) for e in entries], tables, defaults, list(extra), log=False)

    def _start(self, nics: list[int]) -> None:
        t = self.topo
        for name in S.switch_names(t):
            st = S.switch_state(t, name)
            self._device(name, sorted(n.port for n in st.neighbours), "switch", st.entries(), P.SWITCH_TABLES,
                         P.SWITCH_DEFAULTS)
        for n in sorted(nics):
            nic = nic_plan.nic_state(t, n)  # its own tables; its QPs are its host's to create
            name = A.nic_name(n)
            self._device(name, [HOST_PORT] + [plane_port(p) for p in range(t.planes)], "nic", nic.entries(),
                         P.NIC_TABLES, P.NIC_DEFAULTS, [P.notice_session(nic.notice)])
            dev, session = self.devices[name], self.sessions[name]
            self.nics[n] = Bmv2Nic(name, A.nic_address(t, n).packed, session, dev.runtime(),
                                   dev.host_iface(HOST_PORT), DigestListener(session))
        ifaces = []
        for da, pa, db, pb, _ in t.cables():
            if str(da) not in self.devices:
                continue  # a NIC without QPs is not started
            cable = (self.devices[str(da)].host_iface(pa), self.devices[str(db)].host_iface(pb))
            self.cables[frozenset((da, db))] = cable
            ifaces.append(cable)
        self.relay = Link(ifaces)
        self.relay.start()

    def set_cable(self, a: ids.DeviceId, b: ids.DeviceId, up: bool) -> None:
        cable = self.cables.get(frozenset((a, b)))
        if cable is None:
            return  # a NIC without QPs has no BMv2 device
        (self.relay.cut.discard if up else self.relay.cut.add)(cable)
        for d, other in ((a, b), (b, a)):
            nic = self.nics.get(d.index) if d.kind == "nic" else None
            if nic is not None and nic.host is not None:
                nic.host.on_port(other.plane, up)  # the NIC saw its port go down (or come back)

    def cable_ends(self) -> list[frozenset[ids.DeviceId]]:
        return list(self.cables)

    def path_alive(self, src: int, dst: int, plane: int, spine: int) -> bool:
        return not any(self.cables.get(frozenset(h)) in self.relay.cut
                       for h in self.topo.path_cables(src, dst, plane, spine))

    def poll(self, timeout: float) -> None:
        """What each NIC's host port and digest stream brought, to its host (RealClock's poll)."""
        select.select(list(self.nics.values()), [], [], timeout)
        for nic in self.nics.values():
            nic.poll()

    def stop(self) -> None:
        if hasattr(self, "relay"):
            self.relay.stop()
        for nic in self.nics.values():
            nic.close()
        for s in self.sessions.values():
            s.close()
        for d in self.devices.values():
            d.stop()
