"""The memory estimate of a fabric (fabric_sim/runner/footprint.py) and the
refusal, before anything is built, of one that would not fit."""

from __future__ import annotations

import re

import pytest

from fabric_sim.runner import footprint
from fabric_sim.runner import run as run_mod
from fabric_sim.scenario import workload
from fabric_sim.scenario.fields import ScenarioError
from tests.sim.helpers import make


def test_the_estimate_sums_the_measured_cost_of_each_element():
    sc = make({"pattern": "permutation", "message_bytes": 1000})  # 4 planes x 4 T0 x 4 T1, 4 hosts per T0
    c = footprint.counts(sc.topology, 16)
    assert c == {"nics": 16, "switches": 32, "cables": 4 * (4 * 4 + 16), "qps": 16, "messages": 0}
    heap = 16 * footprint.PER_NIC + 32 * footprint.PER_SWITCH + 128 * footprint.PER_CABLE + 16 * footprint.PER_QP
    assert footprint.setup(sc.topology, 16) == int(heap * footprint.RSS_PER_HEAP)
    in_flight = 16 * (footprint.IN_FLIGHT_PER_NIC + footprint.IN_FLIGHT_PER_CABLE * 128 / 16)
    messages = footprint.PER_MESSAGE * 16 * footprint.RSS_PER_HEAP
    whole = footprint.BASE + footprint.setup(sc.topology, 16) + in_flight + messages
    assert footprint.need(sc, sc.transports[0]) == int(whole)
    assert footprint.need(sc, sc.transports[0], apart=True) == int(
        whole + footprint.BASE + footprint.PER_REPORTED * 16 * footprint.RSS_PER_HEAP)


def test_pairs_are_counted_without_building_the_workload():
    n = 1 << 20  # a million NICs: building all-to-all would itself not fit
    w = make({"pattern": "all_to_all", "message_bytes": 1}).workload
    assert footprint.pairs(w, n) == n * (n - 1)
    assert footprint.pairs(make({"pattern": "permutation", "message_bytes": 1, "hosts": 8}).workload, 16) == 8
    assert footprint.pairs(make({"pattern": "incast", "message_bytes": 1, "fan_in": 5}).workload, 16) == 5
    assert footprint.pairs(make({"pattern": "ring_allreduce", "message_bytes": 1}).workload, 16) == 16


def test_too_big_names_the_need_the_counts_and_the_free_memory():
    sc = make({"pattern": "permutation", "message_bytes": 1})
    need = footprint.need(sc, sc.transports[0])
    assert footprint.too_big(sc, sc.transports[0], need) is None
    why = footprint.too_big(sc, sc.transports[0], need - 1)
    assert why.startswith(
        f"the run would need about {need / 2**20:.0f} MiB (16 NICs, 32 switches, 16 QPs, 16 messages) "
        f"and --max-memory allows {(need - 1) / 2**20:.0f} MiB"), why
    assert why.endswith("or a larger --max-memory to run it anyway")
    assert footprint.size(3 << 29) == "1.5 GiB" and footprint.size(5 << 20) == "5 MiB"


def test_a_run_too_big_for_the_machine_is_refused_before_the_fabric_is_built(monkeypatch):
    sc = make({"pattern": "permutation", "message_bytes": 1000})
    monkeypatch.setattr(footprint, "available", lambda: (1 << 20, "this machine has 1 MiB free"))

    def never(*a, **k):
        raise AssertionError("the fabric was built")

    monkeypatch.setattr(run_mod, "Fabric", never)
    with pytest.raises(
        ScenarioError, match=r"^topology: the run would need about .* and this machine has 1 MiB free"
    ):
        run_mod.run(sc, sc.transports[0])


def test_building_prints_progress():
    sc = make({"pattern": "permutation", "message_bytes": 1000}, duration_us=1, bins=2)
    lines: list[str] = []
    run_mod.run(sc, sc.transports[0], lines.append)
    assert [ln for ln in lines if ln.startswith("building the fabric: switches")] == [
        f"building the fabric: switches of plane {p}/4" for p in range(1, 5)]
    assert "building the fabric: 0 cables" in lines and "NIC plans: 0/16 installed" in lines


def test_mrc_sim_refuses_a_fabric_too_big_in_one_line_before_building(tmp_path, capsys, monkeypatch):
    from fabric_sim import cli

    monkeypatch.setattr(footprint, "available", lambda: (1 << 20, "this machine has 1 MiB free"))
    assert cli.main([str(cli.DEFAULT), "--out", str(tmp_path), "--quiet", "--no-plots"]) == 2
    err = capsys.readouterr().err.splitlines()
    # the size itself is the constants' (test_the_estimate_sums_the_measured_cost_of_each_element)
    assert len(err) == 1 and re.match(r"error: topology: the run would need about \d+ MiB \(", err[0])
    assert "(64 NICs, 128 switches, 64 QPs, 64 messages) and this machine has 1 MiB free" in err[0]
    assert err[0].endswith("to run it anyway") and "--max-memory" in err[0]
    assert not (tmp_path / "results.json").exists()


# ---- what a workload holds: messages counted without building, per-message costs held to a measurement ---------

@pytest.mark.parametrize("w", [
    {"pattern": "ring_allreduce", "message_bytes": 1 << 20, "chunk_bytes": 1024},
    {"pattern": "ring_allreduce", "message_bytes": 3_000_001, "chunk_bytes": 4096, "messages": 2, "hosts": 5},
    {"pattern": "ring_allreduce", "message_bytes": 7, "hosts": 3},
    {"pattern": "ring_allreduce", "message_bytes": 100 << 20},
    {"pattern": "all_to_all", "message_bytes": 1_000_000, "chunk_bytes": 3000, "messages": 3},
    {"pattern": "sendrecv", "message_bytes": 1 << 20, "chunk_bytes": 1024},
    {"pattern": "permutation", "message_bytes": 10, "messages": 7},
    {"pattern": "incast", "message_bytes": 10, "messages": 3, "fan_in": 5},
    {"pattern": "flows", "message_bytes": 10, "flows": [{"src": "nic-0", "dst": "nic-1", "messages": 4},
                                                         {"src": "nic-2", "dst": "nic-1", "message_bytes": 5}]},
])
def test_messages_and_bytes_are_counted_exactly_without_building(w):
    sc = make(w)
    msgs = workload.build(sc.workload, 16, 1, 4)
    assert footprint.messages(sc.workload, 16) == len(msgs)
    assert footprint.offered_bytes(sc.workload, 16) == sum(m.size for m in msgs)
