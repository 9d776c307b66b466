"""mrc-sim and mrcctl under hostile input, by class: a sweep whose variants
fail together, a sweep that delivers nothing (non-zero exit naming the
variant), results kept as each variant finishes (an interrupt loses
nothing finished), results folders that must not be used, and no traceback
from any CLI path. Every case that could hang runs under a timeout."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from control_plane import cli as mrcctl
from control_plane.pipelines import REPO, RESULTS
from fabric_sim import cli
from fabric_sim.runner import parallel
from tests.config.test_hostile_files import within
from tests.config.test_interrupts import stopping_at

TINY = {"planes": 1, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 2}
DOC = {"name": "t", "topology": TINY, "workload": {"pattern": "permutation", "message_bytes": 1000},
       "transports": [{"kind": "mrc", "evs_per_qp": 8}], "duration_us": 1000}
FAST = ["--jobs", "1", "--no-cache", "--no-plots", "--quiet"]


def scenario_file(tmp_path, **patch):
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump({**DOC, **patch}))
    return f


@pytest.fixture
def no_run(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a run started")
    monkeypatch.setattr(parallel, "run_all", refuse)


def err_lines(capsys) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err.strip().splitlines()


# ---- sweeps ---------------------------------------------------------------------------------------------------

def test_a_sweep_whose_variants_fail_together_is_refused_before_any_run(tmp_path, capsys, no_run):
    f = scenario_file(tmp_path, events=[{"at_us": 5, "plane_down": 0}],
                      sweep={"duration_us": [1000, 10], "events[0].at_us": [5, 500]})
    assert cli.main([str(f), "--out", str(tmp_path / "o")]) == 2
    assert err_lines(capsys) == ["error: sweep [4/4] (duration_us=10 at_us=500): events[0].at_us: 500 is after the "
                                 "run's end (duration_us 10): it would never be applied"]


@pytest.mark.parametrize("jobs", ["1", "2"])  # 2: on Ray
def test_a_sweep_with_a_variant_that_delivers_nothing_fails_naming_it(tmp_path, capsys, request, jobs):
    if jobs != "1":
        request.getfixturevalue("ray_cluster")
    f = scenario_file(tmp_path, sweep={"duration_us": [1000, 0.01]})
    assert cli.main([str(f), "--out", str(tmp_path / "o"), *FAST[2:], "--jobs", jobs]) == 1
    failed = [line for line in err_lines(capsys) if line.startswith("FAILED")]
    assert failed == ["FAILED [2/2] duration_us=0.01 mrc: 2 of 2 messages not delivered"], failed


def test_a_transport_no_variant_has_is_refused_saying_which_exist(tmp_path, capsys, no_run):
    f = scenario_file(tmp_path, sweep={"transports[0].name": ["a", "b"]})
    assert cli.main([str(f), "--out", str(tmp_path / "o"), "--transport", "mrc"]) == 2
    assert err_lines(capsys) == ["error: --transport: no variant has mrc (asked: mrc; the variants have: a, b)"]


def test_no_transport_finished_says_which_were_asked_and_which_exist(tmp_path, capsys, monkeypatch):
    def crash(*a, **k):
        raise RuntimeError("boom")
    monkeypatch.setattr(parallel, "run", crash)
    f = scenario_file(tmp_path)
    assert cli.main([str(f), "--out", str(tmp_path / "o"), *FAST]) == 1
    assert err_lines(capsys)[-1] == f"error: no transport finished (asked: every transport; {f} has: mrc): " \
                                    "mrc: RuntimeError: boom"


# ---- results kept as each variant finishes ----------------------------------------------------------------------

def summary_rows(out) -> list[dict[str, str]]:
    with open(out / "summary.csv") as fh:
        return [r for r in csv.DictReader(fh) if r["variant"] and not r["variant"].startswith("#")]


@pytest.mark.parametrize("cache", [False, True])
def test_a_sweep_interrupted_after_k_variants_keeps_k(tmp_path, capsys, monkeypatch, cache):
    stopping_at(monkeypatch, 4, KeyboardInterrupt)
    if cache:
        monkeypatch.setattr(parallel, "options", lambda args: parallel.Options(jobs=1, cache=tmp_path / "c",
                                                                               quiet=True))
    f = scenario_file(tmp_path, sweep={"seed": [1, 2, 3, 4, 5]})
    out = tmp_path / "o"
    assert cli.main([str(f), "--out", str(out), *FAST]) == 130
    assert [r["seed"] for r in summary_rows(out)] == ["1", "2", "3"]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["1_seed=1", "2_seed=2", "3_seed=3"]
    assert all((out / d / "results.json").exists() for d in ("1_seed=1", "2_seed=2", "3_seed=3"))
    assert "# interrupted by SIGINT (Ctrl-C): 2 of 5 variants not finished" in (out / "summary.csv").read_text()


def test_sigterm_keeps_the_variants_that_finished(tmp_path):
    f = scenario_file(tmp_path, workload={"pattern": "permutation", "message_bytes": 200_000},
                      sweep={"seed": list(range(1, 201))})
    out = tmp_path / "o"
    proc = subprocess.Popen([sys.executable, "-m", "fabric_sim", str(f), "--out", str(out), *FAST],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not (out / "summary.csv").exists() or len(summary_rows(out)) < 2):
            time.sleep(0.2)
        seen = len(summary_rows(out))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143 and "Traceback" not in err, (proc.returncode, err)
    rows = summary_rows(out)
    assert 2 <= seen <= len(rows) < 200
    assert all((out / r["variant"] / "results.json").exists() for r in rows)


# ---- results folders ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("out, why", [("", "an empty name"), (".", "the current folder"),
                                      (str(RESULTS / "cache"), "the run cache"),
                                      (str(RESULTS / "cache" / "x"), "the run cache")])
def test_out_may_not_be_the_current_folder_or_the_run_cache(tmp_path, capsys, no_run, monkeypatch, out, why):
    monkeypatch.chdir(tmp_path)
    assert cli.main([str(scenario_file(tmp_path)), "--out", out]) == 2
    [line] = err_lines(capsys)
    assert line.startswith("error: --out: ") and why in line, line


# ---- no traceback from any CLI path -------------------------------------------------------------------------------

def broken_inputs(tmp_path) -> dict[str, list[str]]:
    """One broken input per path of each CLI (the argv, file or flag that is wrong)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("planes: 1\nplanes: 2\n")
    huge = tmp_path / "huge.yaml"
    huge.write_text(f"planes: {'9' * 5000}\n")
    good = scenario_file(tmp_path)
    topo = REPO / "bmv2_configs" / "topologies" / "demo.yaml"
    (tmp_path / "folder" / "t0-p0-r0.json").mkdir(parents=True)
    sim = {"missing": [str(tmp_path / "nope.yaml")], "folder": [str(tmp_path)], "dup": [str(bad)],
           "huge": [str(huge)], "jobs": [str(good), "--jobs", "0"],
           "jobs-huge": [str(good), "--jobs", "\x1b[2J" + "9" * 5000], "transport": [str(good), "--transport", "x"],
           "out-proc": [str(good), "--out", "/proc/x"], "out-file": [str(good), "--out", str(bad)],
           "bmv2-sweep": [str(scenario_file(tmp_path, sweep={"seed": [1, 2]})), "--bmv2"],
           "bad-combo": [str(scenario_file(tmp_path, events=[{"at_us": 5, "plane_down": 0}],
                                           sweep={"duration_us": [1000, 10], "events[0].at_us": [5, 500]}))]}
    ctl = {"plan-missing": ["plan", str(tmp_path / "nope.yaml")], "plan-dup": ["plan", str(bad)],
           "plan-huge": ["verify", str(huge)], "plan-write-proc": ["plan", str(topo), "--write", "/proc/self"],
           "plan-write-folder": ["plan", str(topo), "--write", str(tmp_path / "folder")],
           "plan-device": ["plan", str(topo), "--device", "t9-x"],
           "install-device-twice": ["install", str(topo), "--device", "t0-p0-r0", "--device", "t0-p0-r0"],
           "verify-election": ["verify", str(topo), "--election-id", str(2**200)],
           "diff-tls": ["diff", str(topo), "--tls-ca-cert", str(bad)],
           "install-batch": ["install", str(topo), "--batch-size", "0"],
           "install-batch-huge": ["install", str(topo), "--batch-size", "\x1b[2J" + "9" * 5000],
           "verify-unknown-device": ["verify", str(topo), "--device", "nic-99"]}
    return {**{f"mrc-sim {k}": ["sim", *v] for k, v in sim.items()},
            **{f"mrcctl {k}": ["ctl", *v] for k, v in ctl.items()}}


def test_no_cli_path_prints_a_traceback(tmp_path, capsys, no_run):
    for name, (which, *argv) in broken_inputs(tmp_path).items():
        main = cli.main if which == "sim" else mrcctl.main
        with within(60):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse's refusals
                code = exc.code
        out, err = capsys.readouterr()
        assert code in (1, 2) and "Traceback" not in out + err and err.strip(), (name, code, err)
        assert all(len(line) < 400 and line.isprintable() for line in err.splitlines()), (name, err)
