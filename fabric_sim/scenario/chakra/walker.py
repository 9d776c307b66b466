"""The graph walker: each rank's trace run in dependency order on the run's
clock, its communication as the workload's messages.

A rank runs its graph `iterations` times, each iteration starting when
its previous one has ended. A node may start once every node it depends
on has finished. A compute node takes its duration on the rank's GPU, one
kernel at a time in the order they became ready (ASTRA-sim's rule); one
with is_cpu_op on the rank's host thread, likewise. Communication is not
limited: a collective, send or receive starts (its rank joins it) as soon
as it is ready, and overlaps whatever compute the graph allows.

A meeting (checks.py: a collective of a group, or a send and its
receive) is built up front as NCCL runs it (collectives.py), its messages
between the ranks' NICs. A message may go once both its ends have joined
(NCCL's sender waits for the receiver's buffer: the FIFO of a connection
exists once both kernels run) and once the collective's own order
releases it (the ring's program, a stream's slots). A rank's part of a
meeting ends when every message it sends or receives in it has been
delivered; its node ends then, on that rank alone.

Everything the run posts goes through `post` (the driver's); what it
did is `log()`: each node's span per rank and iteration, each meeting's
join and end times, for the report (report/steps.py)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabric_sim.scenario import collectives
from fabric_sim.scenario.chakra.checks import Meeting, meetings
from fabric_sim.scenario.chakra.trace import Coll, Kind, Op, Trace
from fabric_sim.scenario.message import Message


class Clock(Protocol):
    """The back end's clock (the timed fabric's Sim, BMv2's RealClock)."""

    def call_at(self, when: float, fn: Callable[..., None], *args: Any) -> None: ...


@dataclass(slots=True)
class Span:
    """One node's run on one rank in one iteration, µs of the scenario."""

    rank: int
    iteration: int
    node: int
    name: str
    kind: Kind
    start: float
    end: float = -1.0  # -1: not finished when the run ended
    meeting: int = -1  # index into StepLog.meetings (communication nodes)


@dataclass(slots=True)
class MeetingRun:
    """One meeting in one iteration: what the per-collective table reads."""

    label: str
    coll: Coll | None  # None: a send and its receive
    ranks: int
    size: int  # comm_size, bytes, as the trace gives it
    iteration: int
    first_join: float = -1.0
    last_join: float = -1.0
    end: float = -1.0  # the last rank's part done; -1: never


@dataclass
class StepLog:
    """What the walk did: kept with the run's result (it pickles)."""

    ranks: int
    iterations: int
    nics: list[int]  # rank -> NIC
    spans: list[Span] = field(default_factory=list)
    meetings: list[MeetingRun] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)  # one line per rank that did not finish


def links(m: Meeting) -> list[tuple[int, int]]:
    """The (sender, receiver) rank pairs a meeting's messages use."""
    rs, n = m.ranks, len(m.ranks)
    coll = m.ops[0].coll if m.ops[0].kind is Kind.COLL else None
    if n < 2:
        return []
    if coll is Coll.ALL_TO_ALL:
        return [(a, rs[(i + d) % n]) for i, a in enumerate(rs) for d in range(1, n)]
    if coll is Coll.BROADCAST:
        return list(zip(rs, rs[1:], strict=False))
    if coll is None:
        return [(rs[0], rs[1])]
    return [(a, rs[(i + 1) % n]) for i, a in enumerate(rs)]  # the rings


def pairs(trace: Trace) -> set[tuple[int, int]]:
    """Every (sender, receiver) rank pair the trace's messages use."""
    return {pair for m in meetings(trace)[0] for pair in links(m)}


