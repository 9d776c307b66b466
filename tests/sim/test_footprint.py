"""The memory estimate of a fabric (fabric_sim/runner/footprint.py) and the
refusal, before anything is built, of one that would not fit."""

from __future__ import annotations

import pytest

from fabric_sim.runner import footprint
from fabric_sim.runner import run as run_mod
from fabric_sim.scenario.fields import ScenarioError
from tests.sim.helpers import make


def test_the_estimate_sums_the_measured_cost_of_each_element():
    sc = make({"pattern": "permutation", "message_bytes": 1000})  # 4 planes x 4 T0 x 4 T1, 4 hosts per T0
    c = footprint.counts(sc.topology, 16)
    assert c == {"nics": 16, "switches": 32, "cables": 4 * (4 * 4 + 16), "qps": 16}
    heap = (footprint.BASE + 16 * footprint.PER_NIC + 32 * footprint.PER_SWITCH
            + 128 * footprint.PER_CABLE + 16 * footprint.PER_QP)
    assert footprint.estimate(sc.topology, 16) == int(heap * footprint.RSS_PER_HEAP)


def test_pairs_are_counted_without_building_the_workload():
    n = 1 << 20  # a million NICs: building all-to-all would itself not fit
    w = make({"pattern": "all_to_all", "message_bytes": 1}).workload
    assert footprint.pairs(w, n) == n * (n - 1)
    assert footprint.pairs(make({"pattern": "permutation", "message_bytes": 1, "hosts": 8}).workload, 16) == 8
    assert footprint.pairs(make({"pattern": "incast", "message_bytes": 1, "fan_in": 5}).workload, 16) == 5
    assert footprint.pairs(make({"pattern": "ring_allreduce", "message_bytes": 1}).workload, 16) == 16


def test_too_big_names_the_need_the_counts_and_the_free_memory():
    topo = make({"pattern": "permutation", "message_bytes": 1}).topology
    need = footprint.estimate(topo, 16)
    assert footprint.too_big(topo, 16, free=need) is None
    why = footprint.too_big(topo, 16, free=need - 1)
    assert why.startswith(
        f"the fabric would need about {need / 2**20:.0f} MiB (16 NICs, 32 switches, 128 cables, 16 QPs)"
    )
    assert footprint.size(3 << 29) == "1.5 GiB" and footprint.size(5 << 20) == "5 MiB"


def test_a_run_too_big_for_the_machine_is_refused_before_the_fabric_is_built(monkeypatch):
    sc = make({"pattern": "permutation", "message_bytes": 1000})
    monkeypatch.setattr(footprint, "available", lambda: 1 << 20)  # 1 MiB free

    def never(*a, **k):
        raise AssertionError("the fabric was built")

    monkeypatch.setattr(run_mod, "Fabric", never)
    with pytest.raises(
        ScenarioError, match=r"^topology: the fabric would need about .* and this machine has 1 MiB free"
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

    monkeypatch.setattr(footprint, "available", lambda: 1 << 20)
    assert cli.main([str(cli.DEFAULT), "--out", str(tmp_path), "--quiet", "--no-plots"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: topology: the fabric would need about 7 MiB")
    assert "(64 NICs, 128 switches, 1,024 cables, 64 QPs) and this machine has 1 MiB free" in err[0]
    assert not (tmp_path / "results.json").exists()
