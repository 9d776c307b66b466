"""What an experiment of the gallery is, and how one is run: its scenario
file (scenarios/paper/), the runs of every sweep variant and transport
(tasks for fabric_sim/runner/parallel.py), and what it measures against the
paper."""

from __future__ import annotations

import dataclasses
import enum
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from control_plane import pipelines
from fabric_sim import scenario
from fabric_sim.runner.parallel import IN_PROCESS, Options, Task, label, run_all
from fabric_sim.runner.run import RunResult
from mrc_paper.claims import Claim

SCENARIOS = pipelines.SCENARIOS / "paper"


class Scale(enum.IntEnum):
    """The gallery's two sizes, smallest first: a claim held at both is
    reported at the larger."""
    QUICK = 1  # make paper: every figure, sized for a laptop
    PAPER = 2  # make paper SCALE=paper: the collective figures as the paper ran them, beside the quick ones


@dataclass(frozen=True)
class Row:
    """A measurement the gallery shows beside the paper's claims: what it
    is, the paper's number if it gives one, and the model's."""
    what: str
    paper: str
    measured: str


@dataclass(frozen=True)
class Held:
    """One claim of the paper (claims.Claim, by id) against the model:
    what was measured, whether it holds to the claim's tolerance, and,
    when it does not, the measured cause. `tested` False: the runs do not
    reach the regime the claim is about (counted as not reproduced)."""
    claim: str
    measured: str
    ok: bool
    cause: str = ""
    tested: bool = True
    value: float | None = None  # the number the tolerance is held against (a seeded claim's spread is of it)
    scale: Scale = Scale.QUICK  # the scale of the experiment that held it (set as the finding is measured)
    at: str = ""  # that experiment's size, short ("4 ranks"; "" where the claim is not about ranks)


@dataclass
class Finding:
    key: str
    rows: list[Row] = field(default_factory=list)
    held: list[Held] = field(default_factory=list)
    delivery: list[tuple[str, bool]] = field(default_factory=list)  # (run, every message once and no QP error)
    numbers: dict[str, Any] = field(default_factory=dict)  # for numbers.json and the tests
    notes: list[str] = field(default_factory=list)  # where the model and the paper differ, and why

    def row(self, what: str, paper: str, measured: str) -> None:
        self.rows.append(Row(what, paper, measured))

    def hold(self, claim: str, measured: str, ok: bool, cause: str = "", value: float | None = None) -> None:
        self.held.append(Held(claim, measured, bool(ok), "" if ok else cause, value=value))

    def untested(self, claim: str, why: str) -> None:
        self.held.append(Held(claim, "not run", False, why, tested=False))

    def delivered(self, run: str, ok: bool) -> None:
        self.delivery.append((run, bool(ok)))

    def result(self, claim: str) -> Held:
        return next(h for h in self.held if h.claim == claim)


Values = tuple[tuple[str, Any], ...]  # a sweep variant's (dotted path, value) pairs, in the sweep's order
RunKey = tuple[Values, str]  # (sweep values, transport name): one run of an experiment


@dataclass
class Runs:
    """Every run of one experiment: (sweep values, transport name) -> result."""
    scenario: scenario.Scenario
    results: dict[RunKey, RunResult] = field(default_factory=dict)

    def get(self, transport: str, **values: Any) -> RunResult:
        """The run of `transport` whose sweep values match `values`, each
        named by the last part of its path (message_bytes=..., rate=...)."""
        for (vals, name), r in self.results.items():
            short = {k.rsplit(".", 1)[-1]: v for k, v in vals}
            if name == transport and all(short.get(k) == v for k, v in values.items()):
                return r
        raise KeyError(f"{self.scenario.name}: no run of {transport} with {values}")

    def by_transport(self, transport: str) -> list[tuple[dict[str, Any], RunResult]]:
        return [(dict(vals), r) for (vals, name), r in self.results.items() if name == transport]

    @property
    def transports(self) -> list[str]:
        return list(dict.fromkeys(name for _, name in self.results))


@dataclass(frozen=True)
class Experiment:
    key: str  # fig09a
    figure: str  # the PNG it belongs to: fig09
    title: str
    scenario: str  # file under scenarios/paper/
    paper: str  # what the paper reports
    measure: Callable[[Runs], Finding]
    scale: Scale = Scale.QUICK
    at: str = ""  # its size, short, shown beside every claim it holds ("64 ranks")

    def stamp(self, f: Finding) -> Finding:
        """The finding with every claim it holds marked with this experiment's scale."""
        f.held = [dataclasses.replace(h, scale=self.scale, at=self.at) for h in f.held]
        return f


