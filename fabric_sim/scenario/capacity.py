"""A scenario's checks that need more than one section: the workload
against the topology (hosts a pattern needs, flows' devices), and each
transport against both (its own fabric, its EVs, and whether the QPs and
slots it will plan fit the NIC's tables). Every mistake is collected and
raised as one ConfigError, before anything runs."""

from __future__ import annotations

from collections import Counter
from typing import Any

from control_plane import topology as T
from control_plane.config import ConfigError, validate
from fabric_sim.scenario import events as scenario_events
from fabric_sim.scenario.chakra.walker import pairs as trace_pairs
from fabric_sim.scenario.kinds import facts
from mrc_wire.constants import NIC_MAX_QPS, NIC_MAX_SLOTS

FAN_IN = 8  # incast senders when the file names none (fewer on a smaller fabric)


def workload(w: Any, topo: T.Topology, flow_cls: type, entry_cls: type) -> Any:
    """The workload with its fabric-dependent defaults filled in (fan_in,
    flows by NIC index), or ConfigError (paths relative to `workload`).
    `flow_cls`, `entry_cls`: the scenario's Flow and FlowEntry (the format
    lives there; passed in so this module does not import it back)."""
    errors: list[tuple[str, str]] = []
    n = w.hosts or topo.nics
    if w.hosts is not None and w.hosts > topo.nics:
        errors.append(("hosts", f"{w.hosts} is outside 2..{topo.nics} (the topology's NICs)"))
    if w.trace is not None and len(w.trace.ranks) > topo.nics:
        errors.append(("trace", f"{len(w.trace.ranks)} ranks; the topology has {topo.nics} NICs (a rank per NIC)"))
    if w.pattern not in ("flows", "chakra") and n < 2:
        errors.append(("pattern", f"{w.pattern} needs at least 2 NICs; the topology has {topo.nics}"))
    fan_in = w.fan_in if w.fan_in is not None else max(1, min(FAN_IN, n - 1))
    if w.pattern == "incast" and n >= 2 and not 1 <= fan_in <= n - 1:
        errors.append(("fan_in", f"{fan_in} is outside 1..{n - 1} (the other hosts)"))
    if not w.target < n:
        errors.append(("target", f"{w.target} is outside 0..{n - 1}"))
    flows: tuple[Any, ...] = ()
    if w.pattern == "flows":
        try:
            flows = _flows(w, topo, flow_cls, entry_cls)
        except ConfigError as exc:
            errors += exc.prefixed("flows").errors
    elif w.flows:
        errors.append(("flows", "only for pattern flows"))
    if errors:
        raise ConfigError.of(errors)
    return w.model_copy(update={"fan_in": fan_in, "flows": flows})


def _flows(w: Any, topo: T.Topology, flow_cls: type, entry_cls: type) -> tuple[Any, ...]:
    if not w.flows:
        raise ConfigError("", "pattern flows needs a non-empty list of {src, dst}")
    out, seen, errors = [], set(), []
    for i, raw in enumerate(w.flows):
        try:
            f: Any = validate(entry_cls, raw)  # a FlowEntry (this module does not import the format)
            src, dst = (topo.device(scenario_events.device(topo, getattr(f, k), k, ("nic",))).index
                        for k in ("src", "dst"))
            if src == dst or (src, dst) in seen:
                raise ConfigError("dst", "a flow to itself" if src == dst else "this pair has a flow already")
            if f.pin is not None and (not f.pin.spines or len(f.pin.spines) & (len(f.pin.spines) - 1)):
                raise ConfigError("pin.spines", "a power of two of spines (the slots of a rotation)")
        except ConfigError as exc:
            errors += exc.prefixed(f"[{i}]").errors
            continue
        seen.add((src, dst))
        out.append(flow_cls(src=src, dst=dst, messages=w.messages if f.messages is None else f.messages,
                            size=w.message_bytes if f.message_bytes is None else f.message_bytes,
                            start_us=w.start_us if f.start_us is None else f.start_us, pin=f.pin))
    if errors:
        raise ConfigError.of(errors)
    return tuple(out)


def transports(ts: tuple[Any, ...], topo: T.Topology, w: Any) -> None:
    """ConfigError (paths from the file's top) if a transport cannot run
    this workload on its fabric."""
    errors: list[tuple[str, str]] = []
    names: set[str] = set()
    for i, t in enumerate(ts):
        path = f"transports[{i}]."
        if t.name in names:
            errors.append((f"{path}name", f"{t.name!r} is used twice"))
        names.add(t.name)
        if t.topology is not None and t.topology.nics != topo.nics:
            errors.append((f"{path}topology", f"{t.topology.nics} NICs; the scenario's topology has {topo.nics} "
                                              "(the workload names NICs by index)"))
            continue
        t_topo = t.topology or topo
        evs = t.evs_per_qp
        sprays = facts(t.kind).sprays
        if sprays and (evs & (evs - 1) or evs % t_topo.planes):
            errors.append((f"{path}evs_per_qp", f"{evs} must be a power of two and a multiple of the "
                                                f"{t_topo.planes} planes (slots rotate without a modulo, "
                                                "EVs spread evenly)"))
        for j, f in enumerate(w.flows):
            if f.pin is not None and sprays and (f.pin.plane >= t_topo.planes or
                                                          max(f.pin.spines + f.pin.backups) >= t_topo.t1_per_plane):
                errors.append((f"workload.flows[{j}].pin", f"plane or spine beyond transport {t.name}'s topology"))
        errors += [(p if p.startswith("workload.") else f"{path}{p}", r) for p, r in _fits_the_nic(t, w, t_topo)]
    if errors:
        raise ConfigError.of(errors)


def qps_per_nic(w: Any, qps_per_pair: int, nics: int) -> int:
    """The most QPs any NIC holds for this workload (both ends of a pair
    hold one QP per pair's QP)."""
    n = w.hosts or nics
    per_pair: Counter[int] = Counter()
    if w.pattern == "flows":
        for f in w.flows:
            per_pair[f.src] += 1
            per_pair[f.dst] += 1
        most = max(per_pair.values(), default=0)
    elif w.pattern == "all_to_all":
        most = 2 * (n - 1)
    elif w.pattern == "incast":
        most = max(w.fan_in, 1)
    elif w.trace is not None:  # a rank holds a QP per rank it sends to or receives from
        ends = Counter(r for pair in trace_pairs(w.trace) for r in pair)
        most = max(ends.values(), default=0)
    else:  # permutation, ring: each host sends to one and receives from one
        most = 2
    return most * qps_per_pair


def _fits_the_nic(t: Any, w: Any, topo: T.Topology) -> list[tuple[str, str]]:
    qpp = t.qps_per_pair or w.qps_per_pair
    field = "qps_per_pair" if t.qps_per_pair else "workload.qps_per_pair"
    qps = qps_per_nic(w, qpp, topo.nics)
    if qps > NIC_MAX_QPS:
        return [(field, f"{qpp} QPs per pair give a NIC {qps:,} QPs ({w.pattern}); the NIC holds {NIC_MAX_QPS:,} "
                        "(qp_rotation register, qp_ev table)")]
    pinned = [len(f.pin.spines) for f in w.flows if f.pin is not None]
    evs = max([t.evs_per_qp] + pinned) if facts(t.kind).sprays else 1
    if qps * evs > NIC_MAX_SLOTS:
        return [("evs_per_qp", f"{evs} EVs on each of a NIC's {qps:,} QPs are {qps * evs:,} slots; the NIC holds "
                               f"{NIC_MAX_SLOTS:,} (slot_ev table)")]
    return []
