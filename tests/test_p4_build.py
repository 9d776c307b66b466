"""The committed BMv2 JSON and P4Info: present, consistent with the Python
side, and equal to a fresh compile where p4c is present."""

import json
import re

import pytest

from control_plane import p4_entities as P
from control_plane.counters import drop_reasons
from mrc_wire import constants as C
from testbed import toolchain


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


@pytest.mark.parametrize("program", sorted([*toolchain.PROGRAMS, *toolchain.SWX_PROGRAMS]))
def test_committed_build_was_compiled_from_the_p4_sources_as_they_are(program):
    # No p4c needed: the build records a digest of its sources. A P4 edit
    # without 'make build' fails here, where p4c is absent too, rather than
    # every BMv2 test skipping on the stale JSON.
    assert toolchain.stale(program) is None


def test_a_p4_source_changed_since_the_build_is_reported_stale(tmp_path):
    (tmp_path / "switch.sources.sha256").write_text(toolchain.sources_digest("switch") + "\n")
    assert toolchain.stale("switch", tmp_path) is None
    (tmp_path / "switch.sources.sha256").write_text("0" * 64 + "\n")  # as if p4src had moved on since
    assert "switch.json is stale: p4src changed since it was compiled" in toolchain.stale("switch", tmp_path)
    (tmp_path / "switch.sources.sha256").unlink()
    assert toolchain.stale("switch", tmp_path) == "switch.sources.sha256 missing: run 'make build' (needs p4c)"


@pytest.mark.skipif(toolchain.p4c() is None, reason="p4c-bm2-ss not found (PATH or $P4C_BM2_SS): cannot recompile")
@pytest.mark.parametrize("program", sorted(toolchain.PROGRAMS))
def test_committed_artifacts_equal_a_fresh_compile(program, tmp_path):
    fresh_info, fresh_json = toolchain.compile_program(program, tmp_path)
    info, blob = toolchain.artifacts(program)
    assert fresh_info.read_text() == info.read_text(), "P4Info is stale: run 'make build' and commit"
    assert json.loads(fresh_json.read_text()) == json.loads(blob.read_text()), "BMv2 JSON is stale: run 'make build'"


@pytest.mark.parametrize("program", sorted(toolchain.SWX_PROGRAMS))
def test_committed_swx_specs_exist(program):
    spec, bfrt, _ = toolchain.swx_artifacts(program)
    assert spec.exists() and bfrt.exists(), f"{spec.name} is not committed: run 'make build' where p4c-dpdk is present"


@pytest.mark.skipif(toolchain.p4test() is None, reason="p4test not found (PATH or $P4TEST): PNA programs not checked")
@pytest.mark.parametrize("name", sorted(toolchain.SWX_PROGRAMS))
def test_pna_programs_pass_p4test(name):
    toolchain.check_program(name)  # raises with p4c's errors


@pytest.mark.skipif(toolchain.p4c_dpdk() is None, reason="p4c-dpdk not found (PATH or $P4C_DPDK): PNA back end not run")
@pytest.mark.parametrize("program", sorted(toolchain.SWX_PROGRAMS))
def test_committed_swx_spec_equals_a_fresh_compile(program, tmp_path):
    toolchain.compile_swx(program, tmp_path)
    fresh, fresh_bfrt, fresh_entries = toolchain.swx_artifacts(program, tmp_path)
    spec, bfrt, entries = toolchain.swx_artifacts(program)
    assert fresh.read_text() == spec.read_text(), f"{spec.name} is stale: run 'make build' and commit"
    assert json.loads(fresh_bfrt.read_text()) == json.loads(bfrt.read_text())
    assert [f.name for f in fresh_entries] == [f.name for f in entries]
    assert all(a.read_text() == b.read_text() for a, b in zip(fresh_entries, entries, strict=True))


def test_switch_sanity_entries_and_model_match_the_unroutable_prefixes():
    """One list of address classes (mrc_wire): the P4's const entries in the
    compiled JSON, for sources and destinations, and the model's byte test,
    on the edges of every class."""
    import ipaddress

    from switch_model.pipeline import unroutable

    nets = [ipaddress.IPv6Network(p) for p in C.UNROUTABLE_PREFIXES.values()]
    want = {(int(n.network_address), int(n.netmask)) for n in nets}
    _, blob = toolchain.artifacts("switch")
    [table] = [t for p in json.loads(blob.read_text())["pipelines"] for t in p["tables"]
               if t["name"].endswith("address_class")]
    got = {"src": set(), "dst": set()}
    for e in table["entries"]:
        for side, k in zip(("src", "dst"), e["match_key"], strict=True):
            if int(k["mask"], 16):
                got[side].add((int(k["key"], 16), int(k["mask"], 16)))
    assert got == {"src": want, "dst": want}
    for n in nets:
        lo, hi = int(n.network_address), int(n.broadcast_address)
        for a in (lo, hi):
            assert unroutable(a.to_bytes(16, "big")), ipaddress.IPv6Address(a)
        for a in (lo - 1, hi + 1):
            if 0 <= a < 2**128 and not any(ipaddress.IPv6Address(a) in m for m in nets):
                assert not unroutable(a.to_bytes(16, "big")), ipaddress.IPv6Address(a)


def test_every_drop_reason_has_a_counting_entry():
    """drops.p4 lists the enum's members again as const entries: none may be
    missing, or that reason's drops would go uncounted."""
    p4info, blob = toolchain.artifacts("switch")
    [table] = [t for p in json.loads(blob.read_text())["pipelines"] for t in p["tables"]
               if t["name"].endswith("drop_stats")]
    keys = {int(e["match_key"][0]["key"], 16) for e in table["entries"]}
    assert keys == set(drop_reasons(p4info).values())
