"""A sweep's results written as its variants finish, not at the end: a
variant's folder as soon as its last transport is done, and summary.csv
rewritten with every finished variant's rows and, while some are
missing, a last line saying how many and why. An interrupted sweep
(Ctrl-C, SIGTERM, a lost machine) keeps what finished, with or without
the run cache: a variant cut off part-way is written with the transports
that finished, its results.json naming those that did not (`cut_off`),
and so is one whose transport crashed (`finish`). Every file is written
whole (saved.py)."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path
from typing import Any

from control_plane import outputs
from fabric_sim.report import saved, sweep_out
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
        self.rows: dict[int, list[list[Any]]] = {}  # written variant -> its summary rows
        self.whole: set[int] = set()  # variants written with every transport
        self.why = "not run, failed or interrupted"  # what the summary says of the missing ones

    @property
    def missing(self) -> int:
        return len(self.wanted) - len(self.whole)

    def folder(self, v: int) -> str:
        return sweep_out.folder(v, len(self.variants), self.variants[v][0])

    def add(self, i: int, r: RunResult) -> None:
        """Task `i` finished with `r`; its variant is written once all its transports are in."""
        key = id(self.tasks[i].scenario)
        got = self.got.setdefault(key, {})
        got[i] = r
        if len(got) == self.wanted[key]:
            self._write_variant(key)

    def cut_off(self, why: str) -> None:
        """Stopped (`why`: "interrupted by SIGTERM"): every variant with runs
        finished but not yet written (its writing interrupted, or some of
        its transports not finished, each named in its results.json) is
        written now, without figures: the command is stopping."""
        late = [key for key in self.got if self.index[key] not in self.rows or key not in self.whole]
        part = [key for key in late if len(self.got[key]) < self.wanted[key]]
        for key in late:
            self._write_variant(key, cut_off=why, figures=False)
        self.why = (f"{why}: {self.missing} of {len(self.wanted)} variants not finished ({len(part)} cut off "
                    "part-way: its results.json names the transports missing)"
                    + (f"; {len(late)} written without figures" if late and self.figures else ""))
        self.write_summary()

    def finish(self, failed: dict[str, str]) -> None:
        """The end: a variant a transport of which crashed (`failed`: task
        label -> why) is written with those that finished."""
        for key, got in self.got.items():
            if len(got) < self.wanted[key]:
                self._write_variant(key, failed=failed)

    def _write_variant(self, key: int, cut_off: str | None = None, failed: dict[str, str] | None = None,
                       figures: bool | None = None) -> None:
        v, got = self.index[key], self.got.get(key, {})
        lost = [t for i, t in enumerate(self.tasks) if id(t.scenario) == key and i not in got]
        crashed = {t.transport.name: failed[t.label] for t in lost if failed and t.label in failed}
        stopped = {t.transport.name: cut_off or "did not finish" for t in lost if t.transport.name not in crashed}
        results = [got[j] for j in sorted(got)]
        name = self.folder(v)
        saved.save(self.out / name, self.variants[v][1], results, crashed, stopped,
                   figures=self.figures if figures is None else figures)
        self.rows[v] = [[name, *self.variants[v][0].values(), r.transport.name, *sweep_out.row(r).values()]
                        for r in results]
        if not lost:
            self.whole.add(key)
        self.write_summary()

    def write_summary(self) -> Path:
        """summary.csv with the rows so far, replaced whole, so an interrupt
        never leaves half a summary."""
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / "summary.csv"
        with outputs.replacing(path) as tmp, open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["variant", *(self.variants[0][0] if self.variants else {}), "transport", *sweep_out.COLUMNS])
            for v in sorted(self.rows):
                w.writerows(self.rows[v])
            if self.missing:
                fh.write(f"# {self.why}\n" if self.why.startswith("interrupted") else
                         f"# {self.missing} of {len(self.wanted)} variants missing ({self.why})\n")
        return path
