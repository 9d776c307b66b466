"""Collectives as NCCL runs them (fabric_sim/scenario/collectives.py): the pipelined
ring's order and bytes, its overlap on the timed fabric, the p2p streams'
bytes and slots, and nccl-tests' bandwidth formulas."""

from __future__ import annotations

import pickle
from collections import defaultdict

import pytest

from fabric_sim.runner.run import run
from fabric_sim.scenario import collectives as C
from fabric_sim.scenario.message import Message
from tests.sim.helpers import make

# One rank per rack on one plane, one spine: every ring hop is NIC-T0-T1-T0-NIC.
LINE = {"planes": 1, "t0_per_plane": 3, "t1_per_plane": 1, "hosts_per_t0": 1}


def _per_link(msgs: list[Message]) -> dict[tuple[int, int], list[tuple[int, int, int, int]]]:
    out = defaultdict(list)
    for m in msgs:
        out[(m.src, m.dst)].append((m.loop, m.step, m.chunk, m.slice))
    return dict(out)


def test_ring_order_is_nccls_chunk_per_link_per_step():
    # 3 ranks, one loop, chunks of 4096 B in two slices: at step s rank r sends chunk (r-1-s) mod 3
    # (reduce-scatter at steps 0-1, all-gather at 2-3), slice by slice.
    msgs = C.ring(3 * 4096, 1, [0, 1, 2], 0.0, chunk_bytes=4096)
    want = {(0, 1): [2, 1, 0, 2], (1, 2): [0, 2, 1, 0], (2, 0): [1, 0, 2, 1]}
    assert _per_link(msgs) == {link: [(0, s, c, j) for s, c in enumerate(cs) for j in (0, 1)]
                               for link, cs in want.items()}
    assert {m.size for m in msgs} == {2048}
    # Only step 0 starts on its own; a rank's last receive (step 4) sends nothing.
    assert [(m.src, m.step, m.slice) for m in msgs if m.start is not None] == \
        [(0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 0, 1), (1, 0, 1), (2, 0, 1)]


def test_ring_releases_a_slice_when_the_same_slice_of_the_step_before_arrived():
    msgs = C.ring(3 * 4096, 1, [0, 1, 2], 0.0, chunk_bytes=4096)
    by = {(m.step, m.src, m.slice): m for m in msgs}
    ring = msgs[0].after.__self__
    assert ring.done(by[(0, 0, 1)]) == []  # slice 1 arrived at rank 1 first: its slice 0 still missing
    assert ring.done(by[(0, 0, 0)]) == [by[(1, 1, 0)], by[(1, 1, 1)]]  # now rank 1 forwards both, in order


def test_ring_holds_at_most_four_slices_unconsumed_per_connection():
    # Deliver everything but what goes into rank 2: rank 2 consumes nothing, so rank 1 may have only
    # NCCL's 4 slices outstanding towards it, although rank 0's step-1 slices are there to forward.
    msgs = C.ring(3 * 16 * C.RING_CHUNK, 1, [0, 1, 2], 0.0)
    queue = [m for m in msgs if m.start is not None]
    posted = list(queue)
    while queue:
        m = queue.pop(0)
        if m.dst != 2:
            more = m.after(m)
            posted += more
            queue += more
    per_link = {link: sum(1 for m in posted if (m.src, m.dst) == link) for link in ((0, 1), (1, 2), (2, 0))}
    assert per_link[(1, 2)] == 2 * C.SLICES_PER_CHUNK == 4  # its step 0 and step 1, each two slices
    assert per_link[(2, 0)] == 2  # rank 2 only ever sent its step-0 slices
    assert per_link[(0, 1)] == 4  # rank 0's steps 0 and 1: step 2 waits for rank 2's step 1
    assert all(m.id in msgs[0].after.__self__.arrived for m in posted if (m.src, m.step) == (0, 1))


