"""One scenario, two fabrics: scenarios/small_bmv2.yaml on the timed fabric
of reference models and on BMv2 running the P4 programs (every switch and
NIC of the demo topology, cables as relays, spine t1-p0-s0 cut from the
start). Both must agree on who got through: MRC delivers every message,
the single-path baseline loses exactly the pair hashed through the dead
spine."""

from __future__ import annotations

import logging

import pytest

from control_plane.pipelines import REPO
from fabric_sim import scenario
from fabric_sim.runner import on_bmv2
from fabric_sim.runner.run import run

SCENARIO = REPO / "scenarios" / "small_bmv2.yaml"


def delivered(r) -> set[int]:
    return {m.id for m in r.messages if m.done_at >= 0}


@pytest.fixture(scope="module")
def sc():
    s = scenario.load(SCENARIO)
    reason = on_bmv2.unsupported(s)
    if reason:
        pytest.skip(f"BMv2: {reason}")
    logging.getLogger("finsy").setLevel(logging.ERROR)
    return s


def test_mrc_delivers_everything_on_both_fabrics(sc):
    t = sc.transports[0]
    model, bmv2 = run(sc, t), on_bmv2.run_bmv2(sc, t)
    everything = {m.id for m in model.messages}
    assert delivered(model) == delivered(bmv2) == everything
    assert model.events["delivered_twice"] == bmv2.events["delivered_twice"] == 0
    for r in (model, bmv2):  # the ledger: every posted byte placed exactly once
        assert r.ledger.exactly_once and r.ledger.placed == r.ledger.posted, r.ledger.problems
    assert not model.errors and not bmv2.errors
    assert bmv2.drops["link:link_down"] > 0, "the relay must have cut the dead spine's traffic"


def test_single_path_loses_the_same_pair_on_both_fabrics(sc):
    t = sc.transports[1]
    model, bmv2 = run(sc, t), on_bmv2.run_bmv2(sc, t)
    stuck = {(m.src, m.dst) for m in model.messages if m.done_at < 0}
    assert stuck == {(1, 2)}, "the scenario is built so that pair 1->2 is hashed through t1-p0-s0"
    assert delivered(model) == delivered(bmv2)
