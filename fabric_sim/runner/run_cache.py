"""The run cache: each finished run (one scenario variant, one transport)
kept under a hash of what decides its result (the parsed scenario, in a
canonical form, and the code's version), so an interrupted sweep or
`make paper` reruns only what is missing. Location: results/cache/
(docs/simulator.md); a run's whole result is kept, its timeline with it.

The code's version is a hash of the Python sources of the packages a run
imports; editing any of them invalidates every entry (a stale result
cannot be told from a fresh one). The paper's measurements and figures
(mrc_paper/) read results and do not make them, so they are left
out: a new plot does not cost a rerun."""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import ipaddress
import json
import os
import pickle
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from control_plane.pipelines import REPO, RUN_CACHE
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import Scenario, Transport

DEFAULT_DIR = RUN_CACHE
# The packages a run imports (tests/test_packages.py pins fabric_sim's layers); testbed only serves --bmv2.
PACKAGES = ("mrc_wire", "sim_core", "control_plane", "switch_model", "nic_model", "mrc_host", "fabric_sim")
# What the cache keeps of a result; the scenario and transport are the caller's (the key stands for them).
KEPT = tuple(f.name for f in dataclasses.fields(RunResult) if f.name not in ("scenario", "transport"))


@functools.cache
def code_version() -> str:
    """This checkout's version (computed once per process)."""
    return sources_hash(REPO)


def sources_hash(root: Path) -> str:
    """sha256 over the path and bytes of every .py file of PACKAGES under
    `root` (and the Python version, which pickles depend on)."""
    h = hashlib.sha256(sys.version.split()[0].encode())
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            rel = f.relative_to(root).as_posix()
            h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def canonical(obj: Any) -> Any:
    """A JSON-able form of `obj` that is the same in every process (no set
    or dict order, no object ids); unknown types are refused rather than
    guessed at, so two different scenarios never share a key."""
    if isinstance(obj, BaseModel) or (dataclasses.is_dataclass(obj) and not isinstance(obj, type)):
        return {"__type__": type(obj).__name__, **{name: canonical(getattr(obj, name)) for name in _fields(obj)}}
    if isinstance(obj, dict):
        return {"__dict__": sorted(([canonical(k), canonical(v)] for k, v in obj.items()), key=json.dumps)}
    if isinstance(obj, (list, tuple)):
        return [canonical(x) for x in obj]
    if isinstance(obj, (set, frozenset)):
        return {"__set__": sorted((canonical(x) for x in obj), key=json.dumps)}
    if isinstance(obj, enum.Enum):
        return canonical(obj.value)
    if isinstance(obj, (ipaddress.IPv6Network, ipaddress.IPv4Network, ipaddress.IPv6Address, Path)):
        return str(obj)
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"run cache: no canonical form for {type(obj).__name__}")


def _fields(obj: Any) -> list[str]:
    """The field names of a configuration object (pydantic) or a dataclass."""
    if isinstance(obj, BaseModel):
        return list(type(obj).model_fields)
    return [f.name for f in dataclasses.fields(obj)]


def key(sc: Scenario, t: Transport, version: str | None = None) -> str:
    """The hash of what decides a run's result: every field of the scenario
    that run() reads (not its name, source file or sweep), the transport,
    and the code's version."""
    what = {name: canonical(getattr(sc, name)) for name in _fields(sc)
            if name not in ("name", "source", "meta", "transports")}
    what["transport"] = canonical(t)
    text = json.dumps(what, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{version or code_version()}\n{text}".encode()).hexdigest()


def strip(r: RunResult) -> dict[str, Any]:
    """The part of a result that is kept and sent between processes."""
    return {name: getattr(r, name) for name in KEPT}


def attach(kept: dict[str, Any], sc: Scenario, t: Transport) -> RunResult:
    return RunResult(scenario=sc, transport=t, **kept)


class Cache:
    """One pickle per run under `root`/<code version>/: entries of an older
    code version sit in their own folder, to delete as a whole."""

    def __init__(self, root: Path = DEFAULT_DIR):
        self.root = root
        self.version = code_version()

    def _path(self, sc: Scenario, t: Transport) -> Path:
        return self.root / self.version[:16] / f"{key(sc, t, self.version)}.pickle"

    def has(self, sc: Scenario, t: Transport) -> bool:
        """Whether a result is kept (without reading it): for estimates of what is left."""
        return self._path(sc, t).is_file()

    def get(self, sc: Scenario, t: Transport) -> RunResult | None:
        try:
            kept = pickle.loads(self._path(sc, t).read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, TypeError):
            return None  # absent, or unreadable (an older layout): run it again
        return attach(kept, sc, t) if isinstance(kept, dict) and set(kept) == set(KEPT) else None

    def put(self, r: RunResult) -> None:
        """Written whole or not at all (a temporary file renamed), so an
        interrupt never leaves a half entry."""
        p = self._path(r.scenario, r.transport)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(strip(r), protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, p)
