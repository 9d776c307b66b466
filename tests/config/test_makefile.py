"""The Makefile quotes its variables (issue 24 item 8): a scenario path
with a space or a quote stays one argument."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest
import yaml

from control_plane.pipelines import REPO
from tests.sim.helpers import SMALL

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make not found")


def make(*args: str, dry: bool = False) -> subprocess.CompletedProcess:
    # -o: the venv counts as made (a test never reinstalls it)
    cmd = ["make", "--no-print-directory", "-o", ".venv/.installed", *(["-n"] if dry else []), *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", ["a b.yaml", "it's here.yaml", 'say "hi" $HOME.yaml'])
def test_run_passes_the_scenario_as_one_argument(tmp_path, name):
    path = tmp_path / "some folder" / name
    p = make("run", f"SCENARIO={path}", dry=True)
    assert p.returncode == 0, p.stderr
    assert shlex.split(p.stdout.strip()) == [".venv/bin/python", "-m", "fabric_sim", str(path)]


def test_make_run_runs_a_scenario_whose_path_has_a_space(tmp_path):
    path = tmp_path / "my scenarios" / "a b.yaml"
    path.parent.mkdir()
    name = "make-quoting-test"
    path.write_text(yaml.safe_dump({"name": name, "topology": SMALL, "duration_us": 200,
                                    "workload": {"pattern": "permutation", "message_bytes": 4096}}))
    try:
        p = make("run", f"SCENARIO={path}")
        assert p.returncode == 0, p.stderr[-2000:]
        assert f"scenario {name} ({path}): 16 NICs" in p.stdout
        assert (REPO / "results" / name / "results.json").exists()
    finally:
        shutil.rmtree(REPO / "results" / name, ignore_errors=True)
