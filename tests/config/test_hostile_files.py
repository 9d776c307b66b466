"""Hostile and impossible files are refused in one clear line before any
work starts: alias bombs, random bytes, deep nesting,
unsafe names, and values that the run could not honour."""

from __future__ import annotations

import os
import time
import tracemalloc

import pytest

from control_plane import config, topology
from fabric_sim import scenario
from tests.sim.helpers import SMALL

BASE = {"topology": SMALL, "workload": {"pattern": "permutation", "message_bytes": 1000}}
LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def refused(path, load=scenario.load) -> config.ConfigError:
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(config.ConfigError) as info:
            load(path)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.monotonic() - t0 < 10 and peak < 50 << 20, (time.monotonic() - t0, peak)
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize("load", [scenario.load, topology.load])
def test_a_billion_laughs_fails_fast_in_small_memory(tmp_path, load):
    f = tmp_path / "bomb.yaml"
    f.write_text(LAUGHS + "name: *i\n")
    e = refused(f, load)
    assert (e.path, e.reason) == (str(f), f"more than {config.MAX_NODES:,} values once its aliases are expanded")


def test_an_alias_that_contains_itself_is_refused(tmp_path):
    f = tmp_path / "loop.yaml"
    f.write_text("a: &a [1, *a]\n")
    assert refused(f).reason == "an alias refers to a node that contains it"


def test_random_bytes_are_not_utf8(tmp_path):
    f = tmp_path / "noise.yaml"
    f.write_bytes(bytes([0x80, 0xff, 0xfe, 0x00]) + os.urandom(64))
    assert refused(f).reason == "not UTF-8 text (byte 0)"


@pytest.mark.parametrize("text", ["[" * 5000 + "]" * 5000, "a:\n" + "".join(" " * i + "b:\n" for i in range(1, 200))])
def test_deep_nesting_is_refused_without_recursion_error(tmp_path, text):
    f = tmp_path / "deep.yaml"
    f.write_text(text)
    assert refused(f).reason == f"nested deeper than {config.MAX_DEPTH} levels"


def test_an_oversized_file_is_refused_unread(tmp_path):
    f = tmp_path / "big.yaml"
    f.write_text("# " + "x" * config.MAX_FILE_BYTES)
    assert refused(f).reason == "larger than 1 MiB: not a scenario or topology file"


def test_a_missing_file_is_one_line(tmp_path):
    e = refused(tmp_path / "nope.yaml")
    assert e.reason == "cannot read: No such file or directory"


def error(**patch) -> tuple[str, str]:
    with pytest.raises(config.ConfigError) as info:
        scenario.parse({**BASE, **patch})
    assert len(info.value.errors) == 1, info.value.errors
    return info.value.errors[0]


@pytest.mark.parametrize("name", ["../../x", "/tmp/x", "a/b", "..", ".hidden", ""])
def test_the_name_is_a_safe_folder_name(name):
    assert error(name=name)[0] == "name"


def test_a_safe_name_and_the_default_name():
    assert scenario.parse({**BASE, "name": "fig09a-v2.1"}).name == "fig09a-v2.1"
    assert scenario.parse(BASE, "/x/../my file.yaml").name == "scenario"  # the file's stem is not safe


def test_qps_beyond_the_nic_are_refused():
    path, reason = error(workload={"pattern": "all_to_all", "message_bytes": 1000, "qps_per_pair": 256})
    assert path == "workload.qps_per_pair"
    assert reason == ("256 QPs per pair give a NIC 7,680 QPs (all_to_all); the NIC holds 4,096 "
                      "(qp_rotation register, qp_ev table)")
    assert scenario.parse({**BASE, "workload": {"pattern": "all_to_all", "message_bytes": 1, "qps_per_pair": 136},
                           "transports": [{"kind": "mrc", "evs_per_qp": 16}]})  # 4,080 QPs, 65,280 slots: fits


def test_slots_beyond_the_nic_are_refused():
    path, reason = error(transports=[{"kind": "mrc", "evs_per_qp": 65536}])
    assert (path, reason) == ("transports[0].evs_per_qp", "65536 EVs on each of a NIC's 2 QPs are 131,072 slots; "
                                                          "the NIC holds 65,536 (slot_ev table)")
    assert scenario.parse({**BASE, "transports": [{"kind": "mrc", "evs_per_qp": 32768}]})


def test_rates_must_be_above_zero():
    link = ["t0-p0-r0", "t1-p0-s0"]
    assert error(events=[{"at_us": 1, "link_rate": {"link": link, "gbps": 0}}]) == \
        ("events[0].link_rate.gbps", "0 must be above 0")
    assert error(links={"fabric_gbps": 0}) == ("links.fabric_gbps", "0 is outside 0.001..100000")


