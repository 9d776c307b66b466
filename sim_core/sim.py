"""The discrete-event clock (µs) of the endpoint, the path fabric and the
timed fabric (`fabric_sim`). Events are (time, sequence, function, args):
equal times run in the order they were scheduled, so a run is
deterministic. `RealClock` (sim_core.realtime) is the same scheduler on
the wall clock, for BMv2.

The public surface is SimPy's: a read-only `now`, and scheduling (`at`,
`call_at`); nothing outside this package touches the heap."""

from __future__ import annotations

import contextlib
import gc
import heapq
from collections.abc import Callable, Iterator
from typing import Any

_push = heapq.heappush

Event = tuple[float, int, Callable[..., None], tuple[Any, ...]]


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

    def at(self, delay: float, fn: Callable[..., None], *args: Any) -> None:
        """Run fn(*args) `delay` µs from now."""
        self._seq += 1
        _push(self._queue, (self._now + delay, self._seq, fn, args))

    def call_at(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        """Run fn(*args) at absolute time `when` (not before now)."""
        self._seq += 1
        _push(self._queue, (when if when > self._now else self._now, self._seq, fn, args))

    def pending(self) -> int:
        return len(self._queue)

    def pending_calls(self) -> list[Callable[..., None]]:
        """The functions of the events still scheduled (end-of-run accounting)."""
        return [fn for _, _, fn, _ in self._queue]

    def run(self, until: float = float("inf"), stop: Callable[[], bool] | None = None) -> None:
        q, pop = self._queue, heapq.heappop
        n = 0
        if stop is None:  # the timed fabric's loop: no call per event to ask
            while q and q[0][0] <= until:
                t, _, fn, args = pop(q)
                self._now = t
                fn(*args)
                n += 1
        else:
            while q and not stop():
                if q[0][0] > until:
                    break
                t, _, fn, args = pop(q)
                self._now = t
                fn(*args)
                n += 1
        self.events += n

    def _due(self, now: float) -> list[tuple[Callable[..., None], tuple[Any, ...]]]:
        """Pop every event due by `now` (the wall clock's loop, in this package)."""
        out = []
        q = self._queue
        while q and q[0][0] <= now:
            _, _, fn, args = heapq.heappop(q)
            out.append((fn, args))
        return out

    def next_time(self) -> float | None:
        """When the next event is due, or None."""
        return self._queue[0][0] if self._queue else None


@contextlib.contextmanager
def gc_frozen() -> Iterator[None]:
    """Run a simulation with what exists now (the fabric, its tables, the
    endpoints) out of the garbage collector's sight. Every packet-hop
    allocates an event tuple, which triggers collections; a full collection
    walked every object of the fabric, so the cost per hop grew with the
    fabric's size. What the run allocates is still collected, the young
    generation less often (its survivors are the packets in flight, walked
    again at every collection)."""
    gc.collect()
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], 20_000), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
