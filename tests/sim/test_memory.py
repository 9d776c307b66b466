"""What keeps a large run's memory down, each by its mechanism: the
ledger joins a message's touching ranges (one per message, not one per
packet) and still gives the verdict the ranges would; a QP holds a
message's unsent packets as one cut, each made when taken; every NIC's
plan shares the DestRow entries of a row."""

from __future__ import annotations

import random
from collections import Counter

from control_plane import nic_plan
from fabric_sim.net.fabric import Fabric
from fabric_sim.net.ledger import Ledger
from fabric_sim.runner import run as run_mod
from mrc_host.qp import Pending
from mrc_wire.constants import OP_WRITE_FIRST, OP_WRITE_LAST, OP_WRITE_MIDDLE, OP_WRITE_ONLY
from mrc_wire.segment import Cut, Segment
from sim_core.sim import Sim
from tests.sim.helpers import make


def test_a_message_placed_once_in_any_order_is_one_range():
    led = Ledger()
    led.post(2, 1, 512 * 4096)
    offsets = [i * 4096 for i in range(512)]
    random.Random(7).shuffle(offsets)
    for off in offsets:
        led.place(2, 1, off, 4096)
    assert led.placed[(2, 1)].ranges() == [(0, 512 * 4096)]
    v = led.check()
    assert v.exactly_once and v.placed == v.posted == 512 * 4096


def _by_byte(posted: dict, placed: list) -> tuple[int, int, int, int, int]:
    """(posted, placed, duplicate, missing, stray), byte by byte (what
    was placed for a message never posted is stray, not duplicate)."""
    hits: dict[tuple[int, int], Counter[int]] = {}
    for qpn, msg, off, n in placed:
        hits.setdefault((qpn, msg), Counter()).update(range(off, off + n))
    total = sum(n for *_, n in placed)
    dup = sum(c - 1 for key, h in hits.items() if key in posted for c in h.values())
    stray = sum(c for key, h in hits.items() for b, c in h.items() if key not in posted or not 0 <= b < posted[key])
    missing = sum(size - sum(1 for b in hits.get(key, {}) if 0 <= b < size) for key, size in posted.items())
    return sum(posted.values()), total, dup, missing, stray


def test_the_verdict_of_joined_ranges_is_the_verdict_byte_by_byte():
    rng = random.Random(11)
    for _ in range(200):
        posted = {(1, m): rng.randrange(1, 300) for m in range(3)}
        placed = []
        for _ in range(rng.randrange(0, 40)):
            qpn, msg = rng.choice([(1, 0), (1, 1), (1, 2), (2, 0)])  # QP 2 was never posted to
            step = rng.choice([10, 16, 25])
            off = rng.randrange(0, 330 // step) * step  # touching, overlapping, repeated, past the end
            placed.append((qpn, msg, off, rng.choice([step, step, 2 * step, 0, 7])))
        led = Ledger()
        for (qpn, msg), size in posted.items():
            led.post(qpn, msg, size)
        for p in placed:
            led.place(*p)
        v = led.check()
        assert (v.posted, v.placed, v.duplicate, v.missing, v.stray) == _by_byte(posted, placed), placed


def test_a_qp_holds_an_unsent_message_as_one_cut_and_makes_each_packet_when_taken():
    """2 MiB + 100 bytes in 4 KiB packets, PSNs wrapping past 2^24: one object held, 513 packets
    taken: WRITE_FIRST, 511 WRITE_MIDDLE, a WRITE_LAST of 100 bytes (DESIGN.md section 6)."""
    size, mtu = 2 * 1024 * 1024 + 100, 4096
    pend = Pending()
    pend.append(Cut(0xFFFFF0, 9, size, mtu))
    assert len(pend.cuts) == 1 and len(pend) == 513
    taken = []
    while pend:
        taken.append(pend.popleft())
    assert len(taken) == 513 and len(pend) == 0
    assert taken[0] == Segment(0xFFFFF0, 9, 0, size, OP_WRITE_FIRST, 4096, None)
    assert {s.opcode for s in taken[1:-1]} == {OP_WRITE_MIDDLE}
    assert taken[-1] == Segment((0xFFFFF0 + 512) & 0xFFFFFF, 9, 512 * 4096, size, OP_WRITE_LAST, 100, None)
    assert [s.psn for s in taken[15:18]] == [0xFFFFFF, 0, 1]
    assert all(t.offset == i * 4096 for i, t in enumerate(taken))


def test_messages_queue_in_order_and_a_real_payload_is_cut_into_its_bytes():
    pend = Pending()
    data = bytes(range(256)) * 36  # 9,216 bytes: 3 packets
    pend.append(Cut(5, 1, data, 4096))
    pend.append(Cut(8, 2, 1, 4096))  # a one-byte simulated message
    assert len(pend) == 4
    got = [pend.popleft() for _ in range(4)]
    assert [(g.psn, g.opcode, g.payload) for g in got] == [
        (5, OP_WRITE_FIRST, data[:4096]), (6, OP_WRITE_MIDDLE, data[4096:8192]), (7, OP_WRITE_LAST, data[8192:]),
        (8, OP_WRITE_ONLY, None)]
    pend.append(Cut(9, 3, data, 4096))
    pend.popleft()
    pend.clear()
    assert not pend and len(pend) == 0 and pend.next == 0


def test_every_nic_of_a_fabric_shares_the_dest_row_entries_of_a_row():
    sc = make({"pattern": "permutation", "message_bytes": 1000})  # 16 NICs, 4 T0 rows
    fab = Fabric(sc.topology, sc.links, Sim())
    for n in range(sc.topology.nics):
        fab.install_nic(n)
    rows = {id(e) for node in fab.nics for e in node.model.rows.values()}
    assert len(rows) == 2 * sc.topology.t0_per_plane  # (row, same_row) each once, not 16 x 4
    a, b = nic_plan.nic_state(sc.topology, 0), nic_plan.nic_state(sc.topology, 15)
    assert a.rows[2] is b.rows[2] and a.rows[0] is not b.rows[0]
    assert [(e.row, e.same_row) for e in a.rows] == [(0, True), (1, False), (2, False), (3, False)]


def test_only_the_traced_qps_of_a_run_log_their_evs_changes():
    """The first QP of each of the first TRACED pairs logs, timed (its trace goes to the results); no
    other profile keeps a log (it grew by an entry per change, unread)."""
    sc = make({"pattern": "permutation", "message_bytes": 20_000})
    fabs = []
    run_mod.run(sc, sc.transports[0], hooks=[(0.0, fabs.append)])
    profiles = [(q.qpn, q.profile) for node in fabs[0].nics if node.host is not None
                for q in node.host.qps.values()]
    logging = [p for _, p in profiles if p.keep_log]
    assert 0 < len(logging) <= run_mod.TRACED < len(profiles)
    assert all(p.clock is not None for p in logging)
    assert all(p.log == [] for _, p in profiles if not p.keep_log)
