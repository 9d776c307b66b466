"""The declarative topology file (YAML) and its validation.

Every error names the field path and the reason, and is raised before
anything touches a device. The format is documented in docs/topology.md.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from annotated_types import GroupedMetadata
from pydantic import BeforeValidator, Field, PlainValidator, StrictInt, ValidationInfo, model_validator

from control_plane import grpc_address
from control_plane import tls as tls_settings
from control_plane.config import ConfigError, Int, Model, Name, Num, read_mapping, short, validate
from mrc_wire.constants import (
    CONGESTION_DEFAULTS,
    DSCP_DEFAULTS,
    ECN_THRESHOLD,
    MAX_PORTS,
    MIN_TRIM_BYTES,
    UNROUTABLE_PREFIXES,
    plane_port,
)
from mrc_wire.ids import DeviceId

MAX_PLANES = 8  # plane is 3 bits of a uSID
MAX_INDEX = 2**11  # index is 11 bits of a uSID
# Address classes the switch never forwards: no prefix of ours may touch them.
UNROUTABLE = {name: ipaddress.IPv6Network(net) for name, net in UNROUTABLE_PREFIXES.items()}


TopologyError = ConfigError  # the old name: callers catch it


@dataclass(frozen=True)
class Device:
    """Where one device's P4Runtime server listens."""

    name: str
    grpc_addr: str
    device_id: int
    # Logical port (the topology's numbering) -> the device's own port (a
    # Tofino device port, say); empty: the same numbers.
    port_map: dict[int, int] = field(default_factory=dict)
    tls: tls_settings.TlsSettings | None = None  # None: plaintext (control_plane/tls.py)


DEPTH_MAX = 2**19 - 1  # a queue depth in the switch program (19 bits)


class EcnStepProfile(Model):
    """A class marked from `threshold` packets queued (a step)."""

    threshold: Annotated[int, Int(0, DEPTH_MAX, "queue depth (packets) from which the class is ECN-marked")]


class EcnRampProfile(Model):
    """A class marked by WRED: probability 0 up to `kmin` packets queued,
    rising linearly to `pmax` at `kmax`, 1 above (DESIGN.md section 4)."""

    kmin: Annotated[int, Int(0, DEPTH_MAX - 1, "packets queued up to which nothing is marked")]
    kmax: Annotated[int, Int(1, DEPTH_MAX, "packets queued at which the probability reaches pmax; 1 above")]
    pmax: Annotated[float, Num(0, 1, "marking probability at kmax (to 1/65536)", above=True)]

    @model_validator(mode="after")
    def _ordered(self) -> EcnRampProfile:
        if self.kmin >= self.kmax:
            raise ConfigError("kmax", f"{self.kmax} is not above kmin {self.kmin}")
        return self


def _ecn_profile(raw: Any) -> EcnStepProfile | EcnRampProfile:
    """A step ({threshold}) or a WRED ramp ({kmin, kmax, pmax}), told apart by its keys."""
    if isinstance(raw, EcnStepProfile | EcnRampProfile):
        return raw
    if isinstance(raw, dict) and "threshold" in raw:
        return validate(EcnStepProfile, raw)
    if isinstance(raw, dict) and raw.keys() & {"kmin", "kmax", "pmax"}:
        return validate(EcnRampProfile, raw)
    raise ConfigError("", f"expected {{threshold}} (a step) or {{kmin, kmax, pmax}} (WRED), got {short(raw)}")


EcnProfileField = Annotated[EcnStepProfile | EcnRampProfile,
                            BeforeValidator(_ecn_profile, json_schema_input_type=EcnStepProfile | EcnRampProfile)]


class Congestion(Model):
    ecn_threshold: Annotated[int, Int(0, 2**19 - 1, "queue depth (packets) from which data is ECN-marked")] = \
        ECN_THRESHOLD
    trim_threshold: Annotated[int, Int(0, 2**19 - 1, "queue depth (packets) from which trimmable data is trimmed")] = \
        CONGESTION_DEFAULTS["trim_threshold"]
    trim_bytes: Annotated[int, Int(MIN_TRIM_BYTES, 9000, "bytes a trimmed packet keeps")] = \
        CONGESTION_DEFAULTS["trim_bytes"]
    ecn_profiles: dict[Literal["normal", "trimmable", "priority"], EcnProfileField] = Field(
        default_factory=dict, description="a marking profile per switch class (normal: data not trimmed, as "
        "RoCE's; trimmable: MRC's data; priority: control and trimmed stubs), as switch queues are configured "
        "per class; a class without one is marked from ecn_threshold")


