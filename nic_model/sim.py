"""A small discrete-event clock for the endpoint and fabric models (µs)."""

from __future__ import annotations

import heapq
import itertools
from typing import Callable


class Sim:
    def __init__(self) -> None:
        self.now = 0.0
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()

    def at(self, delay: float, fn: Callable[[], None]) -> None:
        heapq.heappush(self._queue, (self.now + delay, next(self._seq), fn))

    def run(self, until: float = float("inf"), stop: Callable[[], bool] = lambda: False) -> None:
        while self._queue and not stop():
            t, _, fn = self._queue[0]
            if t > until:
                break
            heapq.heappop(self._queue)
            self.now = t
            fn()
