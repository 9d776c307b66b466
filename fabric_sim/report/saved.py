"""One scenario's results written together: results.json, messages.csv,
timeline.csv, a trace's steps.csv and collectives.csv, and (where asked)
the figures, each under a temporary name
and all moved into place at the end (control_plane/outputs.py:
`Together`), so that an interrupt at any moment leaves the folder's
earlier files or its new ones, never half a file or a mix."""

from __future__ import annotations

from pathlib import Path

from control_plane import outputs
from fabric_sim import report
from fabric_sim.report import plots, steps
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import Scenario


def save(out: Path, sc: Scenario, results: list[RunResult], failed: dict[str, str] | None = None,
         cut_off: dict[str, str] | None = None, figures: bool = False) -> list[str]:
    """The files of `results` (the runs of `sc` that finished; `failed` and
    `cut_off`: transport -> why one did not) in folder `out`; the names of
    the figures drawn."""
    with outputs.Together(out) as files:
        report.write_json(files.path("results.json"), report.document(sc, results, failed, cut_off))
        report.write_messages(files.path("messages.csv"), results)
        report.write_timeline(files.path("timeline.csv"), results)
        steps.write(results, files.path)  # a trace's runs: steps.csv, collectives.csv
        made = plots.all_figures(results, files.path) if figures and results else []
    return made
