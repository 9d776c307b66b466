"""The NIC's parser (p4src/nic/parser.p4) and its one drop action: what
each port's frames must be before a stage looks at them.

From the host: Ethernet / IPv6 (inner) / UDP / BTH / the MRC headers of
its opcode. From the fabric: Ethernet / IPv6 (outer, next header 41) /
the same. A header cut short by the end of the packet is the P4 parser's
PacketTooShort: counted as malformed. Every stage drops through `Drops`:
one counter by reason (NIC_DROPS), as the P4's nic_drops counter.
"""

from __future__ import annotations

from collections import Counter
from typing import final

from mrc_wire import packet as W
from mrc_wire.constants import ETH_LEN, EXT_LEN, IPPROTO_IPV6, IPV6_LEN
from mrc_wire.frame import Frame, not_ipv6_frame, parse_frame


@final
class Drops:
    """The NIC's drop counter, by reason: the one drop action every stage takes."""

    __slots__ = ("by_reason",)

    def __init__(self) -> None:
        self.by_reason: Counter[str] = Counter()

    def drop(self, reason: str) -> None:
        self.by_reason[reason] += 1


def from_host(frame: bytes, drops: Drops) -> bytes | None:
    """The host's packet behind the host port's Ethernet header (which
    carries nothing the pipeline reads but its type), or None (dropped)."""
    if len(frame) < ETH_LEN:
        drops.drop("malformed")
        return None
    if frame[12:14] != b"\x86\xdd":
        drops.drop("not_mrc")
        return None
    return frame[ETH_LEN:]


def host_packet(raw: bytes, pad: int, drops: Drops) -> W.Mrc | None:
    """A packet from the host (its IPv6 header on), parsed, or None (dropped)."""
    if len(raw) < IPV6_LEN or raw[0] >> 4 != 6 or W.cut_short(raw):
        drops.drop("malformed")
        return None
    m = W.parse(raw, pad)
    if m is None:
        drops.drop("not_mrc")
    return m


def from_fabric(frame: bytes, pad: int, drops: Drops) -> Frame | None:
    """A frame from a plane port, as header fields, or None (dropped)."""
    why = not_ipv6_frame(frame)
    if why is not None:
        drops.drop("not_encap" if why == "not_ipv6" else why)
        return None
    return parse_frame(frame, pad)


def inner_packet(f: Frame, drops: Drops) -> W.Mrc | None:
    """The packet inside an encapsulated frame, parsed, or None (dropped):
    not IPv6-in-IPv6, cut short, or not UDP 4791 / BTH / an MRC opcode."""
    if f.nh != IPPROTO_IPV6:
        drops.drop("not_encap")
        return None
    inner = f.inner
    if len(inner) < IPV6_LEN or inner[0] >> 4 != 6 or W.cut_short(inner):
        drops.drop("malformed")
        return None
    m = W.parse(inner, f.pad)
    if m is None or m.opcode not in EXT_LEN:
        drops.drop("bad_inner")
        return None
    return m
