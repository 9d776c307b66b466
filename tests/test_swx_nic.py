"""The SWX NIC's pieces that need no DPDK: the planner's entries as SWX
table-entry lines of the committed spec (testbed/swx_schema.py), the mirror
sessions and ring size the test bed writes held to nic_pna.p4 and size.p4,
and the EV events ring read back in order (testbed/swx_nic.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import finsy as fy
import pytest

from control_plane import nic_plan as N
from control_plane import p4_entities as P
from mrc_wire.entries import EvChange
from ptf_tests.lib import nic_fabric as NF
from testbed import swx_nic, toolchain
from testbed.swx_schema import SwxError, SwxSchema, is_delete

SPEC, BFRT, _ = toolchain.swx_artifacts("nic-pna")
SPEC_TEXT = SPEC.read_text()
P4 = (toolchain.REPO / "p4src" / "nic" / "nic_pna.p4").read_text()
SIZE = (toolchain.REPO / "p4src" / "nic" / "size.p4").read_text()


@pytest.fixture(scope="module")
def schema() -> SwxSchema:
    return SwxSchema(SPEC, BFRT)


def test_the_mirror_sessions_and_the_ring_are_the_p4s():
    consts = {m[1]: int(m[2]) for m in re.finditer(r"const MirrorSessionIdUint_t (\w+) = (\d+);", P4)}
    assert consts == {"TX_DONE_SESSION": swx_nic.TX_DONE_SESSION, "PLANE_SESSIONS": swx_nic.PLANE_SESSIONS,
                      "NACK_SESSIONS": swx_nic.NACK_SESSIONS, "SACK_SESSIONS": swx_nic.SACK_SESSIONS}
    assert int(re.search(r"#define EV_RING_SIZE\s+(\d+)", SIZE)[1]) == swx_nic.EV_RING_SIZE


def test_a_slot_entry_and_the_nic_default_as_swx_reads_them(schema):
    # Names as p4c-dpdk wrote them into the spec: the table, its action and the action's argument struct.
    assert "table nic_spray_slot_ev {" in SPEC_TEXT and "\t\tnic_spray_set_ev_0\n" in SPEC_TEXT
    assert schema.line(P.to_p4(N.SlotEv(5, 0x801))) == ("nic_spray_slot_ev", "match 0x5 action nic_spray_set_ev_0 "
                                                                             "ev 0x801")
    table, line = schema.line(P.to_p4(NF.NIC.config))
    assert table == "nic_nic_config" and line.startswith("action nic_set_nic_0 block ")


def test_every_planned_entry_is_a_line_of_the_spec_with_its_arguments_in_order(schema):
    for e in NF.NIC.entries():
        p4 = P.to_p4(e)
        table, line = schema.line(p4)
        assert re.search(rf"^table {table} \{{", SPEC_TEXT, re.M), table
        action = line.split("action ")[1].split()
        struct = re.search(rf"^action {action[0]} args instanceof (\w+)", SPEC_TEXT, re.M)
        fields = re.findall(r"bit<\d+> (\w+)", re.search(rf"^struct {struct[1]} \{{(.*?)^\}}", SPEC_TEXT,
                                                         re.M | re.S)[1]) if struct else []
        assert action[1::2] == fields
        assert isinstance(p4.action, fy.P4TableAction)
        assert [int(v, 16) for v in action[2::2]] == [p4.action.args[f] for f in fields]


def test_a_delete_is_told_from_an_insert():
    assert is_delete(-P.to_p4(N.SlotEv(5, 0)))
    assert not is_delete(+P.to_p4(N.SlotEv(5, 0))) and not is_delete(~P.to_p4(N.SlotEv(5, 0)))


def test_unknown_names_are_refused_naming_what_there_is(schema):
    with pytest.raises(SwxError, match=r"table 'nope' is not in the program \(tables: .*slot_ev"):
        schema.line(fy.P4TableEntry("nope", match=fy.Match(slot=1), action=fy.Action("set_ev", ev=1)))
    with pytest.raises(SwxError, match=r"table 'slot_ev' has no action 'explode' \(actions: .*set_ev"):
        schema.line(fy.P4TableEntry("slot_ev", match=fy.Match(slot=1), action=fy.Action("explode")))
    with pytest.raises(SwxError, match=r"action 'set_ev' of table 'slot_ev' needs argument\(s\) ev"):
        schema.line(fy.P4TableEntry("slot_ev", match=fy.Match(slot=1), action=fy.Action("set_ev")))
    # A register array by its P4 name, the spec's prefix (the control instance) and suffix (p4c-dpdk's) found.
    assert (schema.regarray("ev_skip"), schema.regarray("swx_frames")) == ("nic_health_ev_skip", "swx_frames_0")
    with pytest.raises(SwxError, match="register array 'nope' is not in the program"):
        schema.regarray("nope")


class FakeRing:
    """The ring's registers as a pipe reads them."""

    def __init__(self) -> None:
        self.head = 0
        self.cells: dict[str, dict[int, int]] = {"ev_ring_state": {}, "ev_ring_ev": {}, "ev_ring_slots": {}}

    def register_read(self, name: str, index: int) -> int:
        assert name == "ev_ring_head" and index == 0
        return self.head

    def read_registers(self, name: str, indices: Sequence[int]) -> list[int]:
        return [self.cells[name][i] for i in indices]

    def push(self, c: EvChange) -> None:
        """As nic_pna.p4 writes an event: 8w0 ++ qp_index ++ reason ++ old ++ new ++ down ++ up."""
        at = self.head % swx_nic.EV_RING_SIZE
        state = c.qp_index
        for field in (c.reason, c.old_state, c.new_state, c.planes_down, c.planes_up):
            state = state << 8 | field
        self.cells["ev_ring_state"][at] = state
        self.cells["ev_ring_ev"][at] = c.ev
        self.cells["ev_ring_slots"][at] = c.slots
        self.head += 1


def test_the_ring_gives_the_events_in_order_and_counts_those_overwritten():
    fake = FakeRing()
    ring = swx_nic.EvRing(fake)
    events = [EvChange(0x1234, 2, 0x80000801, 1 << 63 | i, 1, 2, 0xA5, 0x5A) for i in range(3)]
    for c in events:
        fake.push(c)
    assert ring.drain() == events and ring.drain() == []
    more = [EvChange(7, 4, 0, 0, 0, 0, i % 256, 0) for i in range(swx_nic.EV_RING_SIZE + 5)]
    for c in more:
        fake.push(c)
    assert ring.drain() == more[5:] and ring.lost == 5
