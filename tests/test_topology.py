"""Topology validation: every error names the field path and the reason."""

import pytest

from control_plane import topology
from control_plane.topology import TopologyError

BASE = {"planes": 2, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 2}


def err(data) -> TopologyError:
    with pytest.raises(TopologyError) as info:
        topology.parse(data)
    return info.value


def test_demo_file_loads_with_defaults_and_devices():
    topo = topology.load(topology.Path(__file__).parent.parent / "bmv2_configs/topologies/demo.yaml")
    assert (topo.planes, topo.nics, topo.switches) == (2, 4, 8)
    assert topo.dscp["trimmed_lasthop"] == 18
    assert topo.devices["t1-p1-s1"].grpc_addr == "127.0.0.1:50008"


def test_missing_key_named():
    e = err({k: v for k, v in BASE.items() if k != "hosts_per_t0"})
    assert (e.path, e.reason) == ("hosts_per_t0", "missing key")


def test_plane_count_over_8():
    e = err({**BASE, "planes": 9})
    assert e.path == "planes" and "1..8" in e.reason


def test_index_must_fit_11_bits():
    assert err({**BASE, "t1_per_plane": 2049}).path == "t1_per_plane"


def test_t0_radix_over_bmv2_ports():
    assert "ports" in err({**BASE, "hosts_per_t0": 300, "t1_per_plane": 256}).reason


def test_unknown_key_and_wrong_type():
    assert err({**BASE, "spines": 3}).path == "spines"
    assert "integer" in err({**BASE, "planes": "two"}).reason


def test_block_must_be_a_32():
    e = err({**BASE, "usid_block": "fcbb::/48"})
    assert e.path == "usid_block" and "/32" in e.reason


def test_trim_bytes_below_header_stack():
    e = err({**BASE, "congestion": {"trim_bytes": 64}})
    assert e.path == "congestion.trim_bytes"


@pytest.mark.parametrize("profile, path, reason", [
    ({"kmin": 5, "kmax": 5, "pmax": 0.1}, "congestion.ecn_profiles.normal.kmax", "5 is not above kmin 5"),
    ({"kmin": 1, "kmax": 5, "pmax": 0}, "congestion.ecn_profiles.normal.pmax", "0 must be above 0"),
    ({"kmin": 1, "kmax": 5, "pmax": 1.5}, "congestion.ecn_profiles.normal.pmax", None),
    ({"kmin": 1, "kmax": 5}, "congestion.ecn_profiles.normal.pmax", "missing key"),
    ({"threshold": 3, "kmin": 1}, "congestion.ecn_profiles.normal.kmin", "unknown key"),
    (3, "congestion.ecn_profiles.normal", "expected {threshold} (a step) or {kmin, kmax, pmax} (WRED), got 3"),
])
def test_marking_profile_errors_name_the_field(profile, path, reason):
    e = err({**BASE, "congestion": {"ecn_profiles": {"normal": profile}}})
    assert e.path == path and (reason is None or e.reason.startswith(reason))


def test_marking_profile_of_an_unknown_class():
    e = err({**BASE, "congestion": {"ecn_profiles": {"bulk": {"threshold": 3}}}})
    assert e.path == "congestion.ecn_profiles.bulk[key]" and "'normal', 'trimmable' or 'priority'" in e.reason


def test_duplicate_dscp_value():
    e = err({**BASE, "dscp": {"trimmed": 8}})
    assert e.path in ("dscp.trimmed", "dscp.data_trimmable") and "already used" in e.reason


def test_device_errors_name_the_list_entry():
    dev = {"name": "t0-p0-r0", "grpc": "127.0.0.1:50001", "device_id": 1}
    assert err({**BASE, "devices": [{**dev, "name": "t9-x"}]}).path == "devices[0].name"
    assert err({**BASE, "devices": [dev, dev]}).reason == "'t0-p0-r0' is listed twice"
    two = [dev, {**dev, "name": "t0-p0-r1"}]
    e = err({**BASE, "devices": two})
    assert e.path == "devices[1].grpc" and "already used by t0-p0-r0" in e.reason
    assert err({**BASE, "devices": [{**dev, "grpc": "nohost"}]}).path == "devices[0].grpc"


