"""The runner's flags on mrc-sim and make paper: bad values refused in one
line before any run."""

from __future__ import annotations

from fabric_sim import cli
from mrc_paper.__main__ import main as paper
from tests.parallel.helpers import write


def test_jobs_below_one_is_refused_naming_the_flag(tmp_path, capsys):
    f = write(tmp_path / "sweep.yaml")
    assert cli.main([str(f), "--jobs", "0", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == "error: --jobs: 0 is not a number of runs (at least 1)\n"
    assert not (tmp_path / "out").exists()
    assert paper(["--only", "fig10", "--jobs", "-1", "--out", str(tmp_path / "paper")]) == 2
    assert "error: --jobs: -1 is not" in capsys.readouterr().err


def test_a_sweep_is_refused_on_bmv2_before_it_runs(tmp_path, capsys):
    f = write(tmp_path / "sweep.yaml")
    assert cli.main([str(f), "--bmv2", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"error: --bmv2: {f} is a sweep; BMv2 runs one scenario\n"


def test_a_ray_address_that_does_not_answer_is_one_line_at_once(tmp_path, capsys):
    f = write(tmp_path / "sweep.yaml")
    assert cli.main([str(f), "--ray-address", "127.0.0.1:1", "--no-cache", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: Ray cluster 127.0.0.1:1: cannot connect: [Errno 111] Connection refused")
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()
