"""The example traces of scenarios/chakra/ are what the project's writer
makes (fabric_sim/scenario/chakra/examples.py), and their scenarios read."""

from __future__ import annotations

import pytest

from control_plane.pipelines import REPO
from fabric_sim import scenario
from fabric_sim.scenario.chakra import examples
from fabric_sim.scenario.chakra.trace import Coll, Kind

SHIPPED = REPO / "scenarios" / "chakra"


def test_the_committed_traces_are_what_examples_writes(tmp_path):
    examples.main(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert made == sorted(p.relative_to(SHIPPED / "traces") for p in (SHIPPED / "traces").rglob("*") if p.is_file())
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (SHIPPED / "traces" / rel).read_bytes(), \
            f"{rel}: run python -m fabric_sim.scenario.chakra.examples"


@pytest.mark.parametrize("name", ["dp", "dp_spine_down", "tp_dp", "tp_dp_spine_down"])
def test_the_example_scenarios_read(name):
    sc = scenario.load(SHIPPED / f"{name}.yaml")
    t = sc.workload.trace
    assert t is not None and len(t.ranks) == 8 and sc.workload.iterations == 2
    colls = {op.coll for ops in t.ranks for op in ops if op.kind is Kind.COLL}
    assert colls == ({Coll.ALL_REDUCE} if name.startswith("dp") else {Coll.ALL_REDUCE, Coll.ALL_GATHER,
                                                                        Coll.REDUCE_SCATTER})
    assert [e.kind for e in sc.events] == (["switch_down"] if name.endswith("spine_down") else [])
