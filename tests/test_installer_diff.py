"""installer.diff, offline against the committed P4Info: what a reconcile
would insert, modify and delete to turn what a device holds into the plan.
Entries compare by their encoded key and action, as the device returns them."""

from dataclasses import replace

import finsy as fy
import pytest

from control_plane import installer, topology
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from mrc_wire import entries as E
from testbed import toolchain

TOPO = topology.load(toolchain.REPO / "bmv2_configs" / "topologies" / "demo.yaml")
ENTRIES = list(S.t0_state(TOPO, 0, 0).entries())
PLAN = [P.to_p4(e) for e in ENTRIES]


@pytest.fixture(scope="module")
def schema():
    return fy.P4Schema(toolchain.artifacts("switch")[0])


def _names(entries):
    return sorted(str(e) for e in entries)


def test_the_plan_against_itself_is_empty(schema):
    d = installer.diff(PLAN, list(PLAN), schema)
    assert not d and (d.inserts, d.modifies, d.deletes) == ([], [], [])


def test_entries_the_plan_lacks_are_deleted(schema):
    foreign = [P.to_p4(E.UsidRoute(0xFCBB_BB00_7FFF, 9)), P.to_p4(E.DscpClass(63, 0))]
    d = installer.diff(PLAN, PLAN + foreign, schema)
    assert (_names(d.deletes), d.inserts, d.modifies) == (_names(foreign), [], [])


def test_missing_entries_are_inserted(schema):
    routes = [e for e in PLAN if e.table_id == "usid_route"]
    rest = [e for e in PLAN if e.table_id != "usid_route"]
    d = installer.diff(PLAN, rest, schema)
    assert (_names(d.inserts), d.modifies, d.deletes) == (_names(routes), [], [])


def test_a_changed_action_is_modified_not_deleted(schema):
    i = next(i for i, e in enumerate(ENTRIES) if isinstance(e, E.UsidRoute))
    moved = replace(ENTRIES[i], port=ENTRIES[i].port + 1)
    tampered = PLAN[:i] + [P.to_p4(moved)] + PLAN[i + 1:]
    d = installer.diff(PLAN, tampered, schema)
    assert (_names(d.modifies), d.inserts, d.deletes) == (_names([PLAN[i]]), [], [])


def test_a_default_action_is_modified_never_inserted_or_deleted(schema):
    [cfg] = [e for e in PLAN if e.is_default_action]
    without = [e for e in PLAN if not e.is_default_action]
    d = installer.diff(PLAN, without, schema)
    assert (_names(d.modifies), d.inserts, d.deletes) == (_names([cfg]), [], [])
    # A device default the plan does not mention stays: it cannot be deleted.
    d = installer.diff(without, PLAN, schema)
    assert not d
