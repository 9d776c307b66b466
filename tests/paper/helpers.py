"""Running the paper's experiments small: the shipped scenario files with
fields overridden (fewer events, fewer messages, fewer transports)."""

from __future__ import annotations

from typing import Any

from mrc_paper.experiments import Finding, Runs, load, run_experiment
from mrc_paper.registry import BY_KEY


def raw(key: str) -> dict[str, Any]:
    return load(BY_KEY[key]).meta["raw"]


def only(key: str, *names: str) -> dict[str, Any]:
    """The override that keeps only these transports of the experiment."""
    ts = [t for t in raw(key)["transports"] if t["name"] in names]
    assert [t["name"] for t in ts] == list(names)
    return {"transports": ts}


def run(key: str, **values: Any) -> tuple[Runs, Finding]:
    """Run experiment `key` with `values` at their dotted paths (a `__`
    in a keyword stands for a dot) and measure it as the gallery does."""
    exp = BY_KEY[key]
    runs = run_experiment(exp, {k.replace("__", "."): v for k, v in values.items()})
    return runs, exp.measure(runs)
