"""uSID arithmetic of the F3216 plan (DESIGN.md section 3), on integers.

uSID = tier:2 | plane:3 | index:11; a carrier is block:32 followed by up to
six uSIDs. The planners, the NIC model's encapsulation and the switch
model's shift all use these, so the layout is written once.
"""

from __future__ import annotations

TIER_T0 = 1
TIER_T1 = 2
TIER_DL = 3
ARG_MASK = (1 << 80) - 1  # the address bits after block:uSID


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


def carrier_int(block: int, sids: list[int]) -> int:
    """block:32 followed by `sids` (1 to 6 uSIDs), zero-filled, as an int."""
    if not 1 <= len(sids) <= 6:
        raise ValueError(f"a carrier holds 1 to 6 uSIDs, got {len(sids)}")
    value = block
    for sid in sids:
        value = (value << 16) | sid
    return value << 16 * (6 - len(sids))


def spine_sid(plane: int, spine: int) -> int:
    """The T1 uSID of `spine` on `plane`: a cross-row path's second uSID."""
    return (TIER_T1 << 14) | (plane << 11) | spine


# Where a cross-row carrier's spine uSID sits: bytes 6 and 7, after the
# block (4 bytes) and the source row's T0 uSID (2 bytes).
SPINE_AT = 6


def path_sids(plane: int, src_row: int, dst_row: int, downlink: int, spine: int) -> list[int]:
    """The uSIDs of one path (DESIGN.md section 3): via a spine unless the
    destination is in the source's row."""
    t0 = (TIER_T0 << 14) | (plane << 11)
    dl = (TIER_DL << 14) | (plane << 11) | downlink
    if src_row == dst_row:
        return [t0 | src_row, dl]
    return [t0 | src_row, spine_sid(plane, spine), t0 | dst_row, dl]


def shift(da: int) -> int:
    """RFC 9800 NEXT-C-SID: drop the active uSID (bits 48..63 of the
    address), move the rest up by 16 bits, zero-fill."""
    return ((da >> 96) << 96) | ((da & ARG_MASK) << 16) & ((1 << 96) - 1)
