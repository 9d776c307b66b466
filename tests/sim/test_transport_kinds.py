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
