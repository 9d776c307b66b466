"""The NIC's QP table (mrc_wire/qp_table.py), the one place a QP's index,
slot range and local/peer numbering are worked out: QPs created in order
get the indices and ranges a static plan gives them, freed ones are
reused lowest first, and what cannot be created is refused naming the QP,
with nothing allocated."""

from typing import Any

import pytest

from mrc_wire.entries import EvSlots, EvStats, QpEv, QpPeer, SlotEv
from mrc_wire.pcie import QpCreate
from mrc_wire.qp_table import QpTable


def qp(qpn: int, evs: tuple[int, ...], **kw: Any) -> QpCreate:
    return QpCreate(qpn, qpn + 100, evs, **kw)


def test_qps_created_in_order_are_packed_and_name_both_numbers():
    t = QpTable("nic-7")
    a = t.create(qp(1, (10, 11, 12, 13), spares=(14,)))
    b = t.create(qp(2, (20, 21), health=True, min_active=1, skip_on_mark=True))
    assert (a.index, a.base, b.index, b.base) == (0, 0, 1, 4)
    assert a.qp_ev == QpEv(101, 0, 0, 3, False, 1, (0, 0, 0))
    assert a.slots == [SlotEv(0, 10), SlotEv(1, 11), SlotEv(2, 12), SlotEv(3, 13)]
    assert a.ev_stats == [EvStats(10), EvStats(11), EvStats(12), EvStats(13), EvStats(14)]
    assert b.peer == QpPeer(2, 102, 1, True, True, 16384, True, True)
    assert b.ev_slots == [EvSlots(1, 20, 0b01), EvSlots(1, 21, 0b10)]
    assert (t.local_of(101), t.local_of(102), t.local_of(103)) == (1, 2, None)
    assert (t.qpn_of_index(0), t.qpn_of_index(1)) == (1, 2)


def test_an_ev_counted_by_two_qps_is_inserted_once_and_deleted_with_the_last():
    t = QpTable()
    assert [e.ev for e in t.create(qp(1, (5, 6))).ev_stats] == [5, 6]
    assert [e.ev for e in t.create(qp(2, (6, 7))).ev_stats] == [7]
    assert [e.ev for e in t.destroy(1).ev_stats] == [5]
    assert [e.ev for e in t.destroy(2).ev_stats] == [6, 7]


def test_a_destroyed_qps_index_and_slots_are_reused_lowest_first():
    t = QpTable()
    for n in (1, 2, 3):
        t.create(qp(n, (n,) * 4))
    t.destroy(2)
    small = t.create(qp(4, (4, 4)))  # fits the hole QP 2 left at slots 4-7
    big = t.create(qp(5, (5,) * 8))  # does not: after QP 3
    assert (small.index, small.base, big.index, big.base) == (1, 4, 3, 12)
    assert t.slots_used() == 4 + 2 + 4 + 8


@pytest.mark.parametrize("spec, why", [
    (qp(1, (1, 2, 3)), "nic: QP 1: 3 EVs, not a power of two"),
    (qp(1, tuple(range(128)), health=True), "nic: QP 1: health in the data plane covers 64 slots, not its 128 EVs"),
    (qp(1, (1, 2), health=True, min_active=3), "nic: QP 1: min_active 3 is not within 0..2"),
])
def test_a_qp_the_nic_cannot_hold_is_refused_naming_it(spec, why):
    t = QpTable()
    with pytest.raises(ValueError, match=f"^{why}"):
        t.create(spec)
    assert t.qps == {} and t.slots_used() == 0


def test_a_second_qp_with_the_same_number_or_peer_is_refused():
    t = QpTable()
    t.create(qp(1, (1,)))
    with pytest.raises(ValueError, match="QP 1 exists"):
        t.create(qp(1, (1,)))
    with pytest.raises(ValueError, match="peer QP 101 is QP 1's peer already"):
        t.create(QpCreate(9, 101, (1,)))


def test_a_full_table_refuses_without_losing_an_index():
    t = QpTable(max_qps=2, max_slots=4)
    t.create(qp(1, (1, 1)))
    with pytest.raises(ValueError, match=r"QP 2: 4 slots do not fit the NIC's slot_ev table \(4, 2 in use\)"):
        t.create(qp(2, (2,) * 4))
    e = t.create(qp(3, (3, 3)))  # the refused QP's index went back: this one takes it
    assert e.index == 1
    with pytest.raises(ValueError, match="the NIC's 2 QPs are all in use"):
        t.create(qp(4, (4,)))
