"""The Tofino switch (switch_tna.p4): its committed P4Info and resource
summary, and a fresh compile with bf-p4c where p4c's Tofino back end is
installed (skipped with the reason elsewhere)."""

import json

import finsy as fy
import pytest

from control_plane import p4_entities as P
from control_plane.counters import drop_reasons
from mrc_wire import constants as C
from testbed import tofino, toolchain

NO_BF_P4C = "bf-p4c not found (PATH or $BF_P4C): p4c's Tofino back end is not installed"


def test_committed_tofino_p4info_has_the_controller_tables_and_drop_reasons():
    schema = fy.P4Schema(tofino.p4info_path())
    for table in (*P.SWITCH_TABLES, *P.SWITCH_DEFAULTS):
        assert any(t.name.endswith(f".{table}") for t in schema.tables), f"{table} missing"
    assert drop_reasons(schema) == {name: i for i, name in enumerate(C.SWITCH_DROPS)}


def test_committed_tofino_p4info_keeps_the_bmv2_table_shapes():
    """The same stages on both targets: every controller table has the same
    keys and actions (names and widths) in the Tofino and BMv2 P4Info."""
    tna = fy.P4Schema(tofino.p4info_path())
    bmv2 = fy.P4Schema(toolchain.artifacts("switch")[0])

    def shape(schema, alias):
        [t] = [t for t in schema.tables if t.alias == alias]
        keys = [(f.name, f.bitwidth, f.match_type) for f in t.match_fields]
        acts = sorted((a.alias, tuple((p.name, p.bitwidth) for p in a.params)) for a in t.actions)
        return keys, acts

    for table in (*P.SWITCH_TABLES, *P.SWITCH_DEFAULTS):
        assert shape(tna, table) == shape(bmv2, table), table


def test_committed_summary_is_within_the_stage_budget():
    s = json.loads(tofino.summary_path().read_text())
    assert s["stages_used"] <= tofino.STAGE_BUDGET, tofino.describe(s)
    assert s["stages_used"] == max(s["ingress_stages"], s["egress_stages"])


@pytest.mark.skipif(tofino.bf_p4c() is None, reason=NO_BF_P4C)
def test_fresh_tofino_compile_equals_the_committed_outputs(tmp_path):
    p4info = tofino.compile_tna(tmp_path)
    assert p4info.read_text() == tofino.p4info_path().read_text(), "tofino_configs/ is stale: run 'make build'"
    fresh = tofino.summarize(tmp_path)
    assert fresh == json.loads(tofino.summary_path().read_text())
    assert fresh["stages_used"] <= tofino.STAGE_BUDGET


@pytest.mark.skipif(tofino.bf_p4c() is None, reason=NO_BF_P4C)
def test_a_bad_size_is_reported_with_the_compiler_error(tmp_path):
    with pytest.raises(RuntimeError, match="bf-p4c failed"):
        tofino.compile_tna(tmp_path, {"ROUTE_TABLE_SIZE": "x"})
