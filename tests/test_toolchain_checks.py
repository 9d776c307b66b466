"""The toolchain checks a new user meets first: a simple_switch_CLI whose
interpreter lacks thrift is reported once with the reason and the fix."""

import os
import stat

from testbed import toolchain


def _script(tmp_path, body: str):
    path = tmp_path / "simple_switch_CLI"
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_a_cli_without_thrift_is_reported_with_the_fix(tmp_path):
    cli = _script(tmp_path, "#!/usr/bin/env python3\nraise ModuleNotFoundError(\"No module named 'thrift'\")\n")
    why = toolchain.cli_broken(cli)
    assert why is not None and "lacks the Python 'thrift' package" in why and "pip install thrift" in why
    assert "/usr/bin/env python3" in why


def test_a_working_cli_passes(tmp_path):
    cli = _script(tmp_path, "#!/bin/sh\nexit 0\n")
    assert toolchain.cli_broken(cli) is None


def test_bmv2_unavailable_names_the_broken_cli(tmp_path, monkeypatch):
    cli = _script(tmp_path, "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'thrift'\" >&2\nexit 1\n")
    monkeypatch.setenv("SIMPLE_SWITCH_CLI", cli)
    monkeypatch.setenv("SIMPLE_SWITCH_GRPC", "/bin/true")
    why = toolchain.bmv2_unavailable()
    assert why is not None and "simple_switch_CLI" in why and "thrift" in why
    assert os.access(cli, os.X_OK)
