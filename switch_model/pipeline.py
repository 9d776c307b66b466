"""Reference model of the MRC fabric switch, written from DESIGN.md section 4.

It is the embedded default target where BMv2 is absent and a second oracle
for the P4 program. It holds the same table contents the controller plans
(mrc_wire.entries, planned by control_plane.switch_plan). It takes frames
as bytes (`process`: the PTF model target, the fuzz tests) or as header
fields (`forward`, mrc_wire.frame: the timed fabric); bytes are parsed
into fields and the same stages run on both.

The stages follow p4src/switch/: sanity (sanity.p4), the uSID shift
(usid.p4), routing and the neighbour rewrite (routing.p4, forward.p4), then
congestion (congestion.p4: ECN and trimming from the egress queue's depth).
Sanity and the shift are byte tests and moves on the packet's addresses.
Routing and the rewrite depend only on the locator the shift picks (block
and next uSID, usid.p4's meta.locator) and the tables, so their outcome is
cached per locator (`Route`), as a megaflow cache would: the first packet
to a locator runs them, later ones replay the result. A cache per
address, as before, held one entry per path through the switch: 255,000
at 1,024 NICs, where a switch has a few dozen locators. `cache=False`
runs every stage for every packet (the fuzz tests hold the two equal).
The depth source is given at construction: the timed fabric's live
queues, or a settable table (`set_qdepth`) for tests and the PTF model
target. A class with a WRED marking profile (ecn_profile's ecn_ramp)
draws a 16-bit number per packet in its ramp from the model's own seeded
random source, as the P4 program draws one from the target's (same
arithmetic, DESIGN.md section 4).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from typing import Final, final

from mrc_wire import entries as S
from mrc_wire.constants import CLASS_NORMAL, CLASS_PRIORITY, CLASS_TRIMMABLE, ECN_CE, RAMP_BITS
from mrc_wire.frame import HDRS, Frame, not_ipv6_frame, parse_frame

_UNSPECIFIED: Final = bytes(16)
_LOOPBACK: Final = bytes(15) + b"\x01"
_NO_ARGUMENT: Final = bytes(10)  # the 80 bits after block:uSID, all zero: the packet is for this switch
_USID_FILL: Final = bytes(2)  # what the shift brings in at the end


def unroutable(addr: bytes) -> bool:
    """Whether the 16-byte address is in one of mrc_wire's
    UNROUTABLE_PREFIXES: unspecified, loopback, link-local (fe80::/10),
    multicast (ff00::/8). Byte tests, not prefix arithmetic (a fabric's
    addresses are settled by their first byte); tests/test_p4_build.py
    holds it to the prefixes."""
    b = addr[0]
    if b == 0xFF:
        return True
    if b == 0xFE:
        return addr[1] & 0xC0 == 0x80
    return b == 0 and addr in (_UNSPECIFIED, _LOOPBACK)


@final
class Output:
    """A frame out of the pipeline: `wire` on egress `port`, to its
    high-priority queue or not. A plain class, not a NamedTuple: the timed
    fabric makes millions, and compiled, a NamedTuple's constructor is a
    Python call (its generated __new__) where this one is native."""

    __slots__ = ("port", "wire", "high_priority")

    def __init__(self, port: int, wire: Frame, high_priority: bool):
        self.port, self.wire, self.high_priority = port, wire, high_priority

    @property
    def frame(self) -> bytes:
        """The frame as bytes (its `pad` zeros not carried)."""
        return self.wire.to_bytes()

    @property
    def pad(self) -> int:
        return self.wire.pad

    def __repr__(self) -> str:
        return f"Output(port={self.port}, frame={self.frame!r}, high_priority={self.high_priority}, pad={self.pad})"


class PortCounters:
    """One port's counts (the P4's port_rx, port_tx, port_drop and their
    bytes): plain fields, so a hop adds to them without a lookup."""

    __slots__ = ("rx", "rx_bytes", "tx", "tx_bytes", "drop")

    def __init__(self) -> None:
        self.rx = self.rx_bytes = self.tx = self.tx_bytes = self.drop = 0


class PortDepth:
    """One egress port's data-queue depth, in packets, read when a packet
    is decided (a class, not any callable: a compiled call is direct)."""

    __slots__ = ()

    def depth(self) -> int:
        raise NotImplementedError


def locator(dst: bytes) -> int:
    """The address's block and active uSID (its first 48 bits): my_usid's
    key, and routing's for a packet in transit. Byte by byte: compiled,
    native arithmetic on a 48-bit int, where the address would be a
    128-bit Python int."""
    return (dst[0] << 40) | (dst[1] << 32) | (dst[2] << 24) | (dst[3] << 16) | (dst[4] << 8) | dst[5]


@final
class Route:
    """What routing and the neighbour rewrite decided for one locator:
    no route (`port` -1), or the egress port (its counters and its queue's
    depth), the neighbour (None: none configured), its rewritten Ethernet
    header and whether it is a host (the last hop)."""

    __slots__ = ("port", "neighbour", "eth", "counters", "queue", "host_facing")

    def __init__(self, port: int, neighbour: S.PortNeighbour | None, eth: bytes, counters: PortCounters | None,
                 queue: PortDepth | None):
        self.port, self.neighbour, self.eth, self.counters, self.queue = port, neighbour, eth, counters, queue
        self.host_facing = neighbour is not None and neighbour.host_facing


_NO_ROUTE: Final = Route(-1, None, b"", None, None)


@final
class Thresholds:
    """The congestion stage's settings (S.CongestionConfig, the controller's
    entry) as native fields: read on every hop."""

    __slots__ = ("trim", "trim_bytes", "dscp_trimmed", "dscp_trimmed_lasthop")

    def __init__(self, c: S.CongestionConfig):
        self.trim, self.trim_bytes = c.trim_threshold, c.trim_bytes
        self.dscp_trimmed, self.dscp_trimmed_lasthop = c.dscp_trimmed, c.dscp_trimmed_lasthop


@final
class Marker:
    """One class's ECN marking (ecn_profile; congestion.p4): marked when the
    depth is above `kmax`, never at `kmin` or below, and in between when a
    16-bit draw r has r * (kmax - kmin) < pmax * (depth - kmin). A step
    from threshold T is kmin = kmax = T - 1: nothing lies between."""

    __slots__ = ("kmin", "kmax", "span", "pmax")

    def __init__(self, kmin: int, kmax: int, pmax: int):
        self.kmin, self.kmax, self.span, self.pmax = kmin, kmax, kmax - kmin, pmax

    @classmethod
    def step(cls, threshold: int) -> Marker:
        return cls(threshold - 1, threshold - 1, 0)

    @classmethod
    def of(cls, e: S.EcnProfile) -> Marker:
        return cls.step(e.threshold) if isinstance(e, S.EcnStep) else cls(e.kmin, e.kmax, e.pmax)


class DepthSource:
    """Where the congestion stage reads each egress port's depth: `port`
    gives the port's `PortDepth`, looked up once per decision."""

    __slots__ = ()

    def port(self, port: int) -> PortDepth:
        raise NotImplementedError


