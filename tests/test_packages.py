"""Package boundaries: each package imports only the
layers below it, so nothing imports in a cycle, and pytest is not a
runtime dependency."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from control_plane.pipelines import REPO

# package -> project packages it may import
ALLOWED = {
    "mrc_wire": set(),
    "sim_core": set(),
    "control_plane": {"mrc_wire"},
    "switch_model": {"mrc_wire"},
    "nic_model": {"mrc_wire", "sim_core"},
    # the host transport: it reaches its NIC through mrc_wire.pcie, never nic_model
    "mrc_host": {"mrc_wire", "sim_core"},
    # testbed: the BMv2 fabric
    "fabric_sim": {"mrc_wire", "sim_core", "control_plane", "switch_model", "nic_model", "mrc_host", "testbed"},
    # the MRC paper's experiments: scenarios run on the timed fabric, read as figures and claims
    "mrc_paper": {"mrc_wire", "sim_core", "control_plane", "switch_model", "nic_model", "mrc_host", "fabric_sim"},
    "testbed": {"mrc_wire", "sim_core", "control_plane", "switch_model", "nic_model", "mrc_host"},
    "bench": {
        "mrc_wire",
        "sim_core",
        "control_plane",
        "switch_model",
        "nic_model",
        "mrc_host",
        "fabric_sim",
        "mrc_paper",
        "testbed",
        "ptf_tests",
    },
}


# fabric_sim's sub-packages, one per job, from the bottom (docs/architecture.md):
# sub-package -> the sub-packages it may import
FABRIC_SIM = {
    "scenario": set(),  # the scenario format: what a run is asked to do
    "net": {"scenario"},  # the timed network
    "transports": {"scenario", "net"},  # what runs on the hosts
    "runner": {"scenario", "net", "transports"},  # running scenarios
    "report": {"scenario", "net", "transports", "runner"},  # tables and plots of finished runs
    "cli": {"scenario", "runner", "report"},  # mrc-sim
    "__main__": {"cli"},
}


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out & set(ALLOWED)


def test_each_package_imports_only_the_layers_below_it():
    bad = []
    for pkg, allowed in ALLOWED.items():
        for f in sorted((REPO / pkg).rglob("*.py")):
            extra = _imports(f) - allowed - {pkg}
            if extra:
                bad.append(f"{f.relative_to(REPO)} imports {', '.join(sorted(extra))}")
    assert not bad, "\n".join(bad)


def _fabric_sim_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        out |= {n.split(".")[1] for n in names if n.startswith("fabric_sim.")}
    return out


def test_each_fabric_sim_job_imports_only_the_jobs_below_it():
    root, bad = REPO / "fabric_sim", []
    assert {p.name.removesuffix(".py") for p in root.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()} \
        == set(FABRIC_SIM) | {"__init__"}, "a new part of fabric_sim: give it its place in FABRIC_SIM"
    for f in sorted(root.rglob("*.py")):
        job = f.relative_to(root).parts[0].removesuffix(".py")
        extra = _fabric_sim_imports(f) - FABRIC_SIM.get(job, set()) - {job}
        if extra:
            bad.append(f"{f.relative_to(REPO)} imports fabric_sim.{', fabric_sim.'.join(sorted(extra))}")
    assert not bad, "\n".join(bad)


def _architecture_rows() -> dict[Path, set[str]]:
    """docs/architecture.md's tables: package folder -> the modules (`name.py`) its row names."""
    rows = {}
    for line in (REPO / "docs" / "architecture.md").read_text().splitlines():
        m = re.match(r"\| `([a-z_]+)/` \|", line)
        if m:
            sub = REPO / "fabric_sim" / m.group(1)
            rows[sub if m.group(1) not in ALLOWED and sub.is_dir() else REPO / m.group(1)] = \
                set(re.findall(r"`([a-z0-9_]+\.py)`", line))
    return rows


# Modules whose place is pinned by name: the checks of hostile input each have one home.
PLACED = {
    "control_plane/config.py",  # read_regular (every CLI read), keys once, integers cut, printable names
    "mrc_wire/text.py",  # printable: no input's control character reaches a terminal
    "control_plane/grpc_address.py",  # P4Runtime addresses, parsed once
    "fabric_sim/runner/footprint.py",  # memory before a run, the workload's messages counted
    "control_plane/outputs.py",  # every CLI's output path checked before work, files written whole
    "fabric_sim/report/sweep_live.py",  # a sweep's results written as each variant finishes
}


