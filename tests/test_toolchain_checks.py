"""The toolchain checks a new user meets first: BMv2's Thrift runtime
(the `thrift` package and BMv2's bm_runtime bindings) missing is reported
once, with the reason and the fix, and the BMv2 tests skip with it; so is
DPDK's SWX app and its tree."""

import sys

import pytest

from testbed import bmv2_thrift, toolchain

BINDINGS = ("bm_runtime", "bm_runtime.standard", "bm_runtime.standard.Standard")


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("BMV2_PYTHONPATH", raising=False)
    bmv2_thrift.unavailable.cache_clear()
    yield
    bmv2_thrift.unavailable.cache_clear()


def _hide(monkeypatch, *modules):
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)  # import raises ImportError


def _server(tmp_path, with_bindings: bool) -> str:
    binary = tmp_path / "bin" / "simple_switch_grpc"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    if with_bindings:
        (site / "bm_runtime" / "standard").mkdir(parents=True)
        (site / "bm_runtime" / "standard" / "Standard.py").write_text("")
    return str(binary)


def test_missing_thrift_package_is_named_with_the_fix(monkeypatch, tmp_path):
    _hide(monkeypatch, "thrift")
    why = bmv2_thrift.unavailable(_server(tmp_path, True))
    assert why is not None and "'thrift' package is missing" in why and "pip install -e '.[test]'" in why


def test_missing_bindings_name_where_they_were_looked_for(monkeypatch, tmp_path):
    _hide(monkeypatch, *BINDINGS)
    why = bmv2_thrift.unavailable(_server(tmp_path, False))
    assert why is not None and "bm_runtime" in why and "BMV2_PYTHONPATH" in why
    assert f"{tmp_path}/lib/python3*/site-packages" in why


def test_bindings_are_found_next_to_the_server_install(monkeypatch, tmp_path):
    _hide(monkeypatch, *BINDINGS)
    assert bmv2_thrift.unavailable(_server(tmp_path, True)) is None
    assert str(tmp_path / "lib" / "python3.11" / "site-packages") in sys.path


def test_bindings_are_found_in_bmv2_pythonpath(monkeypatch, tmp_path):
    _hide(monkeypatch, *BINDINGS)
    _server(tmp_path / "elsewhere", True)
    monkeypatch.setenv("BMV2_PYTHONPATH", str(tmp_path / "elsewhere" / "lib" / "python3.11" / "site-packages"))
    assert bmv2_thrift.unavailable(None) is None


def test_bmv2_unavailable_reports_the_thrift_reason(monkeypatch, tmp_path):
    _hide(monkeypatch, "thrift")
    monkeypatch.setenv("SIMPLE_SWITCH_GRPC", _server(tmp_path, True))
    why = toolchain.bmv2_unavailable()
    assert why is not None and "thrift" in why


def test_swx_unavailable_names_the_missing_app_then_the_missing_dpdk_tree(monkeypatch, tmp_path):
    """What the SWX cases skip with: one line each, naming what to set."""
    monkeypatch.setenv("DPDK_PIPELINE", str(tmp_path / "none"))
    why = toolchain.swx_unavailable()
    assert why is not None and why.startswith("dpdk-pipeline not found (PATH or $DPDK_PIPELINE)") and "\n" not in why
    app = tmp_path / "dpdk" / "build" / "examples" / "dpdk-pipeline"
    app.parent.mkdir(parents=True)
    app.write_text("#!/bin/sh\n")
    app.chmod(0o755)
    monkeypatch.setenv("DPDK_PIPELINE", str(app))
    monkeypatch.delenv("RTE_INSTALL_DIR", raising=False)
    why = toolchain.swx_unavailable()
    assert why is not None and why.startswith("no DPDK tree with build/ for 'pipeline libbuild': set RTE_INSTALL_DIR")
    assert str(tmp_path / "dpdk") in why
