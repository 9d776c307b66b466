"""The timed events of a scenario file (`events:`): their format (EventSpec,
one key per kind) and their check against the topology, which gives an
Event of the kind's class; an Event applies itself to a fabric through the
fabric's public methods (Cables, Impairments). Every error names the field
path."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from pydantic import Field, ValidationInfo, model_validator

from control_plane import topology as T
from control_plane.config import ConfigError, Int, Model, Num, validate
from mrc_wire import ids
from mrc_wire.ids import DeviceId

Cable = Annotated[list[str], Field(min_length=2, max_length=2, description="[device, device]")]


class NicPort(Model):
    nic: str
    plane: Annotated[int, Int(0, 7)]


class RxLoss(Model):
    """Every NIC (or one) drops this share of what it receives."""

    rate: Annotated[float, Num(0, 1.0)]
    nic: str | None = None


class EvLoss(Model):
    """A NIC drops this share of what its QPs send on their EVs of one plane."""

    nic: str
    plane: Annotated[int, Int(0, 7)]
    rate: Annotated[float, Num(0, 1.0)]


class LinkLoss(Model):
    link: Cable
    rate: Annotated[float, Num(0, 1.0)]


class LinkRate(Model):
    link: Cable
    gbps: Annotated[float, Num(0, 1e9, "the new rate (a rate of 0 would never send: use link_down)", above=True)]


class LinkLatency(Model):
    link: Cable
    us: Annotated[float, Num(0, 1e9)]


class EventSpec(Model):
    """One event: at_us and exactly one of the kinds."""

    at_us: Annotated[float, Num(0, 1e12)]
    link_down: Cable | None = None
    link_up: Cable | None = None
    switch_down: str | None = None
    switch_up: str | None = None
    plane_down: Annotated[int, Int(0, 7)] | None = None
    plane_up: Annotated[int, Int(0, 7)] | None = None
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


class Cables(Protocol):
    """What a cable event acts on, through its public methods: the timed
    fabric (fabric_sim.runner.faults.TimedTarget) or BMv2's
    (fabric_sim.runner.on_bmv2.Bmv2Fabric)."""

    @property
    def topo(self) -> T.Topology: ...

    def cable_ends(self) -> list[frozenset[DeviceId]]:
        """Every cable of the fabric, as its two devices."""
        ...

    def set_cable(self, a: DeviceId, b: DeviceId, up: bool) -> None:
        """Cut or mend the cable between a and b (a NIC on it learns at once)."""
        ...


class Impairments(Cables, Protocol):
    """What the events only the timed fabric models act on, besides cables."""

    def set_link_loss(self, a: str, b: str, rate: float) -> None: ...

    def set_link_rate(self, a: str, b: str, gbps: float) -> None: ...

    def set_link_latency(self, a: str, b: str, us: float) -> None: ...

    def set_rx_loss(self, nic: int, rate: float) -> None:
        """NIC `nic` drops this share of what it receives."""
        ...

    def set_ev_loss(self, nic: int, plane: int, rate: float) -> None:
        """NIC `nic` drops this share of what its sending QPs send on their EVs of `plane`."""
        ...


@dataclass(frozen=True)
class Event(ABC):
    """One timed event of a scenario, its devices checked, which applies
    itself to a fabric. `kind` and `args` are how results.json, the plots
    and the paper's figures name it (the file's key and its values)."""

    at_us: float
    path: str

    @property
    @abstractmethod
    def kind(self) -> str: ...

    @property
    @abstractmethod
    def args(self) -> tuple[Any, ...]: ...

    @abstractmethod
    def apply(self, target: Impairments) -> None: ...


@dataclass(frozen=True)
class CableEvent(Event):
    """An event that cuts or mends cables: BMv2's relays can too."""

    up: bool

    def apply(self, target: Cables) -> None:
        for a, b in [tuple(key) for key in target.cable_ends() if self.cuts(target.topo, key)]:
            target.set_cable(a, b, self.up)

    def cuts(self, topo: T.Topology, cable: frozenset[DeviceId]) -> bool:
        """Whether `cable` is one of this event's."""
        raise NotImplementedError  # the events that name their cable apply it themselves

    def _name(self, what: str) -> str:
        return f"{what}_up" if self.up else f"{what}_down"


@dataclass(frozen=True)
class LinkEvent(CableEvent):
    a: str
    b: str

    @property
    def kind(self) -> str:
        return self._name("link")

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.a, self.b)

    def apply(self, target: Cables) -> None:
        target.set_cable(target.topo.device(self.a), target.topo.device(self.b), self.up)


@dataclass(frozen=True)
class SwitchEvent(CableEvent):
    switch: str

    @property
    def kind(self) -> str:
        return self._name("switch")

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.switch,)

    def cuts(self, topo: T.Topology, cable: frozenset[DeviceId]) -> bool:
        return topo.device(self.switch) in cable


