"""How much memory a run will take at its peak, from its topology and
workload, before building either: the process's own (the interpreter,
the simulator, matplotlib), the set-up (measured costs per NIC, switch,
cable and QP: bench/footprint.py, peak RSS of the set-up at several
shapes, least squares, checked against a larger fabric), the packets in
flight per NIC and per cable (fitted from `make bench`'s scale table, the
peak RSS of its permutation at 64 to 16,384 NICs, bench/results/latest.md),
and every message of the workload as a finished run holds it, counted
without building it (a collective in small chunks is hundreds of
millions of messages). Where Ray hands a finished run to another process,
that process's copy is counted too. tests/sim/test_memory_bound.py holds
the sum to the scale table and to whole mrc-sim processes, and the
per-message costs to what runs measure.

A run that would not fit in what this process may still take (the
machine's free memory, its cgroup's limit, ulimit -v; or --max-memory,
which overrides them) is refused up front, naming the figure and the
flag, not minutes into building it."""

from __future__ import annotations

import math
import resource
from pathlib import Path

from control_plane.topology import Topology
from fabric_sim.scenario import Scenario, Transport, Workload, collectives
from fabric_sim.scenario.chakra.checks import Meeting, meetings
from fabric_sim.scenario.chakra.trace import Coll, Kind
from fabric_sim.scenario.chakra.walker import links
from fabric_sim.scenario.chakra.walker import pairs as trace_pairs
from fabric_sim.scenario.fields import ScenarioError

# Bytes of Python heap, measured by bench/footprint.py (Python 3.11,
# x86_64): least squares over 10 set-up-only runs of 64-1,024 NICs (refit
# 2026-11-27: egress queues as lists, each switch's DSCP class table, the
# EV profiles' slot bit masks); at 512 NICs x 8 planes (larger than any
# fitted) the sum was within 1% of the heap.
PER_NIC = 14_300  # the NIC model, its endpoint, its slot tables
PER_SWITCH = 3_400  # the switch model and its entries
PER_CABLE = 2_100  # both directions' egress queues
PER_QP = 29_900  # both ends' QP state, EV profiles and NIC plan entries
RSS_PER_HEAP = 1.05  # peak RSS growth per byte of heap (measured 1.02 at 512 NICs x 8 planes)
# Bytes of heap per message at a run's peak, every message delivered (tracemalloc, Python 3.11): the
# ledger's posted size and placed ranges (about 60%), the Message and its parts, the collective's program
# entry; measured 1,335 (permutation), 1,395 (all-to-all) and 1,431 (ring all-reduce in 1 KiB chunks).
PER_MESSAGE = 1_450
# A finished run's message in the process that reports it, where Ray ran the run in another: pickled,
# unpickled, summarized (measured 914 for a permutation's, 1,205 for a ring's).
PER_REPORTED = 1_300
# A trace's node in one iteration on one rank: its span in the walk's log and its place in the walk (tracemalloc,
# Python 3.11: 247 B at 2 ranks x 2,000 and x 8,000 nodes, 2 iterations; tests/sim/test_chakra_walk.py holds it
# within 25%). The trace itself was read when the scenario was parsed: it is in memory before the estimate.
PER_NODE = 250
# Bytes of RSS: a process's own, the interpreter with the simulator and matplotlib imported (mrc-sim of
# 2 NICs peaked at 113 MiB with its figures, 20,000 ring messages at 134; the bench's 64-NIC run at 0.10
# GiB); and the packets in flight
# (their frames, events and endpoint state) per NIC taking part and per cable, the slopes of a least-squares
# fit of the bench's scale table (64 to 16,384 NICs, compiled; the interpreted build peaked at 0.339 GiB at
# 1,024 NICs against 0.33 compiled) less the set-up and messages above: the measured peak is 0.81-0.98
# of the estimate from 1,024 NICs up, and never over it.
BASE = 120 << 20
IN_FLIGHT_PER_NIC = 110_000
IN_FLIGHT_PER_CABLE = 9_550
MAX_MEMORY = 1 << 50  # --max-memory: no machine has more


