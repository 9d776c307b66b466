"""sim_core.sim's calendar queue runs events in (time, order scheduled)
order, for any bucket width: held against a plain sort of the same keys,
with events scheduled from inside events (into the bucket being run, at
the same instant, far ahead) and runs stopped at `until` and resumed."""

import random

import pytest

from sim_core.sim import Event, Sim


class _Rec(Event):
    __slots__ = ("name", "log", "spawn")

    def __init__(self, name: int, log: list[tuple[float, int]], spawn):
        self.name, self.log, self.spawn = name, log, spawn

    def fire(self) -> None:
        self.log.append((self.time, self.name))
        self.spawn()


class _Workload:
    """A random workload on one Sim; `scheduled` holds every (time, seq,
    name) scheduled, which sorted is the order a correct queue runs them in."""

    def __init__(self, width: float, seed: int):
        self.rng = random.Random(seed)
        self.sim = Sim(width)
        self.log: list[tuple[float, int]] = []
        self.scheduled: list[tuple[float, int, int]] = []

    def add(self) -> None:
        ev = _Rec(len(self.scheduled), self.log, self.spawn)
        self.sim.schedule(ev, self.sim.now + self.delay())
        self.scheduled.append((ev.time, ev.seq, ev.name))

    def delay(self) -> float:
        r = self.rng.random()
        if r < 0.15:
            return 0.0  # the same instant: ties broken by order scheduled
        if r < 0.3:
            return self.rng.choice([0.25, 0.5, 1.0])  # exact ties at later times
        if r < 0.32:
            return 1e16  # past the last bucket's edge
        return self.rng.expovariate(1.0) * self.rng.choice([0.01, 0.3, 5.0])

    def spawn(self) -> None:
        if len(self.scheduled) < 3000:
            for _ in range(self.rng.choice([0, 1, 1, 2])):
                self.add()

    def run_in_steps(self) -> None:
        """Stop at `until`, then schedule from outside a run, as a test or RealClock does."""
        t, rng = 0.0, self.rng
        while self.sim.pending():
            t += rng.choice([0.05, 0.5, 3.0])
            self.sim.run(until=t, stop=(lambda: False) if rng.random() < 0.5 else None)  # both loops
            nxt = self.sim.next_time()
            assert nxt is None or nxt > t
            for _ in range(rng.choice([0, 1, 3])):
                self.add()
            if t > 100:
                self.sim.run()


@pytest.mark.parametrize("width", [1e-4, 0.125, 10.0, 1e9])
@pytest.mark.parametrize("stops", [False, True])
def test_runs_in_time_then_schedule_order(width, stops):
    for seed in range(3):
        w = _Workload(width, seed)
        for _ in range(200):
            w.add()
        w.run_in_steps() if stops else w.sim.run()
        assert len(w.log) == len(w.scheduled)
        assert w.log == [(t, name) for t, _, name in sorted(w.scheduled)]


def test_pending_counts_and_lists_what_is_left():
    sim = Sim()
    log: list[tuple[float, int]] = []
    evs = [_Rec(i, log, lambda: None) for i in range(5)]
    for i, ev in enumerate(evs):
        sim.schedule(ev, [0.0, 0.1, 0.1, 7.0, 1e16][i])
    sim.run(until=0.1)
    assert [n for _, n in log] == [0, 1, 2]
    assert sim.pending() == 2 and set(sim.pending_events()) == {evs[3], evs[4]}
    assert sim.next_time() == 7.0


def test_a_bucket_width_must_be_positive():
    with pytest.raises(ValueError, match="bucket_us"):
        Sim(0.0)
