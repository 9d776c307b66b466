"""The declarative topology file (YAML) and its validation.

Every error names the field path and the reason, and is raised before
anything touches a device. The format is documented in docs/topology.md.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml

from control_plane import tls as tls_settings
from mrc_wire.constants import (CONGESTION_DEFAULTS, DSCP_DEFAULTS, ECN_THRESHOLD, MAX_PORTS, MIN_TRIM_BYTES,
                                UNROUTABLE_PREFIXES, plane_port)
from mrc_wire.ids import DeviceId

MAX_PLANES = 8  # plane is 3 bits of a uSID
MAX_INDEX = 2**11  # index is 11 bits of a uSID
# Address classes the switch never forwards: no prefix of ours may touch them.
UNROUTABLE = {name: ipaddress.IPv6Network(net) for name, net in UNROUTABLE_PREFIXES.items()}


class TopologyError(ValueError):
    """A bad topology file: `path` names the field, the message the reason."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


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


@dataclass(frozen=True)
class Congestion:
    ecn_threshold: int
    trim_threshold: int
    trim_bytes: int


@dataclass(frozen=True)
class Topology:
    name: str
    planes: int
    t0_per_plane: int
    t1_per_plane: int
    hosts_per_t0: int
    usid_block: ipaddress.IPv6Network
    nic_prefix: ipaddress.IPv6Network
    congestion: Congestion
    dscp: dict[str, int]
    devices: dict[str, Device] = field(default_factory=dict)

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


def _get(data: dict[str, Any], key: str, path: str) -> Any:
    if key not in data:
        raise TopologyError(f"{path}{key}", "missing key")
    return data[key]


def _int(data: dict[str, Any], key: str, path: str, lo: int, hi: int, default: int | None = None) -> int:
    if default is not None and key not in data:
        return default
    value = _get(data, key, path)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TopologyError(f"{path}{key}", f"expected an integer, got {value!r}")
    if not lo <= value <= hi:
        raise TopologyError(f"{path}{key}", f"{value} is outside {lo}..{hi}")
    return value


def _net(data: dict[str, Any], key: str, path: str, default: str, plen: int) -> ipaddress.IPv6Network:
    raw = data.get(key, default)
    try:
        net = ipaddress.IPv6Network(str(raw))
    except ValueError as exc:
        raise TopologyError(f"{path}{key}", f"not an IPv6 prefix: {exc}") from None
    if net.prefixlen != plen:
        raise TopologyError(f"{path}{key}", f"must be a /{plen}, got /{net.prefixlen}")
    for name, cls in UNROUTABLE.items():
        if net.overlaps(cls):
            raise TopologyError(f"{path}{key}", f"{net} overlaps {cls} ({name}): switches drop those addresses")
    return net


def parse(data: Any, source: str = "<topology>") -> Topology:
    """Validate a topology loaded from YAML; raise TopologyError on any fault."""
    if not isinstance(data, dict):
        raise TopologyError(source, "the file must hold a mapping")
    known = {
        "name", "planes", "t0_per_plane", "t1_per_plane", "hosts_per_t0",
        "usid_block", "nic_prefix", "congestion", "dscp", "devices",
    }
    for key in data:
        if key not in known:
            raise TopologyError(str(key), "unknown key")
    planes = _int(data, "planes", "", 1, MAX_PLANES)
    rows = _int(data, "t0_per_plane", "", 1, MAX_INDEX)
    spines = _int(data, "t1_per_plane", "", 1, MAX_INDEX)
    hosts = _int(data, "hosts_per_t0", "", 1, MAX_INDEX)
    if hosts + spines > MAX_PORTS:
        raise TopologyError("hosts_per_t0", f"a T0 needs {hosts} + {spines} ports, over {MAX_PORTS}")
    if rows > MAX_PORTS:
        raise TopologyError("t0_per_plane", f"a T1 needs {rows} ports, over {MAX_PORTS}")
    block = _net(data, "usid_block", "", "fcbb:bb00::/32", 32)
    nic_prefix = _net(data, "nic_prefix", "", "fd00:0:0:1::/64", 64)

    cong_raw = data.get("congestion", {}) or {}
    if not isinstance(cong_raw, dict):
        raise TopologyError("congestion", "expected a mapping")
    for key in cong_raw:
        if key not in CONGESTION_DEFAULTS:
            raise TopologyError(f"congestion.{key}", "unknown key")
    congestion = Congestion(
        ecn_threshold=_int(cong_raw, "ecn_threshold", "congestion.", 0, 2**19 - 1, ECN_THRESHOLD),
        trim_threshold=_int(cong_raw, "trim_threshold", "congestion.", 0, 2**19 - 1, CONGESTION_DEFAULTS["trim_threshold"]),
        trim_bytes=_int(cong_raw, "trim_bytes", "congestion.", MIN_TRIM_BYTES, 9000, CONGESTION_DEFAULTS["trim_bytes"]),
    )

    dscp_raw = data.get("dscp", {}) or {}
    if not isinstance(dscp_raw, dict):
        raise TopologyError("dscp", "expected a mapping")
    for key in dscp_raw:
        if key not in DSCP_DEFAULTS:
            raise TopologyError(f"dscp.{key}", "unknown DSCP class")
    dscp = {k: _int(dscp_raw, k, "dscp.", 0, 63, v) for k, v in DSCP_DEFAULTS.items()}
    seen: dict[int, str] = {}
    for cls, value in dscp.items():
        if value in seen:
            raise TopologyError(f"dscp.{cls}", f"value {value} is already used by dscp.{seen[value]}")
        seen[value] = cls

    topo = Topology(
        name=str(data.get("name", "unnamed")),
        planes=planes,
        t0_per_plane=rows,
        t1_per_plane=spines,
        hosts_per_t0=hosts,
        usid_block=block,
        nic_prefix=nic_prefix,
        congestion=congestion,
        dscp=dscp,
    )
    devices = _parse_devices(data.get("devices", []) or [], topo, Path(source).parent)
    return Topology(**{**topo.__dict__, "devices": devices})


