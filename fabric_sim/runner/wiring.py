"""One run's description, whatever fabric carries it (the timed fabric,
run.py; BMv2, on_bmv2.py): the workload's messages, the transport and its
QP plan, the endpoints on the NICs' hosts, the QPs connected, the messages
posted and the events fired. A back end builds its fabric, offers each
NIC's host as a Site, and runs its clock."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from control_plane import addressing as A
from control_plane.topology import Topology
from fabric_sim.runner.driver import Driver
from fabric_sim.scenario import Event, Scenario, Transport, cc_profile, workload
from fabric_sim.scenario.chakra.walker import Walker
from fabric_sim.scenario.message import Message
from fabric_sim.transports import kinds, qps
from fabric_sim.transports import transport as tp
from fabric_sim.transports.qps import QpLink
from mrc_host import verbs
from mrc_host.ctl import MrcCtl
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.host import Host
from mrc_host.ocp import CcProfileAttr, Ev, EvOp, EvOpEntry, EvOpFlags, EvProfileAttr, EvProfileAttrMask


@dataclass
class RunPlan:
    """What is run: the scenario, one transport of it (`t`, and `tr` as an
    object) on its topology, the messages, every pair's QPs (`links`) and
    the NICs that hold them (`nics`, in order)."""

    sc: Scenario
    t: Transport
    tr: tp.Transport
    topo: Topology
    msgs: list[Message]
    qps_per_pair: int
    links: dict[tuple[int, int], list[QpLink]]
    nics: list[int]
    hosts: dict[int, Host] = field(default_factory=dict)  # NIC -> its endpoint (endpoints())
    apis: dict[int, verbs.MrcContext] = field(default_factory=dict)  # NIC -> its host's MRC API (MRC transports)
    walker: Walker | None = None  # a trace's walk, which posts its messages (chakra/walker.py)

    @property
    def events(self) -> tuple[Event, ...]:
        return self.sc.events

    def reroute(self, nic: int, qpn: int, ev: int) -> None:
        """The single-path baselines' routing moved QP `qpn` of NIC `nic` to
        the path `ev`: for an MRC QP through the host's MRC API (REPLACE_EV
        of its one EV, then its control path), for RoCE its host's own."""
        host, api = self.hosts[nic], self.apis.get(nic)
        if api is None:
            host.reroute(qpn, ev)
            return
        old = host.qps[qpn].profile.home[0]
        api.ctl.modify_ev_profile(qpn, EvProfileAttr(ev_op=EvOp.REPLACE_EV, entries=[
            EvOpEntry(Ev.of(old), Ev.of(ev), flags=EvOpFlags.ALL_COPIES)]), EvProfileAttrMask.EV_OP)
        api.ep.set_control_path(qpn, ev)


def describe(sc: Scenario, t: Transport, *, nic_health: bool = True) -> RunPlan:
    """The run of transport `t` of `sc`: its messages and QP plan (`nic_health`: qps.plan's)."""
    tr = kinds.of(t)
    topo = t.topology or sc.topology  # a transport may bring its own fabric
    walker = workload.walker(sc.workload, topo.nics, topo.hosts_per_t0) if sc.workload.trace is not None else None
    msgs = walker.msgs if walker else workload.build(sc.workload, topo.nics, sc.seed, topo.hosts_per_t0)
    qpp = t.qps_per_pair or sc.workload.qps_per_pair
    pins = {(f.src, f.dst): f.pin for f in sc.workload.flows if f.pin is not None}
    links = qps.plan(tr, topo, workload.pairs_of(msgs), qpp, sc.seed, pins, nic_health, sc.ecmp_seed)
    return RunPlan(sc, t, tr, topo, msgs, qpp, links, sorted(qps.nics_of(links)), walker=walker)


def endpoints(plan: RunPlan, site: Callable[[int], tp.Site]) -> dict[int, Host]:
    """The transport's endpoint on the host of each NIC of the plan, at the
    site the back end offers there (it attaches itself to the NIC); kept
    in plan.hosts."""
    for n in plan.nics:
        plan.hosts[n] = plan.tr.endpoint(site(n))
    return plan.hosts


def connect(plan: RunPlan, cc: cc_profile.CcProfile, nic_gbps: float, rtt: float) -> None:
    """Both ends of every QP, each with a window of profile `cc`. An MRC
    QP is opened through its host's MRC API (mrc_host/verbs.py: its EV
    profile and CC profile made by the controller's calls, then RESET ->
    INIT -> RTR -> RTS, which creates it on the NIC): the one QP set-up
    path. The plan's profiles are what the QPs run from then on."""
    flows = Counter(a for a, _ in plan.links)
    mtu = plan.sc.endpoint.mtu
    for (a, b), pair in plan.links.items():
        p = cc_profile.attr(cc, nic_gbps, mtu, rtt, flows[a] * plan.qps_per_pair)
        pid = flows[a] * plan.qps_per_pair + 1  # one CC profile per window a NIC's QPs start at
        for q in pair:
            q.prof_a = _open(plan, a, q.qpn_a, b, q.qpn_b, q.prof_a, p, pid, nic_gbps)
            q.prof_b = _open(plan, b, q.qpn_b, a, q.qpn_a, q.prof_b, p, pid, nic_gbps)


def _open(plan: RunPlan, n: int, qpn: int, peer: int, peer_qpn: int, prof: EvProfile, cc: CcProfileAttr, pid: int,
          nic_gbps: float) -> EvProfile:
    """QP `qpn` of NIC `n` to QP `peer_qpn` of NIC `peer`: the profile it runs."""
    host, dgid = plan.hosts[n], A.nic_address(plan.topo, peer).packed
    if not plan.tr.verbs:  # RoCE's RC QPs: the host's own connect
        return host.connect(qpn, peer_qpn, dgid, prof,
                            cc=verbs.congestion_control(cc, nic_gbps, plan.sc.endpoint.mtu)).profile
    assert isinstance(host, Endpoint), "an MRC transport's hosts are MRC endpoints"
    api = plan.apis.get(n)
    if api is None:
        api = plan.apis[n] = verbs.MrcContext(host, MrcCtl(host, plan.topo.planes), nic_gbps)
    qp = verbs.open_qp(api, qpn, peer_qpn, dgid, prof, verbs.cc_profile(api.ctl, pid, cc))
    assert qp.running is not None  # at RTS
    return qp.running.profile


def driver(plan: RunPlan, now: Callable[[], float]) -> Driver:
    """What posts the messages on the endpoints and notices their delivery."""
    return Driver(plan.msgs, plan.links, plan.hosts.__getitem__, now)


def reconverger(plan: RunPlan, fab: qps.Routes, clock: qps.Clock, scale: float = 1.0) -> qps.Reconverger | None:
    """The transport's routing after a fault, if it has one (one path per QP)."""
    return qps.Reconverger(fab, plan, clock, plan.links, plan.t.reconvergence_us * scale, plan.sc.ecmp_seed) \
        if plan.tr.reroutes else None


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
