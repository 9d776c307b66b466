"""Two NICs (reference models, and BMv2 and SWX where present), plane ports linked
back to back through a filter that drops every packet carrying one chosen EV. The endpoint model on each
NIC (its `mrc_wire.pcie.Nic`: the model, or testbed.bmv2_nic on BMv2 and SWX) exchanges a multi-packet message: it
completes, the EV is retired (ASSUMED_BAD) and replaced in the NIC's slot table by an EV of its plane, and
the EV the endpoint learned for each data packet (the NIC's completions) is the EV the NIC sent it on."""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Callable

import finsy as fy
import pytest

from control_plane import nic_plan as N
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile, EvState, ev_plane
from mrc_host.settings import HostConfig
from mrc_wire.pcie import Nic
from nic_model.nic_pipeline import NicModel, Output
from ptf_tests.conftest import bmv2_skip_reason
from ptf_tests.lib.fabric import TOPO
from ptf_tests.lib.nic_fabric import PORTS, addr
from sim_core.realtime import RealClock
from sim_core.sim import Sim
from testbed import toolchain
from testbed.bmv2_nic import Bmv2Nic
from testbed.links import Link
from testbed.settle import Progress, Settler, nic_progress
from testbed.swx_nic import SwxNic, SwxNicDevice
from testbed.targets import NicBmv2Target
from tests.support.app import Recorder

A_NIC, B_NIC, A_QPN, B_QPN = 0, 3, 1, 2
# Timers for BMv2's millisecond round trips (as testbed/agent.py's wall clock): a retired EV is probed once
# a probe interval, answered or not, so 100 µs would send the black-holed EV 10,000 probes a second.
CFG = HostConfig(rto=100_000, probe_interval=25_000)


def _profiles() -> tuple[EvProfile, EvProfile]:
    pa = EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8)
    pb = EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8)
    return pa, pb


class Run:
    """What one back-to-back exchange produced."""

    def __init__(self) -> None:
        self.app = Recorder()
        self.used: Counter[int] = Counter()  # data EVs NIC A put on its plane ports
        self.seen: Counter[int] = Counter()  # every EV on the link
        self.dropped = 0
        self.counted_bad = 0  # frames both NICs' own counters say they sent on the bad EV
        self.slots: dict[int, int] = {}  # NIC A's slot table at the end
        self.learned: Counter[int] = Counter()  # data EVs A's endpoint learned from its NIC's completions
        self.stats = None

    @property
    def got(self) -> list[bytes | None]:
        return self.app.data


def _ev_of(frame: bytes) -> int:
    return (int.from_bytes(frame[94:96], "big") << 16) | int.from_bytes(frame[56:58], "big")


def _endpoints(clock: Sim | RealClock, nic_a: Nic, nic_b: Nic, run: Run, pa: EvProfile,
               pb: EvProfile) -> dict[int, Endpoint]:
    """The two hosts, each creating its QP on its NIC."""
    eps = {A_NIC: Endpoint(clock, addr(A_NIC), nic_a, CFG), B_NIC: Endpoint(clock, addr(B_NIC), nic_b, CFG, run.app)}
    eps[A_NIC].connect(A_QPN, B_QPN, addr(B_NIC), pa)
    eps[B_NIC].connect(B_QPN, A_QPN, addr(A_NIC), pb)
    return eps


DATA = bytes(i % 251 for i in range(48 * 1024))


class _Cable:
    """One NIC's plane ports, cabled to the other's through the filter (5 µs)."""

    def __init__(self, sim: Sim, run: Run, bad: int, nics: dict[int, NicModel], me: int):
        self.sim, self.run, self.bad, self.nics, self.me = sim, run, bad, nics, me

    def send(self, out: Output) -> None:
        frame, wire = out.frame, out.wire
        ev = _ev_of(frame)
        self.run.seen[ev] += 1
        if self.me == A_NIC and 0xC6 <= frame[102] <= 0xCB:
            self.run.used[ev] += 1
        if ev == self.bad:
            self.run.dropped += 1
            return
        other = self.nics[B_NIC if self.me == A_NIC else A_NIC]
        self.sim.at(5.0, other.on_wire, wire)


