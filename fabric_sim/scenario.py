"""Scenario files (YAML): topology, links, endpoint, transports, workload,
timed events, and an optional sweep. Validated before anything runs;
every error names the field path, e.g. `events[2].link_down: no cable
between t0-p0-r0 and t0-p0-r1`. The format is documented in
docs/simulator.md."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from control_plane import topology as T
from fabric_sim import scenario_events, sweep
from fabric_sim.fields import ScenarioError, choice, flag, int_list, mapping, num
from fabric_sim.scenario_events import EVENTS, Event  # noqa: F401 (re-exported)
from fabric_sim.sweep import override  # noqa: F401 (re-exported)

__all__ = ["ScenarioError", "Event", "Scenario", "Transport", "Workload", "Flow", "Pin", "Links", "EndpointCfg",
           "parse", "load", "variants", "override"]

PATTERNS = ("permutation", "all_to_all", "incast", "ring_allreduce", "flows")
KINDS = ("mrc", "single_path", "roce")
ABLATIONS = ("port_bitmap", "ecn_echo", "ev_retire")  # transports[].ablate: MRC mechanisms switched off (docs/paper.md)


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
    kind: str  # mrc | single_path | roce
    evs_per_qp: int = 64
    backups_per_plane: int = 2
    ev_state: bool = True  # False: oblivious spraying (an ablation)
    ev_min_active: int = 1
    reconvergence_us: float = 500.0  # single_path, roce: routing moves flows off dead paths this long after a fault
    qps_per_pair: int | None = None  # overrides the workload's
    ecn_move: str = "skip"  # mrc: an ECN-marked EV is skipped for a rotation, or swapped with an idle spare
    topology: T.Topology | None = None  # this transport's own fabric (same NICs), e.g. RoCE on one plane
    links: Links | None = None
    ablate: tuple[str, ...] = ()  # ABLATIONS switched off in the MRC endpoint (tests that a check needs them)


@dataclass(frozen=True)
class Pin:
    """A flow's MRC QPs use only these spines of one plane, with these spares."""
    plane: int
    spines: tuple[int, ...]
    backups: tuple[int, ...] = ()


@dataclass(frozen=True)
class Flow:
    src: int
    dst: int
    messages: int
    size: int
    start_us: float = 0.0
    pin: Pin | None = None


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
    placement: str = "packed"  # ring: rank r on host r, or "spread": consecutive ranks in different racks
    flows: tuple[Flow, ...] = ()  # pattern flows


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
    meta: dict[str, Any] = field(default_factory=dict)  # scale: the file's statement; raw, sweep: for variants()


def _topology(raw: Any, base: Path, path: str = "topology") -> T.Topology:
    try:
        if isinstance(raw, str):
            return T.load(base / raw)
        return T.parse(raw, path)
    except T.TopologyError as exc:
        raise ScenarioError(f"{path}.{exc.path}" if not isinstance(raw, str) else f"{path} ({raw}): {exc.path}",
                            exc.reason) from None
    except OSError as exc:
        raise ScenarioError(path, f"cannot read {raw!r}: {exc.strerror}") from None


def _links(raw: Any, path: str) -> Links:
    lr = mapping(raw, path, set(Links.__dataclass_fields__))
    return Links(*(num(lr, k, f"{path}.", getattr(Links, k), lo, hi, integer=i) for k, lo, hi, i in (
        ("nic_gbps", 0.001, 1e5, False), ("fabric_gbps", 0.001, 1e5, False), ("prop_us", 0, 1e6, False),
        ("data_queue", 1, 1 << 20, True), ("high_queue", 1, 1 << 20, True))))


