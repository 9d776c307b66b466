"""The type-checking contract in pyproject.toml: the wire format, both pipeline
models, the MRC endpoint, the control plane, the simulator and the paper's
experiments stay under mypy's strict flags, and none of them is in the baseline
of silenced error codes (`make test` runs ruff and mypy themselves)."""

import tomllib
from fnmatch import fnmatch
from pathlib import Path

MYPY = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["tool"]["mypy"]
STRICT_MODULES = {"mrc_wire.*", "switch_model.*", "nic_model.*", "sim_core.*", "control_plane.*", "fabric_sim.*",
                  "mrc_paper.*"}
# What `mypy --strict` turns on per module (the global-only ones aside).
STRICT_FLAGS = {"warn_return_any", "disallow_untyped_calls", "disallow_untyped_defs", "disallow_incomplete_defs",
                "disallow_untyped_decorators", "disallow_any_generics", "disallow_subclassing_any",
                "check_untyped_defs", "no_implicit_reexport", "strict_equality", "extra_checks"}


def test_the_contract_modules_are_strict():
    [strict] = [o for o in MYPY["overrides"] if set(o["module"]) == STRICT_MODULES]
    assert {k for k, v in strict.items() if v is True} == STRICT_FLAGS


def test_no_contract_module_has_silenced_codes():
    silenced = [m for o in MYPY["overrides"] if "disable_error_code" in o or "ignore_errors" in o for m in o["module"]]
    assert silenced, "the baseline is empty: remove this test's look at it"
    assert [m for m in silenced if m.split(".")[0] == "fabric_sim"] == []  # the simulator is out of it
    # The endpoint's parts were mixins using state only the Endpoint declared (attr-defined silenced);
    # composed, they are strict like the rest of nic_model (tests/test_endpoint_parts.py pins the bases).
    assert [m for m in silenced if any(fnmatch(m, p) or m == p.removesuffix(".*") for p in STRICT_MODULES)] == []


# Typed against nic_model.host.Host, the one interface of every transport's host.
HOST_USERS = {"fabric_sim.runner.run", "fabric_sim.runner.faults", "fabric_sim.runner.outcome",
              "fabric_sim.transports.qps", "fabric_sim.runner.driver"}


def test_the_modules_that_drive_hosts_have_no_silenced_codes():
    silenced = {m for o in MYPY["overrides"] if "disable_error_code" in o or "ignore_errors" in o for m in o["module"]}
    assert HOST_USERS & silenced == set()
