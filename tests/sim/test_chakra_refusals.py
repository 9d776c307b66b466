"""A trace that cannot run is refused when the scenario is read, before
anything is built or run, one line per mistake naming the file and node;
one too big for this machine's memory is refused by the footprint check."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_plane.config import ConfigError
from fabric_sim import cli, scenario
from fabric_sim.runner import footprint
from fabric_sim.scenario.chakra import chakra_et_pb2 as pb
from fabric_sim.scenario.chakra.stream import encode
from fabric_sim.scenario.chakra.trace import Coll
from fabric_sim.scenario.chakra.writer import Rank, write
from fabric_sim.scenario.fields import ScenarioError

DOC = {"name": "t", "topology": {"planes": 1, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 2},
       "workload": {"pattern": "chakra", "trace": "trace"}, "transports": [{"kind": "mrc", "evs_per_qp": 16}]}


def two(tmp_path: Path, a: Rank, b: Rank, groups: dict[str, list[int]] | None = None) -> Path:
    write(tmp_path / "trace", [a, b], groups)
    return tmp_path


def refused(base: Path, doc: dict = DOC) -> list[str]:
    with pytest.raises(ConfigError) as info:
        scenario.parse(doc, base=base)
    return info.value.lines()


def ar(size: int = 4096, group: str = "") -> Rank:
    k = Rank()
    k.collective("ar", Coll.ALL_REDUCE, size, group=group)
    return k


def test_a_missing_rank_file_is_named(tmp_path):
    write(tmp_path / "trace", [ar(), ar(), ar()])
    (tmp_path / "trace" / "trace.1.et").unlink()
    assert refused(tmp_path) == ["workload.trace: trace: no file trace.1.et for rank 1; the folder has ranks up to 2"]


def test_a_folder_without_a_trace_and_a_path_that_is_not_a_folder(tmp_path):
    (tmp_path / "trace").mkdir()
    assert refused(tmp_path) == ["workload.trace: trace holds no Chakra ET file (<prefix>.<rank>.et)"]
    assert refused(tmp_path, {**DOC, "workload": {"pattern": "chakra", "trace": "nowhere"}}) == \
        ["workload.trace: nowhere is not a folder (a Chakra trace is a folder of <prefix>.<rank>.et files)"]


def test_a_dependency_that_does_not_exist(tmp_path):
    a = Rank()
    a.compute("c", 5, deps=[7])
    assert refused(two(tmp_path, a, Rank())) == \
        ["workload.trace: trace.0.et: node 0 (c) depends on node 7, which the file does not have"]


def test_a_cycle_in_a_ranks_graph(tmp_path):
    a = Rank()
    a.compute("x", 5, deps=[2])
    a.compute("y", 5, deps=[0])
    a.compute("z", 5, deps=[1])
    assert refused(two(tmp_path, a, Rank())) == \
        ["workload.trace: trace.0.et: a dependency cycle: 0 (x) -> 2 (z) -> 1 (y) -> 0 (x)"]


def test_ranks_that_would_wait_on_each_other(tmp_path):
    """Each rank's send before its receive, both blocking: a ring of sends no receive ever meets."""
    ks = []
    for r in range(2):
        k = Rank()
        s = k.send("s", 1 - r, 100)
        k.recv("v", 1 - r, 100, deps=[s])
        ks.append(k)
    assert refused(two(tmp_path, *ks)) == [
        "workload.trace: the ranks would wait on each other forever (a cycle through collectives and messages): "
        "send 0->1 tag 0 #0 -> send 1->0 tag 0 #0 -> send 0->1 tag 0 #0"]


def _coll_node(comm_type: int, size: int) -> pb.Node:
    attrs = [pb.AttributeProto(name="comm_type", int64_val=comm_type),
             pb.AttributeProto(name="comm_size", int64_val=size)]
    return pb.Node(id=0, name="c", type=pb.COMM_COLL_NODE, attr=attrs)


@pytest.mark.parametrize("comm_type, size, why", [
    (42, 64, "node 0 (c): comm_type 42 is not one of Chakra's collectives"),
    (pb.GATHER, 64, "node 0 (c): comm_type GATHER is not modelled (the walk runs ALL_REDUCE, ALL_GATHER, "
                    "REDUCE_SCATTER, ALL_TO_ALL, BROADCAST)"),
    (pb.ALL_REDUCE, 0, "node 0 (c): comm_size 0: a transfer moves at least one byte"),
    (pb.ALL_REDUCE, -1, "node 0 (c): comm_size -1: a transfer moves at least one byte"),
])
def test_an_unknown_comm_type_and_a_size_not_above_zero(tmp_path, comm_type, size, why):
    (tmp_path / "trace").mkdir()
    for r in range(2):
        (tmp_path / "trace" / f"trace.{r}.et").write_bytes(encode([pb.GlobalMetadata(), _coll_node(comm_type, size)]))
    assert refused(tmp_path) == [f"workload.trace: trace.0.et: {why}", f"workload.trace: trace.1.et: {why}"]


