"""Workloads: who sends how much to whom, and when (seeded).

Every message is striped over its pair's QPs (QP scaling, as RoCE does);
it completes when the receiver has placed every part. The collectives
(ring all-reduce, all-to-all, sendrecv) are built as NCCL runs them, in
collectives.py. `flows` lists the pairs, each with its messages, size and
start time (the paper's ib_write_bw runs). `chakra` is a trace's ranks,
each walking its graph (chakra/walker.py: its messages are posted as the
walk reaches them)."""

from __future__ import annotations

import random

from fabric_sim.scenario import Workload, collectives
from fabric_sim.scenario.chakra.walker import Walker
from fabric_sim.scenario.message import Message


def hosts(w: Workload, nics: int, hosts_per_t0: int = 1) -> list[int]:
    """The workload's hosts in rank order. `spread` puts consecutive ranks
    in different racks (rank r of N in rack r mod R), as a multi-NIC
    server's rail-aligned NCCL ring does: every ring hop crosses the spines.
    A trace's ranks are the first NICs, as many as it has ranks."""
    hs = list(range(len(w.trace.ranks) if w.trace is not None else w.hosts or nics))
    if w.placement == "spread":
        hs.sort(key=lambda h: (h % hosts_per_t0, h // hosts_per_t0))
    return hs


def walker(w: Workload, nics: int, hosts_per_t0: int = 1) -> Walker:
    """The walk of the workload's trace, rank r on the r-th of its hosts."""
    assert w.trace is not None, f"pattern {w.pattern} has no trace"
    return Walker(w.trace, hosts(w, nics, hosts_per_t0), w.iterations, w.chunk_bytes, w.start_us)


def build(w: Workload, nics: int, seed: int, hosts_per_t0: int = 1) -> list[Message]:
    if w.trace is not None:  # posted by the walk (wiring.describe keeps the walker), never at a start time
        return walker(w, nics, hosts_per_t0).msgs
    rng = random.Random(seed)
    hs = hosts(w, nics, hosts_per_t0)
    if w.pattern == "flows":
        return [Message(i, f.src, f.dst, f.size, f.start_us) for i, f in
                enumerate(f for f in w.flows for _ in range(f.messages))]
    if len(hs) < 2:  # no pair: a permutation would search for a derangement forever, the rest send nothing
        raise ValueError(f"{w.pattern} needs at least 2 hosts, got {len(hs)}")
    if w.pattern == "ring_allreduce":
        return collectives.ring(w.size, w.messages, hs, w.start_us, w.chunk_bytes)
    if w.pattern == "all_to_all":
        return collectives.p2p(w.size, w.messages, collectives.all_to_all_pairs(hs), w.start_us,
                               w.chunk_bytes)
    if w.pattern == "sendrecv":
        return collectives.p2p(w.size, w.messages, [(h, hs[(i + 1) % len(hs)]) for i, h in enumerate(hs)],
                               w.start_us, w.chunk_bytes)
    pairs: list[tuple[int, int]]
    if w.pattern == "permutation":
        order = hs[:]
        while True:  # a derangement: nobody sends to itself
            rng.shuffle(order)
            if all(a != b for a, b in zip(hs, order, strict=True)):
                break
        pairs = list(zip(hs, order, strict=True))
    else:  # incast
        target = hs[w.target]
        others = [h for h in hs if h != target]
        assert w.fan_in is not None  # filled in when the scenario was parsed (capacity.workload)
        pairs = [(s, target) for s in rng.sample(others, w.fan_in)]
    msgs: list[Message] = []
    for a, b in pairs:
        for _ in range(w.messages):
            msgs.append(Message(len(msgs), a, b, w.size, w.start_us))
    return msgs


def pairs_of(msgs: list[Message]) -> list[tuple[int, int]]:
    return list(dict.fromkeys((m.src, m.dst) for m in msgs))
