"""Run one scenario with one transport: build the fabric, connect the QPs,
post the messages, apply the events, and sample the fabric every bin."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from control_plane import addressing as A
from fabric_sim.net import pfc, tally
from fabric_sim.net.fabric import Fabric
from fabric_sim.net.ledger import Verdict
from fabric_sim.net.links import Egress
from fabric_sim.runner import faults, footprint, outcome, wiring
from fabric_sim.scenario import Scenario, Transport
from fabric_sim.scenario.chakra.walker import StepLog
from fabric_sim.scenario.message import Message
from fabric_sim.transports import qps
from fabric_sim.transports.qps import QpLink
from fabric_sim.transports.transport import Site, Timers
from mrc_host.host import Host
from sim_core.sim import Sim, gc_frozen, gc_paused


@dataclass
class Timeline:
    t: list[float] = field(default_factory=list)  # end of each bin, µs
    goodput: list[float] = field(default_factory=list)  # Gb/s placed at receivers
    flows: dict[str, list[float]] = field(default_factory=dict)  # "a->b" -> Gb/s
    planes: dict[int, list[float]] = field(default_factory=dict)  # NIC->T0 Gb/s per plane
    spines: dict[str, list[float]] = field(default_factory=dict)  # T1 -> Gb/s sent down
    ev_states: dict[str, list[int]] = field(default_factory=dict)  # state -> EVs of sender QPs
    # Traced QPs (the first QP of each pair, up to TRACED pairs): "a->b" ->
    # EV -> data packets sent on it per bin, and the EV state changes as
    # (time µs, EV, event, new state).
    ev_tx: dict[str, dict[int, list[int]]] = field(default_factory=dict)
    ev_log: dict[str, list[tuple[float, int, str, str]]] = field(default_factory=dict)


TRACED = 16

@dataclass
class RunResult:
    scenario: Scenario
    transport: Transport
    messages: list[Message]
    timeline: Timeline
    base_rtt: float
    nic_gbps: float
    retx: dict[str, int]
    drops: dict[str, int]
    events: dict[str, int]
    reorder: list[int]
    errors: list[str]
    sim_events: int
    packet_hops: int
    wall_s: float
    end_us: float
    rehashed: int = 0
    # pause frames and paused time per link (fabric_sim.net.pfc.PfcNet.report); None: no PFC
    pfc: dict[str, Any] | None = None
    ledger: Verdict | None = None  # every posted byte placed exactly once? (fabric_sim/net/ledger.py)
    packets: dict[str, Any] | None = None  # totals that reconcile (fabric_sim/net/tally.py)
    undelivered: list[str] = field(default_factory=list)  # why messages were not delivered (runner/outcome.py)
    steps: StepLog | None = None  # a trace's walk: each node's span per rank and iteration (chakra/walker.py)

    @property
    def complete(self) -> bool:
        return all(m.done_at >= 0 for m in self.messages)


def run(sc: Scenario, t: Transport, progress: Callable[[str], None] | None = None,
        hooks: Sequence[tuple[float, Callable[[Fabric], None]]] = (), memory: int | None = None) -> RunResult:
    """`hooks`: (time, fn(fabric)) calls at simulated times, for tests;
    `memory`: the bytes the run may take (--max-memory; by default what
    this process may, footprint.available)."""
    with gc_paused():  # the build's objects live for the whole run: no collection walks them as they are made
        return _run(sc, t, progress, hooks, memory)


def _run(sc: Scenario, t: Transport, progress: Callable[[str], None] | None,
         hooks: Sequence[tuple[float, Callable[[Fabric], None]]], memory: int | None) -> RunResult:
    wall = time.perf_counter()
    ecfg = sc.endpoint
    footprint.check(sc, t, memory)  # before building: a run too big for this machine is refused, not swapped
    sim = Sim()
    plan = wiring.describe(sc, t)
    topo, links, tr = plan.topo, plan.links, plan.tr
    fab = Fabric(topo, t.links or sc.links, sim, seed=sc.seed, mark_last_hop=tr.marks_last_hop,
                 egress=pfc.PfcEgress if t.pfc else Egress, progress=progress, ecn_echo=tr.nic_echoes_ce)
    pfc_net = pfc.PfcNet(fab, t.pfc) if t.pfc else None
    qps.install(fab, plan.nics, progress)
    rtt = fab.base_rtt(ecfg.mtu)
    drv = wiring.driver(plan, lambda: sim.now)
    nic_gbps = fab.cfg.nic_gbps * topo.planes
    timers = Timers(tr.rto(ecfg, rtt), ecfg.probe_interval_us or 2 * rtt,
                    ecfg.reorder_window_us if ecfg.reorder_window_us is not None else rtt)

    def site(n: int) -> Site:
        node = fab.nics[n]
        if tr.scheduled and ecfg.tx_backlog:
            node.schedule(sim, ecfg.tx_backlog, topo.dscp["control"])
        return Site(sim, A.nic_address(topo, n).packed, node, nic_gbps, ecfg, timers, topo.dscp, sc.seed + n, True,
                    drv)

    hosts = wiring.endpoints(plan, site)
    if pfc_net:
        for n, host in hosts.items():
            pfc_net.attach(fab.nics[n], host)
    wiring.connect(plan, t.cc, nic_gbps, rtt)
    for i, pair in enumerate(links.values()):  # the first QP of the first TRACED pairs logs its EVs' changes
        for k, q in enumerate(pair):
            if i < TRACED and k == 0:
                q.prof_a.trace(lambda: sim.now)
            else:
                q.prof_a.untraced()
            q.prof_b.untraced()
    reconv = wiring.reconverger(plan, fab, sim)
    on_fault = reconv.fault if reconv else (lambda: None)
    target = faults.TimedTarget(fab, links)
    wiring.start(plan, sim, drv, lambda ev: faults.fire(ev, target, on_fault))
    for when, fn in hooks:
        sim.call_at(when, fn, fab)

    bin_us = sc.duration_us / sc.bins
    tl = _Sampler(fab, hosts, links, bin_us)
    t_end = 0.0
    with gc_frozen():
        while t_end < sc.duration_us and not wiring.finished(plan, drv):
            t_end = min(sc.duration_us, t_end + bin_us)
            sim.run(until=t_end)
            tl.sample(t_end)
            if progress:
                progress(f"{t.name}: {t_end:,.0f}/{sc.duration_us:,.0f} µs, {drv.done}/{len(plan.msgs)} messages, "
                         f"{sim.events:,} events")
    tl.finish()
    res = _result(sc, t, fab, hosts, plan.msgs, tl.tl, rtt, sim, time.perf_counter() - wall, t_end, reconv)
    res.events["delivered_twice"] = drv.twice
    res.pfc = pfc_net.report(sim.now) if pfc_net else None
    res.ledger = drv.ledger.check()
    res.packets = tally.totals(fab, sim, res.drops, res.events["nacks_from_nics"])
    res.undelivered = outcome.undelivered(fab, hosts, links, plan.msgs, t_end)
    res.steps = plan.walker.result() if plan.walker else None
    return res


class _Sampler:
    def __init__(self, fab: Fabric, hosts: Mapping[int, Host], links: dict[tuple[int, int], list[QpLink]],
                 bin_us: float):
        self.fab, self.hosts, self.links, self.bin = fab, hosts, links, bin_us
        self.tl = Timeline()
        self.last: dict[object, int] = {}
        self.nic_eg = [e for e in fab.egresses() if e.kind == "nic" and _owner_kind(e) == "nic"]
        self.t1_eg = [e for e in fab.egresses() if _owner_kind(e) == "t1"]
        self.senders = [q for qps in links.values() for q in qps]
        self.flow_keys = [(f"{a}->{b}", b, [q.qpn_b for q in qps]) for (a, b), qps in links.items()]
        self.traced = [(f"{a}->{b}", hosts[a].qps[qps[0].qpn_a])
                       for (a, b), qps in list(links.items())[:TRACED]]

    def _rate(self, key: object, total: int) -> float:
        prev = self.last.get(key, 0)
        self.last[key] = total
        return (total - prev) * 8 / (self.bin * 1e3)  # bytes per bin -> Gb/s

    def sample(self, t: float) -> None:
        tl = self.tl
        tl.t.append(t)
        eps = self.hosts.values()
        tl.goodput.append(self._rate("goodput", sum(e.stats.rx_bytes for e in eps)))
        if len(self.flow_keys) <= 256:
            for name, b, qpns in self.flow_keys:
                qps = self.hosts[b].qps
                tl.flows.setdefault(name, []).append(self._rate(name, sum(qps[q].rx_bytes for q in qpns)))
        self._links()
        self._evs()

    def _links(self) -> None:
        """NIC-to-T0 Gb/s per plane, and what each T1 sent down."""
        tl, fab = self.tl, self.fab
        planes: Counter[int] = Counter()
        for e in self.nic_eg:
            planes[e.plane] += e.tx_bytes
        for p in range(fab.topo.planes):
            tl.planes.setdefault(p, []).append(self._rate(("plane", p), planes[p]))
        spines: Counter[str] = Counter()
        for e in self.t1_eg:
            spines[str(e.owner)] += e.tx_bytes
        for name in sorted(spines):
            tl.spines.setdefault(name, []).append(self._rate(name, spines[name]))

    def _evs(self) -> None:
        """The sending QPs' EV states, and the traced QPs' packets per EV."""
        tl = self.tl
        states: Counter[str] = Counter()
        for q in self.senders:
            states.update(st.value for st in q.prof_a.state.values())
            if q.prof_a.health:  # its skips are the NIC's (one per slot set to skip once)
                skipping = self.fab.nics[q.a].skipping(q.qpn_a).bit_count()
                states["SKIP"] += skipping
                states["GOOD"] -= skipping
        for st in ("GOOD", "SKIP", "ASSUMED_BAD", "PLANE_DOWN", "DENIED"):
            tl.ev_states.setdefault(st, []).append(states[st])
        for name, qp in self.traced:
            per_ev = tl.ev_tx.setdefault(name, {})
            for ev, n in qp.ev_tx.items():
                series = per_ev.setdefault(ev, [0] * (len(tl.t) - 1))
                key = (name, ev)
                series.append(n - self.last.get(key, 0))
                self.last[key] = n
            for series in per_ev.values():  # EVs not used in this bin
                if len(series) < len(tl.t):
                    series.append(0)

    def finish(self) -> None:
        for name, qp in self.traced:
            p = qp.profile
            self.tl.ev_log[name] = [(t, ev, e.value, st.value) for t, (ev, e, st) in zip(p.times, p.log, strict=True)]


def _owner_kind(e: Egress) -> str:
    """The kind of device an egress leaves ("" for one built outside a fabric)."""
    return e.owner.kind if e.owner is not None else ""


def _result(sc: Scenario, t: Transport, fab: Fabric, hosts: Mapping[int, Host], msgs: list[Message], tl: Timeline,
            rtt: float, sim: Sim, wall: float, t_end: float, reconv: qps.Reconverger | None) -> RunResult:
    eps = list(hosts.values())
    retx = {"sack": sum(e.stats.retx_sack for e in eps), "nack": sum(e.stats.retx_nack for e in eps),
            "timeout": sum(e.stats.timeouts for e in eps)}
    drops: Counter[str] = Counter()
    events: Counter[str] = Counter()
    for sw in fab.switches.values():
        drops.update({f"switch:{k}": v for k, v in sw.model.drops.items()})
        events.update(sw.model.events)
    for n in fab.nics:
        drops.update({f"nic:{k}": v for k, v in n.model.drops.items()})
    for e in fab.egresses():
        drops.update({f"link:{k}": v for k, v in e.drops.items()})
    events["nacks_from_nics"] = sum(sum(n.model.nacks.values()) for n in fab.nics)
    events["probes"] = sum(e.stats.probes for e in eps)
    # Duplicates and arrivals past the in-order point: the NIC's receiver's
    # counters (MRC), and the RoCE host receiver's own.
    events["duplicates"] = sum(e.stats.duplicates for e in eps) + sum(n.model.rx.duplicates for n in fab.nics)
    events["trim_notices"] = sum(e.stats.trim_notices for e in eps)
    reorder = [sum(e.stats.reorder[i] for e in eps) + sum(n.model.rx.reorder[i] for n in fab.nics) for i in range(25)]
    errors = [f"{e.addr} QP {q}: {why}" for e in eps for q, why in e.errors]
    return RunResult(sc, t, msgs, tl, rtt, fab.cfg.nic_gbps * fab.topo.planes, retx, dict(drops), dict(events),
                     reorder, errors, sim.events, sum(e.tx_pkts for e in fab.egresses()), wall, t_end,
                     reconv.rehashed if reconv else 0)
