"""The simulator compiled with mypyc (`make fast`, setup.py) is the same
model as the interpreted source: the short cases that take every hot path
(fabric_sim.runner.timing.CASES) measure exactly the same in both, every float.
Runs where the compiled build exists and is newer than the sources."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from control_plane.pipelines import REPO
from fabric_sim.runner import timing

COMMAND, WHY = timing.compiled_build(REPO)


def _compiled(*args: str, cwd: Path) -> str:
    # -P and a folder outside the checkout: the installed (compiled) package, not the source here
    assert COMMAND is not None
    proc = subprocess.run([*COMMAND, *args], capture_output=True, text=True, cwd=cwd, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


needs_build = pytest.mark.skipif(COMMAND is None, reason=WHY)


@needs_build
def test_the_compiled_build_runs_compiled_modules(tmp_path):
    out = _compiled("-c", "from fabric_sim.runner import timing; print(timing.compiled())", cwd=tmp_path)
    assert out.strip() == "True"


@needs_build
def test_compiled_and_interpreted_runs_measure_the_same(tmp_path):
    assert not timing.compiled()
    compiled = [json.loads(line) for line in _compiled("-m", "fabric_sim.runner.timing", "--fingerprint",
                                                       cwd=tmp_path).splitlines()]
    interpreted = timing.fingerprint()
    assert [(r["case"], r["transport"]) for r in compiled] == [(r["case"], r["transport"]) for r in interpreted]
    for c, i in zip(compiled, interpreted, strict=True):
        assert c == i, f"{c['case']} {c['transport']}: the compiled run differs"


def test_a_compiled_build_is_used_only_when_newer_than_every_source(tmp_path):
    """No build: the reason; a source edited after the build: stale, naming it; else the -P command."""
    assert timing.compiled_build(tmp_path) == (None, "no compiled build (make fast builds it)")
    fast = tmp_path / ".venv-fast"
    (fast / "bin").mkdir(parents=True)
    (fast / "bin" / "python").touch()
    src = tmp_path / "fabric_sim" / "net" / "links.py"
    src.parent.mkdir(parents=True)
    src.touch()
    (tmp_path / "setup.py").touch()
    stamp = fast / ".installed"
    stamp.touch()
    os.utime(src, (stamp.stat().st_mtime + 5,) * 2)
    cmd, why = timing.compiled_build(tmp_path)
    assert cmd is None and why == "the compiled build is older than fabric_sim/net/links.py (make fast rebuilds it)"
    os.utime(stamp, (stamp.stat().st_mtime + 10,) * 2)
    assert timing.compiled_build(tmp_path) == ([str(fast / "bin" / "python"), "-P"], "compiled (make fast)")
    (fast / "interpreted").touch()  # make fast fell back: mypyc failed
    assert timing.compiled_build(tmp_path)[0] is None


@needs_build
def test_no_module_constant_is_a_compiled_attribute_descriptor(tmp_path):
    """A compiled class's attribute default, read on the class, is a descriptor, not its value: the
    gallery once printed '<attribute 'restore_after' of 'EvProfile' objects> good probes'. Every
    public constant of the paper's modules, in the compiled build, is a plain value."""
    script = (
        "import importlib, pkgutil, types, mrc_paper as P\n"
        "bad = []\n"
        "for m in pkgutil.iter_modules(P.__path__):\n"
        "    mod = importlib.import_module(f'mrc_paper.{m.name}')\n"
        "    for k, v in vars(mod).items():\n"
        "        if k.isupper() and isinstance(v, (types.GetSetDescriptorType, types.MemberDescriptorType)):\n"
        "            bad.append(f'{m.name}.{k}')\n"
        "print(bad)\n")
    assert _compiled("-c", script, cwd=tmp_path).strip() == "[]"
