"""The whole demo fabric on BMv2: two NICs and the eight switches of both
planes, every link a relay between BMv2 ports, the endpoint model on each
NIC's host port. Carriers built by the NIC pipeline must be forwarded by
the switch pipeline, NACKs must find their way back, and the transport must
complete its messages, also when one spine trims."""

from __future__ import annotations

import pytest

from control_plane import addressing as A
from control_plane.counters import read_total
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile, EvState
from mrc_host.settings import HostConfig
from ptf_tests.conftest import bmv2_skip_reason
from ptf_tests.lib.fabric import TOPO
from ptf_tests.lib.nic_fabric import addr
from sim_core.realtime import RealClock
from testbed.bmv2_fabric import Bmv2Fabric
from tests.support.app import Recorder

A_NIC, B_NIC, A_QPN, B_QPN = 0, 3, 1, 2
# The endpoint's timers on the wall clock (µs), far above any BMv2 round
# trip on a busy machine: nothing is lost here, so no reorder window or
# timeout may beat a NACK, and probes need not run every 100 µs.
CFG = HostConfig(rto=2_000_000, reorder_window=1_000_000, probe_interval=50_000)


class Fabric(Bmv2Fabric):
    """The BMv2 fabric of the scenario runner (every switch and both NICs as
    simple_switch_grpc, tables from our controller, cables as a relay); each
    exchange creates one QP from NIC A to NIC B on the NICs and destroys it after."""

    def __init__(self) -> None:
        self.profiles: dict[int, EvProfile] = {}
        super().__init__(TOPO, [A_NIC, B_NIC])

    def exchange(self, data: bytes, timeout_s: float = 30.0) -> tuple[list[bytes | None], Endpoint, Endpoint]:
        """Send `data` from NIC A's endpoint to NIC B's; return what B got.
        Each exchange creates its QPs anew, from PSN 0 (the NICs' receivers start afresh)."""
        self.profiles = {
            A_NIC: EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8),
            B_NIC: EvProfile.spread(planes=TOPO.planes, spines=TOPO.t1_per_plane, slots=8, salt=1),
        }
        app = Recorder()
        clock = RealClock(self.poll)
        eps = {A_NIC: Endpoint(clock, addr(A_NIC), self.nics[A_NIC], CFG),
               B_NIC: Endpoint(clock, addr(B_NIC), self.nics[B_NIC], CFG, app)}
        eps[A_NIC].connect(A_QPN, B_QPN, addr(B_NIC), self.profiles[A_NIC])
        eps[B_NIC].connect(B_QPN, A_QPN, addr(A_NIC), self.profiles[B_NIC])
        try:
            eps[A_NIC].send_message(A_QPN, data)
            clock.run(until=timeout_s * 1e6, stop=lambda: bool(app.data) and eps[A_NIC].idle())
        finally:
            eps[A_NIC].disconnect(A_QPN)
            eps[B_NIC].disconnect(B_QPN)
        return app.data, eps[A_NIC], eps[B_NIC]

    def counter(self, device: str, name: str, index: int) -> int:
        return self.sessions[device].counter(name, index)[0]


@pytest.fixture(scope="module")
def fabric():
    reason = bmv2_skip_reason("switch") or bmv2_skip_reason("nic")
    if reason:
        pytest.skip(f"BMv2: {reason}")
    f = Fabric()  # started; it stops what it started if a step fails
    try:
        yield f
    finally:
        f.stop()


def _t1_tx(fabric: Fabric) -> dict[str, int]:
    return {A.t1_name(p, j): sum(fabric.counter(A.t1_name(p, j), "port_tx", r) for r in range(TOPO.t0_per_plane))
            for p in range(TOPO.planes) for j in range(TOPO.t1_per_plane)}


def test_message_crosses_every_plane_and_spine(fabric):
    before = _t1_tx(fabric)
    data = bytes(i % 253 for i in range(32 * 1024))
    got, sender, _ = fabric.exchange(data)
    assert got == [data]
    assert sender.stats.retransmits == 0 and sender.stats.nacks == 0
    after = _t1_tx(fabric)
    assert all(after[t] > before[t] for t in after), f"a spine carried nothing: {before} -> {after}"


def test_trimming_spine_turns_into_nacks_and_the_message_completes(fabric):
    hot = A.t1_name(0, 0)
    port = TOPO.t1_downlink_port(B_NIC // TOPO.hosts_per_t0)
    fabric.devices[hot].runtime().register_write("port_qdepth", port, TOPO.congestion.trim_threshold)
    trimmed_before = read_total(fabric.sessions[hot], "trimmed")
    try:
        data = bytes(i % 241 for i in range(32 * 1024))
        got, sender, receiver = fabric.exchange(data)
    finally:
        fabric.devices[hot].runtime().register_write("port_qdepth", port, 0)
    assert got == [data]
    trimmed = read_total(fabric.sessions[hot], "trimmed") - trimmed_before
    # No loss anywhere: every stub the spine cut reaches the receiver, which
    # tells its host and NACKs once; each NACK resends exactly that PSN.
    assert trimmed > 0
    assert receiver.stats.trim_notices == trimmed and sender.stats.nacks == trimmed
    assert sender.stats.retx_nack == trimmed
    skipped = [ev for ev, event, st in fabric.profiles[A_NIC].log if st is EvState.SKIP]
    assert skipped and all(ev & 7 == 0 and (ev >> 3) & 0xFF == 0 for ev in skipped)