def on_models(bad: int) -> tuple[Run, EvProfile]:
    """Two reference NIC pipelines, linked in Python, on the event clock."""
    pa, pb = _profiles()
    run = Run()
    sim = Sim()
    nics = {A_NIC: NicModel("a"), B_NIC: NicModel("b")}
    for n, model in nics.items():
        model.install(N.nic_state(TOPO, n).entries())  # its own tables; the QP is its host's to create
        model.connect(_Cable(sim, run, bad, nics, n))
    eps = _endpoints(sim, nics[A_NIC], nics[B_NIC], run, pa, pb)
    eps[A_NIC].send_message(A_QPN, DATA)
    sim.run(until=30e6, stop=lambda: bool(run.got) and eps[A_NIC].idle())
    run.slots = dict(nics[A_NIC].slots)
    run.stats = eps[A_NIC].stats
    run.learned = eps[A_NIC].qps[A_QPN].ev_tx
    run.counted_bad = nics[A_NIC].ev_tx[bad] + nics[B_NIC].ev_tx[bad]
    return run, pa


PLANES = [N.plane_port(p) for p in range(TOPO.planes)]


def _exchange(run: Run, nics: dict[int, Bmv2Nic], link: Link, pa: EvProfile, pb: EvProfile,
              progress: dict[int, Callable[[], Progress]]) -> Endpoint:
    """A's message to B through two device NICs (`progress`: each one's
    counts over all its ports) and the relay; A's endpoint. Frames sent
    just before the sender goes idle may still be in a device: the run ends
    once each NIC has finished with everything it was given, the relay has
    read all it sent on its planes and the host all it sent on the host
    port (completions too), counted from before the first frame."""
    def poll(timeout: float) -> None:
        nics[A_NIC].poll(timeout / 2)
        nics[B_NIC].poll(timeout / 2)

    def read(n: int, side: str) -> int:
        nics[n].poll()  # the host takes what reached it while the settler waits
        return link.read_from[side] + nics[n].read

    clock = RealClock(poll)
    sides = {A_NIC: "a", B_NIC: "b"}
    settlers = {n: Settler(nics[n].name, progress[n], lambda n=n, side=side: read(n, side))
                for n, side in sides.items()}
    eps = _endpoints(clock, nics[A_NIC], nics[B_NIC], run, pa, pb)
    link.start()
    try:
        eps[A_NIC].send_message(A_QPN, DATA)
        clock.run(until=30e6, stop=lambda: bool(run.got) and eps[A_NIC].idle())
        for n, settler in settlers.items():
            settler.sent = nics[n].posted + link.forwarded_to[sides[n]]
            settler.wait()
        poll(0.1)
    finally:
        link.stop()
    run.seen, run.dropped, run.used = link.seen, link.dropped, link.data_from.get("a", Counter())
    run.stats = eps[A_NIC].stats
    run.learned = eps[A_NIC].qps[A_QPN].ev_tx
    return eps[A_NIC]


