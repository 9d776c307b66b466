"""Carrier and encapsulation (transmit steps 3 and 4 of DESIGN.md section
5, the carrier of section 3), stage for stage as p4src/nic/encap.p4,
shared by transmit and by the packets the NIC makes (NACKs, SACKs, probe
answers). The destination row's template says whether the path crosses a
spine; plane and spine come from the EV, the downlink from the
destination address (nic_prefix::row:downlink).

What depends only on the EV's plane and the destination (Ethernet, next
header, hop limit, source, port, and the carrier but its spine uSID) is
built once and replayed, as a megaflow cache would; the EV's spine uSID
is put in per packet. A change to dest_row, plane_port or nic_config
clears it.
"""

from __future__ import annotations

from typing import Final, final

from mrc_wire import entries as N
from mrc_wire.constants import IPPROTO_IPV6, IPV6_LEN
from mrc_wire.frame import Frame
from mrc_wire.usid import SPINE_AT, carrier_int, path_sids, spine_sid
from nic_model.outputs import Output, Settings
from nic_model.parser import Drops

# The spine uSIDs as the 2 bytes a carrier holds, by plane << 8 | spine
# (EV[2:0], EV[10:3]): made once, shared by every NIC.
_SPINE_SIDS: Final = [spine_sid(p, s).to_bytes(2, "big") for p in range(8) for s in range(256)]


@final
class _Outer:
    """The encapsulation's fields that depend only on the EV's plane and
    the destination, and the plane's port: built once, then reused. The
    carrier is whole for a destination in our row (no spine on its path);
    across rows it is `head`, the EV's spine uSID, `tail`, put together
    per packet. (Cached per spine too, as it was, a NIC kept 512 of these
    per destination at 32 spines and 8,192 NICs.)"""

    __slots__ = ("eth", "src", "carrier", "head", "tail", "port")

    def __init__(self, eth: bytes, src: bytes, carrier: bytes | None, head: bytes, tail: bytes, port: int):
        self.eth, self.src, self.carrier, self.head, self.tail, self.port = eth, src, carrier, head, tail, port


@final
class Encap:
    """dest_row and plane_port, and the outer headers built from them."""

    __slots__ = ("rows", "planes", "settings", "cache", "drops", "_outer")

    def __init__(self, settings: Settings, drops: Drops, cache: bool = True):
        self.rows: dict[int, N.DestRow] = {}
        self.planes: dict[int, N.PlanePort] = {}
        self.settings = settings
        self.cache = cache  # False: the outer headers built for every packet (the fuzz tests hold the two equal)
        self.drops = drops
        self._outer: dict[int, _Outer] = {}  # EV[2:0] << 32 | destination[31:0] -> headers

    def changed(self, settings: Settings | None = None) -> None:
        """A table the headers come from changed: rebuilt on use."""
        if settings is not None:
            self.settings = settings
        self._outer.clear()

    @property
    def cached(self) -> int:
        """(Plane, destination) pairs whose outer headers are cached."""
        return len(self._outer)

    def encap(self, inner: bytes, ev: int, dscp: int, ecn: int, pad: int = 0) -> Output | None:
        """Carrier to the inner destination over the EV's plane and spine;
        None (counted) without a row or plane."""
        # The destination's low 32 bits, byte by byte: compiled, native
        # arithmetic, where the whole 128-bit address would be a Python int.
        dst = (inner[36] << 24) | (inner[37] << 16) | (inner[38] << 8) | inner[39]
        key = (ev & 7) << 32 | dst  # an int: hashed and compared without a tuple
        outer = self._outer.get(key)
        if outer is None:
            outer = self._outer_for(dst, ev)
            if outer is None:
                return None
            if self.cache:
                self._outer[key] = outer
        carrier = outer.carrier
        if carrier is None:  # across rows: the EV's spine between
            carrier = outer.head + _SPINE_SIDS[(ev & 7) << 8 | (ev >> 3) & 0xFF] + outer.tail
        fl = ((inner[1] & 0xF) << 16) | (inner[2] << 8) | inner[3]
        plen = ((inner[4] << 8) | inner[5]) + IPV6_LEN
        return Output(outer.port, Frame(outer.eth, (dscp << 2) | ecn, fl, plen, IPPROTO_IPV6, 64, outer.src,
                                        carrier, inner, pad), self.settings.high(dscp))

    def _outer_for(self, dst: int, ev: int) -> _Outer | None:
        """dest_row, plane_port and the carrier template for destination
        (its low 32 bits) `dst` on `ev`; None (counted) without a row or plane."""
        row = self.rows.get(dst >> 16)
        if row is None:
            self.drops.drop("unknown_row")
            return None
        plane = self.planes.get(ev & 7)
        if plane is None:
            self.drops.drop("no_plane")
            return None
        p, k = ev & 7, dst & 0x7FF
        c = self.settings.entry
        # same_row is the template's own word (the P4 reads it from dest_row).
        dst_row = c.my_row if row.same_row else row.row
        # The carrier of spine 0, cut where a spine's uSID goes (path_sids
        # has one only across rows).
        carrier = carrier_int(c.block, path_sids(p, c.my_row, dst_row, k, 0)).to_bytes(16, "big")
        whole = carrier if dst_row == c.my_row else None
        eth = plane.dst_mac.to_bytes(6, "big") + plane.src_mac.to_bytes(6, "big") + b"\x86\xdd"
        return _Outer(eth, plane.src_addr.to_bytes(16, "big"), whole, carrier[:SPINE_AT], carrier[SPINE_AT + 2:],
                      plane.port)
