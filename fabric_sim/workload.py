"""Workloads: who sends how much to whom, and when (seeded).

Every message is striped over its pair's QPs (QP scaling, as RoCE does);
it completes when the receiver has placed every part. Ring all-reduce
sends 2(N-1) chunks of size/N around the ring, each step started by the
arrival of the previous step's chunk. `flows` lists the pairs, each with
its messages, size and start time (the paper's ib_write_bw runs)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from fabric_sim.scenario import Workload


@dataclass(slots=True)
class Message:
    id: int
    src: int
    dst: int
    size: int
    start: float | None  # None: started by the message before it in the ring
    step: int = 0
    next: "Message | None" = None  # ring: the step this one's arrival starts
    posted_at: float = -1.0
    done_at: float = -1.0
    parts_left: int = 0
    parts: dict = field(default_factory=dict)  # (receiver QP, msg_id) -> True


def hosts(w: Workload, nics: int, hosts_per_t0: int = 1) -> list[int]:
    """The workload's hosts in rank order. `spread` puts consecutive ranks
    in different racks (rank r of N in rack r mod R), as a multi-NIC
    server's rail-aligned NCCL ring does: every ring hop crosses the spines."""
    hs = list(range(w.hosts or nics))
    if w.placement == "spread":
        hs.sort(key=lambda h: (h % hosts_per_t0, h // hosts_per_t0))
    return hs


def build(w: Workload, nics: int, seed: int, hosts_per_t0: int = 1) -> list[Message]:
    rng = random.Random(seed)
    hs = hosts(w, nics, hosts_per_t0)
    if w.pattern == "flows":
        return [Message(i, f.src, f.dst, f.size, f.start_us) for i, f in
                enumerate(f for f in w.flows for _ in range(f.messages))]
    pairs: list[tuple[int, int]]
    if len(hs) < 2:  # no pair: a permutation would search for a derangement forever
        raise ValueError(f"{w.pattern} needs at least 2 hosts, got {len(hs)}")
    if w.pattern == "permutation":
        order = hs[:]
        while True:  # a derangement: nobody sends to itself
            rng.shuffle(order)
            if all(a != b for a, b in zip(hs, order)):
                break
        pairs = list(zip(hs, order))
    elif w.pattern == "all_to_all":
        pairs = [(a, b) for a in hs for b in hs if a != b]
    elif w.pattern == "incast":
        target = hs[w.target]
        others = [h for h in hs if h != target]
        pairs = [(s, target) for s in rng.sample(others, w.fan_in)]
    else:  # ring_allreduce
        return _ring(w, hs)
    msgs = []
    for a, b in pairs:
        for _ in range(w.messages):
            msgs.append(Message(len(msgs), a, b, w.message_bytes, w.start_us))
    return msgs


def _ring(w: Workload, hs: list[int]) -> list[Message]:
    n = len(hs)
    chunk = max(1, -(-w.message_bytes // n))
    msgs: list[Message] = []
    for rep in range(w.messages):
        first = len(msgs)
        steps = [[Message(first + s * n + i, hs[i], hs[(i + 1) % n], chunk, None, s) for i in range(n)]
                 for s in range(2 * (n - 1))]
        for s, row in enumerate(steps):
            for i, m in enumerate(row):
                if s == 0:
                    m.start = w.start_us if rep == 0 else None
                if s + 1 < len(steps):
                    m.next = steps[s + 1][(i + 1) % n]  # the receiver forwards it next step
            msgs += row
        if rep:
            # The next all-reduce starts on each host when the last one's final chunk arrived.
            prev_last = msgs[first - n:first]
            for i, m in enumerate(prev_last):
                m.next = msgs[first + (i + 1) % n]
    return msgs


def pairs_of(msgs: list[Message]) -> list[tuple[int, int]]:
    return list(dict.fromkeys((m.src, m.dst) for m in msgs))
