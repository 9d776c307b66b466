"""One direction of a link: an egress port's two queues and the wire.

htsim-style, one event per packet per hop: when a packet is queued its
departure time is computed at once (the queue is FIFO at a fixed rate), so
only its arrival at the far end is scheduled. The data queue's depth at any
instant is the number of its packets not yet departed, which is what the
switch model's ECN and trimming decisions read (DESIGN.md section 7).

The high-priority queue (control, trimmed stubs) is served first: its
packet leaves as soon as the one on the wire is done, and the data queue's
schedule is pushed back by its serialization time. Data packets already
scheduled keep their times, so the link can run briefly over its rate by
the high-priority bytes it carries; the bytes are all accounted for.

Marking and trimming are the switch's (switch_model), which reads the data
queue's depth through `LiveDepth`; a link only queues, carries and drops.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Final

from mrc_wire.ids import DeviceId
from sim_core.sim import Event, Sim
from switch_model.pipeline import DepthSource, PortDepth


class _NoCable(PortDepth):
    """A switch port with no cable: its queue is always empty."""

    __slots__ = ()

    def depth(self) -> int:
        return 0


_NO_CABLE: Final = _NoCable()
_NEVER: Final = float("inf")


class Delivery(Event):
    """A frame on a wire, due at the far end: its time is set when it is
    queued (its departure is known then), and it fires when its last bit
    arrives. An event of its own class, not a function call: no argument
    tuple and no bound method per hop, and the end of a run counts what is
    still on the wires (fabric_sim.tally)."""

    __slots__ = ("egress", "epoch", "frame", "pad", "high", "lane")

    def __init__(self, egress: Egress, epoch: int, frame: bytes, pad: int, high: bool):
        self.egress, self.epoch, self.frame, self.pad, self.high = egress, epoch, frame, pad, high
        self.lane: Lane | None = None  # the wire's FIFO it waits in; None: in the heap on its own

    def fire(self) -> None:
        if self.lane is not None:
            self.lane.next()
        self.egress.arrive(self)


class Lane:
    """The frames on one queue's wire, in order of arrival: only the first
    is in the sim's heap, and when it fires the next one enters. A wire
    delivers in the order it sends, so at 1,024 NICs the heap holds one
    entry per busy wire instead of every frame in flight (about 140,000:
    its depth and its cache misses were a tenth of a run). Each frame
    draws its sequence number when it is sent (`Sim.ticket`), so the run's
    order is exactly that of one heap entry per frame. A frame due before
    the last one waiting (the wire's added delay fell) has its own heap
    entry instead."""

    __slots__ = ("sim", "waiting", "head", "last")

    def __init__(self, sim: Sim):
        self.sim = sim
        # From `head` on, the frames on the wire, the first in the heap;
        # before it, None: an arrived frame is let go at once.
        self.waiting: list[Delivery | None] = []
        self.head = 0
        self.last = 0.0  # when the last frame waiting arrives

    def put(self, d: Delivery, when: float) -> None:
        sim, w = self.sim, self.waiting
        sim.ticket(d, when)
        if self.head == len(w):  # the wire is empty
            if w:
                w.clear()
                self.head = 0
            d.lane = self
            w.append(d)
            self.last = d.time
            sim.push(d)
        elif d.time >= self.last:
            d.lane = self
            w.append(d)
            self.last = d.time
        else:
            sim.push(d)

    def next(self) -> None:
        """The first frame arrives: the next one enters the heap."""
        w, h = self.waiting, self.head
        w[h] = None
        h += 1
        if h < len(w):
            d = w[h]
            assert d is not None
            self.sim.push(d)
            if h >= 64 and 2 * h >= len(w):  # cut off the arrived in blocks, not one by one
                del w[:h]
                h = 0
        self.head = h

    def behind(self) -> int:
        """Frames waiting behind the one in the heap."""
        n = len(self.waiting) - self.head
        return n - 1 if n > 0 else 0


class Egress(PortDepth):
    __slots__ = ("name", "sim", "gbps", "prop", "extra", "up", "epoch", "loss", "rng", "deliver", "peer_port",
                 "data_cap", "high_cap", "free_at", "hi_free_at", "departures", "head", "hi_departures",
                 "tx_pkts", "tx_bytes", "drops", "owner", "port", "plane", "kind", "us_per_byte", "head_at", "lane",
                 "hi_lane")

    def __init__(self, sim: Sim, name: str, gbps: float, prop_us: float, deliver: Callable[[int, bytes, int], None],
                 peer_port: int, *, data_cap: int, high_cap: int, rng: Any, owner: DeviceId | None = None,
                 port: int = 0, plane: int = 0, kind: str = ""):
        self.name = name
        self.sim = sim
        self.gbps = gbps
        self.us_per_byte = 8.0 / (gbps * 1e3)
        self.prop = prop_us
        self.extra = 0.0  # added latency (a fault)
        self.up = True
        self.epoch = 0  # bumped when the link goes down: what was on it is lost
        self.loss = 0.0  # random loss probability (a fault)
        self.rng = rng
        self.deliver = deliver  # the far end: deliver(in_port, frame, pad)
        self.peer_port = peer_port
        self.data_cap = data_cap  # packets
        self.high_cap = high_cap
        self.free_at = 0.0  # when the wire is free of everything scheduled
        self.hi_free_at = 0.0
        # Data packets' departure times, in order; those before `head` have
        # departed (a list and an index: a compiled read is a native float
        # compare; the departed are cut off in blocks, not one by one).
        self.departures: list[float] = []
        self.head = 0
        # departures[head] (infinity if none) as a native float: depth()
        # reads the list only when the head has left (its floats are boxed,
        # and a read of one is a cache miss on a large fabric)
        self.head_at = _NEVER
        self.hi_departures: deque[float] = deque()
        self.tx_pkts = 0
        self.tx_bytes = 0
        self.drops: dict[str, int] = {}
        self.owner, self.port, self.plane, self.kind = owner, port, plane, kind
        self.lane, self.hi_lane = Lane(sim), Lane(sim)  # the frames on the wire, per queue

    def set_rate(self, gbps: float) -> None:
        self.gbps = gbps
        self.us_per_byte = 8.0 / (gbps * 1e3)

    def depth(self) -> int:
        """Packets in the data queue now (the one on the wire included)."""
        d, now, h = self.departures, self.sim.now, self.head
        n = len(d)
        if self.head_at > now:
            return n - h
        while h < n and d[h] <= now:
            h += 1
        if h >= 256 and 2 * h >= n:
            del d[:h]
            n -= h
            h = 0
        self.head = h
        self.head_at = d[h] if h < n else _NEVER
        return n - h

    def head_departure(self) -> float | None:
        """The departure time at the head of the data queue as last looked
        at (by depth() or send()): it may have passed since. None if empty."""
        return self.departures[self.head] if self.head < len(self.departures) else None

    def count_drop(self, reason: str) -> None:
        """Count a frame lost here (queue full, link down, loss on the wire)
        or dropped by the sender on its way onto this link (a fault)."""
        self.drops[reason] = self.drops.get(reason, 0) + 1

    def send(self, frame: bytes, high: bool, pad: int = 0) -> None:
        """Queue `frame` (and `pad` zero bytes after it, on the wire but not
        carried: mrc_wire.packet); schedule its arrival, or drop it."""
        if not self.up:
            self.count_drop("link_down")
            return
        now = self.sim.now
        size = len(frame) + pad
        ser = size * self.us_per_byte
        free = self.free_at if self.free_at > now else now
        if high:
            d = self.hi_departures
            while d and d[0] <= now:
                d.popleft()
            if len(d) >= self.high_cap:
                self.count_drop("queue_full")
                return
            depart = (self.hi_free_at if self.hi_free_at > now else now) + ser
            self.hi_free_at = depart
            self.free_at = free + ser
            d.append(depart)
        else:
            if self.depth() >= self.data_cap:
                self.count_drop("queue_full")
                return
            depart = self.free_at = free + ser
            if self.head == len(self.departures):
                self.head_at = depart
            self.departures.append(depart)
        self.tx_pkts += 1
        self.tx_bytes += size
        if self.loss and self.rng.random() < self.loss:
            self.count_drop("random_loss")  # lost on the wire, after using it
            return
        self.put_on_wire(frame, pad, high, depart + self.prop + self.extra)

    def put_on_wire(self, frame: bytes, pad: int, high: bool, arrival: float) -> None:
        """The frame arrives at the far end at `arrival` (fires `arrive`)."""
        (self.hi_lane if high else self.lane).put(Delivery(self, self.epoch, frame, pad, high), arrival)

    def on_wire(self) -> int:
        """Frames on the wire waiting behind the first of their queue (the
        first ones are pending events: fabric_sim.tally counts those)."""
        return self.lane.behind() + self.hi_lane.behind()

    def arrive(self, d: Delivery) -> None:
        if d.epoch != self.epoch:
            self.count_drop("link_down")  # the link went down while it was on it
            return
        self.deliver(self.peer_port, d.frame, d.pad)

    def set_up(self, up: bool) -> None:
        if self.up and not up:
            self.epoch += 1
            self.departures.clear()
            self.head = 0
            self.head_at = _NEVER
            self.hi_departures.clear()
            self.free_at = self.hi_free_at = self.sim.now
        self.up = up


class LiveDepth(DepthSource):
    """A switch model's depth source: the data-queue depth of each of its
    egress ports, read from the live queues (0 for a port with no cable)."""

    __slots__ = ("egress",)

    def __init__(self, egress: dict[int, Egress]):
        self.egress = egress

    def port(self, port: int) -> PortDepth:
        e = self.egress.get(port)
        return _NO_CABLE if e is None else e