def test_each_module_is_in_the_row_of_its_package():
    """A module docs/architecture.md names is in the package its row is
    for, and every module of fabric_sim's sub-packages is named in its row."""
    rows, bad = _architecture_rows(), []
    for folder, named in rows.items():
        files = {f.name for f in folder.glob("*.py")}
        bad += [f"docs/architecture.md names {folder.relative_to(REPO)}/{n}: no such module" for n in named - files]
        if folder.parent == REPO / "fabric_sim":
            bad += [f"{folder.relative_to(REPO)}/{n} is not named in its row of docs/architecture.md"
                    for n in sorted(files - named - {"__init__.py"})]
    for place in sorted(PLACED):
        folder, name = (REPO / place).parent, (REPO / place).name
        if name not in rows.get(folder, set()):
            bad.append(f"{place}: not named in the row of {folder.relative_to(REPO)}/ in docs/architecture.md")
        if not (REPO / place).is_file():
            bad.append(f"{place}: missing")
    assert not bad, "\n".join(bad)
    subs = {REPO / "fabric_sim" / job for job in FABRIC_SIM if (REPO / "fabric_sim" / job).is_dir()}
    assert set(rows) == {REPO / pkg for pkg in ALLOWED if pkg != "bench"} | subs, "a package without its row"


def test_pytest_is_a_test_extra_not_a_runtime_dependency():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert not [d for d in meta["dependencies"] if d.lower().startswith("pytest")]
    assert any(d.startswith("pytest") for d in meta["optional-dependencies"]["test"])



# A private name of another library's object, read because its API has no public one.
FOREIGN_PRIVATE = {
    "RegisterOperationErrorCode._VALUES_TO_NAMES",  # BMv2's generated Thrift bindings
    "update._update_type",  # finsy's entity: whether +, ~ or - made it an update (testbed/swx_schema.py)
}


def test_no_private_member_is_used_across_modules():
    """`x._name` only on `self` or `cls`: what one object needs of another is public."""
    bad = []
    for pkg in ALLOWED:
        for f in sorted((REPO / pkg).rglob("*.py")):
            if f.name.endswith("_pb2.py"):  # protoc's output, committed as generated (chakra_et_pb2.py)
                continue
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                    if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                        continue
                    if ast.unparse(node) not in FOREIGN_PRIVATE:
                        bad.append(f"{f.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    assert not bad, "\n".join(bad)


def _module_graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports (at any depth of the file)."""
    files = {".".join(f.relative_to(REPO).with_suffix("").parts): f
             for pkg in ALLOWED for f in (REPO / pkg).rglob("*.py")}
    mods = {m.removesuffix(".__init__") for m in files}
    graph: dict[str, set[str]] = {}
    for name, f in files.items():
        out = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                out |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                # `from pkg import sub` uses the module sub, not what pkg's __init__ defines
                subs = {f"{node.module}.{a.name}" for a in node.names} & mods
                out |= subs | ({node.module} if len(subs) < len(node.names) else set())
        graph[name.removesuffix(".__init__")] = {m for m in out if m in mods} - {name.removesuffix(".__init__")}
    return graph


def test_no_two_modules_import_each_other():
    """No import cycle between modules (a shared part belongs in a module both import)."""
    graph, cycles = _module_graph(), []
    for a, deps in graph.items():
        for b in deps:
            seen, stack = set(), [b]
            while stack:
                m = stack.pop()
                if m == a:
                    cycles.append(f"{a} -> {b} -> ... -> {a}")
                    break
                if m not in seen:
                    seen.add(m)
                    stack.extend(graph.get(m, ()))
    assert not cycles, "\n".join(sorted(set(cycles)))


# The NIC's P4 stage files and the reference model's modules that follow
# them, one each, named alike (switch_model mirrors p4src/switch/ so too).
NIC_STAGES = {"parser.p4": "parser.py", "tx.p4": "tx.py", "encap.p4": "encap.py", "decap.p4": "decap.py",
              "trim_nack.p4": "trim_nack.py", "reply.p4": "reply.py", "rx_track.p4": "rx_track.py",
              "ev_health.p4": "ev_health.py", "main.p4": "nic_pipeline.py"}
NIC_NOT_STAGES = {"nic.p4", "nic_pna.p4", "types.p4", "size.p4"}  # the two tops, types, sizes


def test_nic_model_has_a_module_per_p4_stage_named_after_its_file():
    p4 = {f.name for f in (REPO / "p4src" / "nic").glob("*.p4")}
    assert p4 == set(NIC_STAGES) | NIC_NOT_STAGES, "a NIC P4 file neither a stage nor a top, types or sizes"
    modules = {f.name for f in (REPO / "nic_model").glob("*.py")}
    missing = [f"{p} -> nic_model/{m}" for p, m in NIC_STAGES.items() if m not in modules]
    assert not missing, missing
    for p, m in NIC_STAGES.items():  # each module says which P4 file it follows
        assert f"p4src/nic/{p}" in (REPO / "nic_model" / m).read_text() or p == "main.p4" and \
            "main.p4" in (REPO / "nic_model" / m).read_text(), f"nic_model/{m} does not name p4src/nic/{p}"
