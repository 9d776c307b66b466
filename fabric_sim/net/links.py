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

Cut-through (DESIGN.md section 7): a switch that forwards cut-through
gives `send` the time the frame's first bit reached it (`head`) when its
ingress port runs at this egress's speed. If the egress was idle from then
on (nothing queued, nothing on the wire), the frame leaves as it arrives:
its last bit goes out as its last bit came in, so the hop adds no
serialization time. Otherwise it is stored and forwarded. The decision is
made when the last bit has arrived (the model's one event per hop): a frame
that began arriving earlier but ends later than another finds the wire
taken and waits, where a real switch would have started it first; the
wire is never used twice at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from mrc_wire.frame import Frame
from mrc_wire.ids import DeviceId
from sim_core.sim import Event, Sim
from switch_model.pipeline import DepthSource, PortDepth


class _NoCable(PortDepth):
    """A switch port with no cable: its queue is always empty."""

    __slots__ = ()

    def depth(self) -> int:
        return 0


_NO_CABLE: Final = _NoCable()
_EMPTY: Final = float("inf")


# Departed entries a queue's list keeps at most before it cuts them off
# (while they are at least half the list): each is a boxed float, and at
# 256 the links' lists held 3 million of them, 42,000 live, 30 µs into a
# 1,024-NIC run (about 96 MiB of its 430 MiB peak).
_CUT: Final = 16


def _pass_departed(d: list[float], h: int, now: float) -> int:
    """The index in `d` (departure times in order, those before `h`
    departed) of the first departure after `now`. The departed are cut off
    in blocks, not one by one: once there are _CUT of them and they are at
    least half the list (so each entry is moved at most once per cut)."""
    n = len(d)
    while h < n and d[h] <= now:
        h += 1
    if h >= _CUT and 2 * h >= n:
        del d[:h]
        h = 0
    return h


class Receiver:
    """A device's receive side, the one interface a link delivers to
    (htsim's): `rx(in_port, frame)` as the frame's last bit arrives (its
    header fields: mrc_wire.frame). A class, not any callable: compiled,
    the call is a direct one, with no argument tuple per hop."""

    __slots__ = ()

    def rx(self, in_port: int, frame: Frame) -> None:
        raise NotImplementedError


class CallReceiver(Receiver):
    """A receiver that calls fn(in_port, frame): for a link whose far end
    is not a device (tests, a sink)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[int, Frame], None]):
        self.fn = fn

    def rx(self, in_port: int, frame: Frame) -> None:
        self.fn(in_port, frame)


class Delivery(Event):
    """A frame on a wire, due at the far end: scheduled when it is queued
    (its departure is known then), fired when its last bit arrives. An
    event of its own class, not a function call: no argument tuple and no
    bound method per hop, and the end of a run counts what is still on
    the wires by class (fabric_sim.net.tally)."""

    __slots__ = ("egress", "epoch", "frame", "high")

    def __init__(self, egress: Egress, epoch: int, frame: Frame, high: bool):
        self.egress, self.epoch, self.frame, self.high = egress, epoch, frame, high

    def fire(self) -> None:
        self.egress.arrive(self)


class Egress(PortDepth):
    __slots__ = ("name", "sim", "gbps", "prop", "extra", "up", "epoch", "loss", "rng", "peer", "peer_port",
                 "data_cap", "high_cap", "free_at", "hi_free_at", "departures", "head", "head_at", "hi_departures",
                 "hi_head", "tx_pkts", "tx_bytes", "drops", "owner", "port", "plane", "kind", "us_per_byte")

    def __init__(self, sim: Sim, name: str, gbps: float, prop_us: float, peer: Receiver,
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
        self.peer = peer  # the far end: peer.rx(peer_port, frame)
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
        # While the queue holds packets, departures[head], unboxed: a depth
        # read before the head departs compares two floats, touching no list
        # item. While it is empty any value does (n - head is 0 either way),
        # so a link going down leaves it; the next send sets it.
        self.head_at = _EMPTY
        # The high-priority queue's departure times, the same way (a list
        # and an index, not a deque: an empty deque is 760 bytes, and there
        # are two links per cable).
        self.hi_departures: list[float] = []
        self.hi_head = 0
        self.tx_pkts = 0
        self.tx_bytes = 0
        self.drops: dict[str, int] = {}
        self.owner, self.port, self.plane, self.kind = owner, port, plane, kind

    def set_loss(self, rate: float) -> None:
        """Drop this share of what it sends (a fault)."""
        self.loss = rate

    def set_latency(self, us: float) -> None:
        """Add this much to the propagation delay (a fault)."""
        self.extra = us

    def set_rate(self, gbps: float) -> None:
        self.gbps = gbps
        self.us_per_byte = 8.0 / (gbps * 1e3)

    def depth(self) -> int:
        """Packets in the data queue now (the one on the wire included)."""
        d, now, h = self.departures, self.sim.now, self.head
        n = len(d)
        if now < self.head_at:
            return n - h
        h = self.head = _pass_departed(d, h, now)
        n = len(d)
        self.head_at = d[h] if h < n else _EMPTY
        return n - h

    def head_departure(self) -> float | None:
        """The departure time at the head of the data queue as last looked
        at (by depth() or send()): it may have passed since. None if empty."""
        return self.departures[self.head] if self.head < len(self.departures) else None

    def count_drop(self, reason: str) -> None:
        """Count a frame lost here (queue full, link down, loss on the wire)
        or dropped by the sender on its way onto this link (a fault)."""
        self.drops[reason] = self.drops.get(reason, 0) + 1

    def send(self, frame: Frame, high: bool, head: float = -1.0) -> None:
        """Queue `frame` (its size counts its `pad` zeros, on the wire but not
        carried: mrc_wire.packet); schedule its arrival, or drop it.
        `head` >= 0: the frame may be cut through (when its first bit
        arrived at a switch whose ingress runs at this speed)."""
        if not self.up:
            self.count_drop("link_down")
            return
        now = self.sim.now
        size = frame.size
        ser = size * self.us_per_byte
        # Cut through: idle since the first bit came in, so the bits leave as they arrive (free_at covers
        # both queues: the high queue's frames push it too).
        cut = 0.0 <= head and self.free_at <= head
        free = self.free_at if self.free_at > now else now
        if high:
            d = self.hi_departures
            h = self.hi_head = _pass_departed(d, self.hi_head, now)
            if len(d) - h >= self.high_cap:
                self.count_drop("queue_full")
                return
            depart = now if cut else (self.hi_free_at if self.hi_free_at > now else now) + ser
            self.hi_free_at = depart
            self.free_at = now if cut else free + ser
            d.append(depart)
        else:
            queued = self.depth()
            if queued >= self.data_cap:
                self.count_drop("queue_full")
                return
            depart = self.free_at = now if cut else free + ser
            if queued == 0:
                self.head_at = depart
            self.departures.append(depart)
        self.tx_pkts += 1
        self.tx_bytes += size
        if self.loss and self.rng.random() < self.loss:
            self.count_drop("random_loss")  # lost on the wire, after using it
            return
        self.sim.schedule(Delivery(self, self.epoch, frame, high), depart + self.prop + self.extra)

    def arrive(self, d: Delivery) -> None:
        if d.epoch != self.epoch:
            self.count_drop("link_down")  # the link went down while it was on it
            return
        self.peer.rx(self.peer_port, d.frame)

    def set_up(self, up: bool) -> None:
        if self.up and not up:
            self.epoch += 1
            self.departures.clear()
            self.head = 0
            self.hi_departures.clear()
            self.hi_head = 0
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
