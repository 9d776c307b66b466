"""The type-checking contract in pyproject.toml: every package the project
ships, the measurements (bench/) and the PTF suites' helpers and fixtures
(ptf_tests/lib/, ptf_tests/conftest.py) are checked under mypy's strict flags,
and no module has error codes silenced (`make test` runs ruff and mypy themselves)."""

import tomllib
from pathlib import Path

MYPY = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["tool"]["mypy"]
STRICT_MODULES = {"mrc_wire.*", "switch_model.*", "nic_model.*", "mrc_host.*", "sim_core.*", "control_plane.*",
                  "fabric_sim.*", "mrc_paper.*", "testbed.*", "bench.*", "ptf_tests.lib.*", "ptf_tests.conftest"}
# What a bare `python -m mypy` (as `make test` runs it) checks: each of the strict modules above.
CHECKED = {"mrc_wire", "sim_core", "switch_model", "nic_model", "mrc_host", "control_plane", "fabric_sim", "mrc_paper",
           "testbed", "bench", "ptf_tests.lib", "ptf_tests.conftest"}
FIRST_PARTY = {name.split(".")[0] for name in CHECKED}
# What `mypy --strict` turns on per module (the global-only ones aside).
STRICT_FLAGS = {"warn_return_any", "disallow_untyped_calls", "disallow_untyped_defs", "disallow_incomplete_defs",
                "disallow_untyped_decorators", "disallow_any_generics", "disallow_subclassing_any",
                "check_untyped_defs", "no_implicit_reexport", "strict_equality", "extra_checks"}


def test_the_contract_modules_are_strict():
    [strict] = [o for o in MYPY["overrides"] if set(o["module"]) == STRICT_MODULES]
    assert {k for k, v in strict.items() if v is True} == STRICT_FLAGS


def test_the_strict_modules_are_the_checked_ones():
    """Strict flags on a module mypy is not asked to check would hold nothing (nor the converse)."""
    assert set(MYPY["packages"]) | set(MYPY.get("modules", [])) == CHECKED
    assert {m.removesuffix(".*") for m in STRICT_MODULES} == CHECKED


def test_missing_imports_are_third_party_only():
    """`ignore_missing_imports` is for packages without type information, never one of ours."""
    ignored = [m for o in MYPY["overrides"] if o.get("ignore_missing_imports") for m in o["module"]]
    assert ignored and not {m.split(".")[0] for m in ignored} & FIRST_PARTY


def test_nothing_is_silenced():
    """The adoption baseline of silenced error codes is gone: any error mypy finds fails `make test`."""
    silenced = [m for o in MYPY["overrides"] if "disable_error_code" in o or "ignore_errors" in o for m in o["module"]]
    assert silenced == []
