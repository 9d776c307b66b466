"""Reference model of the MRC fabric switch, written from DESIGN.md section 4.

It is the embedded default target where BMv2 is absent and a second oracle
for the P4 program. It holds the same table contents the controller plans
(mrc_wire.entries, planned by control_plane.switch_plan) and works on raw
frames. In the timed fabric (`fabric_sim`) `qdepth` is the live depth of
each egress port's data queue.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, NamedTuple

from mrc_wire import entries as S
from mrc_wire.constants import CLASS_NORMAL, CLASS_PRIORITY, CLASS_TRIMMABLE, ECN_CE, ETH_LEN, IPV6_LEN
from mrc_wire.constants import SWITCH_DROPS as DROP_REASONS, SWITCH_EVENTS as EVENTS  # noqa: F401 (re-exported)
from mrc_wire.usid import ARG_MASK, shift


_UNSPECIFIED = bytes(16)
_LOOPBACK = bytes(15) + b"\x01"


def unroutable(addr: bytes) -> bool:
    """In one of mrc_wire's UNROUTABLE_PREFIXES: unspecified, loopback,
    link-local (fe80::/10), multicast (ff00::/8). Byte tests, not prefix
    arithmetic: it runs twice per hop in the timed fabric (0.11 µs against
    0.26 µs); tests/test_p4_build.py holds it to the prefixes."""
    return addr[0] == 0xFF or (addr[0] == 0xFE and addr[1] & 0xC0 == 0x80) or addr in (_UNSPECIFIED, _LOOPBACK)


class Output(NamedTuple):  # a tuple: the timed fabric makes millions
    port: int
    frame: bytes
    high_priority: bool


class SwitchModel:
    """One switch: install plan entries, then `process` frames."""

    def __init__(self, name: str = "switch"):
        self.name = name
        self.my_locators: set[int] = set()
        self.routes: dict[int, int] = {}
        self.neighbours: dict[int, S.PortNeighbour] = {}
        self.dscp_class: dict[int, int] = {}
        self.congestion = S.CongestionConfig(64, 128, 256, 16, 18)
        self.qdepth: dict[int, int] = {}
        self.port_rx: Counter[int] = Counter()
        self.port_tx: Counter[int] = Counter()
        self.port_drop: Counter[int] = Counter()
        self.port_rx_bytes: Counter[int] = Counter()
        self.port_tx_bytes: Counter[int] = Counter()
        self.drops: Counter[str] = Counter()
        self.events: Counter[str] = Counter()
        self._eth: dict[int, bytes] = {}  # egress port -> rewritten Ethernet header

    def install(self, entries: Iterable[object]) -> None:
        for e in entries:
            if isinstance(e, S.MyUsid):
                self.my_locators.add(e.locator)
            elif isinstance(e, S.UsidRoute):
                self.routes[e.locator] = e.port
            elif isinstance(e, S.PortNeighbour):
                self.neighbours[e.port] = e
                self._eth.pop(e.port, None)
            elif isinstance(e, S.DscpClass):
                self.dscp_class[e.dscp] = e.cls
            elif isinstance(e, S.CongestionConfig):
                self.congestion = e
            else:
                raise TypeError(f"not a switch table entry: {e!r}")

    def uninstall(self, entries: Iterable[object]) -> None:
        """Delete entries by their key, as a P4Runtime delete would."""
        for e in entries:
            if isinstance(e, S.MyUsid):
                self.my_locators.discard(e.locator)
            elif isinstance(e, S.UsidRoute):
                self.routes.pop(e.locator, None)
            elif isinstance(e, S.PortNeighbour):
                self.neighbours.pop(e.port, None)
                self._eth.pop(e.port, None)
            elif isinstance(e, S.DscpClass):
                self.dscp_class.pop(e.dscp, None)
            else:
                raise TypeError(f"not a deletable switch table entry: {e!r}")

    def set_qdepth(self, port: int, depth: int) -> None:
        """The data-queue depth (packets) the next decision on `port` sees."""
        self.qdepth[port] = depth

    def _drop(self, in_port: int, reason: str) -> None:
        self.drops[reason] += 1
        self.port_drop[in_port] += 1

    def process(self, in_port: int, frame: bytes) -> Output | None:
        """One frame through the pipeline. Only the 54 bytes of Ethernet and
        IPv6 header are rebuilt; the payload is copied once, when appended."""
        self.port_rx[in_port] += 1
        self.port_rx_bytes[in_port] += len(frame)
        if len(frame) < ETH_LEN:
            self._drop(in_port, "malformed")
            return None
        if frame[12] != 0x86 or frame[13] != 0xDD:
            self._drop(in_port, "not_ipv6")
            return None
        if len(frame) < ETH_LEN + IPV6_LEN or frame[14] >> 4 != 6:
            self._drop(in_port, "malformed")
            return None
        if unroutable(frame[22:38]):
            self._drop(in_port, "bad_source")
            return None
        if unroutable(frame[38:54]):
            self._drop(in_port, "bad_destination")
            return None
        if ETH_LEN + IPV6_LEN + ((frame[18] << 8) | frame[19]) > len(frame):
            self._drop(in_port, "bad_length")
            return None

        da = int.from_bytes(frame[38:54], "big")
        if da >> 80 in self.my_locators:
            if da & ARG_MASK == 0:
                self._drop(in_port, "for_me")
                return None
            da = shift(da)

        port = self.routes.get(da >> 80)
        if port is None:
            self._drop(in_port, "no_route")
            return None
        hlim = frame[21]
        if hlim <= 1:
            self._drop(in_port, "hop_limit")
            return None
        nb = self.neighbours.get(port)
        if nb is None:
            self._drop(in_port, "no_neighbour")
            return None

        c = self.congestion
        depth = self.qdepth.get(port, 0)
        tc = ((frame[14] & 0x0F) << 4) | (frame[15] >> 4)
        dscp, ecn = tc >> 2, tc & 3
        if ecn != 0 and not nb.host_facing and depth >= c.ecn_threshold:
            ecn = ECN_CE
            self.events["ecn_marked"] += 1
        cls = self.dscp_class.get(dscp, CLASS_NORMAL)
        high = cls == CLASS_PRIORITY
        end = len(frame)
        plen = frame[18:20]
        if not high and depth >= c.trim_threshold:
            if cls != CLASS_TRIMMABLE:
                self._drop(in_port, "congestion")
                return None
            dscp = c.dscp_trimmed_lasthop if nb.host_facing else c.dscp_trimmed
            high = True
            self.events["trimmed"] += 1
            if end > c.trim_bytes:
                end = c.trim_bytes
                plen = (c.trim_bytes - ETH_LEN - IPV6_LEN).to_bytes(2, "big")
        tc = (dscp << 2) | ecn
        head = self._eth.get(port) or self._eth_of(nb)
        out = b"".join((head, bytes(((6 << 4) | (tc >> 4), ((tc & 0x0F) << 4) | (frame[15] & 0x0F))), frame[16:18],
                        plen, frame[20:21], bytes((hlim - 1,)), frame[22:38], da.to_bytes(16, "big"),
                        frame[ETH_LEN + IPV6_LEN:end]))
        self.port_tx[port] += 1
        self.port_tx_bytes[port] += len(out)
        return Output(port, out, high)

    def _eth_of(self, nb: S.PortNeighbour) -> bytes:
        head = nb.dst_mac.to_bytes(6, "big") + nb.src_mac.to_bytes(6, "big") + b"\x86\xdd"
        self._eth[nb.port] = head
        return head