def parse(data: Any, source: str = "<scenario>", base: Path = Path(".")) -> Scenario:
    top = mapping(data, "", {"name", "seed", "topology", "links", "endpoint", "transports", "workload", "events",
                             "duration_us", "bins", "scale", "sweep"})
    if "topology" not in top:
        raise ScenarioError("topology", "missing key")
    topo = _topology(top["topology"], base)
    links = _links(top.get("links"), "links")
    er = mapping(top.get("endpoint"), "endpoint", set(EndpointCfg.__dataclass_fields__))
    endpoint = EndpointCfg(num(er, "mtu", "endpoint.", 4096, 64, 9000, True),
                           num(er, "rto_us", "endpoint.", None, 0.01, 1e9),
                           num(er, "retry_limit", "endpoint.", 8, 0, 1000, True),
                           num(er, "probe_interval_us", "endpoint.", None, 0.01, 1e9),
                           num(er, "reorder_window_us", "endpoint.", None, 0, 1e9),
                           num(er, "ack_every", "endpoint.", 1, 1, 64, True))
    workload = _workload(top.get("workload"), topo)
    transports = _transports(top.get("transports"), topo, base, workload)
    if not isinstance(top.get("events") or [], list):
        raise ScenarioError("events", "expected a list")
    events = tuple(scenario_events.parse(e, f"events[{i}]", topo) for i, e in enumerate(top.get("events") or []))
    for t in transports:  # a transport on its own fabric must find every event's devices there too
        if t.topology is not None:
            for i, e in enumerate(top.get("events") or []):
                try:
                    scenario_events.parse(e, f"events[{i}]", t.topology)
                except ScenarioError as exc:
                    raise ScenarioError(exc.path, f"{exc.reason} (in transport {t.name}'s topology)") from None
    sc = Scenario(name=str(top.get("name", Path(source).stem)), topology=topo, workload=workload,
                  transports=transports, links=links, endpoint=endpoint, events=events,
                  seed=num(top, "seed", "", 1, 0, 2**32, True),
                  duration_us=num(top, "duration_us", "", 10_000.0, 0.001, 1e9),
                  bins=num(top, "bins", "", 100, 2, 10_000, True), source=source,
                  meta={"scale": top.get("scale"), "raw": {k: v for k, v in top.items() if k != "sweep"},
                        "base": base, "sweep": sweep.parse(top.get("sweep"))})
    if sc.meta["sweep"]:
        variants(sc)  # every variant is checked now, not halfway through a sweep
    return sc


def _transports(raw: Any, topo: T.Topology, base: Path, w: Workload) -> tuple[Transport, ...]:
    if raw is None:
        raw = [{"name": "mrc", "kind": "mrc"}]
    if not isinstance(raw, list) or not raw:
        raise ScenarioError("transports", "expected a non-empty list")
    out, names = [], set()
    for i, item in enumerate(raw):
        path = f"transports[{i}]."
        r = mapping(item, f"transports[{i}]", set(Transport.__dataclass_fields__))
        kind = choice(r, "kind", path, KINDS)
        name = str(r.get("name", kind))
        if name in names:
            raise ScenarioError(f"{path}name", f"{name!r} is used twice")
        names.add(name)
        own = _topology(r["topology"], base, f"{path}topology") if r.get("topology") is not None else None
        if own is not None and own.nics != topo.nics:
            raise ScenarioError(f"{path}topology", f"{own.nics} NICs; the scenario's topology has {topo.nics} "
                                "(the workload names NICs by index)")
        t_topo = own or topo
        evs = num(r, "evs_per_qp", path, 64, 1, 65536, True)
        if kind == "mrc" and (evs & (evs - 1) or evs % t_topo.planes):
            raise ScenarioError(f"{path}evs_per_qp", f"{evs} must be a power of two and a multiple of the "
                                f"{t_topo.planes} planes (slots rotate without a modulo, EVs spread evenly)")
        for j, f in enumerate(w.flows):
            if f.pin is not None and kind == "mrc" and (f.pin.plane >= t_topo.planes
                                                        or max(f.pin.spines + f.pin.backups) >= t_topo.t1_per_plane):
                raise ScenarioError(f"workload.flows[{j}].pin", f"plane or spine beyond transport {name}'s topology")
        out.append(Transport(name, kind, evs, num(r, "backups_per_plane", path, 2, 0, 256, True),
                             flag(r, "ev_state", path, True), num(r, "ev_min_active", path, 1, 0, 65536, True),
                             num(r, "reconvergence_us", path, 500.0, 0, 1e9),
                             num(r, "qps_per_pair", path, None, 1, 256, True),
                             choice(r, "ecn_move", path, ("skip", "swap"), "skip"), own,
                             _links(r["links"], f"{path}links") if r.get("links") is not None else None,
                             _ablations(r.get("ablate", []), f"{path}ablate")))
    return tuple(out)