DscpValue = Annotated[int, Int(0, 63)]


# The DSCP of each traffic class; defaults from mrc_wire.constants (no docstring: the schemas keep theirs).
class Dscp(Model):
    control: DscpValue = DSCP_DEFAULTS["control"]
    data_trimmable: DscpValue = DSCP_DEFAULTS["data_trimmable"]
    data_no_trim: DscpValue = DSCP_DEFAULTS["data_no_trim"]
    data_trimmable_retx: DscpValue = DSCP_DEFAULTS["data_trimmable_retx"]
    trimmed: DscpValue = DSCP_DEFAULTS["trimmed"]
    trimmed_lasthop: DscpValue = DSCP_DEFAULTS["trimmed_lasthop"]


assert set(Dscp.model_fields) == set(DSCP_DEFAULTS), "a class of mrc_wire's DSCP_DEFAULTS without its field"


@dataclass(frozen=True)
class _Prefix(GroupedMetadata):
    """A /plen IPv6 prefix outside every class the switches drop:
    `Annotated[ipaddress.IPv6Network, _Prefix(plen)]`."""

    plen: int

    def __iter__(self) -> Iterator[object]:
        yield PlainValidator(_prefix(self.plen), json_schema_input_type=str)


def _prefix(plen: int) -> Callable[[Any], ipaddress.IPv6Network]:
    def check(raw: Any) -> ipaddress.IPv6Network:
        if isinstance(raw, ipaddress.IPv6Network):
            return raw
        if not isinstance(raw, str):
            raise ConfigError("", f"not an IPv6 prefix: {short(raw)}")
        try:
            net = ipaddress.IPv6Network(raw)
        except ValueError as exc:
            raise ConfigError("", f"not an IPv6 prefix: {exc}") from None
        if net.prefixlen != plen:
            raise ConfigError("", f"must be a /{plen}, got /{net.prefixlen}")
        for name, cls in UNROUTABLE.items():
            if net.overlaps(cls):
                raise ConfigError("", f"{net} overlaps {cls} ({name}): switches drop those addresses")
        return net
    return check


class DeviceEntry(Model):
    """One entry of `devices` as the file writes it."""

    name: Name
    grpc: str = Field(description="host:port of the device's P4Runtime server")
    device_id: Annotated[int, Int(0, 2**64 - 1)] = 1
    port_map: dict[StrictInt, StrictInt] | None = Field(None, description="logical port -> device port (switches)")
    # checked by tls.load, which names each file's fault (TlsFile is the format)
    tls: Annotated[Any, BeforeValidator(lambda v: v, json_schema_input_type=tls_settings.TlsFile | None)] = None


def _dscp(raw: Any) -> dict[str, int]:
    """Every class's DSCP (defaults filled in), no value used twice."""
    d = validate(Dscp, {} if raw is None else raw).model_dump()
    seen: dict[int, str] = {}
    errors = []
    for cls, value in d.items():
        if value in seen:
            errors.append((cls, f"value {value} is already used by dscp.{seen[value]}"))
        seen.setdefault(value, cls)
    if errors:
        raise ConfigError.of(errors)
    return d


def _devices(raw: Any, info: ValidationInfo) -> dict[str, Device]:
    """The `devices` list, checked against the topology's own fields."""
    if isinstance(raw, dict) and all(isinstance(d, Device) for d in raw.values()):
        return raw  # already built (a copy of a checked topology); a file's mapping is refused below
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise ConfigError("", "expected a list")
    shape: dict[str, Any] = {k: info.data.get(k) for k in ("name", "planes", "t0_per_plane", "t1_per_plane",
                                                            "hosts_per_t0")}
    if None in shape.values():
        return {}  # the sizes have errors of their own; devices cannot be placed
    topo = Topology.model_construct(**shape)
    base = (info.context or {}).get("base", Path("."))
    devices: dict[str, Device] = {}
    addrs: dict[tuple[tuple[str, int], int], str] = {}
    errors: list[tuple[str, str]] = []
    for i, item in enumerate(raw):
        try:
            e = validate(DeviceEntry, item)
        except ConfigError as exc:
            errors += exc.prefixed(f"[{i}]").errors
            continue
        errors += [(f"[{i}].{p}", r) for p, r in _device_errors(e, topo, devices, addrs)]
        if not errors:
            try:
                port_map = _port_map(e.port_map, f"[{i}].port_map", topo, topo.device(e.name))
                # named in full: a TLS error may name another field (the cert of a key)
                tls = tls_settings.load(item["tls"], f"devices[{i}].tls", base) if e.tls is not None else None
            except ConfigError as exc:
                errors += [(p.removeprefix("devices"), r) for p, r in exc.errors]
                continue
            devices[e.name] = Device(name=e.name, grpc_addr=e.grpc, device_id=e.device_id, port_map=port_map,
                                     tls=tls)
    if errors:
        raise ConfigError.of(errors)
    return devices


