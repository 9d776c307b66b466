"""The event scheduler of sim_core.sim on the wall clock (µs), so the
endpoint model can drive real NIC pipelines: timers run on time, and
`poll(seconds)` receives packets."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sim_core.sim import Sim


class RealClock(Sim):
    __slots__ = ("_t0", "_poll")

    def __init__(self, poll: Callable[[float], None]):
        super().__init__()
        self._t0 = time.monotonic()
        self._poll = poll

    @property
    def now(self) -> float:
        return (time.monotonic() - self._t0) * 1e6

    def at(self, delay: float, fn: Callable[..., None], *args: Any) -> None:
        self.call_at(self.now + delay, fn, *args)

    def call_at(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        self._now = self.now  # scheduling is relative to the wall clock
        super().call_at(when, fn, *args)

    def run(self, until: float = float("inf"), stop: Callable[[], bool] | None = None) -> None:
        stop = stop or (lambda: False)
        while not stop() and self.now < until:
            for ev in self._due(self.now):
                ev.fire()
            nxt = self.next_time()
            wait = (nxt - self.now) / 1e6 if nxt is not None else 0.01
            self._poll(max(0.0, min(wait, 0.01)))
