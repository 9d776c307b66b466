"""One progress display across every run of a sweep or of `make paper`:
a line per update (a run started, finished, or every few seconds), with
what is running, done/total and an estimate of what is left. No curses:
the lines read the same in a log file.

The estimate: the finished runs give seconds of wall time per unit of
cost (a run's offered bytes, known before it runs); what is queued and
the rest of what is running, at that rate, shared over the workers."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def _dur(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


class Progress:
    def __init__(self, total: int, quiet: bool = False, every_s: float = 5.0, out: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.total, self.quiet, self.every_s = total, quiet, every_s
        self.out, self.clock = out or sys.stderr, clock
        self.start = self.last = clock()
        self.workers = 1
        self.done = self.cached = 0
        self.running: dict[str, tuple[float, float]] = {}  # label -> (started at, cost)
        self.detail: dict[str, str] = {}  # label -> the run's own last line (in-process runs only)
        self.queued_cost = 0.0
        self.spent = self.spent_cost = 0.0  # wall seconds and cost of the runs executed so far

    def plan(self, costs: list[float], where: str) -> None:
        """The runs left to execute (after the cache), and where they go."""
        self.queued_cost = sum(costs)
        self._line(f"{len(costs)} of {self.total} runs to execute ({self.cached} from the cache), {where}")

    def workers_ready(self, n: int, where: str) -> None:
        """How many runs go at once, once known (a Ray cluster says)."""
        self.workers = max(1, n)
        self._line(f"{where}: {self.workers} at a time")

    def from_cache(self, label: str) -> None:
        self.done += 1
        self.cached += 1

    def started(self, label: str, cost: float) -> None:
        self.running[label] = (self.clock(), cost)
        self.queued_cost -= cost  # shown in the next line's "running:", not a line of its own

    def update(self, label: str, text: str) -> None:
        """A running run's own progress line (simulated time, messages);
        shown at the next periodic line."""
        self.detail[label] = text
        self.tick()

    def finished(self, label: str, wall_s: float, failed: bool = False) -> None:
        _, cost = self.running.pop(label, (0.0, 0.0))
        self.detail.pop(label, None)
        self.done += 1
        self.spent += wall_s
        self.spent_cost += cost
        self._line(f"{'FAILED' if failed else 'done'} {label} in {_dur(wall_s)}")

    def tick(self) -> None:
        """A periodic line, at most every `every_s` seconds."""
        if self.clock() - self.last >= self.every_s:
            self._line("")

    def left_s(self) -> float | None:
        """Seconds of wall time left, or None before any run has finished."""
        if not self.spent_cost:
            return None
        rate, now = self.spent / self.spent_cost, self.clock()
        running = [max(0.0, cost * rate - (now - t0)) for t0, cost in self.running.values()]
        return max((self.queued_cost * rate + sum(running)) / self.workers, max(running, default=0.0))

    def _line(self, what: str) -> None:
        now = self.last = self.clock()
        if self.quiet:
            return
        left = self.left_s()
        running = ", ".join(f"{label} ({_dur(now - t0)}{': ' + self.detail[label] if label in self.detail else ''})"
                            for label, (t0, _) in self.running.items())
        print(f"[{now - self.start:6.0f} s] {self.done}/{self.total} runs done"
              + (f"; {what}" if what else "") + (f"; running: {running}" if running else "")
              + (f"; about {_dur(left)} left" if left is not None and self.done < self.total else ""),
              file=self.out, flush=True)