def _device_errors(e: DeviceEntry, topo: Topology, devices: dict[str, Device],
                   addrs: dict[tuple[tuple[str, int], int], str]) -> list[tuple[str, str]]:
    try:
        topo.device(e.name)
    except ValueError as exc:
        return [("name", str(exc))]
    if e.name in devices:
        return [("name", f"{e.name!r} is listed twice")]
    try:
        where = grpc_address.parse(e.grpc)
    except ValueError as exc:
        return [("grpc", str(exc))]
    key = where.key, e.device_id
    if key in addrs:  # one server, one device id: the second would take the first's tables
        return [("grpc", f"{e.grpc} device {e.device_id} is already used by {addrs[key]} "
                         f"({e.name} and {addrs[key]} would be the same device)")]
    addrs[key] = e.name
    return []


def _port_map(raw: Any, path: str, topo: Topology, dev: DeviceId) -> dict[int, int]:
    """A complete, one-to-one map of the switch's logical ports to device ports."""
    if raw is None:
        return {}
    if not dev.is_switch:
        raise ConfigError(path, "only a switch takes a port map (a NIC's ports are fixed)")
    ports = topo.switch_ports(dev)
    out: dict[int, int] = {}
    used: dict[int, int] = {}
    for logical, device_port in raw.items():
        if logical not in ports:
            raise ConfigError(path, f"{logical!r} is not a port of {dev} (ports {ports.start}..{ports.stop - 1})")
        if not 0 <= device_port < MAX_PORTS:
            raise ConfigError(f"{path}.{logical}", f"expected a device port 0..{MAX_PORTS - 1}, got {device_port!r}")
        if device_port in used:
            raise ConfigError(f"{path}.{logical}", f"device port {device_port} is also port {used[device_port]}'s")
        used[device_port] = logical
        out[logical] = device_port
    missing = [p for p in ports if p not in out]
    if missing:
        raise ConfigError(path, f"logical ports {missing} are not mapped (a port map names every port)")
    return out


