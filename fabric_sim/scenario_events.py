"""The timed events of a scenario file (`events:`), checked against a
topology; faults.py applies them. Every error names the field path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from control_plane import topology as T
from fabric_sim.fields import ScenarioError, mapping, num

EVENTS = {  # event key -> what its value is
    "link_down": "cable", "link_up": "cable", "switch_down": "switch", "switch_up": "switch",
    "plane_down": "plane", "plane_up": "plane", "nic_port_down": "nic_port", "nic_port_up": "nic_port",
    "link_loss": "cable_value", "link_rate": "cable_value", "link_latency": "cable_value",
    "nic_rx_loss": "rx_loss", "ev_loss": "ev_loss",
}
VALUE_KEY = {"link_loss": "rate", "link_rate": "gbps", "link_latency": "us"}


@dataclass(frozen=True)
class Event:
    at_us: float
    kind: str
    args: tuple[Any, ...]
    path: str


def device(topo: T.Topology, name: Any, path: str, kinds: tuple[str, ...]) -> str:
    """The canonical name of device `name`, which must be one of `kinds`."""
    try:
        d = topo.device(str(name))
    except ValueError as exc:
        raise ScenarioError(path, str(exc)) from None
    if d.kind not in kinds:
        raise ScenarioError(path, f"{name} is a {d.kind}, expected a {' or '.join(kinds)}")
    return str(d)


def parse(raw: Any, path: str, topo: T.Topology) -> Event:
    r = mapping(raw, path, {"at_us", *EVENTS})
    kinds = [k for k in r if k in EVENTS]
    if len(kinds) != 1:
        raise ScenarioError(path, f"an event has at_us and exactly one of {', '.join(EVENTS)}")
    kind = kinds[0]
    at = num(r, "at_us", f"{path}.", ..., 0, 1e12)
    v, where = r[kind], f"{path}.{kind}"
    shape = EVENTS[kind]
    if shape == "switch":
        return Event(at, kind, (device(topo, v, where, ("t0", "t1")),), path)
    if shape == "plane":
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < topo.planes:
            raise ScenarioError(where, f"expected a plane 0..{topo.planes - 1}, got {v!r}")
        return Event(at, kind, (v,), path)
    if shape == "nic_port":
        m = mapping(v, where, {"nic", "plane"})
        nic = device(topo, m.get("nic"), f"{where}.nic", ("nic",))
        return Event(at, kind, (nic, num(m, "plane", f"{where}.", ..., 0, topo.planes - 1, True)), path)
    if shape == "rx_loss":  # every NIC (or one) drops this share of what it receives
        m = mapping(v, where, {"rate", "nic"})
        nic = device(topo, m["nic"], f"{where}.nic", ("nic",)) if m.get("nic") is not None else None
        return Event(at, kind, (num(m, "rate", f"{where}.", ..., 0, 1.0), nic), path)
    if shape == "ev_loss":  # a NIC drops this share of what its QPs send on their EVs of one plane
        m = mapping(v, where, {"nic", "plane", "rate"})
        nic = device(topo, m.get("nic"), f"{where}.nic", ("nic",))
        return Event(at, kind, (nic, num(m, "plane", f"{where}.", ..., 0, topo.planes - 1, True),
                                num(m, "rate", f"{where}.", ..., 0, 1.0)), path)
    cable = v if shape == "cable" else mapping(v, where, {"link", VALUE_KEY[kind]}).get("link")
    cp = where if shape == "cable" else f"{where}.link"
    if not isinstance(cable, list) or len(cable) != 2:
        raise ScenarioError(cp, f"expected [device, device], got {cable!r}")
    kinds3 = ("t0", "t1", "nic")
    a, b = device(topo, cable[0], f"{cp}[0]", kinds3), device(topo, cable[1], f"{cp}[1]", kinds3)
    if not cabled(topo, a, b):
        raise ScenarioError(cp, f"no cable between {a} and {b}")
    if shape == "cable":
        return Event(at, kind, (a, b), path)
    key = VALUE_KEY[kind]
    hi = 1.0 if kind == "link_loss" else 1e9
    return Event(at, kind, (a, b, num(v, key, f"{where}.", ..., 0, hi)), path)


def cabled(topo: T.Topology, a: str, b: str) -> bool:
    x, y = sorted((topo.device(a), topo.device(b)), key=lambda d: ("nic", "t0", "t1").index(d.kind))
    if x.kind == "nic" and y.kind == "t0":
        return x.index // topo.hosts_per_t0 == y.index
    return x.kind == "t0" and y.kind == "t1" and x.plane == y.plane