def build(m: Meeting, nics: list[int], chunk: int | None, first_id: int) -> list[Message]:
    """The meeting's messages as NCCL sends them, between the ranks' NICs."""
    hs, n, size = [nics[r] for r in m.ranks], len(m.ranks), m.ops[0].size
    coll = m.ops[0].coll if m.ops[0].kind is Kind.COLL else None
    if n < 2:
        return []
    if coll is None:
        return collectives.p2p(size, 1, [(hs[0], hs[1])], 0.0, chunk, first_id=first_id)
    if coll is Coll.ALL_TO_ALL:  # comm_size is the rank's whole send buffer: 1/N of it to each rank
        return collectives.p2p(max(1, size // n), 1, collectives.all_to_all_pairs(hs), 0.0, chunk,
                               first_id=first_id)
    if coll is Coll.BROADCAST:
        return collectives.broadcast(size, hs, 0.0, chunk, first_id=first_id)
    if coll is Coll.ALL_GATHER:  # comm_size is each rank's part: N parts gathered
        return collectives.ring(size * n, 1, hs, 0.0, chunk, collectives.all_gather_steps(n), first_id)
    steps = collectives.reduce_scatter_steps(n) if coll is Coll.REDUCE_SCATTER else None
    return collectives.ring(size, 1, hs, 0.0, chunk, steps, first_id)


class _Meeting:
    """One meeting of one iteration while it runs: who has joined, what is
    released but waits for an end to join, what each rank still has to
    send or receive."""

    def __init__(self, walker: Walker, m: Meeting, index: int, msgs: list[Message], rank_of: dict[int, int]):
        self.walker, self.index, self.msgs, self.rank_of = walker, index, msgs, rank_of
        self.run = walker.log.meetings[index]
        self.ops = dict(zip(m.ranks, m.ops, strict=True))
        self.inner = msgs[0].after if msgs else None  # the collective's own release (ring program, stream slots)
        self.ready = [x for x in msgs if x.start is not None]  # released, waiting for both ends to join
        self.joined: set[int] = set()
        self.left = dict.fromkeys(m.ranks, 0)  # rank -> its messages not yet delivered
        for x in msgs:
            x.start = None  # the walk posts them, not the run's start
            x.after = self.delivered
            self.left[rank_of[x.src]] += 1
            self.left[rank_of[x.dst]] += 1

    def join(self, rank: int, now: float) -> None:
        self.joined.add(rank)
        run = self.run
        run.first_join = now if run.first_join < 0 else run.first_join
        run.last_join = now
        self._flush()
        if self.left[rank] == 0:  # nothing to move (a group of one)
            self._done(rank, now)

    def delivered(self, m: Message) -> list[Message]:
        """The driver's call when `m` arrived: what the collective releases
        goes out (through the walker's post) once its ends have joined."""
        if self.inner is not None:
            self.ready += self.inner(m)
        self._flush()
        now = self.walker.now()
        for r in (self.rank_of[m.src], self.rank_of[m.dst]):
            self.left[r] -= 1
            if self.left[r] == 0:
                self._done(r, now)
        return []

    def _flush(self) -> None:
        keep = []
        for m in self.ready:
            if self.rank_of[m.src] in self.joined and self.rank_of[m.dst] in self.joined:
                self.walker.post(m)
            else:
                keep.append(m)
        self.ready = keep

    def _done(self, rank: int, now: float) -> None:
        self.run.end = max(self.run.end, now)
        self.walker.comm_done(rank, self.ops[rank])


class _Rank:
    """A rank's walk: its graph (static) and where it is in it."""

    def __init__(self, ops: tuple[Op, ...]):
        self.ops = {op.id: op for op in ops}
        self.children: dict[int, list[int]] = {op.id: [] for op in ops}
        for op in ops:
            for d in op.deps:
                self.children[d].append(op.id)
        self.iteration = -1
        self.waiting: dict[int, int] = {}  # node -> dependencies not yet finished
        self.left = 0  # nodes of this iteration not finished
        self.queues: dict[Kind, deque[Op]] = {Kind.COMPUTE: deque(), Kind.HOST: deque()}
        self.busy: dict[Kind, bool] = {Kind.COMPUTE: False, Kind.HOST: False}
        self.spans: dict[int, Span] = {}  # node -> its span in this iteration


class Walker:
    """Every rank's walk over `iterations` iterations of `trace`, rank r on
    NIC nics[r]; `msgs` are all the messages it will post."""

    def __init__(self, trace: Trace, nics: list[int], iterations: int, chunk_bytes: int | None = None,
                 start_us: float = 0.0):
        self.iterations, self.start_us = iterations, start_us
        self.ranks = [_Rank(ops) for ops in trace.ranks]
        self.log = StepLog(len(trace.ranks), iterations, list(nics))
        rank_of = {nic: r for r, nic in enumerate(nics)}
        self.msgs: list[Message] = []
        self.joins: dict[tuple[int, int, int], _Meeting] = {}  # (iteration, rank, node) -> its meeting
        found, _ = meetings(trace)  # the trace was checked when it was read: everything meets
        for it in range(iterations):
            for m in found:
                msgs = build(m, nics, chunk_bytes, len(self.msgs))
                self.log.meetings.append(MeetingRun(m.label, m.ops[0].coll, len(m.ranks), m.ops[0].size, it))
                live = _Meeting(self, m, len(self.log.meetings) - 1, msgs, rank_of)
                self.msgs += msgs
                for r, op in zip(m.ranks, m.ops, strict=True):
                    self.joins[(it, r, op.id)] = live
        self._clock: Clock | None = None
        self._post: Callable[[Message], None] | None = None
        self._now: Callable[[], float] | None = None
        self.scale = 1.0

    def __getstate__(self) -> dict[str, Any]:
        """A run's messages pickle (their release is this walker's): without the clock and the driver."""
        return {**self.__dict__, "_clock": None, "_post": None, "_now": None}

    def start(self, clock: Clock, post: Callable[[Message], None], now: Callable[[], float],
              scale: float = 1.0) -> None:
        """Every rank's first iteration at the workload's start; `now` in
        scenario µs, which are `scale` of the back end's clock."""
        self._clock, self._post, self._now, self.scale = clock, post, now, scale
        for r in range(len(self.ranks)):
            clock.call_at(self.start_us * scale, self._begin, r)

    def now(self) -> float:
        assert self._now is not None, "the walk has not started"
        return self._now()

    def post(self, m: Message) -> None:
        assert self._post is not None, "the walk has not started"
        self._post(m)

    def finished(self) -> bool:
        return all(rk.iteration >= self.iterations for rk in self.ranks)

    def result(self) -> StepLog:
        """The log, with a line for each rank that did not finish."""
        self.log.unfinished = [line for r, rk in enumerate(self.ranks) if (line := self._stuck(r, rk))]
        return self.log

    def _stuck(self, r: int, rk: _Rank) -> str:
        if rk.iteration >= self.iterations:
            return ""
        running = [s for s in rk.spans.values() if s.end < 0]
        where = f"; running: node {running[0].node} ({running[0].name})" if running else ""
        return (f"rank {r} did not finish iteration {rk.iteration + 1} of {self.iterations}: {rk.left} of "
                f"{len(rk.ops)} nodes left{where}")

    def _begin(self, r: int) -> None:
        rk = self.ranks[r]
        rk.iteration += 1
        if rk.iteration >= self.iterations:
            return
        if not rk.ops:  # nothing to run, in any iteration
            rk.iteration = self.iterations
            return
        rk.waiting = {i: len(op.deps) for i, op in rk.ops.items()}
        rk.left, rk.spans = len(rk.ops), {}
        for op in rk.ops.values():
            if not op.deps:
                self._start(r, op)

    def _start(self, r: int, op: Op) -> None:
        rk, now = self.ranks[r], self.now()
        span = Span(r, rk.iteration, op.id, op.name, op.kind, now)
        rk.spans[op.id] = span
        self.log.spans.append(span)
        if op.kind in rk.queues:
            span.start = -1.0  # set when the GPU (or host thread) takes it
            rk.queues[op.kind].append(op)
            self._pump(r, op.kind)
        elif op.kind is Kind.MARK:  # no time, but through the clock: a chain of them is not a chain of calls
            self._at(now, self._finish, r, op)
        else:
            live = self.joins[(rk.iteration, r, op.id)]
            span.meeting = live.index
            live.join(r, now)

    def _pump(self, r: int, kind: Kind) -> None:
        rk = self.ranks[r]
        if rk.busy[kind] or not rk.queues[kind]:
            return
        op = rk.queues[kind].popleft()
        rk.busy[kind] = True
        rk.spans[op.id].start = self.now()
        self._at(self.now() + op.duration_us, self._computed, r, op)

    def _at(self, t_us: float, fn: Callable[..., None], *args: Any) -> None:
        assert self._clock is not None, "the walk has not started"
        self._clock.call_at(t_us * self.scale, fn, *args)

    def _computed(self, r: int, op: Op) -> None:
        rk = self.ranks[r]
        rk.busy[op.kind] = False
        self._finish(r, op)
        self._pump(r, op.kind)

    def comm_done(self, r: int, op: Op) -> None:
        """Rank r's part of a meeting ended (called by the meeting)."""
        self._finish(r, op)

    def _finish(self, r: int, op: Op) -> None:
        rk = self.ranks[r]
        rk.spans[op.id].end = self.now()
        rk.left -= 1
        for c in rk.children[op.id]:
            rk.waiting[c] -= 1
            if rk.waiting[c] == 0:
                self._start(r, rk.ops[c])
        if rk.left == 0:
            self._begin(r)