class Topology(Model):
    name: Name = "unnamed"
    planes: Annotated[int, Int(1, MAX_PLANES)]
    t0_per_plane: Annotated[int, Int(1, MAX_INDEX)]
    t1_per_plane: Annotated[int, Int(1, MAX_INDEX)]
    hosts_per_t0: Annotated[int, Int(1, MAX_INDEX)]
    usid_block: Annotated[ipaddress.IPv6Network, _Prefix(32)] = ipaddress.IPv6Network("fcbb:bb00::/32")
    nic_prefix: Annotated[ipaddress.IPv6Network, _Prefix(64)] = ipaddress.IPv6Network("fd00:0:0:1::/64")
    congestion: Congestion = Congestion()
    switching: Literal["store_and_forward", "cut_through"] = Field(
        "store_and_forward", description="how the timed fabric's switches forward: cut_through sends a frame on "
        "as it arrives when its ingress and egress run at one speed and the egress is idle (store-and-forward "
        "otherwise), as the paper's clusters' switches do")
    dscp: Annotated[dict[str, int], BeforeValidator(_dscp, json_schema_input_type=Dscp)] = Dscp().model_dump()
    devices: Annotated[dict[str, Device], BeforeValidator(_devices, json_schema_input_type=list[DeviceEntry])] = {}

    @model_validator(mode="after")
    def _fits(self) -> Topology:
        errors = []
        if self.hosts_per_t0 + self.t1_per_plane > MAX_PORTS:
            errors.append(("hosts_per_t0", f"a T0 needs {self.hosts_per_t0} + {self.t1_per_plane} ports, "
                                           f"over {MAX_PORTS}"))
        if self.t0_per_plane > MAX_PORTS:
            errors.append(("t0_per_plane", f"a T1 needs {self.t0_per_plane} ports, over {MAX_PORTS}"))
        if self.nic_prefix.overlaps(self.usid_block):
            errors.append(("nic_prefix", f"{self.nic_prefix} is inside usid_block {self.usid_block}: "
                                         "NIC addresses and uSIDs are separate (DESIGN.md section 3)"))
        if errors:
            raise ConfigError.of(errors)
        return self

    # T0 port numbering: downlink k is port k, uplink j is port H + j.
    def t0_downlink_port(self, k: int) -> int:
        return k

    def t0_uplink_port(self, j: int) -> int:
        return self.hosts_per_t0 + j

    # T1 port numbering: downlink r is port r.
    def t1_downlink_port(self, r: int) -> int:
        return r

    @property
    def nics(self) -> int:
        return self.t0_per_plane * self.hosts_per_t0

    @property
    def switches(self) -> int:
        return self.planes * (self.t0_per_plane + self.t1_per_plane)

    def cables(self) -> Iterator[tuple[DeviceId, int, DeviceId, int, int]]:
        """Every cable once: (device a, its port, device b, its port, plane).
        NIC n, plane p: NIC port plane_port(p) to T0(p, row) downlink n mod H;
        T0(p, r) uplink j to T1(p, j) downlink r (DESIGN.md section 2)."""
        H = self.hosts_per_t0
        for p in range(self.planes):
            for r in range(self.t0_per_plane):
                t0 = DeviceId("t0", p, r)
                for k in range(H):
                    yield DeviceId("nic", 0, r * H + k), plane_port(p), t0, self.t0_downlink_port(k), p
                for j in range(self.t1_per_plane):
                    yield t0, self.t0_uplink_port(j), DeviceId("t1", p, j), self.t1_downlink_port(r), p

    def peer(self, dev: DeviceId, port: int) -> tuple[DeviceId, int]:
        """The device and port at the other end of `port` of `dev` (a switch:
        a NIC's port names a plane, which plane_port gives)."""
        H = self.hosts_per_t0
        if dev.kind == "t1":
            return DeviceId("t0", dev.plane, port), self.t0_uplink_port(dev.index)
        if dev.kind == "t0" and port < H:
            return DeviceId("nic", 0, dev.index * H + port), plane_port(dev.plane)
        if dev.kind == "t0":
            return DeviceId("t1", dev.plane, port - H), self.t1_downlink_port(dev.index)
        plane = port - plane_port(0)
        row, k = divmod(dev.index, H)
        return DeviceId("t0", plane, row), self.t0_downlink_port(k)

    def path_cables(self, src: int, dst: int, plane: int, spine: int) -> list[tuple[DeviceId, DeviceId]]:
        """The cables a path from NIC src to NIC dst crosses (no spine within a row)."""
        ra, rb = src // self.hosts_per_t0, dst // self.hosts_per_t0
        a, b = DeviceId("t0", plane, ra), DeviceId("t0", plane, rb)
        hops = [(DeviceId("nic", 0, src), a), (DeviceId("nic", 0, dst), b)]
        if ra != rb:
            t1 = DeviceId("t1", plane, spine)
            hops += [(a, t1), (b, t1)]
        return hops

    def switch_ports(self, dev: DeviceId) -> range:
        """The logical ports of a switch."""
        if dev.kind == "t0":
            return range(self.hosts_per_t0 + self.t1_per_plane)
        return range(self.t0_per_plane)

    def has(self, dev: DeviceId) -> bool:
        """Whether `dev` is a device of this topology."""
        if dev.kind == "nic":
            return dev.index < self.nics
        limit = self.t0_per_plane if dev.kind == "t0" else self.t1_per_plane
        return dev.plane < self.planes and dev.index < limit

    def device(self, name: str) -> DeviceId:
        """The id of device `name`; ValueError naming it if it is not one."""
        dev = DeviceId.parse(name)
        if not self.has(dev):
            raise ValueError(f"{name!r} is not a device of topology {self.name!r}")
        return dev


def parse(data: Any, source: str = "<topology>") -> Topology:
    """Validate a topology loaded from YAML; ConfigError with every mistake.
    Relative TLS file paths are taken from `source`'s folder."""
    return validate(Topology, data, base=Path(source).parent)


def load(path: str | Path) -> Topology:
    return parse(read_mapping(path), str(path))
