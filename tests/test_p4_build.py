"""The committed BMv2 JSON and P4Info: present, consistent with the Python
side, and equal to a fresh compile where p4c is present."""

import json
import re

import pytest

from control_plane import p4_entities as P
from testbed import toolchain
from nic_model.switch_model import DROP_REASONS, EVENTS

TYPES = toolchain.REPO / "p4src" / "switch" / "types.p4"


def _consts(prefix: str) -> dict[str, int]:
    pat = re.compile(rf"const bit<32> {prefix}_(\w+)\s*=\s*(\d+);")
    return {name.lower(): int(v) for name, v in pat.findall(TYPES.read_text())}


def test_drop_reason_and_event_indices_match_the_model():
    drops = {k: v for k, v in _consts("DROP").items() if k != "reasons"}
    assert drops == {name: i for i, name in enumerate(DROP_REASONS)}
    assert _consts("EVENT") == {name: i for i, name in enumerate(EVENTS)}


@pytest.mark.parametrize("program", sorted(toolchain.PROGRAMS))
def test_committed_artifacts_exist(program):
    for path in toolchain.artifacts(program):
        assert path.exists(), f"{path} is not committed: run 'make build' where p4c is present"


def test_switch_p4info_holds_the_controller_tables():
    p4info, blob = toolchain.artifacts("switch")
    text = p4info.read_text()
    for table in (*P.SWITCH_TABLES, *P.SWITCH_DEFAULTS):
        assert re.search(rf'name: "[\w.]*\b{table}"', text), f"{table} missing from {p4info.name}"
    assert json.loads(blob.read_text())["pipelines"]


@pytest.mark.skipif(toolchain.p4c() is None, reason="p4c-bm2-ss not found (PATH or $P4C_BM2_SS): cannot recompile")
@pytest.mark.parametrize("program", sorted(toolchain.PROGRAMS))
def test_committed_artifacts_equal_a_fresh_compile(program, tmp_path):
    fresh_info, fresh_json = toolchain.compile_program(program, tmp_path)
    info, blob = toolchain.artifacts(program)
    assert fresh_info.read_text() == info.read_text(), "P4Info is stale: run 'make build' and commit"
    assert json.loads(fresh_json.read_text()) == json.loads(blob.read_text()), "BMv2 JSON is stale: run 'make build'"


@pytest.mark.skipif(toolchain.p4test() is None, reason="p4test not found (PATH or $P4TEST): PNA variant not checked")
@pytest.mark.parametrize("name", sorted(toolchain.CHECK_ONLY))
def test_pna_variant_passes_p4test(name):
    toolchain.check_program(name, "p4test")  # raises with p4c's errors


@pytest.mark.skipif(toolchain.p4c_dpdk() is None, reason="p4c-dpdk not found (PATH or $P4C_DPDK): PNA back end not run")
@pytest.mark.parametrize("name", sorted(toolchain.CHECK_ONLY))
def test_pna_variant_compiles_with_the_pna_back_end(name):
    toolchain.check_program(name, "p4c-dpdk")
