"""Reading fields of a scenario file: each helper checks one value and, if
it is wrong, raises ScenarioError naming its field path (docs/simulator.md)."""

from __future__ import annotations

from typing import Any


class ScenarioError(ValueError):
    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def mapping(raw: Any, path: str, known: set[str]) -> dict[str, Any]:
    """`raw` as a mapping with only `known` keys (None is empty)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ScenarioError(path, "expected a mapping")
    for k in raw:
        if k not in known:
            raise ScenarioError(f"{path}.{k}" if path else str(k), f"unknown key (known: {', '.join(sorted(known))})")
    return raw


def num(raw: dict[str, Any], key: str, path: str, default: Any, lo: float, hi: float, integer: bool = False) -> Any:
    """raw[key], a number in lo..hi; `default` if absent (`...`: required).
    `path` is the prefix of the key's path, ending in '.' or empty."""
    if key not in raw or raw[key] is None:
        if default is ...:
            raise ScenarioError(f"{path}{key}", "missing key")
        return default
    v = raw[key]
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if not ok or isinstance(v, bool):
        raise ScenarioError(f"{path}{key}", f"expected {'an integer' if integer else 'a number'}, got {v!r}")
    if not lo <= v <= hi:
        raise ScenarioError(f"{path}{key}", f"{v} is outside {lo:g}..{hi:g}")
    return v


def choice(raw: dict[str, Any], key: str, path: str, choices: tuple[str, ...], default: Any = ...) -> str:
    v = raw.get(key, default)
    if v is ...:
        raise ScenarioError(f"{path}{key}", "missing key")
    if v not in choices:
        raise ScenarioError(f"{path}{key}", f"{v!r} is not one of {', '.join(choices)}")
    return v


def flag(raw: dict[str, Any], key: str, path: str, default: bool) -> bool:
    v = raw.get(key, default)
    if not isinstance(v, bool):
        raise ScenarioError(f"{path}{key}", f"expected true or false, got {v!r}")
    return v


def int_list(raw: Any, path: str, lo: int, hi: int) -> tuple[int, ...]:
    if not isinstance(raw, list) or any(not isinstance(x, int) or isinstance(x, bool) for x in raw):
        raise ScenarioError(path, f"expected a list of integers, got {raw!r}")
    for i, x in enumerate(raw):
        if not lo <= x <= hi:
            raise ScenarioError(f"{path}[{i}]", f"{x} is outside {lo}..{hi}")
    return tuple(raw)
