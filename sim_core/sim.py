"""The discrete-event clock (µs) of the endpoint, the path fabric and the
timed fabric (`fabric_sim`). An event is an `Event` with a time and a
sequence number: equal times run in the order they were scheduled, so a
run is deterministic. `RealClock` (sim_core.realtime) is the same
scheduler on the wall clock, for BMv2.

The public surface is SimPy's: a read-only `now`, and scheduling:
`schedule` for an Event of the caller's own class (a link's frame in
flight, fabric_sim.net.links), `at` and `call_at` for a function call;
nothing outside this package touches the heap.

Events are objects compared on (time, sequence) by `Event.__lt__`, not
tuples: compiled, a heap comparison is one native float compare where a
tuple's was two generic ones, and the heap's entries are one object each
(at 1,024 NICs, about 140,000 are pending; their comparisons were 15% of
a run)."""

from __future__ import annotations

import gc
import heapq
from collections.abc import Callable
from typing import Any, Final

_push: Final = heapq.heappush


class Event:
    """Something due at `time` (set by `Sim.schedule`): `fire` runs it."""

    __slots__ = ("time", "seq")

    time: float
    seq: int  # the order it was scheduled: ties at one time run in this order

    def __lt__(self, other: Event) -> bool:
        return self.time < other.time or (self.time == other.time and self.seq < other.seq)

    def fire(self) -> None:
        raise NotImplementedError


class Call(Event):
    """fn(*args), scheduled by `at` or `call_at`."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable[..., None], args: tuple[Any, ...]):
        self.fn, self.args = fn, args

    def fire(self) -> None:
        self.fn(*self.args)


class Sim:
    __slots__ = ("_now", "_queue", "_seq", "events")

    def __init__(self) -> None:
        self._now = 0.0
        self._queue: list[Event] = []
        self._seq = 0  # ties at one time run in the order scheduled
        self.events = 0  # events run so far

    @property
    def now(self) -> float:
        """The simulated time, µs; it moves only as events run."""
        return self._now

    def schedule(self, ev: Event, when: float) -> None:
        """Fire `ev` at absolute time `when` (not before now)."""
        self._seq += 1
        ev.time = when if when > self._now else self._now
        ev.seq = self._seq
        _push(self._queue, ev)

    def at(self, delay: float, fn: Callable[..., None], *args: Any) -> None:
        """Run fn(*args) `delay` µs from now."""
        self.schedule(Call(fn, args), self._now + delay)

    def call_at(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        """Run fn(*args) at absolute time `when` (not before now)."""
        self.schedule(Call(fn, args), when)

    def pending(self) -> int:
        return len(self._queue)

    def pending_events(self) -> list[Event]:
        """The events still scheduled, in no order (end-of-run accounting)."""
        return list(self._queue)

    def run(self, until: float = float("inf"), stop: Callable[[], bool] | None = None) -> None:
        q, pop = self._queue, heapq.heappop
        n = 0
        ev: Event
        if stop is None:  # the timed fabric's loop: no call per event to ask
            while q and q[0].time <= until:
                ev = pop(q)
                self._now = ev.time
                ev.fire()
                n += 1
        else:
            while q and not stop():
                if q[0].time > until:
                    break
                ev = pop(q)
                self._now = ev.time
                ev.fire()
                n += 1
        self.events += n

    def _due(self, now: float) -> list[Event]:
        """Pop every event due by `now` (the wall clock's loop, in this package)."""
        out = []
        q = self._queue
        while q and q[0].time <= now:
            out.append(heapq.heappop(q))
        return out

    def next_time(self) -> float | None:
        """When the next event is due, or None."""
        return self._queue[0].time if self._queue else None


class gc_frozen:  # lower case: used as a context manager, as contextlib's are named
    """Run a simulation with the garbage collector paused, and what exists
    when it starts (the fabric, its tables, the endpoints) frozen out of
    its sight. A packet-hop allocates an event tuple: with the collector
    on, those allocations triggered collections that walked the packets
    in flight again and again (5% of a compiled run at 256 NICs; before
    the freeze, a full collection walked the whole fabric). A run makes no
    reference cycles (its events, packets and records are trees), so
    nothing is left for the collector: at the end it collects once and
    keeps the count in `cycles`, which tests/sim/test_gc_pause.py holds
    at 0 on runs that take every hot path."""

    def __init__(self) -> None:
        self.cycles = -1  # unreachable objects the run made, found at its end
        self._was_enabled = True

    def __enter__(self) -> gc_frozen:
        gc.collect()
        gc.freeze()
        self._was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cycles = gc.collect()
        if self._was_enabled:
            gc.enable()
        gc.unfreeze()
