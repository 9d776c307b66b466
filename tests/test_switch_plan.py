"""The planned switch tables, checked by walking packets through reference
models of every switch of the demo fabric (a small path checker)."""

from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import addressing as A
from control_plane import switch_plan as S
from control_plane import topology
from mrc_wire.constants import CLASS_NORMAL, CLASS_TRIMMABLE
from mrc_wire.entries import EcnRamp, EcnStep
from switch_model.pipeline import SwitchModel

SHAPE = {"planes": 2, "t0_per_plane": 3, "t1_per_plane": 2, "hosts_per_t0": 2}
TOPO = topology.parse(SHAPE)


def test_t0_tables_are_o_ports():
    st = S.t0_state(TOPO, 1, 2)
    assert st.my_usid.locator == A.locator48(TOPO, A.usid(1, 1, 2))
    assert len(st.routes) == TOPO.t1_per_plane + TOPO.hosts_per_t0
    assert {n.port for n in st.neighbours if n.host_facing} == {0, 1}
    assert {r.port for r in st.routes} == set(range(TOPO.hosts_per_t0 + TOPO.t1_per_plane))


def test_t1_routes_every_t0_of_its_plane():
    st = S.t1_state(TOPO, 0, 1)
    assert {r.locator for r in st.routes} == {A.locator48(TOPO, A.usid(1, 0, r)) for r in range(3)}
    assert not any(n.host_facing for n in st.neighbours)


def test_switch_state_rejects_unknown_names():
    for bad in ("t0-p2-r0", "t1-p0-s2", "t0-p0-r01", "nic-0", "x"):
        try:
            S.switch_state(TOPO, bad)
        except ValueError as exc:
            assert bad in str(exc)
        else:
            raise AssertionError(f"{bad} accepted")


def _fabric():
    models = {}
    for name in S.switch_names(TOPO):
        m = SwitchModel(name)
        m.install(S.switch_state(TOPO, name).entries())
        models[name] = m
    return models


def _peer(name: str, port: int, plane: int):
    """(next device, its in port) behind `port` of switch `name`."""
    kind, index = name[:2], int(name.rsplit("-", 1)[1][1:])
    if kind == "t1":
        return A.t0_name(plane, port), TOPO.t0_uplink_port(index)
    if port < TOPO.hosts_per_t0:
        return A.nic_name(index * TOPO.hosts_per_t0 + port), 0
    return A.t1_name(plane, port - TOPO.hosts_per_t0), TOPO.t1_downlink_port(index)


def test_every_nic_pair_on_every_plane_through_every_spine_arrives():
    models = _fabric()
    H = TOPO.hosts_per_t0
    for plane in range(TOPO.planes):
        for src in range(TOPO.nics):
            for dst in range(TOPO.nics):
                for spine in range(TOPO.t1_per_plane):
                    a, b, k = src // H, dst // H, dst % H
                    da = str(A.path_carrier(TOPO, plane, a, b, k, spine))
                    frame = bytes(
                        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IPv6(src="fd00::1", dst=da, hlim=64)
                    )
                    dev, port, hops = A.t0_name(plane, a), src % H, 0
                    while dev.startswith("t"):
                        out = models[dev].process(port, frame)
                        assert out is not None, f"{src}->{dst} plane {plane} dropped at {dev}"
                        dev, port = _peer(dev, out.port, plane)
                        frame, hops = out.frame, hops + 1
                    assert dev == A.nic_name(dst)
                    assert hops == (1 if a == b else 3)
                    assert Ether(frame)[IPv6].hlim == 64 - hops


def test_neighbour_macs_are_the_peer_ports_own_macs():
    planner = S.Planner(TOPO)
    for plane in range(TOPO.planes):
        for r in range(TOPO.t0_per_plane):
            t0 = {n.port: n for n in planner.t0_state(plane, r).neighbours}
            for j in range(TOPO.t1_per_plane):
                t1 = {n.port: n for n in planner.t1_state(plane, j).neighbours}
                up, down = t0[TOPO.t0_uplink_port(j)], t1[TOPO.t1_downlink_port(r)]
                assert (up.dst_mac, down.dst_mac) == (down.src_mac, up.src_mac)
            for k in range(TOPO.hosts_per_t0):
                assert t0[k].dst_mac == A.nic_mac(plane, r * TOPO.hosts_per_t0 + k)


def test_marking_profiles_are_planned_per_class():
    """A topology's ecn_profiles become ecn_profile entries on every switch:
    a step keeps its threshold, a ramp's pmax is counted in 1/65536 (1% is 655.36 -> 655)."""
    topo = topology.parse({**SHAPE, "congestion": {"ecn_profiles": {
        "normal": {"kmin": 1, "kmax": 47, "pmax": 0.01}, "trimmable": {"threshold": 5}}}})
    for st in (S.t0_state(topo, 0, 0), S.t1_state(topo, 1, 1)):
        assert sorted(st.ecn_profiles, key=lambda e: e.cls) == [EcnRamp(CLASS_NORMAL, 1, 47, 655),
                                                                EcnStep(CLASS_TRIMMABLE, 5)]
        assert all(e in st.entries() for e in st.ecn_profiles)
    assert S.t0_state(TOPO, 0, 0).ecn_profiles == []  # none given: every class on congestion.ecn_threshold
