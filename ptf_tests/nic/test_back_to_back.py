"""Two NICs (reference models, and BMv2 where present), plane ports linked
back to back through a filter that drops every packet carrying one chosen EV. The endpoint model on each host
port exchanges a multi-packet message: it completes, and the EV is retired
(ASSUMED_BAD) and replaced in the NIC's slot table by an EV of its plane."""

from __future__ import annotations

from collections import Counter

import finsy as fy
import pytest

from control_plane import nic_plan as N
from control_plane.ev_control import NicEvControl
from fabric_sim.runner.on_bmv2 import reverse_writer
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile, EvState, ev_plane
from nic_model.nic_pipeline import NicModel
from ptf_tests.conftest import bmv2_skip_reason
from ptf_tests.lib.fabric import TOPO
from ptf_tests.lib.nic_fabric import HOST_MAC, NIC_MAC, PORTS, addr
from sim_core.realtime import RealClock
from sim_core.sim import Sim
from testbed.links import Link, host_poller, sock
from testbed.settle import Settler, nic_progress
from testbed.targets import NicBmv2Target

A_NIC, B_NIC, A_QPN, B_QPN = 0, 3, 1, 2


def _state(nic: int, qpn: int, peer_qpn: int, profile: EvProfile) -> N.NicState:
    backups = tuple(e for pool in profile.backups.values() for e in pool)
    return N.nic_state(TOPO, nic, [N.QpSpec(qpn, peer_qpn, tuple(profile.home), backups)])


def _profiles() -> tuple[EvProfile, EvProfile]:
    pa = EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8)
    pb = EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8)
    pa.mirror = pb.mirror = True  # the NIC walks the rotation; the endpoint follows
    return pa, pb


class Run:
    """What one back-to-back exchange produced."""

    def __init__(self) -> None:
        self.got: list[bytes] = []
        self.predicted: Counter[int] = Counter()  # data EVs the endpoint expected
        self.used: Counter[int] = Counter()  # data EVs NIC A put on its plane ports
        self.seen: Counter[int] = Counter()  # every EV on the link
        self.dropped = 0
        self.counted_bad = 0  # frames both NICs' own counters say they sent on the bad EV
        self.slots: dict[int, int] = {}  # NIC A's slot table at the end
        self.stats = None

    def expect(self, raw: bytes) -> None:
        if 0xC6 <= raw[48] <= 0xCB:
            self.predicted[(int.from_bytes(raw[40:42], "big") << 16) | int.from_bytes(raw[2:4], "big")] += 1


def _ev_of(frame: bytes) -> int:
    return (int.from_bytes(frame[94:96], "big") << 16) | int.from_bytes(frame[56:58], "big")


def _endpoints(clock, send_a, send_b, sink, run: Run, pa: EvProfile, pb: EvProfile,
               reverse: dict) -> dict[int, Endpoint]:
    """The two hosts; `reverse`: each NIC's writer of its receiver's reverse EVs."""
    eps = {
        A_NIC: Endpoint(clock, addr(A_NIC), send_a, rto=100_000, slot_sink=sink, reverse_sink=reverse[A_NIC]),
        B_NIC: Endpoint(clock, addr(B_NIC), send_b, rto=100_000, on_message=lambda q, m, d: run.got.append(d),
                        reverse_sink=reverse[B_NIC]),
    }
    eps[A_NIC].connect(A_QPN, B_QPN, addr(B_NIC), pa)
    eps[B_NIC].connect(B_QPN, A_QPN, addr(A_NIC), pb)
    return eps


ETH = bytes.fromhex(NIC_MAC.replace(":", "")) + bytes.fromhex(HOST_MAC.replace(":", "")) + b"\x86\xdd"
DATA = bytes(i % 251 for i in range(48 * 1024))


def on_models(bad: int) -> tuple[Run, EvProfile]:
    """Two reference NIC pipelines, linked in Python, on the event clock."""
    pa, pb = _profiles()
    run = Run()
    nics = {A_NIC: NicModel("a"), B_NIC: NicModel("b")}
    nics[A_NIC].install(_state(A_NIC, A_QPN, B_QPN, pa).entries())
    nics[B_NIC].install(_state(B_NIC, B_QPN, A_QPN, pb).entries())
    sim = Sim()
    eps: dict[int, Endpoint] = {}

    def nic_in(nic: int, port: int, frame: bytes) -> None:
        for out in nics[nic].process(port, frame):
            if out.port == N.HOST_PORT:
                sim.at(1.0, lambda f=out.frame: eps[nic].receive(f[14:]))
                continue
            ev = _ev_of(out.frame)
            run.seen[ev] += 1
            if nic == A_NIC and 0xC6 <= out.frame[102] <= 0xCB:
                run.used[ev] += 1
            if ev == bad:
                run.dropped += 1
                continue
            other = B_NIC if nic == A_NIC else A_NIC
            sim.at(5.0, lambda o=other, p=out.port, f=out.frame: nic_in(o, p, f))

    def send_a(raw: bytes) -> None:
        run.expect(raw)
        nic_in(A_NIC, N.HOST_PORT, ETH + raw)

    sink = lambda qpn, writes: nics[A_NIC].install([N.SlotEv(s, e) for s, e in writes])  # noqa: E731
    eps.update(_endpoints(sim, send_a, lambda raw: nic_in(B_NIC, N.HOST_PORT, ETH + raw), sink, run, pa, pb,
                          {n: nics[n].set_reverse for n in nics}))
    eps[A_NIC].send_message(A_QPN, DATA)
    sim.run(until=30e6, stop=lambda: bool(run.got) and eps[A_NIC].idle())
    run.slots = dict(nics[A_NIC].slots)
    run.stats = eps[A_NIC].stats
    run.counted_bad = nics[A_NIC].ev_tx[bad] + nics[B_NIC].ev_tx[bad]
    return run, pa


