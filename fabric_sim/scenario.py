"""Scenario files (YAML): topology, links, endpoint, transports, workload,
timed events. Validated before anything runs; every error names the field
path, e.g. `events[2].link_down: no cable between t0-p0-r0 and t0-p0-r1`.
The format is documented in docs/simulator.md."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from control_plane import topology as T

PATTERNS = ("permutation", "all_to_all", "incast", "ring_allreduce")
KINDS = ("mrc", "single_path")
EVENTS = {  # event key -> what its value is
    "link_down": "cable", "link_up": "cable", "switch_down": "switch", "switch_up": "switch",
    "plane_down": "plane", "plane_up": "plane", "nic_port_down": "nic_port", "nic_port_up": "nic_port",
    "link_loss": "cable_value", "link_rate": "cable_value", "link_latency": "cable_value",
}
VALUE_KEY = {"link_loss": "rate", "link_rate": "gbps", "link_latency": "us"}


class ScenarioError(ValueError):
    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


@dataclass(frozen=True)
class Links:
    nic_gbps: float = 100.0
    fabric_gbps: float = 100.0
    prop_us: float = 0.5
    data_queue: int = 256
    high_queue: int = 1024


@dataclass(frozen=True)
class EndpointCfg:
    mtu: int = 4096
    rto_us: float | None = None  # None: 10 base RTTs
    retry_limit: int = 8
    probe_interval_us: float | None = None  # None: 2 base RTTs
    reorder_window_us: float | None = None  # None: 1 base RTT
    ack_every: int = 1  # ACK coalescing: an ACK requested every N data packets


@dataclass(frozen=True)
class Transport:
    name: str
    kind: str  # mrc | single_path
    evs_per_qp: int = 64
    backups_per_plane: int = 2
    ev_state: bool = True  # False: oblivious spraying (an ablation)
    ev_min_active: int = 1
    reconvergence_us: float = 500.0  # single_path: routing moves flows off dead paths this long after a fault
    qps_per_pair: int | None = None  # overrides the workload's


@dataclass(frozen=True)
class Workload:
    pattern: str
    message_bytes: int
    messages: int = 1  # per pair, back to back
    qps_per_pair: int = 1
    start_us: float = 0.0
    hosts: int | None = None  # the first N NICs; None: all
    fan_in: int = 8  # incast senders
    target: int = 0  # incast receiver


@dataclass(frozen=True)
class Event:
    at_us: float
    kind: str
    args: tuple[Any, ...]
    path: str


@dataclass(frozen=True)
class Scenario:
    name: str
    topology: T.Topology
    workload: Workload
    transports: tuple[Transport, ...]
    links: Links = Links()
    endpoint: EndpointCfg = EndpointCfg()
    events: tuple[Event, ...] = ()
    seed: int = 1
    duration_us: float = 10_000.0
    bins: int = 100
    source: str = "<scenario>"
    meta: dict[str, Any] = field(default_factory=dict)


def _map(raw: Any, path: str, known: set[str]) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ScenarioError(path, "expected a mapping")
    for k in raw:
        if k not in known:
            raise ScenarioError(f"{path}.{k}" if path else str(k), f"unknown key (known: {', '.join(sorted(known))})")
    return raw


def _num(raw: dict[str, Any], key: str, path: str, default: Any, lo: float, hi: float, integer: bool = False) -> Any:
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


def _choice(raw: dict[str, Any], key: str, path: str, choices: tuple[str, ...], default: Any = ...) -> str:
    v = raw.get(key, default)
    if v is ...:
        raise ScenarioError(f"{path}{key}", "missing key")
    if v not in choices:
        raise ScenarioError(f"{path}{key}", f"{v!r} is not one of {', '.join(choices)}")
    return v


def _topology(raw: Any, base: Path) -> T.Topology:
    try:
        if isinstance(raw, str):
            return T.load(base / raw)
        return T.parse(raw, "topology")
    except T.TopologyError as exc:
        raise ScenarioError(f"topology.{exc.path}" if not isinstance(raw, str) else f"topology ({raw}): {exc.path}",
                            exc.reason) from None
    except OSError as exc:
        raise ScenarioError("topology", f"cannot read {raw!r}: {exc.strerror}") from None


def parse(data: Any, source: str = "<scenario>", base: Path = Path(".")) -> Scenario:
    top = _map(data, "", {"name", "seed", "topology", "links", "endpoint", "transports", "workload", "events",
                          "duration_us", "bins", "scale"})
    if "topology" not in top:
        raise ScenarioError("topology", "missing key")
    topo = _topology(top["topology"], base)
    lr = _map(top.get("links"), "links", set(Links.__dataclass_fields__))
    links = Links(*(_num(lr, k, "links.", getattr(Links, k), lo, hi, integer=i) for k, lo, hi, i in (
        ("nic_gbps", 0.001, 1e5, False), ("fabric_gbps", 0.001, 1e5, False), ("prop_us", 0, 1e6, False),
        ("data_queue", 1, 1 << 20, True), ("high_queue", 1, 1 << 20, True))))
    er = _map(top.get("endpoint"), "endpoint", set(EndpointCfg.__dataclass_fields__))
    endpoint = EndpointCfg(_num(er, "mtu", "endpoint.", 4096, 64, 9000, True),
                           _num(er, "rto_us", "endpoint.", None, 0.01, 1e9),
                           _num(er, "retry_limit", "endpoint.", 8, 0, 1000, True),
                           _num(er, "probe_interval_us", "endpoint.", None, 0.01, 1e9),
                           _num(er, "reorder_window_us", "endpoint.", None, 0, 1e9),
                           _num(er, "ack_every", "endpoint.", 1, 1, 64, True))
    transports = _transports(top.get("transports"), topo)
    workload = _workload(top.get("workload"), topo)
    if not isinstance(top.get("events") or [], list):
        raise ScenarioError("events", "expected a list")
    events = tuple(_event(e, f"events[{i}]", topo) for i, e in enumerate(top.get("events") or []))
    return Scenario(name=str(top.get("name", Path(source).stem)), topology=topo, workload=workload,
                    transports=transports, links=links, endpoint=endpoint, events=events,
                    seed=_num(top, "seed", "", 1, 0, 2**32, True),
                    duration_us=_num(top, "duration_us", "", 10_000.0, 0.001, 1e9),
                    bins=_num(top, "bins", "", 100, 2, 10_000, True), source=source,
                    meta={"scale": top.get("scale")})


def _transports(raw: Any, topo: T.Topology) -> tuple[Transport, ...]:
    if raw is None:
        raw = [{"name": "mrc", "kind": "mrc"}]
    if not isinstance(raw, list) or not raw:
        raise ScenarioError("transports", "expected a non-empty list")
    out, names = [], set()
    for i, item in enumerate(raw):
        path = f"transports[{i}]."
        r = _map(item, f"transports[{i}]", set(Transport.__dataclass_fields__))
        kind = _choice(r, "kind", path, KINDS)
        name = str(r.get("name", kind))
        if name in names:
            raise ScenarioError(f"{path}name", f"{name!r} is used twice")
        names.add(name)
        evs = _num(r, "evs_per_qp", path, 64, 1, 65536, True)
        if kind == "mrc" and (evs & (evs - 1) or evs % topo.planes):
            raise ScenarioError(f"{path}evs_per_qp", f"{evs} must be a power of two and a multiple of the "
                                f"{topo.planes} planes (slots rotate without a modulo, EVs spread evenly)")
        ev_state = r.get("ev_state", True)
        if not isinstance(ev_state, bool):
            raise ScenarioError(f"{path}ev_state", f"expected true or false, got {ev_state!r}")
        out.append(Transport(name, kind, evs, _num(r, "backups_per_plane", path, 2, 0, 256, True), ev_state,
                             _num(r, "ev_min_active", path, 1, 0, 65536, True),
                             _num(r, "reconvergence_us", path, 500.0, 0, 1e9),
                             _num(r, "qps_per_pair", path, None, 1, 256, True)))
    return tuple(out)


def _workload(raw: Any, topo: T.Topology) -> Workload:
    if raw is None:
        raise ScenarioError("workload", "missing key")
    r = _map(raw, "workload", set(Workload.__dataclass_fields__))
    hosts = _num(r, "hosts", "workload.", None, 2, topo.nics, True)
    n = hosts or topo.nics
    pattern = _choice(r, "pattern", "workload.", PATTERNS)
    fan_in = _num(r, "fan_in", "workload.", min(8, n - 1), 1, n - 1, True)
    return Workload(pattern, _num(r, "message_bytes", "workload.", ..., 1, 2**32 - 1, True),
                    _num(r, "messages", "workload.", 1, 1, 100_000, True),
                    _num(r, "qps_per_pair", "workload.", 1, 1, 256, True),
                    _num(r, "start_us", "workload.", 0.0, 0, 1e9), hosts, fan_in,
                    _num(r, "target", "workload.", 0, 0, n - 1, True))


def _event(raw: Any, path: str, topo: T.Topology) -> Event:
    r = _map(raw, path, {"at_us", *EVENTS})
    kinds = [k for k in r if k in EVENTS]
    if len(kinds) != 1:
        raise ScenarioError(path, f"an event has at_us and exactly one of {', '.join(EVENTS)}")
    kind = kinds[0]
    at = _num(r, "at_us", f"{path}.", ..., 0, 1e12)
    v, where = r[kind], f"{path}.{kind}"

    def dev(name: Any, p: str, kinds: tuple[str, ...]) -> str:
        try:
            d = topo.device(str(name))
        except ValueError as exc:
            raise ScenarioError(p, str(exc)) from None
        if d.kind not in kinds:
            raise ScenarioError(p, f"{name} is a {d.kind}, expected a {' or '.join(kinds)}")
        return str(d)

    shape = EVENTS[kind]
    if shape == "switch":
        return Event(at, kind, (dev(v, where, ("t0", "t1")),), path)
    if shape == "plane":
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < topo.planes:
            raise ScenarioError(where, f"expected a plane 0..{topo.planes - 1}, got {v!r}")
        return Event(at, kind, (v,), path)
    if shape == "nic_port":
        m = _map(v, where, {"nic", "plane"})
        nic = dev(m.get("nic"), f"{where}.nic", ("nic",))
        return Event(at, kind, (nic, _num(m, "plane", f"{where}.", ..., 0, topo.planes - 1, True)), path)
    cable = v if shape == "cable" else _map(v, where, {"link", VALUE_KEY[kind]}).get("link")
    cp = where if shape == "cable" else f"{where}.link"
    if not isinstance(cable, list) or len(cable) != 2:
        raise ScenarioError(cp, f"expected [device, device], got {cable!r}")
    a, b = dev(cable[0], f"{cp}[0]", ("t0", "t1", "nic")), dev(cable[1], f"{cp}[1]", ("t0", "t1", "nic"))
    if not _cabled(topo, a, b):
        raise ScenarioError(cp, f"no cable between {a} and {b}")
    if shape == "cable":
        return Event(at, kind, (a, b), path)
    key = VALUE_KEY[kind]
    hi = 1.0 if kind == "link_loss" else 1e9
    return Event(at, kind, (a, b, _num(v, key, f"{where}.", ..., 0, hi)), path)


def _cabled(topo: T.Topology, a: str, b: str) -> bool:
    x, y = sorted((topo.device(a), topo.device(b)), key=lambda d: ("nic", "t0", "t1").index(d.kind))
    if x.kind == "nic" and y.kind == "t0":
        return x.index // topo.hosts_per_t0 == y.index
    return x.kind == "t0" and y.kind == "t1" and x.plane == y.plane


def load(path: str | Path) -> Scenario:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ScenarioError(str(path), f"not valid YAML: {exc}") from None
    except OSError as exc:
        raise ScenarioError(str(path), f"cannot read: {exc.strerror}") from None
    return parse(data, str(path), path.parent)