def counts(topo: Topology, qps: int, msgs: int = 0, nodes: int = 0) -> dict[str, int]:
    """NICs, switches, cables and QPs of the fabric, and the workload's messages (and a trace's nodes)."""
    cables = topo.planes * (topo.t0_per_plane * topo.t1_per_plane + topo.nics)
    return {"nics": topo.nics, "switches": topo.switches, "cables": cables, "qps": qps, "messages": msgs,
            **({"nodes": nodes} if nodes else {})}


def setup(topo: Topology, qps: int) -> int:
    """Bytes of RSS the fabric and `qps` QPs (connections, both ends) take once built."""
    c = counts(topo, qps)
    heap = PER_NIC * c["nics"] + PER_SWITCH * c["switches"] + PER_CABLE * c["cables"] + PER_QP * c["qps"]
    return int(heap * RSS_PER_HEAP)


def need(sc: Scenario, t: Transport, apart: bool = False) -> int:
    """Bytes of RSS a run of `sc` with `t` takes at its peak; `apart`: the
    run goes to another process (a Ray worker), which the result comes
    back from, so both are counted."""
    topo = t.topology or sc.topology
    w = sc.workload
    qps, msgs, active = pairs(w, topo.nics) * (t.qps_per_pair or w.qps_per_pair), messages(w, topo.nics), \
        hosts(w, topo.nics)
    cables = counts(topo, qps)["cables"]
    in_flight = active * (IN_FLIGHT_PER_NIC + IN_FLIGHT_PER_CABLE * cables / topo.nics)
    total = BASE + setup(topo, qps) + in_flight + (PER_MESSAGE * msgs + PER_NODE * nodes(w)) * RSS_PER_HEAP
    if apart:
        total += BASE + PER_REPORTED * msgs * RSS_PER_HEAP
    return int(total)


def available() -> tuple[int, str] | None:
    """Bytes this process may still take, and where the bound is, in
    words: the least of the machine's free memory (MemAvailable), what
    its cgroup's limit leaves (a container) and what ulimit -v leaves;
    None if none is known."""
    found = []
    free = _status("/proc/meminfo", "MemAvailable:")
    if free is not None:
        of = _status("/proc/meminfo", "MemTotal:")
        found.append((free, f"this machine has {size(free)} free" + (f" of {size(of)}" if of else "")))
    room = _cgroup_room()
    if room is not None:
        found.append((room, f"its cgroup allows {size(room)} more"))
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit != resource.RLIM_INFINITY:
        left = max(0, limit - (_status("/proc/self/status", "VmSize:") or 0))
        found.append((left, f"ulimit -v allows {size(left)} more"))
    return min(found) if found else None