def test_a_send_without_its_receive(tmp_path):
    a, b = Rank(), Rank()
    a.send("s", 1, 100, tag=3)
    b.recv("v", 0, 100, tag=4)
    assert refused(two(tmp_path, a, b)) == [
        "workload.trace: trace.0.et: node 0 (s): a send to rank 1 with tag 3 that rank 1 never receives "
        "(1 sends, 0 receives)",
        "workload.trace: trace.1.et: node 0 (v): a receive from rank 0 with tag 4 that rank 0 never sends "
        "(1 receives, 0 sends)"]


def test_a_file_that_is_not_a_chakra_et(tmp_path):
    write(tmp_path / "trace", [ar(), ar()])
    (tmp_path / "trace" / "trace.1.et").write_text('{"schema": "1.0.2-chakra.0.0.4", "nodes": []}\n')
    assert refused(tmp_path) == ["workload.trace: trace.1.et: not a Chakra ET: byte 0: a message of 123 bytes, "
                                 "45 left in the file"]


def test_collectives_a_group_does_not_run_alike(tmp_path):
    assert refused(two(tmp_path, ar(4096), ar(8192))) == [
        "workload.trace: trace.1.et: collective #0 of group (every rank) is all_reduce of 8,192 B (node 0), where "
        "trace.0.et runs all_reduce of 4,096 B (node 0)"]


def test_a_group_the_groups_file_does_not_name(tmp_path):
    assert refused(two(tmp_path, ar(group="tp"), ar(group="tp"), {"dp": [0, 1]})) == [
        "workload.trace: trace.0.et: node 0 (ar): pg_name 'tp' is not in trace.json (groups: dp)",
        "workload.trace: trace.1.et: node 0 (ar): pg_name 'tp' is not in trace.json (groups: dp)"]


def test_more_ranks_than_nics_and_fields_of_other_patterns(tmp_path):
    write(tmp_path / "trace", [ar() for _ in range(5)])
    assert refused(tmp_path) == ["workload.trace: 5 ranks; the topology has 4 NICs (a rank per NIC)"]
    write(tmp_path / "trace", [ar() for _ in range(2)])
    (tmp_path / "trace" / "trace.2.et").unlink()
    (tmp_path / "trace" / "trace.3.et").unlink()
    (tmp_path / "trace" / "trace.4.et").unlink()
    doc = {**DOC, "workload": {"pattern": "chakra", "trace": "trace", "message_bytes": 5, "hosts": 2}}
    assert refused(tmp_path, doc) == [
        "workload.message_bytes: not for pattern chakra (the trace gives every size)",
        "workload.hosts: not for pattern chakra (the trace gives the ranks)"]
    assert refused(tmp_path, {**DOC, "workload": {"pattern": "permutation", "iterations": 2}}) == [
        "workload.iterations: only for pattern chakra (messages repeats the other patterns)",
        "workload.message_bytes: missing key"]


def test_mrc_sim_says_it_in_lines_and_runs_nothing(tmp_path, capsys):
    a = Rank()
    a.compute("c", 5, deps=[9])
    two(tmp_path, a, Rank())
    (tmp_path / "s.yaml").write_text("name: t\ntopology: {planes: 1, t0_per_plane: 2, t1_per_plane: 2, "
                                     "hosts_per_t0: 2}\nworkload: {pattern: chakra, trace: trace}\n")
    assert cli.main([str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err == "error: workload.trace: trace.0.et: node 0 (c) depends on node 9, which the file does not have\n"
    assert not (tmp_path / "out").exists()


def test_a_trace_too_big_for_the_memory_is_refused_before_building(tmp_path, monkeypatch):
    k = Rank()
    prev: list[int] = []
    for i in range(200):
        prev = [k.compute(f"c{i}", 1, prev)]
    write(tmp_path / "trace", [k, k])
    sc = scenario.parse({**DOC, "workload": {"pattern": "chakra", "trace": "trace", "iterations": 1000}},
                        base=tmp_path)
    assert footprint.nodes(sc.workload) == 400_000  # 2 ranks x 200 nodes x 1,000 iterations
    need = footprint.need(sc, sc.transports[0])
    assert need > footprint.BASE + footprint.PER_NODE * 400_000  # the nodes walked are counted
    monkeypatch.setattr(footprint, "available", lambda: (need - 1, "the test allows one byte less"))
    with pytest.raises(ScenarioError, match=r"400,000 trace nodes walked"):
        footprint.check(sc, sc.transports[0])
    monkeypatch.setattr(footprint, "available", lambda: (need, "the test allows as much"))
    footprint.check(sc, sc.transports[0])
