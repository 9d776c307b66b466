"""The P4 sources read as text, no compiler needed: defaults and sizes
written once and equal to the models' constants, an include guard on every
included file, no unused target macro, and the Tofino top initialising
every metadata field by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mrc_wire import constants as C
from mrc_wire.entries import CongestionConfig, NicConfig
from nic_model.nic_pipeline import NicModel
from switch_model.pipeline import SwitchModel
from testbed.toolchain import REPO

P4 = REPO / "p4src"
TOP_FILE = re.compile(r"\)\s*main\s*;")  # a program's top file declares `main`


def defines(path: Path) -> dict[str, int]:
    """The numeric #defines of a P4 file."""
    found = re.findall(r"^#define\s+(\w+)\s+(\d+)\b", path.read_text(), re.M)
    return {name: int(value) for name, value in found}


def test_p4_defaults_are_the_models_constants():
    dscp, cong = C.DSCP_DEFAULTS, C.CONGESTION_DEFAULTS
    assert defines(P4 / "include" / "defaults.p4") == {
        "DEFAULT_DSCP_CONTROL": dscp["control"], "DEFAULT_DSCP_TRIMMED": dscp["trimmed"],
        "DEFAULT_DSCP_TRIMMED_LASTHOP": dscp["trimmed_lasthop"], "DEFAULT_ECN_THRESHOLD": cong["ecn_threshold"],
        "DEFAULT_TRIM_THRESHOLD": cong["trim_threshold"], "DEFAULT_TRIM_BYTES": cong["trim_bytes"]}
    # DESIGN.md sections 4 and 6 name these.
    assert (dscp["control"], dscp["trimmed"], dscp["trimmed_lasthop"], cong["trim_bytes"]) == (46, 16, 18, 256)


def test_the_default_actions_take_their_values_from_defaults_p4():
    congestion = (P4 / "switch" / "congestion.p4").read_text()
    assert re.search(r"default_action = set_congestion\(DEFAULT_ECN_THRESHOLD, DEFAULT_TRIM_THRESHOLD, "
                     r"DEFAULT_TRIM_BYTES,\s+DEFAULT_DSCP_TRIMMED, DEFAULT_DSCP_TRIMMED_LASTHOP\);", congestion)
    main = (P4 / "nic" / "main.p4").read_text()
    assert re.search(r"default_action = set_nic\(0, 0, 0, 0, DEFAULT_DSCP_CONTROL, DEFAULT_DSCP_TRIMMED,\s+"
                     r"DEFAULT_DSCP_TRIMMED_LASTHOP\);", main)


def test_the_models_start_from_the_same_defaults():
    assert SwitchModel().congestion == CongestionConfig(64, 128, 256, 16, 18) == CongestionConfig.default()
    assert NicModel().config == NicConfig(0, 0, 0, 46, 16, 18) == NicConfig.default()


def test_nic_sizes_are_named_in_size_p4_and_fit_the_plan_limits():
    sizes = defines(P4 / "nic" / "size.p4")
    assert sizes["QP_TABLE_SIZE"] == C.NIC_MAX_QPS
    assert sizes["SLOT_TABLE_SIZE"] == C.NIC_MAX_SLOTS
    # No stage file writes a size as a number, but a keyless table's 1.
    for f in sorted((P4 / "nic").glob("*.p4")):
        text = f.read_text()
        assert set(re.findall(r"\bsize = (\d+);", text)) <= {"1"}, f.name
        assert not re.findall(r"\b(?:REGISTER|COUNTER_\w+)\([^)]*\b\d+\)", text), f.name


def included_files() -> list[Path]:
    files = [*(P4 / "include").glob("*.p4"), *(P4 / "nic").glob("*.p4"), *(P4 / "switch").glob("*.p4")]
    return sorted(f for f in files if not TOP_FILE.search(f.read_text()))


@pytest.mark.parametrize("path", included_files(), ids=lambda p: p.relative_to(P4).as_posix())
def test_every_included_file_has_an_include_guard(path):
    lines = [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("//")]
    m = re.fullmatch(r"#ifndef (\w+)", lines[0])
    assert m, f"{path.name}: the first directive is not an #ifndef guard"
    assert lines[1] == f"#define {m.group(1)}"
    assert lines[-1] == "#endif"


def test_include_guards_are_unique_and_top_files_are_left_out():
    guards = [re.findall(r"#ifndef (\w+)", f.read_text())[0] for f in included_files()]
    assert len(set(guards)) == len(guards)
    tops = {f.name for f in P4.rglob("*.p4") if TOP_FILE.search(f.read_text())}
    assert tops == {"nic.p4", "nic_pna.p4", "switch.p4", "switch_tna.p4", "l2fwd.p4", "l2fwd_pna.p4"}


def test_every_target_macro_is_used():
    target = (P4 / "include" / "target.p4").read_text()
    macros = set(re.findall(r"^#define (\w+)", target, re.M)) - {"MRC_TARGET_P4"}
    rest = "\n".join(f.read_text() for f in P4.rglob("*.p4") if f.name != "target.p4")
    unused = sorted(m for m in macros if not re.search(rf"\b{m}\b", rest))
    assert unused == []


def test_tofino_initialises_every_metadata_field_once_in_order():
    """Tofino does not zero metadata: MetadataInit must name each field of
    metadata_t (a field added to the struct and not here fails)."""
    types = (P4 / "switch" / "types.p4").read_text()
    [struct] = re.findall(r"struct metadata_t \{(.*?)\n\}", types, re.S)
    fields = re.findall(r"^\s+\w+(?:<\d+>)?\s+(\w+);", struct, re.M)
    assert len(fields) == 24
    tna = (P4 / "switch" / "switch_tna.p4").read_text()
    init = re.search(r"parser MetadataInit\(out metadata_t meta\) \{(.*?)transition accept;", tna, re.S)
    assert init, "switch_tna.p4 has no MetadataInit parser"
    assert re.findall(r"meta\.(\w+) = ", init.group(1)) == fields
    assert tna.count("init.apply(") == 2  # ingress and egress parsers
