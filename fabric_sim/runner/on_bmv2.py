"""A scenario on the BMv2 fabric: every switch and every NIC of a small
topology is simple_switch_grpc running the P4 program with the tables our
controller plans and installs, every cable is a relay between BMv2 ports
that the scenario's events cut and mend, and the same MRC endpoints run
on each NIC's host port on the wall clock. The report is the timed
fabric's, so one scenario shows whether the P4 programs and the models
agree on who got through.

BMv2 is not timed like the models: scenario times are stretched by
`SCALE` (1 µs of scenario is 1 ms of wall clock), the endpoint's timers
are set for BMv2's millisecond RTTs, and completion times are reported
divided by `SCALE`. Compare delivery outcomes, not times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import finsy as fy

from control_plane import addressing as A
from control_plane import nic_plan
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane.counters import read_drops
from control_plane.ev_control import NicEvControl
from control_plane.session import Session
from control_plane.topology import Topology
from fabric_sim.net.fabric import base_rtt
from fabric_sim.runner import wiring
from fabric_sim.runner.run import RunResult, Timeline
from fabric_sim.scenario import Scenario, ScenarioError, Transport, cc_profile
from fabric_sim.scenario.events import CableEvent, Event
from fabric_sim.transports import kinds
from fabric_sim.transports.transport import Site, Timers
from mrc_wire import ids
from mrc_wire.constants import HOST_PORT, SWITCH_DROPS, plane_port
from nic_model.host import Host
from sim_core.realtime import RealClock
from testbed import toolchain
from testbed.bmv2 import Bmv2Switch, start_with_tables
from testbed.links import Link, host_poller, sock

SCALE = 1000.0
MAX_DEVICES = 16  # BMv2 processes one machine runs comfortably
ETH = bytes.fromhex("02aa00000002") + bytes.fromhex("02aa00000001") + b"\x86\xdd"
TIMERS = Timers(rto=300_000, probe_interval=50_000, reorder_window=50_000)  # for BMv2's millisecond RTTs


def unsupported(sc: Scenario) -> str | None:
    """Why this scenario cannot run on BMv2 here, or None."""
    reason = toolchain.bmv2_unavailable() or toolchain.stale("switch") or toolchain.stale("nic")
    if reason:
        return reason
    topo = sc.topology
    if sc.workload.trace is not None:  # its compute times would be wall-clock µs beside BMv2's software latency
        return "workload.pattern: a Chakra trace runs on the timed fabric only"
    if topo.switches + topo.nics > MAX_DEVICES:
        return f"{topo.switches} switches and {topo.nics} NICs: the BMv2 fabric takes at most {MAX_DEVICES} devices"
    for e in sc.events:
        if not isinstance(e, CableEvent):
            return f"{e.path}.{e.kind}: not available on BMv2 (relays cut and mend cables only)"
    for i, t in enumerate(sc.transports):
        if t.topology is not None or t.links is not None:
            return f"transports[{i}]: a fabric of its own is not available on BMv2"
        refusal = kinds.of(t).bmv2_refusal
        if refusal:
            return f"transports[{i}].kind: {refusal}"
    return None


def reverse_writer(dev: Bmv2Switch, st: nic_plan.NicState) -> Callable[[int, int, int], None]:
    """Writes of a NIC's rx_reverse register (QP, plane, EV): PI writes no
    registers over P4Runtime, so BMv2's Thrift runtime does."""
    index = {p.qpn: p.qp_index for p in st.peers}
    return lambda qpn, plane, ev: dev.runtime().register_write("rx_reverse", index[qpn] * 8 + plane, ev)


class _Nic:
    def __init__(self, control: NicEvControl, reverse: Callable[[int, int, int], None]):
        self.slots: Callable[[int, list[tuple[int, int]]], None] = control.push
        self.reverse = reverse  # the receiver's rx_reverse register, over BMv2's Thrift runtime
        self.endpoint: Host | None = None


