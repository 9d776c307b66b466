"""The F3216 address plan of DESIGN.md section 3, as plain functions.

uSID = tier:2 | plane:3 | index:11. A node's locator is block:uSID::/48.
NIC addresses: nic_prefix::row:downlink (row in bits 31..16, downlink in
bits 15..0 of the /128), so the address alone gives the destination row.
MACs are locally administered and derived from the node and port.
"""

from __future__ import annotations

import ipaddress

from control_plane.topology import Topology
from mrc_wire import ids

# The tiers, `usid` and `split_usid` are re-exported: the planners and tests spell a uSID `A.usid(A.TIER_T0, ...)`.
from mrc_wire.usid import TIER_DL as TIER_DL
from mrc_wire.usid import TIER_T0 as TIER_T0
from mrc_wire.usid import TIER_T1 as TIER_T1
from mrc_wire.usid import carrier_int, path_sids
from mrc_wire.usid import split_usid as split_usid
from mrc_wire.usid import usid as usid


def block_int(topo: Topology) -> int:
    return int(topo.usid_block.network_address) >> 96


def locator48(topo: Topology, sid: int) -> int:
    """The 48-bit value block:uSID, the key of the /48 tables."""
    return (block_int(topo) << 16) | sid


def carrier(topo: Topology, sids: list[int]) -> ipaddress.IPv6Address:
    """block followed by up to six uSIDs, zero-filled."""
    return ipaddress.IPv6Address(carrier_int(block_int(topo), sids))


def path_carrier(
    topo: Topology, plane: int, src_row: int, dst_row: int, downlink: int, spine: int
) -> ipaddress.IPv6Address:
    """The carrier of DESIGN.md section 3 for one path."""
    return carrier(topo, path_sids(plane, src_row, dst_row, downlink, spine))


def nic_address(topo: Topology, nic: int) -> ipaddress.IPv6Address:
    row, k = divmod(nic, topo.hosts_per_t0)
    return ipaddress.IPv6Address(int(topo.nic_prefix.network_address) | (row << 16) | k)


def nic_of_address(topo: Topology, addr: ipaddress.IPv6Address) -> int:
    value = int(addr)
    row, k = (value >> 16) & 0xFFFF, value & 0xFFFF
    return row * topo.hosts_per_t0 + k


# Device names used in topology files, tables and logs.
def t0_name(plane: int, row: int) -> str:
    return str(ids.t0(plane, row))


def t1_name(plane: int, spine: int) -> str:
    return str(ids.t1(plane, spine))


def nic_name(nic: int) -> str:
    return str(ids.nic(nic))


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
