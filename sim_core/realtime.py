"""The event scheduler of sim_core.sim on the wall clock (µs), so the
endpoint model can drive real NIC pipelines: timers run on time, and
`poll(seconds)` receives packets."""

from __future__ import annotations

import heapq
import time
from typing import Callable

from sim_core.sim import Sim


class RealClock(Sim):
    def __init__(self, poll: Callable[[float], None]):
        self._t0 = time.monotonic()
        super().__init__()
        self._poll = poll

    @property  # type: ignore[override]
    def now(self) -> float:
        return (time.monotonic() - self._t0) * 1e6

    @now.setter
    def now(self, value: float) -> None:
        pass  # the wall clock is not set

    def run(self, until: float = float("inf"), stop: Callable[[], bool] | None = None) -> None:
        stop = stop or (lambda: False)
        while not stop() and self.now < until:
            while self._queue and self._queue[0][0] <= self.now:
                _, _, fn, args = heapq.heappop(self._queue)
                fn(*args)
            wait = (self._queue[0][0] - self.now) / 1e6 if self._queue else 0.01
            self._poll(max(0.0, min(wait, 0.01)))
