"""How much memory a run will take, from its topology and workload, before
building either: a sum of measured costs per NIC, switch, cable and QP
(bench/footprint.py measures them: peak RSS of the set-up at several
shapes, least squares, checked against a larger fabric) and per message
of the workload, counted without building it (a collective in small
chunks is hundreds of millions of messages; tests/sim/test_footprint.py
holds the per-message costs to what a run measures). A run that would
not fit in the memory the machine has free is refused up front, not
minutes into building it."""

from __future__ import annotations

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
BASE = 0
PER_NIC = 14_300  # the NIC model, its endpoint, its slot tables
PER_SWITCH = 3_400  # the switch model and its entries
PER_CABLE = 2_100  # both directions' egress queues
PER_QP = 29_900  # both ends' QP state, EV profiles and NIC plan entries
RSS_PER_HEAP = 1.05  # peak RSS growth per byte of heap (measured 1.02 at 512 NICs x 8 planes)
# Bytes of heap per message (tracemalloc, Python 3.11): one posted at the start (permutation, incast, flows)
# holds the Message, the driver's and the ledger's entries and the endpoint's send queue entry (measured
# 662); a collective's, released as others arrive, the Message, its release callback and the ring's
# program entry (measured 395-413), and few are posted at once.
PER_MESSAGE = 680
PER_RELEASED = 420
# A trace's node in one iteration on one rank: its span in the walk's log and its place in the walk (tracemalloc,
# Python 3.11: 247 B at 2 ranks x 2,000 and x 8,000 nodes, 2 iterations; tests/sim/test_chakra_walk.py holds it
# within 25%). The trace itself was read when the scenario was parsed: it is in memory before the estimate.
PER_NODE = 250


def counts(topo: Topology, qps: int, msgs: int = 0, nodes: int = 0) -> dict[str, int]:
    """NICs, switches, cables and QPs of the fabric, and the workload's messages (and a trace's nodes)."""
    cables = topo.planes * (topo.t0_per_plane * topo.t1_per_plane + topo.nics)
    return {"nics": topo.nics, "switches": topo.switches, "cables": cables, "qps": qps, "messages": msgs,
            **({"nodes": nodes} if nodes else {})}


def estimate(topo: Topology, qps: int, msgs: int = 0, per_message: int = PER_MESSAGE, nodes: int = 0) -> int:
    """Bytes the fabric, `qps` QPs (connections, both ends), `msgs` messages
    and `nodes` trace nodes walked (every rank's, every iteration) will take."""
    c = counts(topo, qps)
    heap = BASE + PER_NIC * c["nics"] + PER_SWITCH * c["switches"] + PER_CABLE * c["cables"] + PER_QP * c["qps"]
    return int((heap + per_message * msgs + PER_NODE * nodes) * RSS_PER_HEAP)


def available() -> int | None:
    """Bytes the machine can still give (MemAvailable), None if unknown."""
    return _meminfo("MemAvailable:")


def total() -> int | None:
    """The machine's memory (MemTotal), None if unknown."""
    return _meminfo("MemTotal:")


def _meminfo(key: str) -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def too_big(topo: Topology, qps: int, free: int | None = None, msgs: int = 0,
            per_message: int = PER_MESSAGE, nodes: int = 0) -> str | None:
    """Why the run would not fit in `free` bytes (the machine's free
    memory by default), or None if it fits or nothing is known."""
    free = available() if free is None else free
    need = estimate(topo, qps, msgs, per_message, nodes)
    if free is None or need <= free:
        return None
    c = counts(topo, qps, msgs, nodes)
    of = total()
    walked = f", {nodes:,} trace nodes walked" if nodes else ""
    return (f"the run would need about {size(need)} ({c['nics']:,} NICs, {c['switches']:,} switches, "
            f"{c['cables']:,} cables, {c['qps']:,} QPs, {c['messages']:,} messages{walked}) and this machine has "
            f"{size(free)} free{f' of {size(of)}' if of else ''}: a smaller topology, fewer QPs per pair, or "
            "fewer messages (fewer per pair, larger chunk_bytes)")


def size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def pairs(w: Workload, nics: int) -> int:
    """How many (sender, receiver) pairs the workload has, without building it."""
    h = min(w.hosts or nics, nics)
    if w.trace is not None:
        return len(trace_pairs(w.trace))
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


def check(sc: Scenario, t: Transport) -> None:
    """Refuse, before anything is built, a run that would not fit in memory."""
    topo = t.topology or sc.topology
    w = sc.workload
    per = PER_RELEASED if w.pattern in collectives.PATTERNS or w.trace is not None else PER_MESSAGE
    nodes = w.iterations * sum(len(ops) for ops in w.trace.ranks) if w.trace is not None else 0
    why = too_big(topo, pairs(w, topo.nics) * (t.qps_per_pair or w.qps_per_pair), msgs=messages(w, topo.nics),
                  per_message=per, nodes=nodes)
    if why:
        raise ScenarioError(f"transports[{t.name}]" if t.topology else "topology", why)
