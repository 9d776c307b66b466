"""Hostile and impossible files are refused in one clear line before any
work starts: alias bombs, random bytes, deep nesting,
unsafe names, and values that the run could not honour."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml

from control_plane import config, topology
from control_plane.pipelines import REPO
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


# ---- files that are not regular files: refused before they are opened for reading, never waited on ------------

def run_cli(module: str, *argv: str, cwd=None) -> subprocess.CompletedProcess[str]:
    """A CLI in a child process, under a timeout: a hostile input must not hang it."""
    return subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def fifo(tmp_path, name="pipe.yaml"):
    p = tmp_path / name
    os.mkfifo(p)
    return p


@contextlib.contextmanager
def within(seconds: int):
    """Fails, rather than hangs, if the block blocks (SIGALRM interrupts a blocked open)."""
    def late(*_):
        raise TimeoutError(f"still blocked after {seconds} s")
    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_fifo_or_a_device_is_not_a_file_to_read(tmp_path):
    p = fifo(tmp_path)
    for path in (p, Path("/dev/zero"), tmp_path):
        with within(10), pytest.raises(config.ConfigError) as info:
            config.read_yaml(path)
        assert info.value.reason.startswith("not a regular file ("), info.value.reason


@pytest.mark.parametrize("where", ["scenario", "scenario's topology", "mrcctl plan", "mrcctl --tls-ca-cert"])
def test_no_cli_waits_on_a_fifo(tmp_path, where):
    pipe = fifo(tmp_path)
    topo = REPO / "bmv2_configs" / "topologies" / "demo.yaml"
    scen = tmp_path / "s.yaml"
    scen.write_text(yaml.safe_dump({**BASE, "topology": pipe.name}))
    argv = {"scenario": ("fabric_sim", str(pipe)), "scenario's topology": ("fabric_sim", str(scen)),
            "mrcctl plan": ("control_plane.cli", "plan", str(pipe)),
            "mrcctl --tls-ca-cert": ("control_plane.cli", "verify", str(topo), "--tls-ca-cert", str(pipe))}[where]
    p = run_cli(*argv, cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "not a regular file (a FIFO)" in p.stderr.strip().splitlines()[-1], p.stderr


# ---- duplicate keys: YAML says keys are unique, so a second one is refused, never silently the winner ----------

@pytest.mark.parametrize("text, key, lines", [
    ("duration_us: 10\nseed: 1\nduration_us: 20\n", "duration_us", (1, 3)),
    ("topology:\n  planes: 1\n  planes: 2\n", "planes", (2, 3)),
    ("devices: []\nname: x\ndevices: []\n", "devices", (1, 3)),
])
def test_a_duplicate_key_is_refused_naming_both_lines(tmp_path, text, key, lines):
    f = tmp_path / "dup.yaml"
    f.write_text(text)
    for load in (scenario.load, topology.load):
        assert refused(f, load).errors == [(str(f), f"key {key!r} is given twice (lines {lines[0]} and {lines[1]})")]


def test_a_merge_key_may_be_overridden(tmp_path):
    f = tmp_path / "merge.yaml"
    f.write_text("base: &b {planes: 1, t0_per_plane: 1}\nt: {<<: *b, planes: 2}\n")
    assert config.read_yaml(f)["t"] == {"planes": 2, "t0_per_plane": 1}


# ---- huge integers: refused naming the field, the value cut -----------------------------------------------------

@pytest.mark.parametrize("digits", [60, 4_000, 5_000, 50_000])
def test_a_huge_integer_in_a_file_is_refused_naming_the_field(tmp_path, digits):
    f = tmp_path / "t.yaml"
    f.write_text(f"planes: 1\nt0_per_plane: 1\nt1_per_plane: {'7' * digits}\nhosts_per_t0: 2\n")
    path, reason = refused(f, topology.load).errors[0]
    assert path == "t1_per_plane" and reason == f"an integer of {digits:,} digits (7777777777...): too large", reason
    s = tmp_path / "s.yaml"
    s.write_text(f"topology: {SMALL}\nworkload: {{pattern: permutation, message_bytes: {'9' * digits}}}\n")
    assert refused(s).errors[0][0] == "workload.message_bytes"


def test_a_huge_integer_given_in_code_is_cut_in_the_error():
    path, reason = error(seed=10**4000)
    assert path == "seed" and len(reason) < 80 and reason.startswith("1000000000..."), reason


# ---- what an error echoes: cut, no control characters; names are printable ----------------------------------------

HOSTILE = "ok\nFAILED nothing, all good\x1b[2J" + "x" * 5000


@pytest.mark.parametrize("patch", [
    {"name": HOSTILE},
    {"transports": [{"kind": "mrc", "name": HOSTILE}]},
    {"transports": [{"kind": HOSTILE, "name": "t"}]},
    {"workload": {"pattern": HOSTILE, "message_bytes": 1}},
    {"events": [{"at_us": 1, "switch_down": HOSTILE}]},
    {"topology": {**SMALL, "name": HOSTILE}},
    {"topology": {**SMALL, "devices": [{"name": HOSTILE, "grpc": "127.0.0.1:1"}]}},
    {"topology": {**SMALL, "devices": [{"name": "t0-p0-r0", "grpc": HOSTILE}]}},
])
def test_a_hostile_string_is_refused_and_echoed_cut_and_printable(patch):
    path, reason = error(**patch)
    line = f"{path}: {reason}"
    assert len(line) < 320 and line.isprintable(), line


@pytest.mark.parametrize("name", ["tab\there", "nl\n", "bell\a", "esc\x1b[1m", "c1\x85"])
def test_names_allow_printable_characters_only(name):
    for patch in ({"transports": [{"kind": "mrc", "name": name}]}, {"topology": {**SMALL, "name": name}}):
        path, reason = error(**patch)
        assert reason.startswith("expected printable characters"), (path, reason)


def test_a_binary_name_is_not_a_string(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(f"topology: {SMALL}\nworkload: {{pattern: permutation, message_bytes: 1}}\nname: !!binary aGVsbG8=\n")
    assert refused(f).errors == [("name", "expected a string, got b'hello'")]


def test_devices_given_as_a_map_says_a_list_is_expected():
    path, reason = error(topology={**SMALL, "devices": {"t0-p0-r0": {"grpc": "127.0.0.1:1"}}})
    assert (path, reason) == ("topology.devices", "expected a list")


# ---- a sweep: every variant checked before the first run, one line per variant that fails; no sweep in a sweep --

def test_variants_valid_alone_but_not_together_are_each_one_line():
    sc = scenario.parse({**BASE, "events": [{"at_us": 5, "plane_down": 1}],
                         "sweep": {"duration_us": [1000, 10, 20], "events[0].at_us": [5, 500]}})
    with pytest.raises(config.ConfigError) as info:
        scenario.variants(sc)
    rule = "is after the run's end (duration_us {:g}): it would never be applied"
    assert info.value.lines() == [
        f"sweep [4/6] (duration_us=10 at_us=500): events[0].at_us: 500 {rule.format(10)}",
        f"sweep [6/6] (duration_us=20 at_us=500): events[0].at_us: 500 {rule.format(20)}"]


@pytest.mark.parametrize("key", ["sweep", "sweep.seed", "sweep.workload.messages"])
def test_a_sweep_inside_a_sweep_is_refused(key):
    path, reason = error(sweep={key: [{"seed": [1, 2]}] if key == "sweep" else [1, 2]})
    assert (path, reason) == (f"sweep.{key}", "a sweep cannot set `sweep` (a sweep inside a sweep is not run)")


# ---- values the run could not honour, refused before it ----------------------------------------------------------

def test_a_workload_that_starts_after_the_run_is_refused():
    rule = "150 is after the run's end (duration_us 100): it would never be applied"
    assert error(duration_us=100, workload={"pattern": "permutation", "message_bytes": 1, "start_us": 150}) == \
        ("workload.start_us", rule)
    flows = [{"src": "nic-0", "dst": "nic-1"}, {"src": "nic-1", "dst": "nic-0", "start_us": 150}]
    assert error(duration_us=100, workload={"pattern": "flows", "message_bytes": 1, "flows": flows}) == \
        ("workload.flows[1].start_us", rule)


def test_the_run_cache_folder_is_not_a_scenario_name():
    assert error(name="cache") == ("name", "'cache' is the run cache's folder (results/cache): choose another name")


def test_more_active_evs_than_a_qp_has_are_refused():
    assert error(transports=[{"kind": "mrc", "evs_per_qp": 8, "ev_min_active": 65536}]) == \
        ("transports[0].ev_min_active", "65536 is more than the QP's 8 EVs (evs_per_qp)")


def test_a_file_of_many_plain_values_is_refused_without_blaming_aliases(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "MAX_NODES", 1000)  # the rule at a size that parses fast in pure-Python YAML
    f = tmp_path / "many.yaml"
    f.write_text("events: [" + "0," * 5000 + "]\n")
    assert refused(f).reason == "more than 1,000 values: not a scenario or topology file"
