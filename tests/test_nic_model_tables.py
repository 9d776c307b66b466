"""The NIC model's tables as P4Runtime writes and deletes them: a delete
by key empties exactly the entry it names, whatever the table (a survivor
of the mutation run: QpPeer deleted by a wrong key went unnoticed)."""

import pytest

from mrc_wire import entries as N
from mrc_wire.pcie import QpCreate
from nic_model.nic_pipeline import NicModel


def test_each_table_entry_deleted_by_its_key_and_only_that_one():
    m = NicModel("nic-0")
    m.install([N.DestRow(3, False), N.DestRow(4, True), N.PlanePort(1, 9, 0xA, 0xB, 0xC),
               N.QpEv(7, 0, 16, 15), N.QpEv(8, 1, 32, 15), N.SlotEv(16, 0x123), N.SlotEv(17, 0x456),
               N.QpPeer(7, 70, 0, True, True, 16384), N.QpPeer(8, 80, 1, True, False, 0)])
    m.uninstall([N.DestRow(3, False), N.PlanePort(1, 0, 0, 0, 0), N.QpEv(7, 0, 0, 0), N.SlotEv(16, 0),
                 N.QpPeer(7, 0)])  # only the keys matter, as in a P4Runtime delete
    assert set(m.rows) == {4} and m.planes == {} and set(m.qps) == {8}
    assert m.slots == {17: 0x456} and m.peers == {8: N.QpPeer(8, 80, 1, True, False, 0)}


def test_a_table_the_nic_cannot_delete_from_is_refused():
    with pytest.raises(TypeError, match="not a deletable NIC table entry"):
        NicModel("nic-0").uninstall([N.EvStats(1)])


def test_slot_writes_land_as_slot_ev_entries_do():
    """The host's slot rewrites (`write_slots`, slots within its QP) leave the
    slot table as installing the same SlotEv entries (absolute) does, the later
    write of a slot winning."""
    writes = [(3, 0x10001), (1, 0x20002), (3, 0x30003)]
    by_entries, by_writes = NicModel(), NicModel()
    for m in (by_entries, by_writes):
        m.create_qp(QpCreate(1, 2, (7, 7)))  # slots 0-1: the next QP's range starts at 2
        m.create_qp(QpCreate(3, 4, (5, 6, 7, 8)))
    by_entries.install([N.SlotEv(2 + slot, ev) for slot, ev in writes])
    by_writes.write_slots(3, writes)
    assert by_writes.slots == by_entries.slots == {0: 7, 1: 7, 2: 5, 3: 0x20002, 4: 7, 5: 0x30003}
