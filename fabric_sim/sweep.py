"""Sweeps: one scenario file standing for many runs (`sweep: {dotted.path:
[values]}`, every combination), and setting a field of a scenario by its
dotted path (`events[0].nic_rx_loss.rate`), which tests use to shrink the
paper's experiments. Pure operations on the raw file; scenario.variants
parses each combination."""

from __future__ import annotations

import copy
from typing import Any

from fabric_sim.fields import ScenarioError, mapping


def parse(raw: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """`sweep: {dotted.path: [values]}`: the runs are every combination."""
    r = mapping(raw, "sweep", set(raw) if isinstance(raw, dict) else set())
    out = []
    for key, vals in r.items():
        if not isinstance(vals, list) or not vals:
            raise ScenarioError(f"sweep.{key}", "expected a non-empty list of values")
        out.append((str(key), tuple(vals)))
    return tuple(out)


def _steps(path: str) -> list[str | int]:
    out: list[str | int] = []
    for part in path.split("."):
        name, *idx = part.replace("]", "").split("[")
        out += ([name] if name else []) + [int(i) for i in idx]
    return out


def override(raw: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A copy of the raw scenario with `values` set at their dotted paths
    (`events[0].nic_rx_loss.rate`); every step but the last must exist."""
    doc = copy.deepcopy(raw)
    for path, value in values.items():
        node: Any = doc
        steps = _steps(path)
        for i, step in enumerate(steps[:-1]):
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                missing = ".".join(map(str, steps[:i + 1]))
                raise ScenarioError(f"sweep.{path}", f"{missing} is not in the file") from None
        try:
            node[steps[-1]] = value
        except (IndexError, TypeError):
            raise ScenarioError(f"sweep.{path}", "cannot be set") from None
    return doc
