"""One run's description, whatever fabric carries it (the timed fabric,
run.py; BMv2, on_bmv2.py): the workload's messages, the transport and its
QP plan, the endpoints on the NICs' hosts, the QPs connected, the messages
posted and the events fired. A back end builds its fabric, offers each
NIC's host as a Site, and runs its clock."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from control_plane import addressing as A
from control_plane.nic_plan import QpSpec
from control_plane.topology import Topology
from fabric_sim.runner.driver import Driver
from fabric_sim.scenario import Event, Scenario, Transport, cc_profile, workload
from fabric_sim.scenario.chakra.walker import Walker
from fabric_sim.scenario.message import Message
from fabric_sim.transports import kinds, qps
from fabric_sim.transports import transport as tp
from fabric_sim.transports.qps import QpLink
from nic_model.host import Host


@dataclass
class RunPlan:
    """What is run: the scenario, one transport of it (`t`, and `tr` as an
    object) on its topology, the messages, and every pair's QPs (`links`)
    with the QPs each NIC's plan holds (`specs`)."""

    sc: Scenario
    t: Transport
    tr: tp.Transport
    topo: Topology
    msgs: list[Message]
    qps_per_pair: int
    links: dict[tuple[int, int], list[QpLink]]
    specs: dict[int, list[QpSpec]]
    hosts: dict[int, Host] = field(default_factory=dict)  # NIC -> its endpoint (endpoints())
    walker: Walker | None = None  # a trace's walk, which posts its messages (chakra/walker.py)

    @property
    def events(self) -> tuple[Event, ...]:
        return self.sc.events


def describe(sc: Scenario, t: Transport, *, nic_health: bool = True) -> RunPlan:
    """The run of transport `t` of `sc`: its messages and QP plan (`nic_health`: qps.plan's)."""
    tr = kinds.of(t)
    topo = t.topology or sc.topology  # a transport may bring its own fabric
    walker = workload.walker(sc.workload, topo.nics, topo.hosts_per_t0) if sc.workload.trace is not None else None
    msgs = walker.msgs if walker else workload.build(sc.workload, topo.nics, sc.seed, topo.hosts_per_t0)
    qpp = t.qps_per_pair or sc.workload.qps_per_pair
    pins = {(f.src, f.dst): f.pin for f in sc.workload.flows if f.pin is not None}
    links, specs = qps.plan(tr, topo, workload.pairs_of(msgs), qpp, sc.seed, pins, sc.endpoint.ack_bytes,
                            nic_health)
    return RunPlan(sc, t, tr, topo, msgs, qpp, links, specs, walker=walker)


def endpoints(plan: RunPlan, nics: Iterable[int], site: Callable[[int], tp.Site]) -> dict[int, Host]:
    """The transport's endpoint on the host of each NIC of `nics`, at the
    site the back end offers there; kept in plan.hosts."""
    for n in nics:
        plan.hosts[n] = plan.tr.endpoint(site(n))
    return plan.hosts


def connect(plan: RunPlan, cc: cc_profile.CcProfile, nic_gbps: float, rtt: float) -> None:
    """Both ends of every QP, each with a window of profile `cc`."""
    flows = Counter(a for a, _ in plan.links)
    mtu, topo = plan.sc.endpoint.mtu, plan.topo
    for (a, b), pair in plan.links.items():
        ea, eb = plan.hosts[a], plan.hosts[b]
        for q in pair:
            ea.connect(q.qpn_a, q.qpn_b, A.nic_address(topo, b).packed, q.prof_a,
                       cc=cc_profile.build(cc, nic_gbps, mtu, rtt, flows[a] * plan.qps_per_pair))
            eb.connect(q.qpn_b, q.qpn_a, A.nic_address(topo, a).packed, q.prof_b,
                       cc=cc_profile.build(cc, nic_gbps, mtu, rtt, flows[a] * plan.qps_per_pair))


def driver(plan: RunPlan, now: Callable[[], float]) -> Driver:
    """What posts the messages on the endpoints and notices their delivery."""
    return Driver(plan.msgs, plan.links, plan.hosts.__getitem__, now)


def reconverger(plan: RunPlan, fab: qps.Routes, clock: qps.Clock, scale: float = 1.0) -> qps.Reconverger | None:
    """The transport's routing after a fault, if it has one (one path per QP)."""
    return qps.Reconverger(fab, clock, plan.links, plan.t.reconvergence_us * scale) if plan.tr.reroutes else None


def finished(plan: RunPlan, drv: Driver) -> bool:
    """Every message delivered and, for a trace, every rank's last iteration ended."""
    return drv.all_done() and (plan.walker is None or plan.walker.finished())


def start(plan: RunPlan, clock: qps.Clock, drv: Driver, fire: Callable[[Event], None], scale: float = 1.0) -> None:
    """Each message posted at its start, then each event fired at its time
    (scenario µs times `scale` on the back end's clock)."""
    for m in plan.msgs:
        if m.start is not None:
            clock.call_at(m.start * scale, drv.post, m)
    if plan.walker is not None:
        plan.walker.start(clock, drv.post, drv.now, scale)
    for ev in plan.events:
        clock.call_at(ev.at_us * scale, fire, ev)
