"""Where a run executes does not change its result: a sweep on Ray (two
worker processes) writes every number, message and timeline sample that
the same sweep run one after another in this process writes."""

from __future__ import annotations

import json

from fabric_sim import cli
from fabric_sim.runner import parallel
from tests.parallel.helpers import write

FOLDERS = ["1_message_bytes=32768_rate=0", "2_message_bytes=32768_rate=0.01", "3_message_bytes=65536_rate=0",
           "4_message_bytes=65536_rate=0.01"]


def _numbers(path) -> str:
    """results.json without the wall-clock figures (they time the machine, not the model)."""
    doc = json.loads(path.read_text())
    for run in doc["runs"]:
        del run["sim"]["wall_s"], run["sim"]["hops_per_s"]
    return json.dumps(doc, sort_keys=True)  # text: NaN compares equal to NaN


def _refuse(*_args, **_kw):
    raise AssertionError("a Ray run executed in the driver")


def test_a_sweep_on_ray_gives_every_number_of_the_same_sweep_run_in_this_process(tmp_path, ray_cluster, monkeypatch):
    f = write(tmp_path / "sweep.yaml")
    flags = ["--no-cache", "--no-plots", "--quiet"]
    assert cli.main([str(f), "--out", str(tmp_path / "seq"), "--jobs", "1", *flags]) == 0
    monkeypatch.setattr(parallel, "run", _refuse)  # Ray's workers import their own, unpatched
    assert cli.main([str(f), "--out", str(tmp_path / "ray"), "--jobs", "2", *flags]) == 0
    assert sorted(p.name for p in (tmp_path / "ray").iterdir() if p.is_dir()) == FOLDERS
    assert (tmp_path / "ray" / "summary.csv").read_text() == (tmp_path / "seq" / "summary.csv").read_text()
    texts = set()
    for name in FOLDERS:
        seq, ray = tmp_path / "seq" / name, tmp_path / "ray" / name
        assert _numbers(ray / "results.json") == _numbers(seq / "results.json")
        for csv in ("messages.csv", "timeline.csv"):
            assert (ray / csv).read_text() == (seq / csv).read_text()
        texts.add(_numbers(seq / "results.json").split('"scenario"')[0])
    assert len(texts) == 4  # the variants differ, so equal files are not equal by accident
    summary = (tmp_path / "seq" / "summary.csv").read_text().splitlines()
    assert summary[0].startswith("variant,workload.message_bytes,events[0].nic_rx_loss.rate,transport,delivered")
    assert [line.split(",")[:4] for line in summary[1:3]] == [[FOLDERS[0], "32768", "0", "mrc"],
                                                               [FOLDERS[0], "32768", "0", "roce"]]
    assert len(summary) == 1 + 8