def _parse_devices(raw: Any, topo: Topology, base: Path) -> dict[str, Device]:
    if not isinstance(raw, list):
        raise TopologyError("devices", "expected a list")
    devices: dict[str, Device] = {}
    addrs: dict[tuple[str, int], str] = {}
    for i, item in enumerate(raw):
        path = f"devices[{i}]."
        if not isinstance(item, dict):
            raise TopologyError(f"devices[{i}]", "expected a mapping")
        name = _get(item, "name", path)
        try:
            topo.device(str(name))
        except ValueError as exc:
            raise TopologyError(f"{path}name", str(exc)) from None
        if name in devices:
            raise TopologyError(f"{path}name", f"{name!r} is listed twice")
        grpc = str(_get(item, "grpc", path))
        host, _, port = grpc.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise TopologyError(f"{path}grpc", f"expected host:port, got {grpc!r}")
        device_id = _int(item, "device_id", path, 0, 2**64 - 1, 1)
        key = (grpc, device_id)
        if key in addrs:
            raise TopologyError(f"{path}grpc", f"{grpc} device {device_id} is already used by {addrs[key]}")
        addrs[key] = name
        port_map = _port_map(item.get("port_map"), f"{path}port_map", topo, topo.device(str(name)))
        tls = None
        if item.get("tls") is not None:  # relative paths: from the topology file's folder
            try:
                tls = tls_settings.load(item["tls"], f"{path}tls", base)
            except tls_settings.TlsError as exc:
                raise TopologyError(exc.path, exc.reason) from None
        devices[name] = Device(name=name, grpc_addr=grpc, device_id=device_id, port_map=port_map, tls=tls)
    return devices


def _port_map(raw: Any, path: str, topo: Topology, dev: DeviceId) -> dict[int, int]:
    """A complete, one-to-one map of the switch's logical ports to device ports."""
    if raw is None:
        return {}
    if not dev.is_switch:
        raise TopologyError(path, "only a switch takes a port map (a NIC's ports are fixed)")
    if not isinstance(raw, dict):
        raise TopologyError(path, "expected a mapping of logical port to device port")
    ports = topo.switch_ports(dev)
    out: dict[int, int] = {}
    used: dict[int, int] = {}
    for logical, device_port in raw.items():
        if not isinstance(logical, int) or isinstance(logical, bool) or logical not in ports:
            raise TopologyError(path, f"{logical!r} is not a port of {dev} (ports {ports.start}..{ports.stop - 1})")
        if not isinstance(device_port, int) or isinstance(device_port, bool) or not 0 <= device_port < MAX_PORTS:
            raise TopologyError(f"{path}.{logical}", f"expected a device port 0..{MAX_PORTS - 1}, got {device_port!r}")
        if device_port in used:
            raise TopologyError(f"{path}.{logical}", f"device port {device_port} is also port {used[device_port]}'s")
        used[device_port] = logical
        out[logical] = device_port
    missing = [p for p in ports if p not in out]
    if missing:
        raise TopologyError(path, f"logical ports {missing} are not mapped (a port map names every port)")
    return out


def load(path: str | Path) -> Topology:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise TopologyError(str(path), f"not valid YAML: {exc}") from None
    return parse(data, str(path))
