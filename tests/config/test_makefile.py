"""The Makefile quotes its variables: a scenario path
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
    # -o: the venvs count as made (a test never reinstalls them)
    cmd = ["make", "--no-print-directory", "-o", ".venv/.installed", "-o", ".venv-fast/.installed",
           *(["-n"] if dry else []), *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("compile_, python", [("0", [".venv/bin/python"]), ("1", [".venv-fast/bin/python", "-P"])])
@pytest.mark.parametrize("name", ["a b.yaml", "it's here.yaml", 'say "hi" $HOME.yaml'])
def test_run_passes_the_scenario_as_one_argument(tmp_path, name, compile_, python):
    """Interpreted (COMPILE=0) or compiled (COMPILE=1, the default where a C compiler is found)."""
    path = tmp_path / "some folder" / name
    p = make("run", f"SCENARIO={path}", f"COMPILE={compile_}", dry=True)
    assert p.returncode == 0, p.stderr
    assert shlex.split(p.stdout.strip()) == [*python, "-m", "fabric_sim", str(path)]


def test_make_run_runs_a_scenario_whose_path_has_a_space(tmp_path):
    path = tmp_path / "my scenarios" / "a b.yaml"
    path.parent.mkdir()
    name = "make-quoting-test"
    path.write_text(yaml.safe_dump({"name": name, "topology": SMALL, "duration_us": 200,
                                    "workload": {"pattern": "permutation", "message_bytes": 4096}}))
    try:
        p = make("run", f"SCENARIO={path}", "COMPILE=0")  # interpreted: the test builds nothing
        assert p.returncode == 0, p.stderr[-2000:]
        assert f"scenario {name} ({path}): 16 NICs" in p.stdout
        assert (REPO / "results" / name / "results.json").exists()
    finally:
        shutil.rmtree(REPO / "results" / name, ignore_errors=True)
