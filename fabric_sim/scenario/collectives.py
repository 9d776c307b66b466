"""Collectives as NCCL runs them over the network (Simple protocol, one
channel, one NIC per rank), and their bandwidth as nccl-tests reports it.

Ring all-reduce is a reduce-scatter then an all-gather: 2(N-1) steps per
loop; at step s rank r sends data chunk (r-1-s) mod N to rank r+1 (NCCL's
all_reduce.h). Each chunk moves in slices, and a slice of step s may go
once the same slice of step s-1 has arrived: the ring is pipelined. A rank
runs its slices in order (loop, step, slice), and a connection holds at
most two chunks' slices its receiver has not yet consumed (NCCL's FIFO of
NCCL_STEPS slots, twice a chunk's, so that a rank can send step s+1's
chunk while step s's fills the FIFO: with one chunk every rank would wait
on its successor's free slot and the ring would deadlock; a slice is
consumed when the receiver forwards it, or, at the last step, when it
arrives).

All-to-all and sendrecv are point-to-point streams: each pair's bytes in
P2P_CHUNK messages, at most P2P_IN_FLIGHT of them outstanding; all-to-all
runs every pair at once, sendrecv sends to rank r+1 while receiving from
rank r-1 (nccl-tests' sendrecv_perf).

Defaults are NCCL's (src/include/collectives.h, src/init.cc):
NCCL_BUFFSIZE 4 MiB over NCCL_STEPS = 8 slots of 512 KiB; an all-reduce
chunk spans NCCL_STEPS/2 slots (ALLREDUCE_CHUNKSTEPS: 2 MiB), a slice
NCCL_STEPS/4 (ALLREDUCE_SLICESTEPS: 1 MiB, two per chunk), so four slices
fit the FIFO; a p2p network chunk is NCCL_P2P_NET_CHUNKSIZE, 128 KiB, one
slot each. `workload.chunk_bytes` overrides the chunk (the ring's or the
p2p one); the slots stay NCCL's. Small all-reduces shrink the chunk to
size/N and the slice to half of it, no smaller than 1/32 of the full
slice (prims_simple.h); NCCL's LL and LL128 protocols for small sizes
are not modelled.

A trace's collectives (chakra/walker.py) run the same way: reduce-scatter
is the ring all-reduce's first N-1 steps and all-gather its last N-1
(NCCL's reduce_scatter.h and all_gather.h: at step s of the all-gather
rank r forwards chunk (r-s) mod N, its own first), with the same chunk
and slices (REDUCESCATTER_ and ALLGATHER_CHUNKSTEPS/SLICESTEPS are
ALLREDUCE's); broadcast is NCCL's ring broadcast: the root's data down the
ring as a chain, each rank forwarding a chunk once it has arrived, chunks
of one 512 KiB slot (BROADCAST_CHUNKSTEPS = SLICESTEPS = 1), at most
NCCL_STEPS of them unconsumed per connection."""

from __future__ import annotations

from typing import Any

from fabric_sim.scenario.message import Message

NCCL_BUFFSIZE = 4 << 20
NCCL_STEPS = 8
RING_CHUNK = NCCL_BUFFSIZE // NCCL_STEPS * (NCCL_STEPS // 2)  # 2 MiB
SLICES_PER_CHUNK = 2  # ALLREDUCE_CHUNKSTEPS / ALLREDUCE_SLICESTEPS
CHUNKS_IN_FLIGHT = 2  # a connection's FIFO holds NCCL_STEPS / ALLREDUCE_CHUNKSTEPS chunks: 4 slices
P2P_CHUNK = 128 << 10
P2P_IN_FLIGHT = NCCL_STEPS
BROADCAST_CHUNK = NCCL_BUFFSIZE // NCCL_STEPS  # 512 KiB: one slot, one slice
PATTERNS = ("ring_allreduce", "all_to_all", "sendrecv")


