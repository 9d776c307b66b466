"""A frame inside the timed fabric as header fields, not bytes.

Every device of the fabric reads or writes the same few fields of a
frame's Ethernet and (outer) IPv6 header: the switch shifts the
destination's uSIDs, decrements the hop limit, marks ECN, rewrites the
DSCP and the Ethernet addresses, and trims; the NIC builds them around its
host's packet and reads them back. `Frame` holds those fields, the rest
of the frame as the bytes it was given (`inner`: for the NIC's
encapsulation, the inner IPv6 header on) and `pad`, the zero bytes after
them counted but not carried (mrc_wire.packet). A hop then changes fields
instead of rebuilding 54 bytes of header and copying the rest.

Bytes are made only where bytes are the interface (`to_bytes`: the PTF
model target, BMv2, captures, the fuzz tests) and read there
(`parse_frame`); tests/wire/test_frame.py holds the two to each other and
to the layout of DESIGN.md section 4 as scapy reads it.
"""

from __future__ import annotations

import struct
from typing import Final, final

from mrc_wire.constants import ETH_LEN, ETHERTYPE_IPV6, IPV6_LEN

HDRS: Final = ETH_LEN + IPV6_LEN  # Ethernet and the (outer) IPv6 header: where `inner` starts
_V6: Final = struct.Struct("!IHBB")  # version | traffic class | flow label, payload length, next header, hop limit
_ETH_V6: Final = ETHERTYPE_IPV6.to_bytes(2, "big")


@final
class Frame:
    """Ethernet / IPv6 / `inner`, then `pad` zero bytes.

    `eth` is the Ethernet header's 14 bytes as they are (destination,
    source, type: a device replaces them whole). The IPv6 header is its
    fields: traffic class `tc` (DSCP << 2 | ECN), flow label `fl`, payload
    length `plen`, next header `nh`, hop limit `hlim`, and the 16-byte
    addresses `src` and `dst`. A device makes a new Frame for what it
    sends; it never changes one it was handed (a frame is shared by the
    event that carries it)."""

    __slots__ = ("eth", "tc", "fl", "plen", "nh", "hlim", "src", "dst", "inner", "pad")

    def __init__(self, eth: bytes, tc: int, fl: int, plen: int, nh: int, hlim: int, src: bytes, dst: bytes,
                 inner: bytes, pad: int = 0):
        self.eth, self.tc, self.fl, self.plen, self.nh, self.hlim = eth, tc, fl, plen, nh, hlim
        self.src, self.dst, self.inner, self.pad = src, dst, inner, pad

    @property
    def size(self) -> int:
        """Bytes on the wire: the headers, `inner` and the zeros not carried."""
        return HDRS + len(self.inner) + self.pad

    @property
    def carried(self) -> int:
        """Bytes carried (the size less `pad`)."""
        return HDRS + len(self.inner)

    def to_bytes(self) -> bytes:
        """The frame as bytes, the zeros not carried left out (`pad` says how many)."""
        return b"".join((self.eth, _V6.pack((6 << 28) | (self.tc << 20) | self.fl, self.plen, self.nh, self.hlim),
                         self.src, self.dst, self.inner))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Frame) and self.pad == other.pad and self.to_bytes() == other.to_bytes()

    def __hash__(self) -> int:
        return hash((self.to_bytes(), self.pad))

    def __repr__(self) -> str:
        return f"Frame({self.to_bytes()!r}, pad={self.pad})"


def not_ipv6_frame(raw: bytes) -> str | None:
    """Why `raw` is not an Ethernet / IPv6 frame a Frame can hold, as the
    P4 parsers say it: too short for Ethernet or for the IPv6 header, or
    IPv6 version not 6 ("malformed"); another EtherType ("not_ipv6").
    None if it is one."""
    if len(raw) < ETH_LEN:
        return "malformed"
    if raw[12:14] != _ETH_V6:
        return "not_ipv6"
    if len(raw) < HDRS or raw[ETH_LEN] >> 4 != 6:
        return "malformed"
    return None


def parse_frame(raw: bytes, pad: int = 0) -> Frame:
    """The Frame of `raw` (then `pad` zeros not carried). Raises ValueError
    naming what is wrong where not_ipv6_frame would not pass it."""
    why = not_ipv6_frame(raw)
    if why is not None:
        raise ValueError(f"not an Ethernet / IPv6 frame ({why}): {raw[:HDRS].hex()}")
    vtf, plen, nh, hlim = _V6.unpack_from(raw, ETH_LEN)
    return Frame(raw[:ETH_LEN], (vtf >> 20) & 0xFF, vtf & 0xFFFFF, plen, nh, hlim, raw[22:38], raw[38:54], raw[HDRS:],
                 pad)
