"""Interrupts that keep and mark: SIGINT and SIGTERM stop mrc-sim and
python -m mrc_paper the same way, with Ray and without (one `interrupted:`
line, no traceback, no Ray dump, Ray's workers gone); every output file
whole or absent; results.json, summary.csv and the gallery say what was
cut off and why; a sweep into a used folder is refused unless --clear; a
closed stdout ends the printing, not the work. Every subprocess runs
under a timeout."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from control_plane.pipelines import REPO
from fabric_sim import cli
from fabric_sim.report import plots
from fabric_sim.runner import parallel, stop
from fabric_sim.runner.parallel import descendants
from mrc_paper import __main__ as paper

TINY = {"planes": 1, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 2}
DOC = {"name": "t", "topology": TINY, "workload": {"pattern": "permutation", "message_bytes": 1000},
       "transports": [{"name": "mrc", "kind": "mrc", "evs_per_qp": 8}, {"name": "sp", "kind": "single_path"}],
       "duration_us": 1000}
FAST = ["--jobs", "1", "--no-cache", "--no-plots", "--quiet"]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def scenario_file(tmp_path, **patch) -> Path:
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump({**DOC, **patch}))
    return f


def interrupt_at(monkeypatch, owner: object, name: str, n: int, exc: type[KeyboardInterrupt]) -> None:
    """The n-th call (from 1) of `owner.name` is interrupted as by the signal `exc` stands for."""
    real, calls = getattr(owner, name), []

    def call(*a, **k):
        calls.append(1)
        if len(calls) == n:
            raise exc
        return real(*a, **k)
    monkeypatch.setattr(owner, name, call)


def stopping_at(monkeypatch, n: int, exc: type[KeyboardInterrupt]) -> None:
    """The n-th run (from 1) is interrupted."""
    interrupt_at(monkeypatch, parallel, "run", n, exc)


def interrupted_lines(err: str) -> list[str]:
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith("interrupted")]


# ---- what was cut off, and why ----------------------------------------------------------------------------------

@pytest.mark.parametrize("exc, why, code", [(stop.Terminated, "SIGTERM", 143),
                                            (KeyboardInterrupt, "SIGINT (Ctrl-C)", 130)])
def test_results_json_names_the_transport_cut_off_and_why(tmp_path, capsys, monkeypatch, exc, why, code):
    stopping_at(monkeypatch, 2, exc)
    out = tmp_path / "o"
    assert cli.main([str(scenario_file(tmp_path)), "--out", str(out), *FAST]) == code
    doc = json.loads((out / "results.json").read_text())
    assert [r["transport"] for r in doc["runs"]] == ["mrc"] and doc["failed"] == {}
    assert doc["complete"] is False and doc["not_finished"] == {"sp": f"interrupted by {why}"}
    [line] = interrupted_lines(capsys.readouterr().err)
    assert line.startswith(f"interrupted by {why}: 1 of 2 runs finished") and "results.json names the 1 cut off" in line
    with open(out / "messages.csv") as fh:
        assert {r["transport"] for r in csv.DictReader(fh)} == {"mrc"}


def test_a_run_interrupted_before_anything_finished_still_says_so(tmp_path, capsys, monkeypatch):
    stopping_at(monkeypatch, 1, stop.Terminated)
    out = tmp_path / "o"
    assert cli.main([str(scenario_file(tmp_path)), "--out", str(out), *FAST]) == 143
    doc = json.loads((out / "results.json").read_text())
    stopped = "interrupted by SIGTERM"
    assert doc["runs"] == [] and doc["not_finished"] == {"mrc": stopped, "sp": stopped}


def test_a_sweep_interrupted_mid_variant_writes_it_marked(tmp_path, capsys, monkeypatch):
    stopping_at(monkeypatch, 4, stop.Terminated)  # variant 2's second transport
    out = tmp_path / "o"
    f = scenario_file(tmp_path, sweep={"seed": [1, 2, 3]})
    assert cli.main([str(f), "--out", str(out), *FAST]) == 143
    assert json.loads((out / "1_seed=1" / "results.json").read_text())["complete"] is True
    cut = json.loads((out / "2_seed=2" / "results.json").read_text())
    assert [r["transport"] for r in cut["runs"]] == ["mrc"] and cut["not_finished"] == {"sp": "interrupted by SIGTERM"}
    assert not (out / "3_seed=3").exists()
    summary = (out / "summary.csv").read_text()
    assert "# interrupted by SIGTERM: 2 of 3 variants not finished (1 cut off part-way" in summary, summary
    [line] = interrupted_lines(capsys.readouterr().err)
    assert line.startswith("interrupted by SIGTERM: 1 of 3 variants finished") and str(out) in line


def test_an_interrupt_while_a_variant_is_written_leaves_whole_files(tmp_path, capsys, monkeypatch):
    """Ctrl-C while variant 2's files are written (its figures): no file half there, no temporary file
    left; variant 2's finished run is written whole at the interrupt, without figures, and the summary
    says so (it was a messages.csv of 29,538 of 800,001 lines and no timeline.csv, unmarked)."""
    interrupt_at(monkeypatch, plots, "all_figures", 2, KeyboardInterrupt)
    out = tmp_path / "o"
    f = scenario_file(tmp_path, transports=[DOC["transports"][0]], sweep={"seed": [1, 2, 3]})
    assert cli.main([str(f), "--out", str(out), "--jobs", "1", "--no-cache", "--quiet"]) == 130
    assert sorted(p.name for p in out.iterdir()) == ["1_seed=1", "2_seed=2", "summary.csv"]
    first, second = ({p.name for p in (out / d).iterdir()} for d in ("1_seed=1", "2_seed=2"))
    assert {"results.json", "messages.csv", "timeline.csv", "fct_cdf.png"} <= first
    assert second == {"results.json", "messages.csv", "timeline.csv"}
    assert json.loads((out / "2_seed=2" / "results.json").read_text())["complete"] is True
    assert "1 written without figures" in (out / "summary.csv").read_text()
    with open(out / "2_seed=2" / "messages.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 2  # whole: both messages


# ---- a used folder ---------------------------------------------------------------------------------------------

def test_a_sweep_into_a_used_folder_is_refused_or_cleared(tmp_path, capsys):
    out = tmp_path / "o"
    f = scenario_file(tmp_path, transports=[DOC["transports"][0]], sweep={"seed": [1, 2, 3]})
    assert cli.main([str(f), "--out", str(out), *FAST]) == 0
    g = scenario_file(tmp_path, transports=[DOC["transports"][0]], sweep={"seed": [7, 8]})
    capsys.readouterr()
    assert cli.main([str(g), "--out", str(out), *FAST]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == (f"error: --out: {out} holds an earlier run's results (3 variant folders): "
                    "--clear removes them first, or choose another --out")
    assert cli.main([str(g), "--out", str(out), *FAST, "--clear"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["1_seed=7", "2_seed=8", "summary.csv"]


def test_clear_removes_only_what_a_run_writes(tmp_path, capsys):
    out = tmp_path / "o"
    (out / "1_seed=1").mkdir(parents=True)
    (out / "1_seed=1" / "results.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    f = scenario_file(tmp_path, transports=[DOC["transports"][0]], sweep={"seed": [1, 2]})
    assert cli.main([str(f), "--out", str(out), *FAST, "--clear"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == f"error: --clear: {out} holds files no run writes (notes.txt): not removed; choose another --out"
    assert (out / "notes.txt").read_text() == "mine" and (out / "1_seed=1" / "results.json").exists()


# ---- the paper's gallery -------------------------------------------------------------------------------------------

def test_the_gallery_names_the_experiments_an_interrupt_cut_off(tmp_path, capsys, monkeypatch):
    stopping_at(monkeypatch, 1, stop.Terminated)
    assert paper.main(["--only", "fig10,fig11", "--out", str(tmp_path), "--no-cache", "--quiet", "--jobs", "1"]) == 143
    md = (tmp_path / "paper.md").read_text()
    assert "Interrupted by SIGTERM before all their runs were in: fig10, fig11" in md
    assert "(`--only`)" in md and "fig10, fig11 (`--only`)" not in md
    [line] = interrupted_lines(capsys.readouterr().err)
    assert line.startswith("interrupted by SIGTERM: 0 of 2 experiments finished") and "--no-cache" in line
    assert "nothing was cached" not in line


# ---- real signals, with and without Ray -------------------------------------------------------------------------

def alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists() and "zombie" not in
            (Path(f"/proc/{p}/status").read_text() if Path(f"/proc/{p}/status").exists() else "zombie")}


@pytest.mark.parametrize("when", ["starting", "running"])
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_under_ray_stops_its_workers_and_prints_one_line(tmp_path, sig, when):
    """--jobs 2 on a Ray of this machine, while Ray starts or while the runs go: SIGTERM to the driver, or
    Ctrl-C (SIGINT to the whole process group, as a terminal sends it). Ray used to print its signal dump
    twice and abort (134), or crash (SIGSEGV) on Ctrl-C; a start cut short left Ray's agents running."""
    f = scenario_file(tmp_path, workload={"pattern": "permutation", "message_bytes": 100_000_000},
                      transports=[DOC["transports"][0]], duration_us=100_000, sweep={"seed": list(range(1, 9))})
    proc = subprocess.Popen([sys.executable, "-m", "fabric_sim", str(f), "--out", str(tmp_path / "o"), "--jobs", "2",
                             "--no-cache", "--no-plots"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path, env=ENV, start_new_session=True)
    stream = proc.stderr
    assert stream is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(stream), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 150
        ready = (lambda: len(descendants(proc.pid)) >= 4) if when == "starting" else \
            (lambda: any("running:" in line for line in lines))
        while time.monotonic() < deadline and not ready():
            time.sleep(0.2)
        ray = descendants(proc.pid)
        if sig == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=90)
        reader.join(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    err = "".join(lines)
    assert proc.returncode == {"SIGTERM": 143, "SIGINT": 130}[sig], (proc.returncode, err)
    assert "SIGTERM received" not in err and "Check failed" not in err and "Traceback" not in err, err
    [line] = interrupted_lines(err)
    assert line.startswith(f"interrupted by {sig if sig == 'SIGTERM' else 'SIGINT (Ctrl-C)'}: "), line
    deadline = time.monotonic() + 30
    while alive(ray) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not alive(ray), [Path(f"/proc/{p}/cmdline").read_bytes()[:80] for p in alive(ray)]


class FakeRay:
    """ray.init that takes a SIGTERM the way Ray's own handler can lose it (raised in a fork's callback)."""

    def __init__(self, sig: int):
        self.sig, self.up, self.stopped = sig, False, False

    def init(self, **_kw):
        signal.signal(signal.SIGTERM, lambda *_: None)  # Ray's handler, its exit dropped
        os.kill(os.getpid(), self.sig)
        time.sleep(0.1)
        self.up = True

    def is_initialized(self):
        return self.up

    def shutdown(self):
        self.stopped, self.up = True, False


@pytest.mark.parametrize("sig, exc", [(signal.SIGTERM, stop.Terminated), (signal.SIGINT, KeyboardInterrupt)])
def test_a_signal_while_ray_starts_is_not_lost_and_stops_it(sig, exc):
    ray = FakeRay(sig)
    with stop.handled(), pytest.raises(exc):
        with parallel._starting(ray):
            ray.init()
    assert ray.stopped
    assert signal.getsignal(signal.SIGTERM) is not None


def test_a_closed_stdout_ends_the_printing_not_the_sweep(tmp_path):
    """`mrc-sim SWEEP | head -2`: the sweep finishes and keeps every variant, quietly."""
    f = scenario_file(tmp_path, transports=[DOC["transports"][0]], sweep={"seed": list(range(1, 7))})
    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "fabric_sim", str(f), "--out", str(out), *FAST],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=ENV)
    assert proc.stdout is not None
    proc.stdout.readline(), proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and b"BrokenPipe" not in err and b"Traceback" not in err, err
    assert len([p for p in out.iterdir() if p.is_dir()]) == 6
