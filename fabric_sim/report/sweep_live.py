"""A sweep's results written as its variants finish, not at the end: a
variant's folder as soon as its last transport is done, and summary.csv
rewritten with every finished variant's rows and, while some are
missing, a last line `# k of n variants missing`. An interrupted sweep
(Ctrl-C, SIGTERM, a lost machine) keeps what finished, with or without
the run cache."""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path
from typing import Any

from fabric_sim import report
from fabric_sim.report import plots, sweep_out
from fabric_sim.runner.parallel import Task
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import Scenario


class Writer:
    def __init__(self, variants: list[tuple[dict[str, Any], Scenario]], tasks: list[Task], out: Path,
                 figures: bool = True):
        self.variants, self.tasks, self.out, self.figures = variants, tasks, out, figures
        self.index = {id(v): i for i, (_, v) in enumerate(variants)}  # a task's scenario is its variant's object
        self.wanted = Counter(id(t.scenario) for t in tasks)  # variants without a task (--transport) are not waited on
        self.got: dict[int, dict[int, RunResult]] = {}  # variant -> task index -> result
        self.rows: dict[int, list[list[Any]]] = {}  # finished variant -> its summary rows

    @property
    def missing(self) -> int:
        return len(self.wanted) - len(self.rows)

    def add(self, i: int, r: RunResult) -> None:
        """Task `i` finished with `r`; its variant is written once all its transports are in."""
        key = id(self.tasks[i].scenario)
        got = self.got.setdefault(key, {})
        got[i] = r
        if len(got) == self.wanted[key]:
            self._write_variant(self.index[key], [got[j] for j in sorted(got)])

    def _write_variant(self, v: int, results: list[RunResult]) -> None:
        values = self.variants[v][0]
        name = sweep_out.folder(v, len(self.variants), values)
        report.write(results, self.out / name)
        if self.figures:
            plots.all_figures(results, self.out / name)
        self.rows[v] = [[name, *values.values(), r.transport.name, *sweep_out.row(r).values()] for r in results]
        self.write_summary()

    def write_summary(self) -> Path:
        """summary.csv with the rows so far, replaced whole (a temporary file
        renamed), so an interrupt never leaves half a summary."""
        self.out.mkdir(parents=True, exist_ok=True)
        path, tmp = self.out / "summary.csv", self.out / f".summary.{os.getpid()}.tmp"
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["variant", *(self.variants[0][0] if self.variants else {}), "transport", *sweep_out.COLUMNS])
            for v in sorted(self.rows):
                w.writerows(self.rows[v])
            if self.missing:
                fh.write(f"# {self.missing} of {len(self.wanted)} variants missing (not run, failed or interrupted)\n")
        os.replace(tmp, path)
        return path