@pytest.mark.parametrize("size", [3 * 4 * C.RING_CHUNK, 2 * 4 * C.RING_CHUNK + 1_200_000])  # short last loop
def test_ring_moves_exactly_2_n_minus_1_over_n_of_the_size_on_every_link(size):
    n = 4
    per_link: dict[tuple[int, int], int] = defaultdict(int)
    for m in C.ring(size, 1, list(range(n)), 0.0):
        per_link[(m.src, m.dst)] += m.size
    assert per_link == {(r, (r + 1) % n): 2 * (n - 1) * size // n for r in range(n)}
    last = [m.size for m in C.ring(size, 1, list(range(n)), 0.0) if m.loop == 2]
    # A short last loop's chunk is its size / N (here 300,000 B), in two slices.
    assert set(last) == {min(C.RING_CHUNK, (size - 2 * n * C.RING_CHUNK) // n) // 2}


def _ring_run(slices: int, monkeypatch) -> tuple[float, float, float]:
    """(finish µs, one slice's serialization t, its latency L beyond it) of a
    3-rank ring, each step's chunk in `slices` slices of 64 KiB."""
    monkeypatch.setattr(C, "SLICES_PER_CHUNK", slices)
    slice_b = 64 << 10
    top = dict(topology=LINE, links={"nic_gbps": 100, "fabric_gbps": 100, "prop_us": 3.5})
    sc = make({"pattern": "ring_allreduce", "message_bytes": 3 * slices * slice_b, "chunk_bytes": slices * slice_b},
              **top)
    r = run(sc, sc.transports[0])
    assert r.complete and r.events["delivered_twice"] == 0
    lone = []
    for k in (1, 2):  # one and two slices' bytes, alone on the same path
        one = make({"pattern": "sendrecv", "message_bytes": k * slice_b, "chunk_bytes": k * slice_b, "hosts": 2},
                   **top)
        lone.append(max(m.done_at for m in run(one, one.transports[0]).messages))
    t = lone[1] - lone[0]
    return max(m.done_at for m in r.messages), t, lone[0] - t


def test_ring_pipeline_overlaps_steps(monkeypatch):
    """Per-rank program order and the ring's data dependency give, for S
    steps of C slices (serialization t, latency L per hop):
    max(S L + (S + C - 1) t, S C t + L), where waiting for whole chunks
    takes S (C t + L)."""
    steps, c = 4, 4
    done, t, lat = _ring_run(c, monkeypatch)
    assert 4 < t < 7 and 2.5 * t < lat < 3.5 * t  # 64 KiB at 100 Gb/s; four hops of 3.5 µs and packet times
    pipelined = max(steps * lat + (steps + c - 1) * t, steps * c * t + lat)
    whole = steps * (c * t + lat)
    assert whole > 1.3 * pipelined
    assert 0.95 * pipelined <= done <= 1.08 * pipelined, (done, pipelined, whole)


@pytest.mark.parametrize("pattern, pairs", [("all_to_all", 12), ("sendrecv", 4)])
def test_p2p_streams_deliver_exactly_the_posted_bytes_in_chunks_of_8_in_flight(pattern, pairs):
    size, reps, chunk = 300_000, 2, 32_768  # not a multiple of the chunk; 20 chunks a stream, 8 in flight
    sc = make({"pattern": pattern, "message_bytes": size, "messages": reps, "hosts": 4, "chunk_bytes": chunk})
    r = run(sc, sc.transports[0])
    assert r.complete and r.events["delivered_twice"] == 0 and not r.errors
    streams = defaultdict(list)
    for m in r.messages:
        streams[(m.src, m.dst)].append(m)
    assert len(streams) == pairs
    for ms in streams.values():
        assert [m.size for m in ms] == ([chunk] * 9 + [size - 9 * chunk]) * reps
        ms.sort(key=lambda m: m.chunk)
        # Chunk k goes only once chunk k-8 was delivered: never more than NCCL_STEPS outstanding.
        assert all(ms[k].posted_at >= ms[k - C.P2P_IN_FLIGHT].done_at for k in range(C.P2P_IN_FLIGHT, len(ms)))
    assert sum(m.size for m in r.messages) == pairs * size * reps
    bin_us = sc.duration_us / sc.bins  # the timeline's goodput is what the receivers placed, per bin
    assert round(sum(r.timeline.goodput) * bin_us * 1e3 / 8) == pairs * size * reps
    if pattern == "sendrecv":
        assert {(a, b) for a, b in streams} == {(h, (h + 1) % 4) for h in range(4)}


def test_p2p_stream_caps_outstanding_chunks_at_build():
    msgs = C.p2p(20 * C.P2P_CHUNK, 1, [(0, 1)], 5.0)
    assert [m.start for m in msgs] == [5.0] * 8 + [None] * 12
    assert [[x.chunk for x in m.after(m)] for m in msgs] == [[k] for k in range(8, 20)] + [[]] * 8


def _done(n: int, size: int, t_us: float) -> list[Message]:
    return [Message(i, i, (i + 1) % n, size, 0.0, posted_at=0.0, done_at=t_us) for i in range(n)]


def test_a_run_of_the_largest_size_pickles():
    """The parallel runner ships runs between processes: no message chain as
    deep as a 256 MiB stream's."""
    msgs = C.p2p(256 << 20, 1, [(0, 1), (1, 0)], 0.0) + C.ring(256 << 20, 1, [0, 1, 2, 3], 0.0)
    back = pickle.loads(pickle.dumps(msgs))
    assert [(m.id, m.src, m.size, m.start) for m in back] == [(m.id, m.src, m.size, m.start) for m in msgs]


def test_bus_bandwidth_is_nccl_tests_formula():
    # 1 MB in 8 µs is 1000 Gb/s of algbw; busbw = algbw x 2(n-1)/n, (n-1)/n, 1.
    ring = C.bandwidth("ring_allreduce", 1_000_000, 1, _done(4, 1, 8.0))
    assert (ring["algbw_gbps"], ring["busbw_gbps"], ring["busbw_GBps"]) == (1000.0, 1500.0, 187.5)
    a2a = C.bandwidth("all_to_all", 250_000, 1, _done(4, 1, 8.0))  # nccl-tests' size: 4 x 250 kB per peer
    assert (a2a["size_bytes"], a2a["algbw_gbps"], a2a["busbw_gbps"]) == (1_000_000, 1000.0, 750.0)
    sr = C.bandwidth("sendrecv", 1_000_000, 2, _done(2, 1, 16.0))  # two back to back: 8 µs each
    assert (sr["time_us"], sr["algbw_gbps"], sr["busbw_gbps"]) == (8.0, 1000.0, 1000.0)
    assert C.bandwidth("permutation", 1, 1, _done(2, 1, 1.0)) is None
    late = _done(4, 1, 8.0)
    late[0].done_at = -1.0
    assert C.bandwidth("ring_allreduce", 1_000_000, 1, late)["busbw_gbps"] is None


def test_chunk_bytes_out_of_range_names_the_field():
    from fabric_sim.scenario.fields import ScenarioError
    with pytest.raises(ScenarioError, match=r"workload\.chunk_bytes"):
        make({"pattern": "ring_allreduce", "message_bytes": 4096, "chunk_bytes": 10})
    assert make({"pattern": "sendrecv", "message_bytes": 4096}).workload.chunk_bytes is None  # NCCL's default
