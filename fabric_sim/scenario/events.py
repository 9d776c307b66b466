"""The timed events of a scenario file (`events:`): their format (EventSpec,
one key per kind) and their check against the topology, which gives the
Event that faults.py applies. Every error names the field path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, ValidationInfo, model_validator

from control_plane import topology as T
from control_plane.config import ConfigError, Int, Model, Num, validate

Cable = Annotated[list[str], Field(min_length=2, max_length=2, description="[device, device]")]


class NicPort(Model):
    nic: str
    plane: Int(0, 7)


class RxLoss(Model):
    """Every NIC (or one) drops this share of what it receives."""

    rate: Num(0, 1.0)
    nic: str | None = None


class EvLoss(Model):
    """A NIC drops this share of what its QPs send on their EVs of one plane."""

    nic: str
    plane: Int(0, 7)
    rate: Num(0, 1.0)


class LinkLoss(Model):
    link: Cable
    rate: Num(0, 1.0)


class LinkRate(Model):
    link: Cable
    gbps: Num(0, 1e9, "the new rate (a rate of 0 would never send: use link_down)", above=True)


class LinkLatency(Model):
    link: Cable
    us: Num(0, 1e9)


class EventSpec(Model):
    """One event: at_us and exactly one of the kinds."""

    at_us: Num(0, 1e12)
    link_down: Cable | None = None
    link_up: Cable | None = None
    switch_down: str | None = None
    switch_up: str | None = None
    plane_down: Int(0, 7) | None = None
    plane_up: Int(0, 7) | None = None
    nic_port_down: NicPort | None = None
    nic_port_up: NicPort | None = None
    link_loss: LinkLoss | None = None
    link_rate: LinkRate | None = None
    link_latency: LinkLatency | None = None
    nic_rx_loss: RxLoss | None = None
    ev_loss: EvLoss | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_kind(cls, raw: Any) -> Any:
        if isinstance(raw, dict) and sum(k in EVENTS for k in raw) != 1:
            raise ConfigError("", f"an event has at_us and exactly one of {', '.join(EVENTS)}")
        return raw


EVENTS = [k for k in EventSpec.model_fields if k != "at_us"]
SWITCH_KINDS = ("t0", "t1")


@dataclass(frozen=True)
class Event:
    at_us: float
    kind: str
    args: tuple[Any, ...]
    path: str


def parse_all(raw: Any, info: ValidationInfo) -> Any:
    """`events:` checked against the scenario's topology and every
    transport's own one; every mistake reported."""
    if raw is None:
        return ()
    if not isinstance(raw, list | tuple) or all(isinstance(e, Event) for e in raw):
        return raw  # pydantic says what is wrong with a non-list; Events are checked already
    topo = info.data.get("topology")
    own = [(t.name, t.topology) for t in info.data.get("transports") or () if t.topology is not None]
    out, errors = [], []
    for i, item in enumerate(raw):
        try:
            spec = validate(EventSpec, item)
            if topo is None:
                continue  # the topology has errors of its own
            out.append(resolve(spec, topo, f"events[{i}]"))
            for name, t_topo in own:  # a transport on its own fabric must find the event's devices there too
                try:
                    resolve(spec, t_topo, f"events[{i}]")
                except ConfigError as exc:
                    raise ConfigError.of((p, f"{r} (in transport {name}'s topology)") for p, r in exc.errors) from exc
        except ConfigError as exc:
            errors += exc.prefixed(f"[{i}]").errors
    if errors:
        raise ConfigError.of(errors)
    return tuple(out)


def device(topo: T.Topology, name: Any, path: str, kinds: tuple[str, ...]) -> str:
    """The canonical name of device `name`, which must be one of `kinds`."""
    try:
        d = topo.device(str(name))
    except ValueError as exc:
        raise ConfigError(path, str(exc)) from None
    if d.kind not in kinds:
        raise ConfigError(path, f"{name} is a {d.kind}, expected a {' or '.join(kinds)}")
    return str(d)


def _plane(topo: T.Topology, v: int, path: str) -> int:
    if not v < topo.planes:
        raise ConfigError(path, f"expected a plane 0..{topo.planes - 1}, got {v!r}")
    return v


def _cable(topo: T.Topology, cable: list[str], path: str) -> tuple[str, str]:
    kinds = ("t0", "t1", "nic")
    a, b = device(topo, cable[0], f"{path}[0]", kinds), device(topo, cable[1], f"{path}[1]", kinds)
    if not cabled(topo, a, b):
        raise ConfigError(path, f"no cable between {a} and {b}")
    return a, b


def resolve(spec: EventSpec, topo: T.Topology, path: str) -> Event:
    """The Event of a well-formed spec, its devices checked against `topo`
    (error paths relative to the event)."""
    kind = next(k for k in EVENTS if getattr(spec, k) is not None)
    v = getattr(spec, kind)
    if kind in ("switch_down", "switch_up"):
        args: tuple[Any, ...] = (device(topo, v, kind, SWITCH_KINDS),)
    elif kind in ("plane_down", "plane_up"):
        args = (_plane(topo, v, kind),)
    elif kind in ("nic_port_down", "nic_port_up"):
        args = (device(topo, v.nic, f"{kind}.nic", ("nic",)), _plane(topo, v.plane, f"{kind}.plane"))
    elif kind == "nic_rx_loss":
        args = (v.rate, device(topo, v.nic, f"{kind}.nic", ("nic",)) if v.nic is not None else None)
    elif kind == "ev_loss":
        args = (device(topo, v.nic, f"{kind}.nic", ("nic",)), _plane(topo, v.plane, f"{kind}.plane"), v.rate)
    elif kind in ("link_down", "link_up"):
        args = _cable(topo, v, kind)
    else:
        value = {"link_loss": "rate", "link_rate": "gbps", "link_latency": "us"}[kind]
        args = (*_cable(topo, v.link, f"{kind}.link"), getattr(v, value))
    return Event(spec.at_us, kind, args, path)


def cabled(topo: T.Topology, a: str, b: str) -> bool:
    x, y = sorted((topo.device(a), topo.device(b)), key=lambda d: ("nic", "t0", "t1").index(d.kind))
    if x.kind == "nic" and y.kind == "t0":
        return x.index // topo.hosts_per_t0 == y.index
    return x.kind == "t0" and y.kind == "t1" and x.plane == y.plane
