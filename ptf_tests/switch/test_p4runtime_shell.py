"""Interoperability: p4runtime-shell, from its own environment, reads back
from BMv2 the entries our controller (finsy) installed."""

import json
import subprocess
from pathlib import Path

import pytest

from ptf_tests.lib.fabric import T0

REPO = Path(__file__).resolve().parents[2]
SHELL_PY = REPO / ".venv-shell" / "bin" / "python"
SCRIPT = REPO / "ptf_tests" / "lib" / "shell_read.py"


def test_p4runtime_shell_reads_what_finsy_installed(bmv2_t0):
    if not SHELL_PY.exists():
        pytest.skip("p4runtime-shell environment missing: run 'make test' (it creates .venv-shell)")
    proc = subprocess.run(
        [str(SHELL_PY), str(SCRIPT), bmv2_t0.bmv2.grpc_addr, str(bmv2_t0.bmv2.device_id), "usid_route"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    got = {(r["match"][0], r["params"][0]) for r in rows}
    assert got == {(r.locator, r.port) for r in T0.routes}
    assert {r["action"].rsplit(".", 1)[-1] for r in rows} == {"set_port"}
