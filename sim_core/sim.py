"""The discrete-event clock (µs) of the endpoint, the path fabric and the
timed fabric (`fabric_sim`). An event is an `Event` with a time and a
sequence number: equal times run in the order they were scheduled, so a
run is deterministic. `RealClock` (sim_core.realtime) is the same
scheduler on the wall clock, for BMv2.

The public surface is SimPy's: a read-only `now`, and scheduling:
`schedule` for an Event of the caller's own class (a link's frame in
flight, fabric_sim.net.links), `at` and `call_at` for a function call;
nothing outside this package touches the queue.

Events are objects compared on (time, sequence) by `Event.__lt__`, not
tuples: compiled, a comparison is one native float compare where a
tuple's was two generic ones. They wait in a calendar queue (`Sim`): a
bucket of them is sorted once, when it is next, on their times alone."""

from __future__ import annotations

import gc
import heapq
import operator
from collections.abc import Callable
from typing import Any, Final

_push: Final = heapq.heappush
_pop: Final = heapq.heappop
_TIME: Final = operator.attrgetter("time")

# The calendar's bucket width. Below the fabric's shortest hop (a link's
# propagation, 0.25 µs or more in every scenario), so a frame's arrival
# always lands in a later bucket than the one running, appended and not
# heaped; wide enough that a bucket holds many events at scale, so that
# one sort serves many of them.
BUCKET_US: Final = 0.125
# Times past this (a timer never meant to fire) share one last bucket,
# where int(time / width) would overflow.
_FAR_US: Final = 1e15
_FAR_BUCKET: Final = 1 << 62


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
    """The event queue is a calendar (Brown's calendar queue, without its
    resizing): events are kept in buckets of `bucket_us` of simulated
    time, unsorted until their bucket is next, then sorted once by time
    (a stable sort keyed by a float: the order they were scheduled breaks
    ties, since a bucket's list is appended in that order). An event
    scheduled into the bucket being run (or before it, after `run` stopped
    at `until`) goes to a small heap, `_near`, merged with the sorted
    bucket one comparison per event. The order is exactly (time, sequence)
    for any bucket width, as a heap's would be; the width only sets the
    cost. At 1,024 NICs about 140,000 events are pending, and a heap of
    them cost 15% of a run in comparisons that missed the cache; a bucket
    is a list appended to and sorted on unboxed keys."""

    __slots__ = ("_now", "_seq", "events", "_w", "_buckets", "_order", "_cur", "_cur_b", "_near", "_n")

    def __init__(self, bucket_us: float = BUCKET_US) -> None:
        if not bucket_us > 0:
            raise ValueError(f"bucket_us: {bucket_us!r} is not a positive number of µs")
        self._now = 0.0
        self._seq = 0  # ties at one time run in the order scheduled
        self.events = 0  # events run so far
        self._w = 1.0 / bucket_us  # buckets per µs
        self._buckets: dict[int, list[Event]] = {}  # bucket number -> its events, in the order scheduled
        self._order: list[int] = []  # a heap of the numbers of _buckets' keys
        # The bucket being run, sorted last first: _cur[-1] is next, and
        # popping it lets go of an event once run (a bucket can hold all
        # the messages posted at one instant).
        self._cur: list[Event] = []
        self._cur_b = -1  # its number: an event scheduled into it or before it goes to _near
        self._near: list[Event] = []
        self._n = 0  # events pending

    @property
    def now(self) -> float:
        """The simulated time, µs; it moves only as events run."""
        return self._now

    def schedule(self, ev: Event, when: float) -> None:
        """Fire `ev` at absolute time `when` (not before now)."""
        self._seq += 1
        t = when if when > self._now else self._now
        ev.time = t
        ev.seq = self._seq
        self._n += 1
        b = int(t * self._w) if t < _FAR_US else _FAR_BUCKET
        if b <= self._cur_b:
            _push(self._near, ev)
            return
        lst = self._buckets.get(b)
        if lst is None:
            self._buckets[b] = [ev]
            _push(self._order, b)
        else:
            lst.append(ev)

    def at(self, delay: float, fn: Callable[..., None], *args: Any) -> None:
        """Run fn(*args) `delay` µs from now."""
        self.schedule(Call(fn, args), self._now + delay)

    def call_at(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        """Run fn(*args) at absolute time `when` (not before now)."""
        self.schedule(Call(fn, args), when)

    def pending(self) -> int:
        return self._n

    def pending_events(self) -> list[Event]:
        """The events still scheduled, in no order (end-of-run accounting)."""
        out = self._cur + self._near
        for lst in self._buckets.values():
            out.extend(lst)
        return out

    def _peek(self) -> Event | None:
        """The next event, left in place (None if there is none): the next
        bucket is sorted when the one being run and `_near` are empty."""
        cur, near = self._cur, self._near
        if not cur:
            if near:
                return near[0]
            if not self._order:
                return None
            b = _pop(self._order)
            cur = self._buckets.pop(b)
            # Last first; the list is in the order scheduled, and a stable
            # sort keeps it among equal times: reversed first, so that the
            # earliest scheduled of a time is nearest the end.
            cur.reverse()
            cur.sort(key=_TIME, reverse=True)
            self._cur, self._cur_b = cur, b
        ev = cur[-1]
        if near and near[0] < ev:
            return near[0]
        return ev

    def _take(self, ev: Event) -> None:
        """Remove `ev`, which `_peek` just returned."""
        self._n -= 1
        if self._cur and self._cur[-1] is ev:
            self._cur.pop()
        else:
            _pop(self._near)

    def run(self, until: float = float("inf"), stop: Callable[[], bool] | None = None) -> None:
        if stop is not None:
            self._run_asking(until, stop)
            return
        # The timed fabric's loop: _peek and _take inlined, no call per event to ask.
        n = 0
        ev: Event
        while True:
            cur, near = self._cur, self._near
            if cur:
                ev = cur[-1]
                if near and near[0] < ev:
                    ev = near[0]
                    if ev.time > until:
                        break
                    _pop(near)
                else:
                    if ev.time > until:
                        break
                    cur.pop()
            elif near:
                ev = near[0]
                if ev.time > until:
                    break
                _pop(near)
            elif self._peek() is None:  # sorts the next bucket
                break
            else:
                continue
            self._n -= 1
            self._now = ev.time
            ev.fire()
            n += 1
        self.events += n

    def _run_asking(self, until: float, stop: Callable[[], bool]) -> None:
        n = 0
        while not stop():
            ev = self._peek()
            if ev is None or ev.time > until:
                break
            self._take(ev)
            self._now = ev.time
            ev.fire()
            n += 1
        self.events += n

    def _due(self, now: float) -> list[Event]:
        """Pop every event due by `now` (the wall clock's loop, in this package)."""
        out = []
        ev = self._peek()
        while ev is not None and ev.time <= now:
            self._take(ev)
            out.append(ev)
            ev = self._peek()
        return out

    def next_time(self) -> float | None:
        """When the next event is due, or None."""
        ev = self._peek()
        return None if ev is None else ev.time


class gc_paused:  # lower case: a context manager, as gc_frozen
    """The collector off while a fabric is built, back as it was after.
    What a build makes lives for the whole run (gc_frozen freezes it when
    the run starts, after one collection that finds any cycle the build
    made), so collections during the build walked it again and again for
    nothing: 1.3 s of gc in a 49 s run at 1,024 NICs, about half of it
    the build's."""

    def __init__(self) -> None:
        self._was_enabled = True

    def __enter__(self) -> gc_paused:
        self._was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._was_enabled:
            gc.enable()


class gc_frozen(gc_paused):  # lower case: used as a context manager, as contextlib's are named
    """Run a simulation with the garbage collector paused, and what exists
    when it starts (the fabric, its tables, the endpoints) frozen out of
    its sight. A packet-hop allocates an event object: with the collector
    on, those allocations triggered collections that walked the packets
    in flight again and again (5% of a compiled run at 256 NICs; before
    the freeze, a full collection walked the whole fabric). A run makes no
    reference cycles (its events, packets and records are trees), so
    nothing is left for the collector: at the end it collects once and
    keeps the count in `cycles`, which tests/sim/test_gc_pause.py holds
    at 0 on runs that take every hot path."""

    def __init__(self) -> None:
        super().__init__()
        self.cycles = -1  # unreachable objects the run made, found at its end

    def __enter__(self) -> gc_frozen:
        gc.collect()
        gc.freeze()
        super().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cycles = gc.collect()
        super().__exit__(*exc)
        gc.unfreeze()
