"""What makes a trace unrunnable beyond one node, found before anything
runs: ids given twice, a dependency on a node the file does not have, a
cycle in a rank's graph, a send no rank receives (or the reverse), a
collective its group's ranks do not all run alike, and ranks that would
wait on each other forever (a cycle through the collectives and messages
that join them).

How nodes of different ranks meet (match): the k-th collective of a group
on each of its ranks, in file order, is one collective (NCCL runs a
communicator's collectives in the order they are issued, the same on every
rank); the k-th send from rank a to rank b with tag t is the k-th receive
at b from a with tag t."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TypeVar

from fabric_sim.scenario.chakra.trace import Kind, Op, Trace

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Meeting:
    """Nodes of several ranks that run as one transfer: a collective of a
    group, or a send and its receive."""

    label: str  # how reports name it: `all_reduce grad_b3 #2` or `send 0->1 tag 7 #0`
    ranks: tuple[int, ...]  # a collective's ranks in ring order; a message's (sender, receiver)
    ops: tuple[Op, ...]  # each rank's node, in the order of `ranks`


def meetings(t: Trace) -> tuple[list[Meeting], list[str]]:
    """Every meeting of the trace, and what does not meet."""
    colls, errors = _collectives(t)
    p2p, bad = _messages(t)
    return colls + p2p, errors + bad


def check(t: Trace) -> list[str]:
    """Every mistake of the trace, each a line naming its file and node."""
    errors = [e for r, ops in enumerate(t.ranks) for e in _graph(t.file(r), ops)]
    if errors:  # the rest reads the graphs as graphs
        return errors
    found, errors = meetings(t)
    return errors or _stuck(t, found)


def _graph(name: str, ops: tuple[Op, ...]) -> list[str]:
    """Ids once each, every dependency a node of the file, no cycle."""
    ids: dict[int, Op] = {}
    errors = []
    for op in ops:
        if op.id in ids:
            errors.append(f"{name}: node id {op.id} is given twice ({ids[op.id].name!r} and {op.name!r})")
        ids[op.id] = op
    for op in ops:
        errors += [f"{name}: node {op.id} ({op.name}) depends on node {d}, which the file does not have"
                   for d in op.deps if d not in ids]
    if errors:
        return errors
    cycle = _cycle({op.id: op.deps for op in ops})
    return [f"{name}: a dependency cycle: {' -> '.join(f'{i} ({ids[i].name})' for i in cycle)}"] if cycle else []


def _cycle(deps: dict[K, tuple[K, ...]]) -> list[K]:
    """A cycle of `deps` (node -> what it waits on) as a path that returns
    to its start, or [] if there is none (Kahn's order, then a walk among
    what it could not place)."""
    waiting = {k: len(set(v)) for k, v in deps.items()}
    after: dict[K, list[K]] = defaultdict(list)
    for k, v in deps.items():
        for d in set(v):
            after[d].append(k)
    ready = deque(k for k, n in waiting.items() if n == 0)
    while ready:
        for k in after[ready.popleft()]:
            waiting[k] -= 1
            if waiting[k] == 0:
                ready.append(k)
    left = {k for k, n in waiting.items() if n}
    if not left:
        return []
    seen: list[K] = []
    k = min(left, key=str)
    while k not in seen:  # every node left waits on one left: follow until one repeats
        seen.append(k)
        k = next(d for d in deps[k] if d in left)
    return seen[seen.index(k):] + [k]


def _collectives(t: Trace) -> tuple[list[Meeting], list[str]]:
    """Each group's k-th collective on every member, the same on each."""
    per: dict[str, dict[int, list[Op]]] = defaultdict(lambda: defaultdict(list))  # group -> rank -> its colls
    errors = []
    for r, ops in enumerate(t.ranks):
        for op in ops:
            if op.kind is not Kind.COLL:
                continue
            where = f"{t.file(r)}: node {op.id} ({op.name})"
            if op.group and op.group not in t.groups:
                known = ", ".join(sorted(t.groups)) or "none"
                errors.append(f"{where}: pg_name {op.group!r} is not in {t.prefix}.json (groups: {known})")
            elif r not in t.members(op.group):
                errors.append(f"{where}: rank {r} is not in its group {op.group!r}")
            else:
                per[op.group][r].append(op)
    out = []
    for group, by_rank in per.items():
        members = t.members(group)
        longest = max(len(by_rank[r]) for r in members)
        for k in range(longest):
            each = [by_rank[r][k] if k < len(by_rank[r]) else None for r in members]
            first = next(op for op in each if op is not None)
            odd = next((i for i, op in enumerate(each) if op is None or (op.coll, op.size) != (first.coll, first.size)),
                       None)
            if odd is not None:
                errors.append(_mismatch(t, group, k, members, each, odd))
                break  # the rest of this group's collectives are off by one too
            label = f"{first.coll.value if first.coll else ''} {first.name} #{k}"
            out.append(Meeting(label, members, tuple(op for op in each if op is not None)))
    return out, errors


