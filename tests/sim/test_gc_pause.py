"""The collector is paused during a run (sim_core.sim.gc_frozen), which is
safe only while a run makes no reference cycles: every fingerprint case
(trims, CE, probes, port failures, coalesced ACKs, RoCE with PFC and
DCQCN, single path, a collective) is held to none."""

import pytest

import fabric_sim.runner.run as R
from control_plane.config import read_mapping
from control_plane.pipelines import SCENARIOS
from fabric_sim import scenario
from fabric_sim.runner import timing
from sim_core.sim import gc_frozen


@pytest.mark.parametrize("case", range(len(timing.CASES)))
def test_a_run_leaves_no_reference_cycle_for_the_paused_collector(case, monkeypatch):
    pauses = []

    def spy():
        pauses.append(gc_frozen())
        return pauses[-1]

    monkeypatch.setattr(R, "gc_frozen", spy)
    name, over = timing.CASES[case]
    path = SCENARIOS / name
    sc = scenario.parse({**read_mapping(path), **over}, str(path), path.parent)
    for t in sc.transports:
        R.run(sc, t)
    assert [p.cycles for p in pauses] == [0] * len(sc.transports)


def test_the_build_runs_with_the_collector_off_and_a_run_leaves_it_as_it_was(monkeypatch):
    import gc

    seen = []
    real = R.Fabric

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())  # as the fabric is built
        return real(*args, **kwargs)

    monkeypatch.setattr(R, "Fabric", spy)
    name, over = timing.CASES[0]
    path = SCENARIOS / name
    sc = scenario.parse({**read_mapping(path), **over}, str(path), path.parent)
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            R.run(sc, sc.transports[0])
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    assert seen == [False, False]
