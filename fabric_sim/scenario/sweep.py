"""Sweeps: one scenario file standing for many runs (`sweep: {dotted.path:
[values]}`, every combination), and setting a field of a scenario by its
dotted path (`events[0].nic_rx_loss.rate`), which tests use to shrink the
paper's experiments. Pure operations on the raw file; scenario.variants
parses each combination.

A sweep is checked and counted before it is expanded: every key must name
a field of the file, every value must be valid there on its own, and the
runs must number at most MAX_VARIANTS."""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from typing import Any

from control_plane.config import ConfigError

MAX_VARIANTS = 10_000  # runs of one sweep file; each is a simulation
MAX_INDEX_DIGITS = 9  # `events[123456789]`: a file holds at most MAX_NODES values, far fewer than 10**9
_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)?((?:\[\d+\])*)")


def parse(raw: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """`sweep: {dotted.path: [values]}`: the runs are every combination."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ConfigError("sweep", "expected a mapping of dotted.path: [values]")
    out, errors = [], []
    for key, vals in raw.items():
        path = f"sweep.{shown(str(key))}"
        if not isinstance(vals, list) or not vals:
            errors.append((path, "expected a non-empty list of values"))
            continue
        try:
            first = steps(str(key))[0]
        except ConfigError as exc:
            errors.append((path, exc.reason))
            continue
        if first == "sweep":  # the variants are made from the file without its sweep: one would be ignored
            errors.append((path, "a sweep cannot set `sweep` (a sweep inside a sweep is not run)"))
            continue
        out.append((str(key), tuple(vals)))
    if errors:
        raise ConfigError.of(errors)
    n = math.prod(len(v) for _, v in out)
    if n > MAX_VARIANTS:
        raise ConfigError("sweep", f"{n:,} variants ({' x '.join(str(len(v)) for _, v in out)}), over the "
                                   f"limit of {MAX_VARIANTS:,} runs")
    return tuple(out)


def count(combos: tuple[tuple[str, tuple[Any, ...]], ...]) -> int:
    return math.prod(len(v) for _, v in combos) if combos else 1


def check(raw: dict[str, Any], combos: tuple[tuple[str, tuple[Any, ...]], ...],
          parse_doc: Callable[[dict[str, Any]], Any]) -> None:
    """ConfigError with every sweep value that is wrong on its own (each
    value parsed once with the others as written: len(values) parses per
    key, not one per combination)."""
    errors: list[tuple[str, str]] = []
    for key, vals in combos:
        for v in vals:
            try:
                parse_doc(override(raw, {key: v}))
            except ConfigError as exc:
                errors += [(f"sweep ({key}={str(v)[:40]}): {p}" if not p.startswith("sweep.") else p, r)
                           for p, r in exc.errors]
                break  # one bad value per key is enough to show
    if errors:
        raise ConfigError.of(errors)


def shown(path: str) -> str:
    """A dotted path as an error names it: each number past 10 digits cut (a 5,000-digit index)."""
    return re.sub(r"\d{11,}", lambda m: m.group()[:10] + "...", path)


def steps(path: str) -> list[str | int]:
    """`events[0].nic_rx_loss.rate` as ["events", 0, "nic_rx_loss", "rate"]."""
    out: list[str | int] = []
    for part in path.split("."):
        m = _STEP.fullmatch(part)
        if not part or not m or not (m.group(1) or m.group(2)):
            raise ConfigError(path, f"{part!r} is not a field name or name[index]")
        indices = re.findall(r"\d+", m.group(2))
        huge = next((i for i in indices if len(i) > MAX_INDEX_DIGITS), None)
        if huge is not None:  # int() of it would raise past 4,300 digits; no list of a file is that long
            raise ConfigError(shown(path), f"an index of {len(huge):,} digits: no list of a scenario is that long")
        out += ([m.group(1)] if m.group(1) else []) + [int(i) for i in indices]
    return out


def override(raw: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """A copy of the raw scenario with `values` set at their dotted paths
    (`events[0].nic_rx_loss.rate`); every step but the last must exist."""
    doc = copy.deepcopy(raw)
    for path, value in values.items():
        node: Any = doc
        try:
            where = steps(path)
        except ConfigError as exc:
            raise ConfigError(f"sweep.{shown(path)}", exc.reason) from None
        for i, step in enumerate(where[:-1]):
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                missing = ".".join(map(str, where[:i + 1]))
                raise ConfigError(f"sweep.{path}", f"{missing} is not in the file") from None
        try:
            node[where[-1]] = value
        except (IndexError, TypeError):
            raise ConfigError(f"sweep.{path}", "cannot be set") from None
    return doc