@dataclass(frozen=True)
class PlaneEvent(CableEvent):
    plane: int

    @property
    def kind(self) -> str:
        return self._name("plane")

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.plane,)

    def cuts(self, topo: T.Topology, cable: frozenset[DeviceId]) -> bool:
        return any(d.plane == self.plane and d.kind != "nic" for d in cable)


@dataclass(frozen=True)
class NicPortEvent(CableEvent):
    nic: str
    plane: int

    @property
    def kind(self) -> str:
        return self._name("nic_port")

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.nic, self.plane)

    def apply(self, target: Cables) -> None:
        topo = target.topo
        nic = topo.device(self.nic)
        target.set_cable(nic, ids.t0(self.plane, nic.index // topo.hosts_per_t0), self.up)


@dataclass(frozen=True)
class LinkLossEvent(Event):
    a: str
    b: str
    rate: float

    @property
    def kind(self) -> str:
        return "link_loss"

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.a, self.b, self.rate)

    def apply(self, target: Impairments) -> None:
        target.set_link_loss(self.a, self.b, self.rate)


@dataclass(frozen=True)
class LinkRateEvent(Event):
    a: str
    b: str
    gbps: float

    @property
    def kind(self) -> str:
        return "link_rate"

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.a, self.b, self.gbps)

    def apply(self, target: Impairments) -> None:
        target.set_link_rate(self.a, self.b, self.gbps)


@dataclass(frozen=True)
class LinkLatencyEvent(Event):
    a: str
    b: str
    us: float

    @property
    def kind(self) -> str:
        return "link_latency"

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.a, self.b, self.us)

    def apply(self, target: Impairments) -> None:
        target.set_link_latency(self.a, self.b, self.us)


@dataclass(frozen=True)
class RxLossEvent(Event):
    """What the paper's inline P4 program at every NIC (or one) drops."""

    rate: float
    nic: str | None

    @property
    def kind(self) -> str:
        return "nic_rx_loss"

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.rate, self.nic)

    def apply(self, target: Impairments) -> None:
        topo = target.topo
        for n in ([topo.device(self.nic).index] if self.nic else range(topo.nics)):
            target.set_rx_loss(n, self.rate)


@dataclass(frozen=True)
class EvLossEvent(Event):
    """The paper's per-EV error injection: the QPs' EVs on one plane, at the sender."""

    nic: str
    plane: int
    rate: float

    @property
    def kind(self) -> str:
        return "ev_loss"

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.nic, self.plane, self.rate)

    def apply(self, target: Impairments) -> None:
        target.set_ev_loss(target.topo.device(self.nic).index, self.plane, self.rate)


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
    v, at, up = getattr(spec, kind), spec.at_us, kind.endswith("_up")
    build: dict[str, Callable[[], Event]] = {
        "link_down": lambda: LinkEvent(at, path, up, *_cable(topo, v, kind)),
        "link_up": lambda: LinkEvent(at, path, up, *_cable(topo, v, kind)),
        "switch_down": lambda: SwitchEvent(at, path, up, device(topo, v, kind, SWITCH_KINDS)),
        "switch_up": lambda: SwitchEvent(at, path, up, device(topo, v, kind, SWITCH_KINDS)),
        "plane_down": lambda: PlaneEvent(at, path, up, _plane(topo, v, kind)),
        "plane_up": lambda: PlaneEvent(at, path, up, _plane(topo, v, kind)),
        "nic_port_down": lambda: NicPortEvent(at, path, up, device(topo, v.nic, f"{kind}.nic", ("nic",)),
                                              _plane(topo, v.plane, f"{kind}.plane")),
        "nic_port_up": lambda: NicPortEvent(at, path, up, device(topo, v.nic, f"{kind}.nic", ("nic",)),
                                            _plane(topo, v.plane, f"{kind}.plane")),
        "link_loss": lambda: LinkLossEvent(at, path, *_cable(topo, v.link, f"{kind}.link"), v.rate),
        "link_rate": lambda: LinkRateEvent(at, path, *_cable(topo, v.link, f"{kind}.link"), v.gbps),
        "link_latency": lambda: LinkLatencyEvent(at, path, *_cable(topo, v.link, f"{kind}.link"), v.us),
        "nic_rx_loss": lambda: RxLossEvent(at, path, v.rate, device(topo, v.nic, f"{kind}.nic", ("nic",))
                                           if v.nic is not None else None),
        "ev_loss": lambda: EvLossEvent(at, path, device(topo, v.nic, f"{kind}.nic", ("nic",)),
                                       _plane(topo, v.plane, f"{kind}.plane"), v.rate),
    }
    return build[kind]()


def cabled(topo: T.Topology, a: str, b: str) -> bool:
    x, y = sorted((topo.device(a), topo.device(b)), key=lambda d: ("nic", "t0", "t1").index(d.kind))
    if x.kind == "nic" and y.kind == "t0":
        return x.index // topo.hosts_per_t0 == y.index
    return x.kind == "t0" and y.kind == "t1" and x.plane == y.plane