def _mismatch(t: Trace, group: str, k: int, members: tuple[int, ...], ops: list[Op | None], odd: int) -> str:
    first = next(op for op in ops if op is not None)
    r0 = members[ops.index(first)]
    what = f"collective #{k} of group {group or '(every rank)'}"
    op = ops[odd]

    def desc(o: Op) -> str:
        return f"{o.coll.value if o.coll else ''} of {o.size:,} B (node {o.id})"

    theirs = "nothing" if op is None else desc(op)
    return f"{t.file(members[odd])}: {what} is {theirs}, where {t.file(r0)} runs {desc(first)}"


def _messages(t: Trace) -> tuple[list[Meeting], list[str]]:
    """The k-th send of (src, dst, tag) with the k-th receive of the same."""
    sends: dict[tuple[int, int, int], list[Op]] = defaultdict(list)
    recvs: dict[tuple[int, int, int], list[Op]] = defaultdict(list)
    errors = []
    n = len(t.ranks)
    for r, ops in enumerate(t.ranks):
        for op in ops:
            if op.kind not in (Kind.SEND, Kind.RECV):
                continue
            if not 0 <= op.peer < n or op.peer == r:
                why = "itself" if op.peer == r else f"rank {op.peer}, which has no file (the trace has {n} ranks)"
                errors.append(f"{t.file(r)}: node {op.id} ({op.name}): a {op.kind.value} with {why}")
            elif op.kind is Kind.SEND:
                sends[(r, op.peer, op.tag)].append(op)
            else:
                recvs[(op.peer, r, op.tag)].append(op)
    out = []
    for key in sorted(set(sends) | set(recvs)):
        a, b, tag = key
        ss, rs = sends[key], recvs[key]
        for k, (s, v) in enumerate(zip(ss, rs, strict=False)):
            if s.size != v.size:
                errors.append(f"{t.file(a)}: node {s.id} ({s.name}) sends {s.size:,} B to rank {b} (tag {tag}), "
                              f"which receives {v.size:,} B (node {v.id})")
            out.append(Meeting(f"send {a}->{b} tag {tag} #{k}", (a, b), (s, v)))
        if len(ss) > len(rs):
            s = ss[len(rs)]
            errors.append(f"{t.file(a)}: node {s.id} ({s.name}): a send to rank {b} with tag {tag} that rank {b} "
                          f"never receives ({len(ss)} sends, {len(rs)} receives)")
        elif len(rs) > len(ss):
            v = rs[len(ss)]
            errors.append(f"{t.file(b)}: node {v.id} ({v.name}): a receive from rank {a} with tag {tag} that rank "
                          f"{a} never sends ({len(rs)} receives, {len(ss)} sends)")
    return out, errors


def _stuck(t: Trace, found: list[Meeting]) -> list[str]:
    """Ranks that wait on each other: a cycle once each meeting's nodes are
    one (each waits on what any of them waits on)."""
    one: dict[tuple[int, int], tuple[int, int]] = {}  # (rank, node) -> the (rank, node) standing for its meeting
    names = {(r, op.id): f"rank {r} node {op.id} ({op.name})" for r, ops in enumerate(t.ranks) for op in ops}
    for m in found:
        head = (m.ranks[0], m.ops[0].id)
        names[head] = m.label
        for r, op in zip(m.ranks, m.ops, strict=True):
            one[(r, op.id)] = head
    deps: dict[tuple[int, int], set[tuple[int, int]]] = defaultdict(set)
    for r, ops in enumerate(t.ranks):
        for op in ops:
            me = one.get((r, op.id), (r, op.id))
            deps[me] |= {one.get((r, d), (r, d)) for d in op.deps} - {me}
    cycle = _cycle({k: tuple(v) for k, v in deps.items()})
    if not cycle:
        return []
    path = " -> ".join(names[k] for k in cycle)
    return [f"the ranks would wait on each other forever (a cycle through collectives and messages): {path}"]
