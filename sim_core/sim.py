"""The discrete-event clock (µs) of the endpoint, the path fabric and the
timed fabric (`fabric_sim`). Events are (time, sequence, function, args):
equal times run in the order they were scheduled, so a run is
deterministic. `RealClock` (sim_core.realtime) is the same scheduler on
the wall clock, for BMv2.

The public surface is SimPy's: a read-only `now`, and scheduling (`at`,
`call_at`); nothing outside this package touches the heap."""

from __future__ import annotations

import gc
import heapq
from collections.abc import Callable
from typing import Any, Final

_push: Final = heapq.heappush

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