ONE_NIC = {"planes": 1, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 1}


@pytest.mark.parametrize("pattern", ["permutation", "all_to_all", "incast", "ring_allreduce"])
def test_a_pattern_needs_two_hosts(pattern):
    assert error(topology=ONE_NIC, workload={"pattern": pattern, "message_bytes": 1}) == \
        ("workload.pattern", f"{pattern} needs at least 2 NICs; the topology has 1")


def test_an_event_after_the_run_is_refused():
    assert error(duration_us=100, events=[{"at_us": 150, "plane_down": 1}]) == \
        ("events[0].at_us", "150 is after the run's end (duration_us 100): it would never be applied")


def test_a_huge_sweep_is_counted_before_it_is_expanded():
    values = list(range(1000, 1060))
    doc = {"workload.message_bytes": values, "seed": list(range(60)), "duration_us": [float(v) for v in values]}
    t0 = time.monotonic()
    assert error(sweep=doc) == ("sweep", "216,000 variants (60 x 60 x 60), over the limit of 10,000 runs")
    assert time.monotonic() - t0 < 2


def test_a_sweep_key_with_a_bad_index_is_one_line():
    assert error(events=[{"at_us": 1, "plane_down": 1}], sweep={"events[x].at_us": [1]}) == \
        ("sweep.events[x].at_us", "'events[x]' is not a field name or name[index]")


def test_sweep_values_are_checked_one_by_one():
    path, reason = error(sweep={"workload.message_bytes": [10, 20, "big"], "seed": [1, 2]})
    assert (path, reason) == (
        "sweep (workload.message_bytes=big): workload.message_bytes",
        "expected an integer, got 'big'",
    )


def test_sweep_checks_parse_each_value_not_each_combination(monkeypatch):
    calls = []
    real = scenario.parse
    monkeypatch.setattr(scenario, "parse", lambda *a, **k: calls.append(1) or real(*a, **k))
    sc = real({**BASE, "sweep": {"seed": list(range(20)), "workload.messages": list(range(1, 21))}})
    assert len(calls) == 40 and len(scenario.variants(sc)) == 400


def test_an_oversized_tls_file_is_refused_unread(tmp_path):
    from control_plane import tls

    big = tmp_path / "ca.pem"
    big.write_bytes(b"-" * (config.MAX_FILE_BYTES + 1))
    with pytest.raises(config.ConfigError) as info:
        tls.load({"ca_cert": str(big)}, "devices[0].tls")
    assert info.value.errors == [("devices[0].tls.ca_cert", f"larger than 1 MiB, not a PEM file: {big}")]


@pytest.mark.parametrize("pattern", ["permutation", "all_to_all", "incast", "ring_allreduce", "sendrecv"])
def test_a_one_host_workload_built_directly_is_refused_not_hung(pattern):
    from fabric_sim.scenario import workload

    with pytest.raises(ValueError, match=f"{pattern} needs at least 2 hosts, got 1"):
        workload.build(scenario.Workload(pattern=pattern, message_bytes=1, fan_in=1), 1, seed=1)


@pytest.mark.parametrize("text, why", [("", "the file is empty"), ("# nothing\n", "the file is empty"),
                                       ("- 1\n- 2\n", "expected a mapping of keys at the top, got list [1, 2]"),
                                       ("just words\n", "expected a mapping of keys at the top, got str 'just words'")])
def test_a_file_that_is_not_a_mapping_is_named(tmp_path, text, why):
    f = tmp_path / "s.yaml"
    f.write_text(text)
    assert refused(f).errors == [(str(f), why)]
    assert refused(f, topology.load).errors == [(str(f), why)]


def test_a_scenarios_topology_file_with_a_mistake_is_named(tmp_path):
    (tmp_path / "t.yaml").write_text("planes: 9\nt0_per_plane: 1\nt1_per_plane: 1\nhosts_per_t0: 2\n")
    (tmp_path / "e.yaml").write_text("")
    with pytest.raises(config.ConfigError) as info:
        scenario.parse({**BASE, "topology": "t.yaml"}, base=tmp_path)
    assert info.value.lines() == ["topology (t.yaml): planes: 9 is outside 1..8"]
    with pytest.raises(config.ConfigError) as info:
        scenario.parse({**BASE, "topology": "e.yaml"}, base=tmp_path)
    assert info.value.lines() == ["topology: cannot read 'e.yaml': the file is empty"]