class Bmv2Fabric:
    """The devices, their sessions and the relay; what Reconverger needs."""

    def __init__(self, topo: Topology, specs: dict[int, list[nic_plan.QpSpec]]):
        self.topo = topo
        self.devices: dict[str, Bmv2Switch] = {}
        self.sessions: dict[str, Session] = {}
        self.nics: dict[int, _Nic] = {}
        self.cables: dict[frozenset[ids.DeviceId], tuple[str, str]] = {}  # device ids -> relay cable (iface a, iface b)
        self.sim: RealClock | None = None
        try:
            self._start(specs)
        except BaseException:
            self.stop()
            raise

    def _device(self, name: str, ports: list[int], program: str, entries: Sequence[object], tables: Sequence[str],
                defaults: Sequence[str], extra: Sequence[fy.P4CloneSessionEntry] = ()) -> None:
        self.devices[name], self.sessions[name] = start_with_tables(
            name, ports, program, [P.to_p4(e) for e in entries], tables, defaults, list(extra), log=False)

    def _start(self, specs: dict[int, list[nic_plan.QpSpec]]) -> None:
        t = self.topo
        for name in S.switch_names(t):
            st = S.switch_state(t, name)
            self._device(name, sorted(n.port for n in st.neighbours), "switch", st.entries(), P.SWITCH_TABLES,
                         P.SWITCH_DEFAULTS)
        for n, nic_qps in sorted(specs.items()):
            nic = nic_plan.nic_state(t, n, nic_qps)
            name = A.nic_name(n)
            self._device(name, [HOST_PORT] + [plane_port(p) for p in range(t.planes)], "nic", nic.entries(),
                         P.NIC_TABLES, P.NIC_DEFAULTS, [P.notice_session(nic.notice)])
            self.nics[n] = _Nic(NicEvControl(self.sessions[name], nic), reverse_writer(self.devices[name], nic))
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
            ep = self.nics[d.index].endpoint if d.kind == "nic" and d.index in self.nics else None
            if ep is not None:
                (ep.port_up if up else ep.port_down)(other.plane)

    def cable_ends(self) -> list[frozenset[ids.DeviceId]]:
        return list(self.cables)

    def path_alive(self, src: int, dst: int, plane: int, spine: int) -> bool:
        return not any(self.cables.get(frozenset(h)) in self.relay.cut
                       for h in self.topo.path_cables(src, dst, plane, spine))

    def stop(self) -> None:
        if hasattr(self, "relay"):
            self.relay.stop()
        for s in self.sessions.values():
            s.close()
        for d in self.devices.values():
            d.stop()


def _fire(ev: Event, fab: Bmv2Fabric, on_fault: Callable[[], None]) -> None:
    if isinstance(ev, CableEvent):  # the only kind BMv2 runs (unsupported refuses the others)
        ev.apply(fab)
    on_fault()


def run_bmv2(sc: Scenario, t: Transport, progress: Callable[[str], None] | None = None) -> RunResult:
    reason = unsupported(sc)
    if reason:
        raise ScenarioError(sc.source, f"cannot run on BMv2: {reason}")
    wall = time.perf_counter()
    # No path health in the NICs' data planes: the host here cannot learn
    # which EV each packet took (its profile mirrors the plain rotation).
    plan = wiring.describe(sc, t, nic_health=False)
    topo = plan.topo
    fab = Bmv2Fabric(topo, plan.specs)
    try:
        host = {n: sock(fab.devices[A.nic_name(n)].host_iface(HOST_PORT)) for n in fab.nics}
        clock = fab.sim = RealClock(host_poller(host, plan.hosts))
        drv = wiring.driver(plan, lambda: clock.now / SCALE)
        nic_gbps = sc.links.nic_gbps * topo.planes

        def site(n: int) -> Site:
            return Site(clock, A.nic_address(topo, n).packed, lambda raw, s=host[n]: s.send(ETH + raw), None,
                        nic_gbps, sc.endpoint, TIMERS, topo.dscp, sc.seed + n, False, drv.delivered,
                        drv.ledger.place, fab.nics[n].slots, fab.nics[n].reverse)

        for n, ep in wiring.endpoints(plan, fab.nics, site).items():
            fab.nics[n].endpoint = ep
        # The models' initial window (a packet count: it means the same on
        # BMv2), so both fabrics send the same packets before the first ACK.
        # AIMD whatever the profile: NSCC's delay rules would read BMv2's
        # software latency (milliseconds) as queueing.
        wiring.connect(plan, cc_profile.CcProfile(profile=cc_profile.AIMD), nic_gbps,
                       base_rtt(sc.links, sc.endpoint.mtu))
        reconv = wiring.reconverger(plan, fab, clock, SCALE)
        on_fault = reconv.fault if reconv else (lambda: None)
        wiring.start(plan, clock, drv, lambda ev: _fire(ev, fab, on_fault), SCALE)
        clock.run(until=sc.duration_us * SCALE, stop=lambda: wiring.finished(plan, drv))
        if progress:
            progress(f"{t.name} on BMv2: {drv.done}/{len(plan.msgs)} messages")
        end = clock.now / SCALE
        drops = {"link:link_down": fab.relay.cut_drops}
        drops.update({f"switch:{k}": v for k, v in _switch_drops(fab).items() if v})
        for s in host.values():
            s.close()
    finally:
        fab.stop()
    eps = plan.hosts.values()
    retx = {"sack": sum(e.stats.retx_sack for e in eps), "nack": sum(e.stats.retx_nack for e in eps),
            "timeout": sum(e.stats.timeouts for e in eps)}
    errors = [f"{e.addr} QP {q}: {why}" for e in eps for q, why in e.errors]
    # BMv2 is untimed: base RTT 0 in the ideal
    return RunResult(sc, t, plan.msgs, Timeline(), 0.0, nic_gbps, retx, drops, {"delivered_twice": drv.twice},
                     [0] * 25, errors, 0, 0, time.perf_counter() - wall, end, reconv.rehashed if reconv else 0,
                     ledger=drv.ledger.check())


def _switch_drops(fab: Bmv2Fabric) -> dict[str, int]:
    out = dict.fromkeys(SWITCH_DROPS, 0)
    for name in S.switch_names(fab.topo):
        for reason, n in read_drops(fab.sessions[name]).items():
            out[reason] += n
    return out
