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

`ce_at` (packets, 0: off) marks CE on ECT data that finds the data queue
that deep: the RoCE baseline's network marks ECN on the last hop too
(DCQCN needs it there), which the MRC switch, trimming there, never does.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Any, Callable

_push = heapq.heappush


class Egress:
    __slots__ = ("name", "sim", "gbps", "prop", "extra", "up", "epoch", "loss", "rng", "deliver", "peer_port",
                 "data_cap", "high_cap", "free_at", "hi_free_at", "departures", "hi_departures",
                 "tx_pkts", "tx_bytes", "drops", "owner", "port", "plane", "kind", "us_per_byte", "_q", "_seq",
                 "ce_at", "ce_marks")

    def __init__(self, sim: Any, name: str, gbps: float, prop_us: float, deliver: Callable[[int, bytes], None],
                 peer_port: int, *, data_cap: int, high_cap: int, rng: Any, owner: object = None, port: int = 0,
                 plane: int = 0, kind: str = ""):
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
        self.deliver = deliver  # the far end: deliver(in_port, frame)
        self.peer_port = peer_port
        self.data_cap = data_cap  # packets
        self.high_cap = high_cap
        self.free_at = 0.0  # when the wire is free of everything scheduled
        self.hi_free_at = 0.0
        self.departures: deque[float] = deque()  # data packets not yet departed
        self.hi_departures: deque[float] = deque()
        self.tx_pkts = 0
        self.tx_bytes = 0
        self.drops: dict[str, int] = {}
        self.owner, self.port, self.plane, self.kind = owner, port, plane, kind
        self.ce_at, self.ce_marks = 0, 0
        self._q, self._seq = sim._queue, sim._seq  # the event heap, pushed to directly (hot path)

    def set_rate(self, gbps: float) -> None:
        self.gbps = gbps
        self.us_per_byte = 8.0 / (gbps * 1e3)

    def depth(self) -> int:
        """Packets in the data queue now (the one on the wire included)."""
        d, now = self.departures, self.sim.now
        while d and d[0] <= now:
            d.popleft()
        return len(d)

    def _drop(self, reason: str) -> None:
        self.drops[reason] = self.drops.get(reason, 0) + 1

    def send(self, frame: bytes, high: bool) -> None:
        """Queue `frame`; schedule its arrival at the far end, or drop it."""
        if not self.up:
            self._drop("link_down")
            return
        now = self.sim.now
        size = len(frame)
        ser = size * self.us_per_byte
        free = self.free_at if self.free_at > now else now
        if high:
            d = self.hi_departures
            while d and d[0] <= now:
                d.popleft()
            if len(d) >= self.high_cap:
                self._drop("queue_full")
                return
            depart = (self.hi_free_at if self.hi_free_at > now else now) + ser
            self.hi_free_at = depart
            self.free_at = free + ser
        else:
            d = self.departures
            while d and d[0] <= now:
                d.popleft()
            if len(d) >= self.data_cap:
                self._drop("queue_full")
                return
            if self.ce_at and len(d) >= self.ce_at and frame[15] & 0x30:  # outer ECN: ECT -> CE
                frame = frame[:15] + bytes((frame[15] | 0x30,)) + frame[16:]
                self.ce_marks += 1
            depart = self.free_at = free + ser
        d.append(depart)
        self.tx_pkts += 1
        self.tx_bytes += size
        if self.loss and self.rng.random() < self.loss:
            self._drop("random_loss")  # lost on the wire, after using it
            return
        _push(self._q, (depart + self.prop + self.extra, next(self._seq), self._arrive, (self.epoch, frame)))

    def _arrive(self, epoch: int, frame: bytes) -> None:
        if epoch != self.epoch:
            self._drop("link_down")  # the link went down while it was on it
            return
        self.deliver(self.peer_port, frame)

    def set_up(self, up: bool) -> None:
        if self.up and not up:
            self.epoch += 1
            self.departures.clear()
            self.hi_departures.clear()
            self.free_at = self.hi_free_at = self.sim.now
        self.up = up


class LiveDepth:
    """The switch model's `qdepth` mapping, read from the real queues."""

    __slots__ = ("egress",)

    def __init__(self, egress: dict[int, Egress]):
        self.egress = egress

    def get(self, port: int, default: int = 0) -> int:
        e = self.egress.get(port)
        if e is None:
            return default
        d, now = e.departures, e.sim.now
        while d and d[0] <= now:
            d.popleft()
        return len(d)
