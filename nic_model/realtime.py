"""A wall-clock stand-in for Sim (µs), so the endpoint model can drive real
NIC pipelines: timers run on time, and `poll(seconds)` receives packets."""

from __future__ import annotations

import heapq
import itertools
import time
from typing import Callable


class RealClock:
    def __init__(self, poll: Callable[[float], None]):
        self._t0 = time.monotonic()
        self._poll = poll
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()

    @property
    def now(self) -> float:
        return (time.monotonic() - self._t0) * 1e6

    def at(self, delay: float, fn: Callable[[], None]) -> None:
        heapq.heappush(self._queue, (self.now + delay, next(self._seq), fn))

    def run(self, until: float = float("inf"), stop: Callable[[], bool] = lambda: False) -> None:
        while not stop() and self.now < until:
            while self._queue and self._queue[0][0] <= self.now:
                heapq.heappop(self._queue)[2]()
            wait = (self._queue[0][0] - self.now) / 1e6 if self._queue else 0.01
            self._poll(max(0.0, min(wait, 0.01)))
