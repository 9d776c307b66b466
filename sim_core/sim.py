"""The discrete-event clock (µs) of the endpoint, the path fabric and the
timed fabric (`fabric_sim`). Events are (time, sequence, function, args):
equal times run in the order they were scheduled, so a run is
deterministic. `RealClock` (sim_core.realtime) is the same scheduler on
the wall clock, for BMv2."""

from __future__ import annotations

import heapq
import itertools
from typing import Any, Callable


class Sim:
    def __init__(self) -> None:
        self.now = 0.0
        self._queue: list[tuple[float, int, Callable[..., None], tuple[Any, ...]]] = []
        self._seq = itertools.count()
        self.events = 0  # events run so far

    def at(self, delay: float, fn: Callable[..., None], *args: Any) -> None:
        """Run fn(*args) `delay` µs from now."""
        heapq.heappush(self._queue, (self.now + delay, next(self._seq), fn, args))

    def call_at(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        """Run fn(*args) at absolute time `when` (not before now)."""
        heapq.heappush(self._queue, (max(when, self.now), next(self._seq), fn, args))

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
                self.now = t
                fn(*args)
                n += 1
        else:
            while q and not stop():
                if q[0][0] > until:
                    break
                t, _, fn, args = pop(q)
                self.now = t
                fn(*args)
                n += 1
        self.events += n
