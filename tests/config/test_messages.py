"""What the CLIs print for hostile input: every size limit names its
field, no raw escape byte from any input reaches the terminal, and
warnings that are the project's own business (matplotlib's) are not
printed to users."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
import yaml

from control_plane.pipelines import REPO
from fabric_sim import cli
from fabric_sim.report import plots
from fabric_sim.runner import parallel
from fabric_sim.runner.run import run
from mrc_paper import __main__ as paper
from tests.config.test_hostile_files import within
from tests.sim.helpers import make

DOC = {"name": "t", "topology": {"planes": 1, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 2},
       "workload": {"pattern": "permutation", "message_bytes": 1000},
       "transports": [{"kind": "mrc", "evs_per_qp": 8}], "duration_us": 1000}
ESC = "\x1b[31m"


@pytest.fixture
def no_run(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("a run started")
    monkeypatch.setattr(parallel, "run_all", refuse)


@pytest.mark.parametrize("key, field", [(f"transports[{'9' * 5000}].evs_per_qp", "sweep.transports[9999999999..."),
                                        (f"events[{'1' * 5000}].at_us", "sweep.events[1111111111...")])
def test_a_5000_digit_sweep_index_is_refused_naming_the_field(tmp_path, capsys, no_run, key, field):
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump({**DOC, "sweep": {key: [8, 16]}}))
    assert cli.main([str(f), "--out", str(tmp_path / "o")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {field}") and "an index of 5,000 digits" in line and len(line) < 300, line
    assert "4300" not in line


def inputs_with_escapes(tmp_path) -> dict[str, list[str]]:
    good = tmp_path / "s.yaml"
    good.write_text(yaml.safe_dump(DOC))
    return {"paper --only": ["-m", "mrc_paper", "--only", ESC + "x"],
            "paper --out": ["-m", "mrc_paper", "--only", "fig10", "--out", f"/proc/{ESC}x"],
            "dissect path": ["-m", "mrc_wire.dissect", str(tmp_path / f"{ESC}nope.pcap")],
            "capture path": ["-m", "testbed.capture", f"/proc/{ESC}x.pcap"],
            "sim --ray-address": ["-m", "fabric_sim", str(good), "--out", str(tmp_path / "o"), "--ray-address",
                                  ESC + "x"],
            "sim --transport": ["-m", "fabric_sim", str(good), "--transport", ESC + "x"]}


def test_no_raw_escape_byte_from_any_input_reaches_the_terminal(tmp_path):
    for name, argv in inputs_with_escapes(tmp_path).items():
        proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)})
        both = proc.stdout + proc.stderr
        code = 1 if name == "dissect path" else 2  # the dissector's: a file it cannot read
        assert proc.returncode == code and "\x1b" not in both and "Traceback" not in both, (name, both)
        assert "\\x1b[31m" in proc.stderr, (name, proc.stderr)


def test_figures_print_no_warning_of_their_own(tmp_path):
    """A run in which no EV left GOOD: its EV-state figure has no line to put in a legend."""
    sc = make({"pattern": "permutation", "message_bytes": 1000}, duration_us=50, bins=4)
    r = run(sc, sc.transports[0])
    assert not any(any(v) for k, v in r.timeline.ev_states.items() if k != "GOOD")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = plots.all_figures([r], lambda name: tmp_path / name)
    assert set(made) >= {"fct_cdf.png", "ev_states.png"}


def test_paper_help_and_escaped_only_print_no_traceback(capsys):
    with within(30):
        assert paper.main(["--only", ESC]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.startswith("error: --only: unknown \\x1b[31m")
