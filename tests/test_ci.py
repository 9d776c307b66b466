"""CI (.ci/run) fails as make fails (make returns 2 whatever step failed),
and ends with pytest's summary line."""

import os
import subprocess

from control_plane.pipelines import REPO


def _ci(tmp_path, out: str, rc: int) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "make"  # stands for make test: prints, exits
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' {out!r}\nexit {rc}\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    return subprocess.run([str(REPO / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60)


def test_ci_fails_as_make_fails_and_repeats_the_summary(tmp_path):
    p = _ci(tmp_path, "=== 1 failed, 9 passed in 3.20s ===", 2)
    assert p.returncode == 2
    assert p.stdout.splitlines()[-2:] == ["=== 1 failed, 9 passed in 3.20s ===", "make test: exit 2"]


def test_ci_passes_as_make_passes(tmp_path):
    p = _ci(tmp_path, "=== 9 passed in 3.20s ===", 0)
    assert p.returncode == 0 and p.stdout.splitlines()[-1] == "make test: exit 0"


def test_ci_says_when_pytest_never_ran(tmp_path):
    p = _ci(tmp_path, "mypy: 3 errors", 2)
    assert p.returncode == 2 and "pytest did not run" in p.stdout