def _slices(nelem: int, chunk: int) -> list[int]:
    """A chunk's slice sizes (prims_simple.h: half the chunk, at least 1/32
    of a full slice)."""
    size = max(-(-nelem // SLICES_PER_CHUNK), chunk // SLICES_PER_CHUNK // 32, 1)
    return [min(size, nelem - off) for off in range(0, nelem, size)]


class Ring:
    """The pipelined ring's state: each rank's program of (receive, send)
    operations, run in order as their slices arrive and slots free up."""

    def __init__(self, n: int, in_flight: int):
        self.n, self.in_flight = n, in_flight
        self.ops: list[list[tuple[Message | None, Message | None]]] = [[] for _ in range(n)]
        self.pc = [0] * n  # each rank's next operation
        self.sent = [0] * n  # slices posted on connection r -> r+1
        self.freed = [0] * n  # of those, consumed by rank r+1
        self.arrived: set[int] = set()
        self.rank: dict[int, int] = {}  # receiving host -> its rank

    def done(self, m: Message) -> list[Message]:
        """`m` arrived: what its receiver (and, through freed slots, the ranks
        behind it) may now send."""
        self.arrived.add(m.id)
        return self.run(self.rank[m.dst])

    def run(self, r: int) -> list[Message]:
        out, todo = [], [r]
        while todo:
            r = todo.pop()
            ops = self.ops[r]
            while self.pc[r] < len(ops):
                recv, send = ops[self.pc[r]]
                if recv is not None and recv.id not in self.arrived:
                    break
                if send is not None and self.sent[r] - self.freed[r] >= self.in_flight:
                    break
                self.pc[r] += 1
                if recv is not None:  # its slot on the connection into r is free again
                    self.freed[(r - 1) % self.n] += 1
                    todo.append((r - 1) % self.n)
                if send is not None:
                    self.sent[r] += 1
                    out.append(send)
        return out


def ring(size: int, reps: int, hs: list[int], start: float, chunk_bytes: int | None = None,
         steps: range | None = None, first_id: int = 0) -> list[Message]:
    """The pipelined ring all-reduce of `size` bytes over ranks `hs`, `reps`
    times back to back (`steps`: only those of its 2(N-1), e.g. the first
    N-1, a reduce-scatter). Messages come in the order (rep, loop, step,
    slice, rank), numbered from `first_id`; the first ones carry `start`,
    the rest are released by `Ring`."""
    n, chunk = len(hs), chunk_bytes or RING_CHUNK
    st = Ring(n, CHUNKS_IN_FLIGHT * SLICES_PER_CHUNK)
    st.rank = {h: r for r, h in enumerate(hs)}
    msgs: list[Message] = []
    for _ in range(reps):
        for loop, off in enumerate(range(0, size, n * chunk)):
            real = min(chunk, -(-(size - off) // n))  # NCCL shrinks the chunk of a short last loop
            sent: dict[tuple[int, int, int], Message] = {}  # (step, rank, slice) -> message
            for s in steps or range(2 * n - 2):
                for r in range(n):
                    c = (r - 1 - s) % n
                    for j, b in enumerate(_slices(min(real, size - off - c * real), chunk)):
                        sent[(s, r, j)] = Message(0, hs[r], hs[(r + 1) % n], b, None, s, after=st.done, chunk=c,
                                                  slice=j, loop=loop)
            msgs += sorted(sent.values(), key=lambda m: (m.step, m.slice, st.rank[m.src]))
            for r in range(n):
                for s in range(2 * n - 1):
                    j = 0
                    while (s, r, j) in sent or (s - 1, (r - 1) % n, j) in sent:
                        st.ops[r].append((sent.get((s - 1, (r - 1) % n, j)), sent.get((s, r, j))))
                        j += 1
    for i, m in enumerate(msgs):
        m.id = first_id + i
    for r in range(n):
        for m in st.run(r):
            m.start = start
    return msgs


def reduce_scatter_steps(n: int) -> range:
    """The ring all-reduce's steps a reduce-scatter runs."""
    return range(n - 1)


def all_gather_steps(n: int) -> range:
    """The ring all-reduce's steps an all-gather runs: at the first, each rank sends its own chunk."""
    return range(n - 1, 2 * n - 2)


def broadcast(size: int, hs: list[int], start: float, chunk_bytes: int | None = None,
              first_id: int = 0) -> list[Message]:
    """NCCL's ring broadcast of `size` bytes from hs[0] down hs in order:
    chunk k goes from each rank to the next once it has arrived there
    (recvCopySend), at most NCCL_STEPS chunks unconsumed per connection.
    The root's first chunks carry `start`; `Ring` releases the rest."""
    n, chunk = len(hs), chunk_bytes or BROADCAST_CHUNK
    st = Ring(n, NCCL_STEPS)
    st.rank = {h: r for r, h in enumerate(hs)}
    sizes = [min(chunk, size - off) for off in range(0, size, chunk)]
    hop = [[Message(0, hs[r], hs[r + 1], b, None, r, after=st.done, chunk=k) for k, b in enumerate(sizes)]
           for r in range(n - 1)]  # hop[r][k]: chunk k from rank r to r+1
    for r in range(n):
        st.ops[r] = [(hop[r - 1][k] if r else None, hop[r][k] if r < n - 1 else None) for k in range(len(sizes))]
    msgs = [hop[r][k] for k in range(len(sizes)) for r in range(n - 1)]
    for i, m in enumerate(msgs):
        m.id = first_id + i
    for m in st.run(0):
        m.start = start
    return msgs


class Streams:
    """The p2p streams' state: which chunk each delivery lets go (a flat map,
    not a chain of messages, so that a run's messages pickle at any size)."""

    def __init__(self) -> None:
        self.then: dict[int, Message] = {}  # message id -> the chunk its delivery posts

    def done(self, m: Message) -> list[Message]:
        nxt = self.then.pop(m.id, None)
        return [nxt] if nxt is not None else []


def p2p(size: int, reps: int, pairs: list[tuple[int, int]], start: float, chunk_bytes: int | None = None,
        in_flight: int = P2P_IN_FLIGHT, first_id: int = 0) -> list[Message]:
    """Each pair's `size` bytes, `reps` times, as a stream of chunks: the
    first `in_flight` start at `start`, each delivery posts the chunk
    `in_flight` places behind it. Numbered from `first_id`."""
    chunk = chunk_bytes or P2P_CHUNK
    st = Streams()
    msgs: list[Message] = []
    for a, b in pairs:
        first = first_id + len(msgs)
        for k, off in enumerate(o for _ in range(reps) for o in range(0, size, chunk)):
            msgs.append(Message(first + k, a, b, min(chunk, size - off), start if k < in_flight else None,
                                after=st.done, chunk=k))
            if k >= in_flight:
                st.then[first + k - in_flight] = msgs[-1]
    return msgs


def all_to_all_pairs(hs: list[int]) -> list[tuple[int, int]]:
    """Every (sender, receiver) pair of an all-to-all, each sender's peers in
    NCCL's p2p schedule (src/init.cc, p2pSchedule): rank r sends to r+1,
    r+2, ... in turn, so at each step every rank has a different
    receiver. (In rank order, every sender's NIC began on rank 0, then
    rank 1, ...: a rotating 63:1 incast, which QPs served in posting order
    turn into bursts of a pair's QPs at one receiver.)"""
    n = len(hs)
    return [(a, hs[(i + d) % n]) for i, a in enumerate(hs) for d in range(1, n)]


def nccl_size(pattern: str, message_bytes: int, ranks: int) -> int:
    """The size nccl-tests names the run by: an all-to-all's is each rank's
    whole buffer (message_bytes per peer, the rank itself included)."""
    return message_bytes * ranks if pattern == "all_to_all" else message_bytes


def bus_factor(pattern: str, n: int) -> float:
    """nccl-tests' busbw / algbw (its PERFORMANCE.md): what each rank's link
    carries per byte of the collective's size (a trace's collectives by
    their own names: chakra/trace.py's Coll)."""
    ring, share = 2 * (n - 1) / n, (n - 1) / n
    return {"ring_allreduce": ring, "all_reduce": ring, "all_to_all": share, "all_gather": share,
            "reduce_scatter": share, "sendrecv": 1.0, "broadcast": 1.0}[pattern]


def bandwidth(pattern: str, message_bytes: int, reps: int, msgs: list[Message]) -> dict[str, Any] | None:
    """algbw = size / time per operation, busbw = algbw x bus_factor, in Gb/s
    (and GB/s, as nccl-tests prints them); time from the first post to the
    last delivery. None for a pattern that is not a collective; the rates
    are None when a message was never delivered."""
    if pattern not in PATTERNS:
        return None
    n = len({m.src for m in msgs})
    size = nccl_size(pattern, message_bytes, n)
    out: dict[str, Any] = {"pattern": pattern, "ranks": n, "size_bytes": size, "ops": reps,
                           "bus_factor": bus_factor(pattern, n), "time_us": None, "algbw_gbps": None,
                           "busbw_gbps": None, "algbw_GBps": None, "busbw_GBps": None}
    if not msgs or any(m.done_at < 0 for m in msgs):
        return out
    t = (max(m.done_at for m in msgs) - min(m.posted_at for m in msgs)) / reps
    alg = size * 8 / (t * 1e3)
    out.update(time_us=t, algbw_gbps=alg, busbw_gbps=alg * out["bus_factor"], algbw_GBps=alg / 8,
               busbw_GBps=alg * out["bus_factor"] / 8)
    return out