def _status(path: str, key: str) -> int | None:
    """A `key: N kB` line of a /proc file, in bytes."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room() -> int | None:
    """memory.max less memory.current of this process's cgroup (v2; v1's
    limit_in_bytes less usage_in_bytes), None where unlimited or unknown."""
    try:
        rel = next(line.split(":", 2)[2].strip() for line in Path("/proc/self/cgroup").read_text().splitlines()
                   if line.startswith("0::"))
        where, names = Path("/sys/fs/cgroup") / rel.lstrip("/"), ("memory.max", "memory.current")
    except (OSError, StopIteration, IndexError):
        where, names = Path("/sys/fs/cgroup/memory"), ("memory.limit_in_bytes", "memory.usage_in_bytes")
    try:
        limit, used = ((where / n).read_text().strip() for n in names)
        if limit == "max" or int(limit) >= 1 << 60:
            return None
        return max(0, int(limit) - int(used))
    except (OSError, ValueError):
        return None


def _room(memory: int | None) -> tuple[int, str] | None:
    """`memory` (--max-memory) in words, or what this process may take."""
    return (memory, f"--max-memory allows {size(memory)}") if memory is not None else available()


def too_big(sc: Scenario, t: Transport, memory: int | None = None, apart: bool = False) -> str | None:
    """Why the run would not fit in `memory` bytes (--max-memory; by default
    what this process may take, `available`), or None if it fits or
    nothing is known."""
    room = _room(memory)
    want = need(sc, t, apart)
    if room is None or want <= room[0]:
        return None
    topo = t.topology or sc.topology
    w = sc.workload
    c = counts(topo, pairs(w, topo.nics) * (t.qps_per_pair or w.qps_per_pair), messages(w, topo.nics), nodes(w))
    walked = f", {c['nodes']:,} trace nodes walked" if "nodes" in c else ""
    flag = "a larger --max-memory" if memory is not None else f"--max-memory {math.ceil(want / 2**30 * 10) / 10:g}G"
    return (f"the run would need about {size(want)} ({c['nics']:,} NICs, {c['switches']:,} switches, {c['qps']:,} "
            f"QPs, {c['messages']:,} messages{walked}) and {room[1]}: a smaller topology, fewer QPs or messages "
            f"(larger chunk_bytes), or {flag} to run it anyway")


def size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def pairs(w: Workload, nics: int) -> int:
    """How many (sender, receiver) pairs the workload has, without building it."""
    if w.trace is not None:
        return len(trace_pairs(w.trace))
    h = min(w.hosts or nics, nics)
    if w.pattern == "all_to_all":
        return h * (h - 1)
    if w.pattern == "incast":
        assert w.fan_in is not None  # filled in when the scenario was parsed (capacity.workload)
        return int(w.fan_in)
    if w.pattern == "flows":
        return len({(f.src, f.dst) for f in w.flows})
    return h  # permutation and ring: one pair per host


def messages(w: Workload, nics: int) -> int:
    """How many messages the workload makes, without building it (what
    workload.build would return; collectives.py's chunking, counted)."""
    if w.trace is not None:
        return w.iterations * sum(_meeting_messages(m, w.chunk_bytes) for m in meetings(w.trace)[0])
    h, size, reps = min(w.hosts or nics, nics), w.size, int(w.messages)
    if w.pattern == "flows":
        return sum(int(f.messages) for f in w.flows)
    if w.pattern == "ring_allreduce":
        return _ring_messages(size, reps, h, int(w.chunk_bytes or collectives.RING_CHUNK))
    if w.pattern in ("all_to_all", "sendrecv"):
        chunks = -(-size // int(w.chunk_bytes or collectives.P2P_CHUNK))
        return pairs(w, nics) * reps * chunks
    return pairs(w, nics) * reps


def _meeting_messages(m: Meeting, chunk_bytes: int | None) -> int:
    """walker.build's message count for a meeting (its rule; a test holds them equal)."""
    n, size = len(m.ranks), m.ops[0].size
    coll = m.ops[0].coll if m.ops[0].kind is Kind.COLL else None
    if n < 2:
        return 0
    if coll in (None, Coll.ALL_TO_ALL, Coll.BROADCAST):
        part = max(1, size // n) if coll is Coll.ALL_TO_ALL else size
        chunk = chunk_bytes or (collectives.BROADCAST_CHUNK if coll is Coll.BROADCAST else collectives.P2P_CHUNK)
        return len(links(m)) * -(-part // chunk)
    whole = _ring_messages(size * n if coll is Coll.ALL_GATHER else size, 1, n, chunk_bytes or collectives.RING_CHUNK)
    return whole if coll is Coll.ALL_REDUCE else whole // 2  # half the steps, each step alike


def _ring_messages(size: int, reps: int, n: int, chunk: int) -> int:
    """collectives.ring's message count: every full loop alike, the short last one counted alone."""
    full, rest = divmod(size, n * chunk)
    return reps * (full * _ring_loop(n * chunk, n, chunk) + (_ring_loop(rest, n, chunk) if rest else 0))


def _ring_loop(data: int, n: int, chunk: int) -> int:
    """Messages of one loop over `data` bytes: 2(N-1) steps, each rank sending one chunk's slices."""
    real = min(chunk, -(-data // n))
    whole, part = divmod(data, real)  # chunks of `real` bytes, then one shorter (data <= n * real)
    per_step = whole * _slice_count(real, chunk) + (_slice_count(part, chunk) if part else 0)
    return (2 * n - 2) * per_step


def _slice_count(nelem: int, chunk: int) -> int:
    """How many slices collectives.ring cuts a chunk of `nelem` bytes into (its rule; a test holds them equal)."""
    size = max(-(-nelem // collectives.SLICES_PER_CHUNK), chunk // collectives.SLICES_PER_CHUNK // 32, 1)
    return -(-nelem // size)


def offered_bytes(w: Workload, nics: int) -> int:
    """The bytes the workload offers (the sum of its messages' sizes), without building it."""
    if w.trace is not None:
        return w.iterations * sum(_meeting_bytes(m) for m in meetings(w.trace)[0])
    h, size, reps = min(w.hosts or nics, nics), w.size, int(w.messages)
    if w.pattern == "flows":
        return sum(int(f.messages) * int(f.size) for f in w.flows)
    if w.pattern == "ring_allreduce":
        return reps * (2 * h - 2) * size  # each step moves the whole buffer, a chunk per rank
    return pairs(w, nics) * reps * size


def _meeting_bytes(m: Meeting) -> int:
    """About the bytes a meeting's messages carry (walker.build's; a ring's chunks rounded): what
    the parallel runner's estimate of time left weighs a run by."""
    n, size = len(m.ranks), m.ops[0].size
    coll = m.ops[0].coll if m.ops[0].kind is Kind.COLL else None
    if n < 2:
        return 0
    per_step: dict[Coll | None, tuple[int, int]] = {  # bytes on each link per step, steps
        None: (size, 1), Coll.ALL_TO_ALL: (max(1, size // n), 1), Coll.BROADCAST: (size, 1),
        Coll.ALL_GATHER: (size, n - 1), Coll.ALL_REDUCE: (size // n, 2 * (n - 1)),
        Coll.REDUCE_SCATTER: (size // n, n - 1)}
    each, steps = per_step[coll]
    return len(links(m)) * each * steps


def nodes(w: Workload) -> int:
    """A trace's nodes walked: every rank's, every iteration (0 without a trace)."""
    return w.iterations * sum(len(ops) for ops in w.trace.ranks) if w.trace is not None else 0


def hosts(w: Workload, nics: int) -> int:
    """How many NICs take part in the workload (each holds packets in flight)."""
    if w.pattern == "flows":
        return len({f.src for f in w.flows} | {f.dst for f in w.flows})
    if w.pattern == "incast":
        assert w.fan_in is not None  # filled in when the scenario was parsed (capacity.workload)
        return min(int(w.fan_in) + 1, nics)
    return min(w.hosts or nics, nics)


def check(sc: Scenario, t: Transport, memory: int | None = None, apart: bool = False) -> None:
    """Refuse, before anything is built, a run that would not fit in
    `memory` (--max-memory; by default what this process may take)."""
    why = too_big(sc, t, memory, apart)
    if why:
        raise ScenarioError(f"transports[{t.name}]" if t.topology else "topology", why)


def check_all(runs: list[tuple[Scenario, Transport]], memory: int | None, apart: bool, at_once: int) -> None:
    """Refuse, before any is built, runs of which one would not fit, or
    the `at_once` largest (this machine's runs in parallel) would not
    together, naming the --jobs at which they would."""
    for sc, t in runs:
        check(sc, t, memory, apart)
    room = _room(memory)
    wants = sorted((need(sc, t, apart) for sc, t in runs), reverse=True)[:max(1, at_once)]
    if room is None or len(wants) < 2 or sum(wants) <= room[0]:
        return
    fit = next(k for k in range(len(wants), 0, -1) if sum(wants[:k]) <= room[0] or k == 1)
    raise ScenarioError("--jobs", f"{len(wants)} runs at once would need about {size(sum(wants))} together and "
                                  f"{room[1]}: --jobs {fit} runs {fit} at a time")
