"""The progress display across runs: done/total, what is running and for
how long, and the estimate of what is left from the finished runs' rate."""

from __future__ import annotations

import io

from fabric_sim.runner.progress import Progress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_lines_say_what_is_done_what_runs_and_how_long_is_left():
    clock, out = Clock(), io.StringIO()
    p = Progress(5, every_s=5, out=out, clock=clock)
    p.from_cache("c")
    p.plan([1, 1, 2, 2], "on Ray (starting)")
    p.workers_ready(2, "Ray has 2 CPUs")
    p.started("a", 1)
    p.started("b", 1)
    clock.t = 10
    p.finished("a", 10.0)  # 10 s per unit of cost: b is due now, 4 units queued over 2 workers: 20 s
    clock.t = 12
    p.tick()  # 2 s after the last line: none
    p.update("b", "300/2,000 µs")
    clock.t = 15
    p.tick()  # b is 5 s late: counted as nothing left of it
    assert out.getvalue().splitlines() == [
        "[     0 s] 1/5 runs done; 4 of 5 runs to execute (1 from the cache), on Ray (starting)",
        "[     0 s] 1/5 runs done; Ray has 2 CPUs: 2 at a time",
        "[    10 s] 2/5 runs done; done a in 10 s; running: b (10 s); about 20 s left",
        "[    15 s] 2/5 runs done; running: b (15 s: 300/2,000 µs); about 20 s left",
    ]


def test_the_estimate_counts_what_remains_of_a_long_run_and_quiet_prints_nothing():
    clock, out = Clock(), io.StringIO()
    p = Progress(3, quiet=True, out=out, clock=clock)
    p.plan([1, 10, 1], "on Ray (starting)")
    p.workers_ready(2, "Ray has 2 CPUs")
    p.started("short", 1)
    p.started("long", 10)
    clock.t = 4
    p.finished("short", 4.0)  # long: 40 s at 4 s per unit, 36 left; one queued: 4 s
    assert p.left_s() == 36.0
    assert p.left_s() is not None and out.getvalue() == ""
    assert Progress(1).left_s() is None  # nothing finished: no rate yet