def load(exp: Experiment, values: dict[str, Any] | None = None) -> scenario.Scenario:
    """The experiment's scenario, with `values` set at their dotted paths
    (tests shrink experiments this way; errors name the field)."""
    sc = scenario.load(SCENARIOS / exp.scenario)
    if values:
        sc = scenario.parse(scenario.override(sc.meta["raw"] | {"sweep": _sweep_raw(sc)}, values),
                            sc.source, sc.meta["base"])
    return sc


def _sweep_raw(sc: scenario.Scenario) -> dict[str, list[Any]]:
    return {k: list(v) for k, v in sc.meta.get("sweep") or ()}


def tasks(exp: Experiment, values: dict[str, Any] | None = None) -> tuple[Runs, list[tuple[RunKey, Task]]]:
    """The experiment's runs still to fill, and a task per sweep variant and
    transport with the key its result goes under in Runs.results."""
    sc = load(exp, values)
    variants = scenario.variants(sc)
    out = []
    for i, (vals, v) in enumerate(variants):
        for t in v.transports:
            name = f"{exp.key} [{i + 1}/{len(variants)}] {t.name}" + (f" {label(vals)}" if vals else "")
            out.append(((tuple(vals.items()), t.name), Task(name, v, t)))
    return Runs(sc), out


def seed_tasks(exp: Experiment, claim: Claim, k: int) -> tuple[Runs, list[tuple[RunKey, Task]]]:
    """The runs a seeded claim re-runs with the experiment's seed + k (or
    its ECMP hash seed + k: `claim.vary`): the variants of
    `claim.seed_on`, of its transports."""
    base = load(exp)
    runs, todo = tasks(exp, {claim.vary: getattr(base, claim.vary) + k, "sweep": claim.seed_on})
    keep = claim.seed_transports
    return runs, [(key, t) for key, t in todo if not keep or key[1] in keep]


def reseeded(base: Runs, again: Runs) -> Runs:
    """The experiment's runs with those run again under another seed in
    their place (same sweep values and transport)."""
    missing = [k for k in again.results if k not in base.results]
    if missing:
        raise KeyError(f"{base.scenario.name}: seeded runs match no run of the experiment: {missing[:3]}")
    return Runs(again.scenario, {**base.results, **again.results})


def over_seeds(claim: Claim, first: Held, others: list[Held]) -> Held:
    """A seeded claim's result: its value's spread over the seeds (min,
    median, max; over hash seeds every value, sorted); held if it holds on
    every seed, or, over hash seeds, on most of them."""
    every = [first] + others
    vals = sorted(h.value for h in every if h.value is not None)
    n, ok = len(every), sum(h.ok for h in every)
    what = "hash seeds" if claim.by_majority else "seeds"
    if len(vals) < n or not all(h.tested for h in every):
        return Held(claim.id, first.measured + f"; {n - len(vals)} of {n} {what} gave no value", False,
                    f"a {what[:-1]}'s run gave the claim no value", first.tested, first.value)
    spread = f"over {n} {what}: min {vals[0]:.2f}, median {statistics.median(vals):.2f}, max {vals[-1]:.2f}"
    if claim.by_majority:
        spread += " (" + " ".join(f"{v:.2f}" for v in vals) + ")"
    held = 2 * ok > n if claim.by_majority else ok == n
    measured = f"{first.measured} (first {what[:-1]}); {spread}; held on {ok} of {n}"
    if held:
        cause = ""
    elif claim.by_majority:
        cause = f"holds on {ok} of {n} hash seeds only: the paper's outcome is the minority's; " + next(
            (f"hash seed + {s}: {h.cause}" for s, h in enumerate(every) if not h.ok), "")
    else:
        cause = f"holds on {ok} of {n} seeds only; " + next(
            (f"seed + {s}: {h.cause}" for s, h in enumerate(every) if not h.ok), "")
    return Held(claim.id, measured, held, cause, value=first.value)


def fill(runs: Runs, todo: list[tuple[RunKey, Task]], results: list[RunResult]) -> Runs:
    """Runs.results in the tasks' order, whatever order the runs finished in."""
    for (k, _), r in zip(todo, results, strict=True):
        runs.results[k] = r
    return runs


def run_experiment(exp: Experiment, values: dict[str, Any] | None = None, opts: Options = IN_PROCESS) -> Runs:
    """Run every sweep variant of the experiment with every transport."""
    runs, todo = tasks(exp, values)
    return fill(runs, todo, run_all([t for _, t in todo], opts))
