"""What keeps a large run's memory down, each by its mechanism: the
ledger joins a message's touching ranges (one per message, not one per
packet) and still gives the verdict the ranges would; a QP holds a
message's unsent Segments as one cut, made again when taken; every NIC's
plan shares the DestRow entries of a row."""

from __future__ import annotations

import random
from collections import Counter

from control_plane import nic_plan
from fabric_sim.fabric import Fabric
from fabric_sim.ledger import Ledger
from mrc_wire.segment import Segment, segments
from nic_model.qp import Cut, Pending
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


def test_a_qp_holds_an_unsent_message_as_one_cut_and_takes_the_same_segments():
    size, mtu = 2 * 1024 * 1024 + 100, 4096
    cut = segments(0xFFFFF0, 9, size, mtu)  # its PSNs wrap past 2^24
    pend = Pending()
    pend.extend(cut)
    assert len(pend.parts) == 1 and isinstance(pend.parts[0], Cut) and len(pend) == 513
    taken = []
    while pend:
        taken.append(pend.popleft())
    assert taken == cut and len(pend.parts) == 0


def test_segments_with_a_real_payload_or_not_as_cut_are_kept_as_they_are():
    pend = Pending()
    real = segments(5, 1, b"x" * 9000, 4096)
    odd = [Segment(1, 2, 0, 100, 0, 100, None), Segment(3, 2, 100, 200, 0, 100, None)]  # not one cut
    pend.extend(real)
    pend.extend(segments(8, 2, 1, 4096))  # a one-byte message: a cut of one
    pend.extend(odd)
    assert [type(p) for p in pend.parts] == [Segment] * 3 + [Cut] + [Segment] * 2
    assert [pend.popleft() for _ in range(6)] == real + segments(8, 2, 1, 4096) + odd
    pend.extend(real)
    pend.clear()
    assert not pend and len(pend) == 0


def test_every_nic_of_a_fabric_shares_the_dest_row_entries_of_a_row():
    sc = make({"pattern": "permutation", "message_bytes": 1000})  # 16 NICs, 4 T0 rows
    fab = Fabric(sc.topology, sc.links, Sim())
    for n in range(sc.topology.nics):
        fab.install_nic(n, [])
    rows = {id(e) for node in fab.nics for e in node.model.rows.values()}
    assert len(rows) == 2 * sc.topology.t0_per_plane  # (row, same_row) each once, not 16 x 4
    a, b = nic_plan.nic_state(sc.topology, 0), nic_plan.nic_state(sc.topology, 15)
    assert a.rows[2] is b.rows[2] and a.rows[0] is not b.rows[0]
    assert [(e.row, e.same_row) for e in a.rows] == [(0, True), (1, False), (2, False), (3, False)]
