"""mrc-sim and python -m mrc_paper refuse bad input in one line
before any run starts."""

from __future__ import annotations

import argparse
import re

import pytest
import yaml

from fabric_sim import cli
from fabric_sim.runner import on_bmv2, parallel
from mrc_paper import __main__ as paper
from tests.sim.helpers import SMALL

DOC = {"name": "t", "topology": SMALL, "workload": {"pattern": "permutation", "message_bytes": 1000}}


@pytest.fixture
def no_run(monkeypatch):
    """Any simulation started fails the test: refusals come first."""
    def refuse(*a, **k):
        raise AssertionError("a run started")
    monkeypatch.setattr(parallel, "run_all", refuse)  # mrc-sim's and make paper's runs all go through it


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0] and "Errno" not in err[0], err
    return err[0]


def scenario_file(tmp_path, **patch):
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump({**DOC, **patch}))
    return f


def test_a_missing_file_is_one_line(tmp_path, capsys, no_run):
    assert cli.main([str(tmp_path / "nope.yaml")]) == 2
    assert one_line_error(capsys) == f"error: {tmp_path / 'nope.yaml'}: cannot read: No such file or directory"


def test_bad_yaml_is_one_line(tmp_path, capsys, no_run):
    f = tmp_path / "bad.yaml"
    f.write_text("workload: [unclosed\n")
    assert cli.main([str(f)]) == 2
    assert one_line_error(capsys).startswith(f"error: {f}: not valid YAML: while parsing a flow sequence")


def test_every_mistake_is_a_line(tmp_path, capsys, no_run):
    f = scenario_file(tmp_path, seed=-1, bins=1, duration_us=0)
    assert cli.main([str(f)]) == 2
    assert capsys.readouterr().err.splitlines() == ["error: duration_us: 0 is outside 0.001..1e+10",
                                                    "error: seed: -1 is outside 0..4294967296",
                                                    "error: bins: 1 is outside 2..10000"]


def test_an_unwritable_out_is_refused_before_the_run(tmp_path, capsys, no_run):
    f = scenario_file(tmp_path)
    assert cli.main([str(f), "--out", "/proc/mrc-sim-results"]) == 2  # not writable, even for root
    assert one_line_error(capsys).startswith("error: --out: /proc/mrc-sim-results: not writable (")
    (tmp_path / "file").write_text("")
    assert cli.main([str(f), "--out", str(tmp_path / "file")]) == 2
    assert one_line_error(capsys) == f"error: --out: {tmp_path / 'file'} exists and is not a folder"


def test_bmv2_limits_are_checked_before_the_model_runs(tmp_path, capsys, no_run, monkeypatch):
    monkeypatch.setattr(on_bmv2, "unsupported", lambda sc: "24 switches and 16 NICs: too many")
    assert cli.main([str(scenario_file(tmp_path)), "--out", str(tmp_path / "o"), "--bmv2"]) == 2
    assert one_line_error(capsys) == "error: --bmv2: 24 switches and 16 NICs: too many"


def test_paper_checks_its_out_folder_and_scenarios_first(tmp_path, capsys, no_run, monkeypatch):
    (tmp_path / "f").write_text("")
    assert paper.main(["--only", "fig10", "--out", str(tmp_path / "f" / "x")]) == 2
    assert one_line_error(capsys) == f"error: --out: {tmp_path / 'f' / 'x'}: {tmp_path / 'f'} is a file, not a folder"

    def broken(exp, values=None):
        raise paper.ScenarioError("workload.pattern", "'x' is not one of ...")
    monkeypatch.setattr(paper, "tasks", broken)  # every scenario is loaded there before any run
    assert paper.main(["--only", "fig10", "--out", str(tmp_path / "out")]) == 2
    assert one_line_error(capsys) == "error: fig10: workload.pattern: 'x' is not one of ..."


def undocumented_flags(help_text: str) -> list[str]:
    """Option lines of argparse's --help with no help text (on the line or the next)."""
    lines = help_text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("  -"):
            on_line = len(re.split(r"\s{2,}", line.strip())) > 1
            below = (
                i + 1 < len(lines) and lines[i + 1].startswith(" " * 8) and not lines[i + 1].lstrip().startswith("-")
            )
            if not (on_line or below):
                out.append(line.strip())
    return out


def test_the_help_check_sees_a_flag_without_help():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--told", action="store_true", help="it says")
    assert undocumented_flags(ap.format_help()) == ["--plain"]


@pytest.mark.parametrize("main", [cli.main, paper.main])
def test_every_flag_has_help(main, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "--out" in out and undocumented_flags(out) == []


def test_the_switch_demo_refuses_a_bad_topology_or_switch_in_one_line(tmp_path, capsys):
    from testbed import switch_demo

    assert switch_demo.main(["--topology", str(tmp_path / "nope.yaml")]) == 2
    assert one_line_error(capsys) == f"error: {tmp_path / 'nope.yaml'}: cannot read: No such file or directory"
    assert switch_demo.main(["--switch", "t0-p9-r0"]) == 2
    assert one_line_error(capsys) == "error: --switch: 't0-p9-r0' is not a device of topology 'demo'"