def on_bmv2(bad: int) -> tuple[Run, EvProfile]:
    """Two simple_switch_grpc NICs, plane ports joined by a filtering relay."""
    reason = bmv2_skip_reason("nic")
    if reason:
        pytest.skip(f"BMv2: {reason}")
    pa, pb = _profiles()
    run = Run()
    targets: dict[int, NicBmv2Target] = {}
    nics: dict[int, Bmv2Nic] = {}
    try:
        for n in (A_NIC, B_NIC):
            t = targets[n] = NicBmv2Target(N.nic_state(TOPO, n), PORTS)
            t.dataplane.kill()  # the host port is the NIC's driver's (Bmv2Nic), the planes the relay's
            nics[n] = Bmv2Nic(t.state.name, ipaddress.IPv6Address(addr(n)).packed, t.session, t.bmv2.runtime(),
                              t.bmv2.host_iface(N.HOST_PORT))
        ta, tb = targets[A_NIC], targets[B_NIC]
        link = Link([(ta.bmv2.host_iface(p), tb.bmv2.host_iface(p)) for p in PLANES], drop_ev=bad)
        _exchange(run, nics, link, pa, pb, {n: lambda t=t: nic_progress(t.session, PORTS)
                                            for n, t in targets.items()})
        run.slots = {e.match["slot"]: e.action.args["ev"] for e in ta.session.read([fy.P4TableEntry("slot_ev")])}
        run.counted_bad = ta.ev_count(bad) + tb.ev_count(bad)
        return run, pa
    finally:
        for nic in nics.values():
            nic.close()
        for t in targets.values():
            t.session.close()
            t.bmv2.stop()


def on_swx(bad: int) -> tuple[Run, EvProfile]:
    """Two dpdk-pipeline NICs (nic_pna.p4), both apps on core 0 (each
    polls: the hosts, the relay and the kernel keep the other core), plane
    ports joined by the same filtering relay; each host's driver is the BMv2
    NIC's, over SWX's CLI (testbed/swx_nic.py)."""
    reason = toolchain.swx_unavailable("nic-pna")
    if reason:
        pytest.skip(f"SWX: {reason}")
    pa, pb = _profiles()
    run = Run()
    devices: dict[int, SwxNicDevice] = {}
    nics: dict[int, Bmv2Nic] = {}
    try:
        for n in (A_NIC, B_NIC):
            d = devices[n] = SwxNicDevice(N.nic_state(TOPO, n), PORTS, cpu=0)
            nics[n] = SwxNic(d.state.name, ipaddress.IPv6Address(addr(n)).packed, d)
        da, db = devices[A_NIC], devices[B_NIC]
        link = Link([(da.pipe.iface(p), db.pipe.iface(p)) for p in PLANES], drop_ev=bad)
        _exchange(run, nics, link, pa, pb, {n: d.progress for n, d in devices.items()})
        run.slots = {key[0]: args["ev"] for key, args in da.pipe.written("slot_ev")}
        run.counted_bad = sum(d.pipe.direct("ev_tx_packets", "ev_stats", [bad]) for d in devices.values()
                              if any(key == (bad,) for key, _ in d.pipe.written("ev_stats")))
        return run, pa
    finally:
        for nic in nics.values():
            nic.close()
        for d in devices.values():
            d.close()


@pytest.mark.parametrize("driver", [on_models, on_bmv2, on_swx], ids=["model", "bmv2", "swx"])
def test_message_completes_while_one_ev_is_black_holed(driver):
    bad = _profiles()[0].home[2]
    run, pa = driver(bad)
    assert run.got == [DATA], "the message did not arrive exactly once"
    # Every frame the NICs counted on the bad EV (ev_tx) reached the filter
    # and was dropped there, and nothing else was.
    assert run.dropped > 0 and run.seen[bad] == run.dropped == run.counted_bad
    # Each data packet lost on it was resent (found from SACKs, a tail probe
    # or a timeout), never trimmed: the loss was real.
    assert run.used[bad] > 0 and run.stats.retransmits >= run.used[bad] and run.stats.nacks == 0
    assert pa.state[bad] is EvState.ASSUMED_BAD
    # The NIC's slot table no longer names the EV; its stand-in is on the same plane.
    assert bad not in run.slots.values()
    stand_in = run.slots[2]
    assert stand_in != bad and ev_plane(stand_in) == ev_plane(bad)
    # The NIC picked each data packet's EV and told the endpoint which: what
    # it learned from the completions is what the NIC put on the wire.
    assert run.learned == run.used
