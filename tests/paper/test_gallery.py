"""make paper's command: progress, the figure, the gallery and the numbers."""

from __future__ import annotations

import json

from fabric_sim.paper.__main__ import main


def test_one_experiment_writes_its_figure_gallery_section_and_numbers(tmp_path, capsys, ray_cluster):
    assert main(["--only", "fig14", "--out", str(tmp_path), "--quiet", "--jobs", "2", "--no-cache"]) == 0
    assert (tmp_path / "fig14.png").stat().st_size > 10_000
    md = (tmp_path / "paper.md").read_text()
    assert "![fig14](fig14.png)" in md and "### fig14:" in md and "**The paper:**" in md
    assert "scenarios/paper/fig14.yaml" in md and "Where the model differs" in md
    assert "Not run this time: " in md and "fig09a" in md.split("Not run this time: ")[1]
    numbers = json.loads((tmp_path / "numbers.json").read_text())
    assert set(numbers) == {"fig14"} and numbers["fig14"]["mrc"]["delivered_once"] is True
    out = capsys.readouterr().out
    assert "[1/1] fig14" in out and "checks hold" in out
    runs = sorted(p.name for p in (tmp_path / "runs" / "fig14").iterdir())  # every run kept, timeline and all
    assert runs == ["1", "summary.csv"]
    assert (tmp_path / "runs/fig14/1/timeline.csv").read_text().count("\nmrc-swap,") == 51  # 10 µs bins to 510 µs, when all is in


def test_an_unknown_experiment_is_an_error_naming_it(capsys):
    assert main(["--only", "fig19"]) == 2
    assert "unknown fig19" in capsys.readouterr().err
