"""The F3216 address plan (DESIGN.md section 3)."""

import ipaddress

import pytest

from control_plane import addressing as A
from control_plane import topology

TOPO = topology.parse({"planes": 8, "t0_per_plane": 512, "t1_per_plane": 256, "hosts_per_t0": 256})


def test_usid_layout_tier_plane_index():
    assert A.usid(A.TIER_T0, 0, 0) == 0x4000
    assert A.usid(A.TIER_T1, 7, 255) == (2 << 14) | (7 << 11) | 255
    assert A.split_usid(A.usid(A.TIER_DL, 5, 2047)) == (3, 5, 2047)
    with pytest.raises(ValueError, match="11 bits"):
        A.usid(A.TIER_T0, 0, 2048)
    with pytest.raises(ValueError, match="3 bits"):
        A.usid(A.TIER_T0, 8, 0)


def test_cross_spine_carrier():
    c = A.path_carrier(TOPO, plane=3, src_row=1, dst_row=511, downlink=7, spine=200)
    assert c == ipaddress.IPv6Address(
        f"fcbb:bb00:{A.usid(1, 3, 1):x}:{A.usid(2, 3, 200):x}:{A.usid(1, 3, 511):x}:{A.usid(3, 3, 7):x}::"
    )


def test_same_row_carrier_skips_the_spine():
    c = A.path_carrier(TOPO, plane=0, src_row=4, dst_row=4, downlink=9, spine=100)
    assert c == ipaddress.IPv6Address(f"fcbb:bb00:{A.usid(1, 0, 4):x}:{A.usid(3, 0, 9):x}::")


def test_nic_address_encodes_row_and_downlink_both_ways():
    n = 300 * 256 + 17
    addr = A.nic_address(TOPO, n)
    assert addr == ipaddress.IPv6Address("fd00:0:0:1::12c:11")
    assert A.nic_of_address(TOPO, addr) == n


def test_macs_are_unique_and_locally_administered():
    macs = {A.switch_mac(A.usid(1, p, r), port) for p in range(2) for r in range(3) for port in range(4)}
    macs |= {A.nic_mac(p, n) for p in range(2) for n in range(10)}
    assert len(macs) == 2 * 3 * 4 + 2 * 10
    assert all((m >> 40) & 0x02 for m in macs)
    assert A.mac_str(A.nic_mac(1, 5)) == "02:01:01:00:00:05"