def test_cables_and_peer_describe_the_same_wiring():
    t = topology.parse({"planes": 2, "t0_per_plane": 3, "t1_per_plane": 4, "hosts_per_t0": 5})
    cables = list(t.cables())
    assert len(cables) == 2 * 3 * 5 + 2 * 3 * 4
    ends = set()
    for a, pa, b, pb, plane in cables:
        assert t.peer(a, pa) == (b, pb) and t.peer(b, pb) == (a, pa)
        assert b.plane == plane and (a.kind == "nic" or a.plane == plane)
        ends |= {(a, pa), (b, pb)}
    assert len(ends) == 2 * len(cables), "a port is cabled twice"
    nic7 = t.device("nic-7")  # row 1, downlink 2
    assert t.peer(nic7, 1 + 1) == (t.device("t0-p1-r1"), 2)
    assert t.peer(t.device("t1-p0-s3"), 2) == (t.device("t0-p0-r2"), 5 + 3)


# T0 of BASE: ports 0, 1 (hosts) and 2, 3 (uplinks). Tofino-style device ports.
T0_MAP = {0: 128, 1: 136, 2: 144, 3: 152}


def test_port_map_translates_every_port_field_of_the_plan():
    from control_plane import switch_plan as S
    from mrc_wire.entries import PortNeighbour, UsidRoute

    dev = {"name": "t0-p0-r0", "grpc": "10.0.0.1:9559", "device_id": 1, "port_map": T0_MAP}
    topo = topology.parse({**BASE, "devices": [dev]})
    logical = S.switch_state(topo, "t0-p0-r0").entries()
    mapped = S.device_entries(topo, "t0-p0-r0")
    assert len(mapped) == len(logical)
    for a, b in zip(logical, mapped, strict=True):
        if isinstance(a, (UsidRoute, PortNeighbour)):
            assert b.port == T0_MAP[a.port] and replace_port(b, a.port) == a
        else:
            assert a == b
    assert S.device_entries(topo, "t0-p0-r1") == S.switch_state(topo, "t0-p0-r1").entries()  # no map


def replace_port(entry, port):
    from dataclasses import replace

    return replace(entry, port=port)


def test_port_map_errors_name_the_port():
    dev = {"name": "t0-p0-r0", "grpc": "10.0.0.1:9559", "device_id": 1}
    e = err({**BASE, "devices": [{**dev, "port_map": {**T0_MAP, 4: 160}}]})
    assert e.path == "devices[0].port_map" and "4 is not a port of t0-p0-r0 (ports 0..3)" in e.reason
    e = err({**BASE, "devices": [{**dev, "port_map": {**T0_MAP, 3: 128}}]})
    assert e.path == "devices[0].port_map.3" and "device port 128 is also port 0's" in e.reason
    e = err({**BASE, "devices": [{**dev, "port_map": {0: 128, 1: 136}}]})
    assert "logical ports [2, 3] are not mapped" in e.reason
    e = err({**BASE, "devices": [{**dev, "port_map": {**T0_MAP, 0: 512}}]})
    assert e.path == "devices[0].port_map.0" and "0..511" in e.reason
    e = err({**BASE, "devices": [{**dev, "name": "nic-0", "port_map": {0: 1}}]})
    assert "only a switch takes a port map" in e.reason


@pytest.mark.parametrize(("key", "prefix", "cls"), [
    ("usid_block", "fe80::/32", "link-local"), ("usid_block", "ff02::/32", "multicast"),
    ("usid_block", "::/32", "unspecified"), ("nic_prefix", "fe80::/64", "link-local")])
def test_prefixes_in_an_unroutable_class_are_refused(key, prefix, cls):
    e = err({**BASE, key: prefix})
    assert e.path == key and f"({cls})" in e.reason and "switches drop those addresses" in e.reason