def on_bmv2(bad: int) -> tuple[Run, EvProfile]:
    """Two simple_switch_grpc NICs, plane ports joined by a filtering relay."""
    reason = bmv2_skip_reason("nic")
    if reason:
        pytest.skip(f"BMv2: {reason}")
    pa, pb = _profiles()
    run = Run()
    nic_a = nic_b = None
    try:
        nic_a = NicBmv2Target(_state(A_NIC, A_QPN, B_QPN, pa), PORTS)
        nic_b = NicBmv2Target(_state(B_NIC, B_QPN, A_QPN, pb), PORTS)
        for n in (nic_a, nic_b):
            n.dataplane.kill()  # this test uses its own sockets
        link = Link([(nic_a.bmv2.host_iface(N.plane_port(p)), nic_b.bmv2.host_iface(N.plane_port(p)))
                     for p in range(TOPO.planes)], drop_ev=bad)
        host = {A_NIC: sock(nic_a.bmv2.host_iface(N.HOST_PORT)), B_NIC: sock(nic_b.bmv2.host_iface(N.HOST_PORT))}
        eps: dict[int, Endpoint] = {}
        host_sent: Counter[int] = Counter()

        def send(nic: int, raw: bytes) -> None:
            if nic == A_NIC:
                run.expect(raw)
            host_sent[nic] += 1
            host[nic].send(ETH + raw)

        # Frames sent just before the sender goes idle may still be in BMv2:
        # count once each NIC has finished with everything it was given and
        # the relay has read all it sent on its plane ports.
        planes = [N.plane_port(p) for p in range(TOPO.planes)]
        settlers = {(n, side): Settler(n.state.name, lambda n=n: nic_progress(n.session, planes),
                                       lambda side=side: link.read_from[side])
                    for n, side in ((nic_a, "a"), (nic_b, "b"))}
        control = NicEvControl(nic_a.session, nic_a.state)

        def slot_sink(qpn: int, writes: list[tuple[int, int]]) -> None:
            # The endpoint chose EVs for what it sent before by the old slots:
            # NIC A must have taken all of it in before the new slots land.
            settler = settlers[(nic_a, "a")]
            settler.sent = host_sent[A_NIC] + link.forwarded_to["a"]
            settler.wait_ingress()
            control.push(qpn, writes)

        clock = RealClock(host_poller(host, eps))
        reverse = {A_NIC: reverse_writer(nic_a.bmv2, nic_a.state), B_NIC: reverse_writer(nic_b.bmv2, nic_b.state)}
        eps.update(_endpoints(clock, lambda raw: send(A_NIC, raw), lambda raw: send(B_NIC, raw), slot_sink, run,
                              pa, pb, reverse))
        link.start()
        try:
            eps[A_NIC].send_message(A_QPN, DATA)
            clock.run(until=30e6, stop=lambda: bool(run.got) and eps[A_NIC].idle())
            for (n, side), settler in settlers.items():
                settler.sent = host_sent[A_NIC if n is nic_a else B_NIC] + link.forwarded_to[side]
                settler.wait()
        finally:
            link.stop()
        run.seen, run.dropped, run.used = link.seen, link.dropped, link.data_from.get("a", Counter())
        run.slots = {e.match["slot"]: e.action.args["ev"] for e in nic_a.session.read([fy.P4TableEntry("slot_ev")])}
        run.stats = eps[A_NIC].stats
        run.counted_bad = nic_a.ev_count(bad) + nic_b.ev_count(bad)
        return run, pa
    finally:
        for n in (nic_a, nic_b):
            if n is not None:
                n.session.close()
                n.bmv2.stop()


@pytest.mark.parametrize("driver", [on_models, on_bmv2], ids=["model", "bmv2"])
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
    # For every data packet the NIC chose the EV the endpoint expected.
    assert run.used == run.predicted