def _ablations(raw: Any, path: str) -> tuple[str, ...]:
    if not isinstance(raw, list):
        raise ScenarioError(path, f"expected a list, got {raw!r}")
    for j, a in enumerate(raw):
        if a not in ABLATIONS:
            raise ScenarioError(f"{path}[{j}]", f"{a!r} is not one of {', '.join(ABLATIONS)}")
    return tuple(raw)


def _workload(raw: Any, topo: T.Topology) -> Workload:
    if raw is None:
        raise ScenarioError("workload", "missing key")
    r = mapping(raw, "workload", set(Workload.__dataclass_fields__))
    hosts = num(r, "hosts", "workload.", None, 2, topo.nics, True)
    n = hosts or topo.nics
    pattern = choice(r, "pattern", "workload.", PATTERNS)
    fan_in = num(r, "fan_in", "workload.", min(8, n - 1), 1, n - 1, True)
    size = num(r, "message_bytes", "workload.", ..., 1, 2**32 - 1, True)
    messages = num(r, "messages", "workload.", 1, 1, 100_000, True)
    start = num(r, "start_us", "workload.", 0.0, 0, 1e9)
    flows = _flows(r.get("flows"), topo, size, messages, start) if pattern == "flows" else ()
    if pattern != "flows" and r.get("flows") is not None:
        raise ScenarioError("workload.flows", "only for pattern flows")
    return Workload(pattern, size, messages, num(r, "qps_per_pair", "workload.", 1, 1, 256, True), start, hosts,
                    fan_in, num(r, "target", "workload.", 0, 0, n - 1, True),
                    choice(r, "placement", "workload.", ("packed", "spread"), "packed"), flows)


def _flows(raw: Any, topo: T.Topology, size: int, messages: int, start: float) -> tuple[Flow, ...]:
    if not isinstance(raw, list) or not raw:
        raise ScenarioError("workload.flows", "pattern flows needs a non-empty list of {src, dst}")
    out, seen = [], set()
    for i, item in enumerate(raw):
        path = f"workload.flows[{i}]"
        r = mapping(item, path, {"src", "dst", "messages", "message_bytes", "start_us", "pin"})
        src, dst = (topo.device(scenario_events.device(topo, r.get(k), f"{path}.{k}", ("nic",))).index
                    for k in ("src", "dst"))
        if src == dst or (src, dst) in seen:
            raise ScenarioError(f"{path}.dst", "a flow to itself" if src == dst else "this pair has a flow already")
        seen.add((src, dst))
        pin = None
        if r.get("pin") is not None:
            p = mapping(r["pin"], f"{path}.pin", {"plane", "spines", "backups"})
            spines = int_list(p.get("spines"), f"{path}.pin.spines", 0, 255)
            if not spines or len(spines) & (len(spines) - 1):
                raise ScenarioError(f"{path}.pin.spines", "a power of two of spines (the slots of a rotation)")
            pin = Pin(num(p, "plane", f"{path}.pin.", ..., 0, 7, True), spines,
                      int_list(p.get("backups", []), f"{path}.pin.backups", 0, 255))
        out.append(Flow(src, dst, num(r, "messages", f"{path}.", messages, 1, 100_000, True),
                        num(r, "message_bytes", f"{path}.", size, 1, 2**32 - 1, True),
                        num(r, "start_us", f"{path}.", start, 0, 1e9), pin))
    return tuple(out)


def variants(sc: Scenario) -> list[tuple[dict[str, Any], Scenario]]:
    """(values, scenario) for every combination of the sweep; the scenario
    itself if it has none."""
    combos = sc.meta.get("sweep") or ()
    if not combos:
        return [({}, sc)]
    out = []
    for combo in itertools.product(*(vals for _, vals in combos)):
        values = dict(zip((k for k, _ in combos), combo))
        doc = sweep.override(sc.meta["raw"], values)  # its errors name the sweep key already
        try:
            out.append((values, parse(doc, sc.source, sc.meta["base"])))
        except ScenarioError as exc:
            label = ", ".join(f"{k}={v}" for k, v in values.items())
            raise ScenarioError(f"sweep ({label}): {exc.path}", exc.reason) from None
    return out


def load(path: str | Path) -> Scenario:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ScenarioError(str(path), f"not valid YAML: {exc}") from None
    except OSError as exc:
        raise ScenarioError(str(path), f"cannot read: {exc.strerror}") from None
    return parse(data, str(path), path.parent)
