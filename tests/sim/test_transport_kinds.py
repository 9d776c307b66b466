"""Transports are objects: the run asks a transport what to build, and
only the factory (fabric_sim.transports.kinds.of) reads a kind's name."""

import ast

from control_plane.pipelines import REPO
from fabric_sim.scenario import Transport
from fabric_sim.transports import kinds

NAMES = {"mrc", "single_path", "roce"}
FACTORIES = {"fabric_sim/transports/kinds.py", "fabric_sim/scenario/kinds.py"}


def test_each_kind_is_its_own_object():
    built = {k: kinds.of(Transport(kind=k)) for k in NAMES}
    assert {k: type(t) for k, t in built.items()} == {"mrc": kinds.Mrc, "single_path": kinds.SinglePath,
                                                      "roce": kinds.Roce}
    assert {k for k, t in built.items() if t.reroutes} == {"single_path", "roce"}
    assert {k for k, t in built.items() if t.bmv2_refusal} == {"roce"}


def test_no_kind_is_tested_by_name_outside_the_factories():
    bad = []
    for f in sorted((REPO / "fabric_sim").rglob("*.py")):
        rel = f.relative_to(REPO).as_posix()
        if rel in FACTORIES:
            continue
        for node in ast.walk(ast.parse(f.read_text())):  # `kind == "roce"`, `kind in ("mrc", ...)`
            if isinstance(node, ast.Compare) and any(isinstance(c, ast.Constant) and c.value in NAMES
                                                     for n in [node.left, *node.comparators] for c in ast.walk(n)):
                bad.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert not bad, "\n".join(bad)


def test_the_ecmp_seed_draws_the_hashed_paths_again_and_seed_0_is_the_hash_of_the_pair_alone():
    """The switches' hash seed (scenario `ecmp_seed`) moves where single_path
    and roce put each QP's one path; 0 hashes (source, destination, QP) alone."""
    from fabric_sim.runner import wiring
    from fabric_sim.transports import qps
    from mrc_host.ev import make_ev
    from mrc_wire.constants import ev_spine
    from tests.sim.helpers import make

    sc = make({"pattern": "permutation", "message_bytes": 4096}, [{"name": "roce", "kind": "roce"}], ecmp_seed=7)
    topo = sc.topology
    h = qps._hash(3, 9, 0)
    assert qps.hashed(topo, 3, 9, 0).home == [make_ev(h % topo.planes, (h >> 3) % topo.t1_per_plane)]
    draws = {tuple(ev_spine(qps.hashed(topo, a, (a + 8) % 16, 0, s).home[0]) for a in range(8)) for s in range(20)}
    assert len(draws) == 20  # 20 hash seeds, 20 placements of 8 flows
    plan = wiring.describe(sc, sc.transports[0])
    for (a, b), links in plan.links.items():
        assert [q.prof_a.home for q in links] == [qps.hashed(topo, a, b, q.k, 7).home for q in links]
