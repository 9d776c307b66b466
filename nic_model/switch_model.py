"""Reference model of the MRC fabric switch, written from DESIGN.md section 4.

It is the embedded default target where BMv2 is absent and a second oracle
for the P4 program. It holds the same table contents the controller plans
(mrc_wire.entries, planned by control_plane.switch_plan) and works on raw
frames. In the timed fabric (`fabric_sim`) `qdepth` is the live depth of
each egress port's data queue.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from mrc_wire import entries as S
from mrc_wire.constants import CLASS_NORMAL, CLASS_PRIORITY, CLASS_TRIMMABLE, ECN_CE, ETH_LEN, ETHERTYPE_IPV6, IPV6_LEN
from mrc_wire.constants import SWITCH_DROPS as DROP_REASONS, SWITCH_EVENTS as EVENTS  # noqa: F401 (re-exported)
from mrc_wire.usid import shift


@dataclass(frozen=True)
class Output:
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
        self.drops: Counter[str] = Counter()
        self.events: Counter[str] = Counter()

    def install(self, entries: Iterable[object]) -> None:
        for e in entries:
            if isinstance(e, S.MyUsid):
                self.my_locators.add(e.locator)
            elif isinstance(e, S.UsidRoute):
                self.routes[e.locator] = e.port
            elif isinstance(e, S.PortNeighbour):
                self.neighbours[e.port] = e
            elif isinstance(e, S.DscpClass):
                self.dscp_class[e.dscp] = e.cls
            elif isinstance(e, S.CongestionConfig):
                self.congestion = e
            else:
                raise TypeError(f"not a switch table entry: {e!r}")

    def set_qdepth(self, port: int, depth: int) -> None:
        """The data-queue depth (packets) the next decision on `port` sees."""
        self.qdepth[port] = depth

    def _drop(self, in_port: int, reason: str) -> None:
        self.drops[reason] += 1
        self.port_drop[in_port] += 1

    def process(self, in_port: int, frame: bytes) -> Output | None:
        self.port_rx[in_port] += 1
        if len(frame) < ETH_LEN:
            self._drop(in_port, "malformed")
            return None
        if int.from_bytes(frame[12:14], "big") != ETHERTYPE_IPV6:
            self._drop(in_port, "not_ipv6")
            return None
        ip = bytearray(frame[ETH_LEN:])
        if len(ip) < IPV6_LEN or ip[0] >> 4 != 6:
            self._drop(in_port, "malformed")
            return None

        da = int.from_bytes(ip[24:40], "big")
        if da >> 80 in self.my_locators:
            argument = da & ((1 << 80) - 1)
            if argument == 0:
                self._drop(in_port, "for_me")
                return None
            da = shift(da)
            ip[24:40] = da.to_bytes(16, "big")

        port = self.routes.get(da >> 80)
        if port is None:
            self._drop(in_port, "no_route")
            return None
        if ip[7] <= 1:
            self._drop(in_port, "hop_limit")
            return None
        ip[7] -= 1
        nb = self.neighbours.get(port)
        if nb is None:
            self._drop(in_port, "no_neighbour")
            return None
        eth = nb.dst_mac.to_bytes(6, "big") + nb.src_mac.to_bytes(6, "big") + frame[12:14]

        c = self.congestion
        depth = self.qdepth.get(port, 0)
        dscp, ecn = _tc(ip)
        if ecn != 0 and not nb.host_facing and depth >= c.ecn_threshold:
            ecn = ECN_CE
            self.events["ecn_marked"] += 1
        cls = self.dscp_class.get(dscp, CLASS_NORMAL)
        high = cls == CLASS_PRIORITY
        trimmed = False
        if not high and depth >= c.trim_threshold:
            if cls != CLASS_TRIMMABLE:
                self._drop(in_port, "congestion")
                return None
            dscp = c.dscp_trimmed_lasthop if nb.host_facing else c.dscp_trimmed
            high = trimmed = True
            self.events["trimmed"] += 1
        _set_tc(ip, dscp, ecn)
        if trimmed and ETH_LEN + len(ip) > c.trim_bytes:
            ip[4:6] = (c.trim_bytes - ETH_LEN - IPV6_LEN).to_bytes(2, "big")
            del ip[c.trim_bytes - ETH_LEN :]
        out = eth + bytes(ip)
        self.port_tx[port] += 1
        return Output(port, out, high)


def _tc(ip: bytearray) -> tuple[int, int]:
    tc = ((ip[0] & 0x0F) << 4) | (ip[1] >> 4)
    return tc >> 2, tc & 0x3


def _set_tc(ip: bytearray, dscp: int, ecn: int) -> None:
    tc = (dscp << 2) | ecn
    ip[0] = 0x60 | (tc >> 4)
    ip[1] = ((tc & 0x0F) << 4) | (ip[1] & 0x0F)