class _SetDepth(PortDepth):
    __slots__ = ("depths", "at")

    def __init__(self, depths: dict[int, int], at: int):
        self.depths, self.at = depths, at

    def depth(self) -> int:
        return self.depths.get(self.at, 0)


class QueueDepths(DepthSource):
    """A settable depth per port: the depth source where no queue is
    simulated (tests, the PTF model target)."""

    __slots__ = ("depths",)

    def __init__(self) -> None:
        self.depths: dict[int, int] = {}

    def port(self, port: int) -> PortDepth:
        return _SetDepth(self.depths, port)


class SwitchModel:
    """One switch: install plan entries, then `process` frames.

    `depth.port(port).depth()` gives the data-queue depth (packets) the congestion stage
    reads; `mark_last_hop` also marks ECN toward hosts, which the P4 switch
    never does (it trims there): the RoCE baseline's switches, whose DCQCN
    needs the last hop's marks."""

    def __init__(self, name: str = "switch", depth: DepthSource | None = None, *,
                 mark_last_hop: bool = False, cache: bool = True, rng: random.Random | None = None):
        """`rng`: the random source of WRED marking (default: seeded by the name)."""
        self.name = name
        self.rng = rng if rng is not None else random.Random(name)
        self.ecn_profiles: dict[int, S.EcnProfile] = {}  # class -> its marking profile (ecn_profile)
        self.my_locators: set[int] = set()
        self.routes: dict[int, int] = {}
        self.neighbours: dict[int, S.PortNeighbour] = {}
        self.dscp_class: dict[int, int] = {}
        # The same table by DSCP (6 bits), read on every hop: an index, not a hash probe.
        self._class_of = [CLASS_NORMAL] * 64
        self.congestion = S.CongestionConfig.default()
        self._thresholds = Thresholds(self.congestion)
        self._markers: list[Marker] = []  # by class (2 bits): a profile's, or the congestion_config step
        self._mark_by_class()
        self._static: QueueDepths | None = None
        if depth is None:
            depth = self._static = QueueDepths()
        self.depth: DepthSource = depth
        self.mark_last_hop = mark_last_hop
        self.cache = cache
        self.ports: dict[int, PortCounters] = {}
        # The same counters indexed by port number (None: never counted): a
        # hop's lookup is an index, not a hash probe into a table per switch.
        self._port_list: list[PortCounters | None] = []
        self.drops: Counter[str] = Counter()
        self.events: Counter[str] = Counter()
        self._routes: dict[int, Route] = {}  # locator (block:32, uSID:16) -> Route

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
                if 0 <= e.dscp < 64:  # another key matches no DSCP, in the dict as in the P4's exact table
                    self._class_of[e.dscp] = e.cls
            elif isinstance(e, (S.EcnStep, S.EcnRamp)):
                self.ecn_profiles[e.cls] = e
            elif isinstance(e, S.CongestionConfig):
                self.congestion = e
                self._thresholds = Thresholds(e)
            else:
                raise TypeError(f"not a switch table entry: {e!r}")
        self._routes.clear()  # decided from the tables: decide again
        self._mark_by_class()

    def _mark_by_class(self) -> None:
        step = Marker.step(self.congestion.ecn_threshold)
        self._markers = [Marker.of(p) if (p := self.ecn_profiles.get(c)) is not None else step for c in range(4)]

    def uninstall(self, entries: Iterable[object]) -> None:
        """Delete entries by their key, as a P4Runtime delete would."""
        for e in entries:
            if isinstance(e, S.MyUsid):
                self.my_locators.discard(e.locator)
            elif isinstance(e, S.UsidRoute):
                self.routes.pop(e.locator, None)
            elif isinstance(e, S.PortNeighbour):
                self.neighbours.pop(e.port, None)
            elif isinstance(e, S.DscpClass):
                self.dscp_class.pop(e.dscp, None)
                if 0 <= e.dscp < 64:
                    self._class_of[e.dscp] = CLASS_NORMAL
            elif isinstance(e, (S.EcnStep, S.EcnRamp)):
                self.ecn_profiles.pop(e.cls, None)
            else:
                raise TypeError(f"not a deletable switch table entry: {e!r}")
        self._routes.clear()
        self._mark_by_class()

    def set_qdepth(self, port: int, depth: int) -> None:
        """The data-queue depth (packets) the next decision on `port` sees
        (only where no depth source was given)."""
        if self._static is None:
            raise RuntimeError(f"{self.name}: queue depths come from the live queues here")
        self._static.depths[port] = depth

    def _drop(self, in_port: int, reason: str) -> None:
        self.drops[reason] += 1
        self.counters(in_port).drop += 1

    def counters(self, port: int) -> PortCounters:
        pl = self._port_list
        c = pl[port] if 0 <= port < len(pl) else None
        if c is None:
            c = self.ports[port] = PortCounters()
            if port >= 0:
                if port >= len(pl):
                    pl.extend([None] * (port + 1 - len(pl)))
                pl[port] = c
        return c

    # The P4's port counters by port (ports never counted are absent, as in a Counter).
    def _by_port(self, field: str) -> Counter[int]:
        return Counter({p: n for p, c in self.ports.items() if (n := getattr(c, field))})

    @property
    def port_rx(self) -> Counter[int]:
        return self._by_port("rx")

    @property
    def port_rx_bytes(self) -> Counter[int]:
        return self._by_port("rx_bytes")

    @property
    def port_tx(self) -> Counter[int]:
        return self._by_port("tx")

    @property
    def port_tx_bytes(self) -> Counter[int]:
        return self._by_port("tx_bytes")

    @property
    def port_drop(self) -> Counter[int]:
        return self._by_port("drop")

    # ---- routing and the neighbour rewrite (routing.p4, forward.p4) ---------
    def route(self, loc: int) -> Route:
        """The route of locator `loc` (block:32, uSID:16) and its neighbour."""
        port = self.routes.get(loc)
        if port is None:
            return _NO_ROUTE
        nb = self.neighbours.get(port)
        eth = b"" if nb is None else nb.dst_mac.to_bytes(6, "big") + nb.src_mac.to_bytes(6, "big") + b"\x86\xdd"
        return Route(port, nb, eth, self.counters(port), self.depth.port(port))

    @property
    def routes_cached(self) -> int:
        """Locators whose route is cached (the megaflow cache's size)."""
        return len(self._routes)

    def _route(self, loc: int) -> Route:
        if not self.cache:
            return self.route(loc)
        r = self._routes.get(loc)
        if r is None:
            r = self._routes[loc] = self.route(loc)
        return r

    # ---- one frame -----------------------------------------------------------
    def process(self, in_port: int, frame: bytes, pad: int = 0) -> Output | None:
        """One frame as bytes (`pad` zero bytes after it counted, not
        carried: mrc_wire.packet): the parser's checks (parser.p4), then
        `forward` on its header fields."""
        pc = self.counters(in_port)
        pc.rx += 1
        pc.rx_bytes += len(frame) + pad
        why = not_ipv6_frame(frame)
        if why is not None:
            self._drop(in_port, why)
            return None
        return self._stages(in_port, parse_frame(frame, pad))

    def forward(self, in_port: int, f: Frame) -> Output | None:
        """One frame as header fields (the timed fabric's): what `process`
        does with its bytes once parsed."""
        pc = self.counters(in_port)
        pc.rx += 1
        pc.rx_bytes += f.size
        return self._stages(in_port, f)

    def _stages(self, in_port: int, f: Frame) -> Output | None:
        if unroutable(f.src):
            self._drop(in_port, "bad_source")
            return None
        dst = f.dst
        if unroutable(dst):
            self._drop(in_port, "bad_destination")
            return None
        if f.plen > len(f.inner) + f.pad:
            self._drop(in_port, "bad_length")
            return None
        # usid.p4: our own uSID is dropped and the rest shifted up; routing
        # reads the block with the next uSID.
        loc = locator(dst)
        if loc in self.my_locators:
            if dst[6:] == _NO_ARGUMENT:
                self._drop(in_port, "for_me")
                return None
            loc = (loc >> 16 << 16) | (dst[6] << 8) | dst[7]
            dst = dst[:4] + dst[6:] + _USID_FILL
        r = self._route(loc)
        if r.port < 0:
            self._drop(in_port, "no_route")
            return None
        if f.hlim <= 1:
            self._drop(in_port, "hop_limit")
            return None
        if r.neighbour is None:
            self._drop(in_port, "no_neighbour")
            return None
        return self._congestion(in_port, f, r, dst)

    def _congestion(self, in_port: int, f: Frame, d: Route, dst: bytes) -> Output | None:
        """congestion.p4: ECN marking and trimming from the egress queue's
        depth, the priority queue for the priority class and trimmed stubs."""
        c = self._thresholds
        q = d.queue
        assert q is not None  # a route has its port's queue
        depth = q.depth()
        dscp, ecn = f.tc >> 2, f.tc & 3
        cls = self._class_of[dscp]
        m = self._markers[cls]
        if ecn != 0 and depth > m.kmin and (not d.host_facing or self.mark_last_hop) and (
                depth > m.kmax or self.rng.getrandbits(RAMP_BITS) * m.span < m.pmax * (depth - m.kmin)):
            ecn = ECN_CE
            self.events["ecn_marked"] += 1
        high = cls == CLASS_PRIORITY
        inner, pad, plen = f.inner, f.pad, f.plen
        if not high and depth >= c.trim:
            if cls != CLASS_TRIMMABLE:
                self._drop(in_port, "congestion")
                return None
            dscp = c.dscp_trimmed_lasthop if d.host_facing else c.dscp_trimmed
            high = True
            self.events["trimmed"] += 1
            keep = c.trim_bytes - HDRS  # the IPv6 payload a trimmed frame keeps
            if len(inner) + pad > keep:
                plen = keep
                if len(inner) > keep:
                    inner = inner[:keep]
                pad = keep - len(inner)
        pc = d.counters
        assert pc is not None  # a route has its port's counters
        pc.tx += 1
        pc.tx_bytes += HDRS + len(inner) + pad
        return Output(d.port, Frame(d.eth, (dscp << 2) | ecn, f.fl, plen, f.nh, f.hlim - 1, f.src, dst, inner, pad),
                      high)
