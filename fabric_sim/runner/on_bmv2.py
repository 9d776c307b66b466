"""A scenario on the BMv2 fabric: every switch and every NIC of a small
topology is simple_switch_grpc running the P4 program with the tables our
controller plans and installs, every cable is a relay between BMv2 ports
that the scenario's events cut and mend, and the same MRC endpoints run
on each NIC's host port on the wall clock. The report is the timed
fabric's, so one scenario shows whether the P4 programs and the models
agree on who got through.

Each NIC is its host's `mrc_wire.pcie.Nic` through testbed.bmv2_nic:
the endpoints create their QPs on it as they connect (P4Runtime writes),
write its registers over Thrift, and learn the EV each packet took from
the data plane's transmit completions, so the NICs keep path health as
the models do.

BMv2 is not timed like the models: scenario times are stretched by
`SCALE` (1 µs of scenario is 1 ms of wall clock), the endpoint's timers
are set for BMv2's millisecond RTTs, and completion times are reported
divided by `SCALE`. Compare delivery outcomes, not times.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from control_plane import addressing as A
from control_plane import switch_plan as S
from control_plane.counters import read_drops
from fabric_sim.net.fabric import base_rtt
from fabric_sim.runner import wiring
from fabric_sim.runner.run import RunResult, Timeline
from fabric_sim.scenario import Scenario, ScenarioError, Transport, cc_profile
from fabric_sim.scenario.events import CableEvent, Event
from fabric_sim.transports import kinds
from fabric_sim.transports.transport import Site, Timers
from mrc_wire.constants import SWITCH_DROPS
from sim_core.realtime import RealClock
from testbed import toolchain
from testbed.bmv2_fabric import Bmv2Fabric

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


def _fire(ev: Event, fab: Bmv2Fabric, on_fault: Callable[[], None]) -> None:
    if isinstance(ev, CableEvent):  # the only kind BMv2 runs (unsupported refuses the others)
        ev.apply(fab)
    on_fault()


def run_bmv2(sc: Scenario, t: Transport, progress: Callable[[str], None] | None = None) -> RunResult:
    reason = unsupported(sc)
    if reason:
        raise ScenarioError(sc.source, f"cannot run on BMv2: {reason}")
    wall = time.perf_counter()
    plan = wiring.describe(sc, t)
    topo = plan.topo
    fab = Bmv2Fabric(topo, plan.nics)
    try:
        clock = fab.sim = RealClock(fab.poll)
        drv = wiring.driver(plan, lambda: clock.now / SCALE)
        nic_gbps = sc.links.nic_gbps * topo.planes

        def site(n: int) -> Site:
            return Site(clock, A.nic_address(topo, n).packed, fab.nics[n], nic_gbps, sc.endpoint, TIMERS, topo.dscp,
                        sc.seed + n, False, drv)

        wiring.endpoints(plan, site)
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
