"""Cut-through in the timed fabric (DESIGN.md section 7): a switch sends a
frame on as it arrives where its ingress and egress ports run at one speed
and the egress is idle, and stores and forwards it otherwise. One frame's
latency across 2 hops (NIC, T0, NIC) and 4 hops (NIC, T0, T1, T0, NIC),
both ways, against the closed forms: store-and-forward pays each link's
serialization, cut-through only the first link's and those of links whose
speed differs from the link before."""

from __future__ import annotations

import pytest

from control_plane import addressing as A
from control_plane import topology
from fabric_sim.net.fabric import Fabric
from fabric_sim.net.links import CallReceiver, Egress
from fabric_sim.net.pfc import PfcEgress
from fabric_sim.scenario import Links
from mrc_wire import ids
from mrc_wire.frame import HDRS, Frame
from mrc_wire.usid import path_sids
from sim_core.sim import Sim

SIZE = 4182  # bytes on the wire: a 4 KiB data frame with its headers
PROP = 0.5
SHAPE = {"planes": 1, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 2}


def _fabric(switching: str, nic_gbps: float, fabric_gbps: float, pfc: bool = False) -> Fabric:
    topo = topology.parse({**SHAPE, "switching": switching})
    links = Links(nic_gbps=nic_gbps, fabric_gbps=fabric_gbps, prop_us=PROP)
    # PfcEgress: the lossless fabric's queues (no pause here: their send and cut-through paths)
    return Fabric(topo, links, Sim(), egress=PfcEgress if pfc else Egress)


def _send(fab: Fabric, src: int, dst: int, at: float, arrived: list[float], spine: int = 0) -> None:
    """At `at`, NIC `src` puts one SIZE-byte frame to NIC `dst` on its plane-0 port;
    its arrival at `dst` is recorded."""
    t = fab.topo
    ra, (rb, k) = src // t.hosts_per_t0, divmod(dst, t.hosts_per_t0)
    dst_addr = A.carrier(t, path_sids(0, ra, rb, k, spine)).packed
    frame = Frame(bytes(14), 0, 0, SIZE - HDRS, 17, 64, A.nic_address(t, src).packed, dst_addr, b"",
                  SIZE - HDRS)
    row_t0 = ids.t0(0, rb)
    [into] = [e for e in fab.cables[frozenset((ids.nic(dst), row_t0))] if e.owner == row_t0]
    into.peer = CallReceiver(lambda port, f: arrived.append(fab.sim.now))
    [out] = [e for e in fab.cables[frozenset((ids.nic(src), ids.t0(0, ra)))] if e.owner == ids.nic(src)]
    fab.sim.call_at(at, out.send, frame, False)


def _latency(switching: str, src: int, dst: int, nic: float = 100.0, fab_gbps: float = 100.0,
             pfc: bool = False) -> float:
    fab = _fabric(switching, nic, fab_gbps, pfc)
    arrived: list[float] = []
    _send(fab, src, dst, 0.0, arrived)
    fab.sim.run()
    [t] = arrived
    return t


def ser(gbps: float) -> float:
    return SIZE * 8 / (gbps * 1e3)


# (src, dst): NIC 0 and 1 share a T0 (2 hops), NIC 0 and 2 do not (4 hops).
PAIRS = [(0, 1), (1, 0), (0, 2), (2, 0)]


@pytest.mark.parametrize("pfc", [False, True], ids=["lossy", "pfc"])
@pytest.mark.parametrize("src, dst", PAIRS)
def test_one_frame_across_2_and_4_hops_at_one_speed(src, dst, pfc):
    hops = 2 if src // 2 == dst // 2 else 4
    s = ser(100.0)
    assert _latency("store_and_forward", src, dst, pfc=pfc) == pytest.approx(hops * (s + PROP))
    assert _latency("cut_through", src, dst, pfc=pfc) == pytest.approx(s + hops * PROP)


@pytest.mark.parametrize("src, dst", PAIRS)
def test_a_speed_change_is_stored_and_forwarded(src, dst):
    """NIC links at 400 Gb/s, T0-T1 at 100: a T0 going up or down changes
    speed (stored and forwarded there); the T1 forwards between two 100 Gb/s
    ports (cut through); a T0 between two NIC ports cuts through."""
    nic, fab_gbps = 400.0, 100.0
    if src // 2 == dst // 2:
        want = ser(nic) + 2 * PROP
    else:
        want = ser(nic) + ser(fab_gbps) + ser(nic) + 4 * PROP
    assert _latency("cut_through", src, dst, nic, fab_gbps) == pytest.approx(want)
    hops = 2 if src // 2 == dst // 2 else 4
    sf = 2 * ser(nic) + (hops - 2) * ser(fab_gbps) + hops * PROP
    assert _latency("store_and_forward", src, dst, nic, fab_gbps) == pytest.approx(sf)


@pytest.mark.parametrize("pfc", [False, True], ids=["lossy", "pfc"])
def test_a_busy_egress_stores_and_forwards(pfc):
    """NICs 0 and 1 send to NIC 2 at the same instant: their frames meet at
    T0 0's uplink. The first is cut through; the second finds the uplink
    taken and waits for it, a serialization time later at every hop after."""
    fab = _fabric("cut_through", 100.0, 100.0, pfc)
    arrived: list[float] = []
    _send(fab, 0, 2, 0.0, arrived)
    _send(fab, 1, 2, 0.0, arrived)
    fab.sim.run()
    s = ser(100.0)
    assert sorted(arrived) == pytest.approx([s + 4 * PROP, 2 * s + 4 * PROP])
