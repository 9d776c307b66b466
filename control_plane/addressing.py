"""The F3216 address plan of DESIGN.md section 3, as plain functions.

uSID = tier:2 | plane:3 | index:11. A node's locator is block:uSID::/48.
NIC addresses: nic_prefix::row:downlink (row in bits 31..16, downlink in
bits 15..0 of the /128), so the address alone gives the destination row.
MACs are locally administered and derived from the node and port.
"""

from __future__ import annotations

import ipaddress

from control_plane.topology import Topology

TIER_T0 = 1
TIER_T1 = 2
TIER_DL = 3


def usid(tier: int, plane: int, index: int) -> int:
    if not 1 <= tier <= 3:
        raise ValueError(f"tier {tier} is not 1..3")
    if not 0 <= plane < 8:
        raise ValueError(f"plane {plane} does not fit 3 bits")
    if not 0 <= index < 2**11:
        raise ValueError(f"index {index} does not fit 11 bits")
    return (tier << 14) | (plane << 11) | index


def split_usid(value: int) -> tuple[int, int, int]:
    return value >> 14, (value >> 11) & 0x7, value & 0x7FF


def block_int(topo: Topology) -> int:
    return int(topo.usid_block.network_address) >> 96


def locator48(topo: Topology, sid: int) -> int:
    """The 48-bit value block:uSID, the key of the /48 tables."""
    return (block_int(topo) << 16) | sid


def carrier(topo: Topology, sids: list[int]) -> ipaddress.IPv6Address:
    """block followed by up to six uSIDs, zero-filled."""
    if not 1 <= len(sids) <= 6:
        raise ValueError(f"a carrier holds 1 to 6 uSIDs, got {len(sids)}")
    value = block_int(topo)
    for sid in sids:
        value = (value << 16) | sid
    value <<= 16 * (6 - len(sids))
    return ipaddress.IPv6Address(value)


def path_carrier(topo: Topology, plane: int, src_row: int, dst_row: int, downlink: int, spine: int) -> ipaddress.IPv6Address:
    """The carrier of DESIGN.md section 3 for one path."""
    if src_row == dst_row:
        sids = [usid(TIER_T0, plane, src_row), usid(TIER_DL, plane, downlink)]
    else:
        sids = [
            usid(TIER_T0, plane, src_row),
            usid(TIER_T1, plane, spine),
            usid(TIER_T0, plane, dst_row),
            usid(TIER_DL, plane, downlink),
        ]
    return carrier(topo, sids)


def nic_address(topo: Topology, nic: int) -> ipaddress.IPv6Address:
    row, k = divmod(nic, topo.hosts_per_t0)
    return ipaddress.IPv6Address(int(topo.nic_prefix.network_address) | (row << 16) | k)


def nic_of_address(topo: Topology, addr: ipaddress.IPv6Address) -> int:
    value = int(addr)
    row, k = (value >> 16) & 0xFFFF, value & 0xFFFF
    return row * topo.hosts_per_t0 + k


# Device names used in topology files, tables and logs.
def t0_name(plane: int, row: int) -> str:
    return f"t0-p{plane}-r{row}"


def t1_name(plane: int, spine: int) -> str:
    return f"t1-p{plane}-s{spine}"


def nic_name(nic: int) -> str:
    return f"nic-{nic}"


def device_names(topo: Topology) -> set[str]:
    names = {t0_name(p, r) for p in range(topo.planes) for r in range(topo.t0_per_plane)}
    names |= {t1_name(p, j) for p in range(topo.planes) for j in range(topo.t1_per_plane)}
    names |= {nic_name(n) for n in range(topo.nics)}
    return names


def switch_mac(sid: int, port: int) -> int:
    """02:00:<uSID>:<port>: unique per switch port."""
    return (0x0200 << 32) | (sid << 16) | port


def nic_mac(plane: int, nic: int) -> int:
    """02:01:<plane>:<nic 24 bits>: a NIC's port on one plane."""
    return (0x0201 << 32) | (plane << 24) | nic


def mac_str(value: int) -> str:
    return ":".join(f"{(value >> s) & 0xFF:02x}" for s in range(40, -8, -8))
