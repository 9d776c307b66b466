"""Where the CLIs write, checked once (control_plane/outputs.py) before any
work starts: make capture / python -m testbed.capture (a file),
python -m mrc_paper --out and mrc-sim --out (folders). Each bad path is
one line naming it, no traceback, no hang, nothing written; every output
file appears whole or not at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from control_plane import outputs
from control_plane.pipelines import REPO, RESULTS
from fabric_sim import cli
from fabric_sim.runner import parallel
from mrc_paper import __main__ as paper
from testbed import capture
from tests.config.test_hostile_files import within

DOC = {"name": "t", "topology": {"planes": 1, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 2},
       "workload": {"pattern": "permutation", "message_bytes": 1000},
       "transports": [{"kind": "mrc", "evs_per_qp": 8}], "duration_us": 1000}


@pytest.fixture
def no_work(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("work started")
    monkeypatch.setattr(parallel, "run_all", refuse)
    monkeypatch.setattr(capture.Capture, "run", refuse)


def bad_paths(tmp: Path) -> dict[str, tuple[str, str]]:
    """name -> (path, what its one line must say)."""
    (tmp / "afile").write_text("")
    (tmp / "dir").mkdir()
    os.mkfifo(tmp / "fifo")
    return {"empty": ("", "an empty name"),
            "option": ("--x", "starts with '-'"),
            "proc": ("/proc/x/y", "not writable"),
            "parent-is-file": (str(tmp / "afile" / "x"), f"{tmp / 'afile'} is a file, not a folder"),
            "long-name": (str(tmp / ("n" * 300)), "a name of 300 bytes"),
            "long-path": (str(tmp / "/".join(["d" * 100] * 45)), "a path of"),
            "cache": (str(RESULTS / "cache" / "x"), "the run cache"),
            "escape": (str(tmp / "afile" / "\x1b[2Jx"), "\\x1b[2Jx")}


def one_line(capsys) -> str:
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].isprintable(), err
    return lines[0]


@pytest.mark.parametrize("case", ["empty", "option", "proc", "parent-is-file", "long-name", "long-path", "cache",
                                  "escape"])
@pytest.mark.parametrize("which", ["capture", "paper", "sim"])
def test_every_cli_refuses_a_bad_output_path_in_one_line_before_work(tmp_path, capsys, no_work, which, case):
    path, why = bad_paths(tmp_path)[case]
    if which == "capture":
        argv, main, flag = ["--", path] if path.startswith("-") else [path], capture.main, ""
    elif which == "paper":
        argv, main, flag = ["--only", "fig10", f"--out={path}"], paper.main, "--out: "
    else:
        f = tmp_path / "s.yaml"
        f.write_text(yaml.safe_dump(DOC))
        argv, main, flag = [str(f), f"--out={path}"], cli.main, "--out: "
    with within(30):
        assert main(argv) == 2
    line = one_line(capsys)
    assert line.startswith(f"error: {flag}") and why in line, line


@pytest.mark.parametrize("which", ["file", "folder"])
def test_a_folder_is_not_a_file_and_a_file_is_not_a_folder(tmp_path, which):
    (tmp_path / "f").write_text("")
    if which == "file":
        assert outputs.file_refusal(tmp_path) == f"{tmp_path} is a folder, not a file"
    else:
        assert outputs.folder_refusal(tmp_path / "f") == f"{tmp_path / 'f'} exists and is not a folder"


@pytest.mark.parametrize("path, kind", [("/dev/full", "a character device"), ("/dev/null", "a character device")])
def test_a_device_is_not_an_output_file(path, kind):
    assert outputs.file_refusal(Path(path)) == f"{path} is {kind}, not a regular file"


def test_a_fifo_with_no_reader_is_refused_not_waited_on(tmp_path, capsys, no_work):
    os.mkfifo(tmp_path / "p")
    with within(10):
        assert capture.main([str(tmp_path / "p")]) == 2
    assert one_line(capsys) == f"error: {tmp_path / 'p'} is a FIFO, not a regular file"


def test_the_current_folder_is_no_results_folder_for_any_cli(tmp_path, capsys, no_work, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert paper.main(["--only", "fig10", "--out", "."]) == 2
    assert one_line(capsys) == "error: --out: . is the current folder: results go in a folder of their own"
    assert outputs.folder_refusal("") == "an empty name: results go in a folder of their own"


def test_nothing_is_left_behind_by_a_refused_path(tmp_path, no_work):
    out = tmp_path / "a" / "b" / "c.pcap"
    assert outputs.file_refusal(out) is None  # creatable: the check made a/b and a file in it, then removed them
    assert list(tmp_path.iterdir()) == []


def test_capture_help_is_help_not_a_file_name(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        capture.main(["--help"])
    assert exc.value.code == 0 and "usage:" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_capture_refuses_a_second_path(tmp_path, capsys, no_work):
    with pytest.raises(SystemExit) as exc:
        capture.main([str(tmp_path / "a.pcap"), str(tmp_path / "b.pcap")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "unrecognized arguments" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_make_capture_into_a_folder_named_like_its_file_is_one_line(tmp_path):
    """`make capture` when results/capture.pcap is a folder (run from a copy of the Makefile's command)."""
    (tmp_path / "results" / "capture.pcap").mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "testbed.capture", "results/capture.pcap"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2 and proc.stderr == "error: results/capture.pcap is a folder, not a file\n"


def test_paper_refuses_an_empty_only(capsys, no_work):
    assert paper.main(["--only", ""]) == 2
    assert one_line(capsys).startswith("error: --only: empty: name at least one experiment (known: ")
    assert paper.main(["--only", ","]) == 2
    assert one_line(capsys).startswith("error: --only: empty")


# ---- every output file whole or absent -----------------------------------------------------------------------

def test_a_file_written_through_replacing_is_whole_or_absent(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt), outputs.replacing(path) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]
    with outputs.replacing(path) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".json" and tmp.name.startswith(".")
        tmp.write_text("new")
    assert path.read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_files_written_together_appear_together(tmp_path):
    with pytest.raises(KeyboardInterrupt), outputs.Together(tmp_path) as files:
        files.path("a.csv").write_text("a")
        files.path("b.csv").write_text("b")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
    with outputs.Together(tmp_path) as files:
        files.path("a.csv").write_text("a")
        files.path("b.png").write_text("b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.png"]


def test_capture_is_written_under_a_temporary_name(tmp_path, monkeypatch):
    seen = []
    real = capture.pcap.write

    def spy(path, frames):
        seen.append(Path(path))
        return real(path, frames)
    monkeypatch.setattr(capture.pcap, "write", spy)
    assert capture.main([str(tmp_path / "c.pcap")]) == 0
    assert seen[0].parent == tmp_path and seen[0].name != "c.pcap"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.pcap"]
