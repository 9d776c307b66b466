"""The packet suites against a P4Runtime device that is already running (a
lab's switch, or a BMv2 someone else started), instead of a BMv2 the suite
starts itself.

The suite connects as primary, reads what the program's tables hold,
installs its planned entries through our controller (ports translated to
the device's numbers), runs, and writes the tables back as it found them.
Ports follow ptf's conventions: `--interface [device-]port@iface` (the ptf
port is the topology's logical port, the device port is the same number),
or a JSON port map as fabric-tna's PTF uses, a list of
{"ptf_port": 0, "p4_port": 128, "iface_name": "eth1"}.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from copy import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from control_plane import installer
from control_plane import nic_plan as N
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane.config import MAX_FILE_BYTES, ConfigError, read_regular
from control_plane.counters import EGRESS_CONGESTION_DROPS
from control_plane.pipelines import artifacts
from control_plane.session import Session
from control_plane.tls import TlsSettings
from control_plane.topology import Device
from testbed.settle import Settler, nic_progress, switch_progress
from testbed.targets import NicCounters, P4RuntimeTarget, SwitchCounters

_IFACE = re.compile(r"^(?:(\d+)-)?(\d+)@([^\s;]+)$")


class RemoteConfigError(ValueError):
    """A bad remote-target option: the message names the option and the value."""


@dataclass(frozen=True)
class RemoteDevice:
    addr: str
    device_id: int = 1
    push: bool = False  # push our compiled pipeline, or use the one loaded
    p4info: Path | None = None  # default: the program's committed P4Info
    blob: Path | None = None  # default: the program's committed BMv2 JSON (push only)
    ports: dict[int, tuple[int, str]] = field(default_factory=dict)  # ptf port -> (device port, iface)
    tls: TlsSettings | None = None  # None: plaintext

    def program_files(self, program: str) -> tuple[Path, Path | None]:
        p4info, blob = artifacts(program)
        return self.p4info or p4info, (self.blob or blob) if self.push else None

    def device_ports(self, ports: Sequence[int], suite: str) -> dict[int, int]:
        """Logical (ptf) port -> the device's port, for every port a suite
        sends on; an error naming those without an interface."""
        missing = [p for p in ports if p not in self.ports]
        if missing:
            raise RemoteConfigError(f"--interface/--port-map: the {suite} suite sends on ports {list(ports)}; "
                                    f"ports {missing} have no interface")
        return {p: self.ports[p][0] for p in ports}


def parse_interface(value: str) -> tuple[int, str]:
    """ptf's `port@iface` or `device-port@iface` (device must be 0)."""
    m = _IFACE.match(value.strip())
    if m is None:
        raise RemoteConfigError(f"--interface {value!r}: expected port@iface or 0-port@iface (ptf's form)")
    if m.group(1) not in (None, "0"):
        raise RemoteConfigError(f"--interface {value!r}: the suites drive one device, ptf device 0")
    return int(m.group(2)), m.group(3)


def load_port_map(path: Path) -> dict[int, tuple[int, str]]:
    """A fabric-tna style port map: [{"ptf_port", "p4_port", "iface_name"}]."""
    try:
        raw = read_regular(Path(path), MAX_FILE_BYTES, f"--port-map {path}")  # a FIFO is refused, not waited on
        if len(raw) > MAX_FILE_BYTES:
            raise RemoteConfigError(f"--port-map {path}: larger than {MAX_FILE_BYTES >> 20} MiB: not a port map")
        rows = json.loads(raw)
    except ConfigError as exc:
        raise RemoteConfigError(exc.lines()[0]) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RemoteConfigError(f"--port-map {path}: {exc}") from None
    if not isinstance(rows, list):
        raise RemoteConfigError(f"--port-map {path}: expected a JSON list of port entries")
    out: dict[int, tuple[int, str]] = {}
    for i, row in enumerate(rows):
        where = f"--port-map {path}: entry [{i}]"
        if not isinstance(row, dict):
            raise RemoteConfigError(f"{where}: expected an object")
        for key, kind in (("ptf_port", int), ("p4_port", int), ("iface_name", str)):
            if not isinstance(row.get(key), kind) or isinstance(row.get(key), bool):
                raise RemoteConfigError(f"{where}.{key}: expected {kind.__name__}, got {row.get(key)!r}")
        if row["ptf_port"] in out:
            raise RemoteConfigError(f"{where}.ptf_port: {row['ptf_port']} is listed twice")
        out[row["ptf_port"]] = (row["p4_port"], row["iface_name"])
    return out


class RemoteTarget(P4RuntimeTarget):
    """A running device: connect, snapshot, install the plan; restore on close."""

    name = "remote"

    def __init__(self, remote: RemoteDevice, name: str, program: str, ports: list[int],
                 entries: list[Any], tables: Sequence[str], defaults: Sequence[str], extra: Sequence[Any] = ()):
        self.port_map = remote.device_ports(ports, program)
        p4info, blob = remote.program_files(program)
        device = Device(name, remote.addr, remote.device_id, tls=remote.tls)
        session = Session(device, p4info, blob, loaded=not remote.push)
        try:
            self.found = session.snapshot(tables, defaults)
            # PRE entries (the NIC's notice clone session): modify what is
            # there, insert what is not; close() puts back or deletes.
            self.found_extra = [session.run(installer.read_clone_session(session.switch, e.session_id))
                                for e in extra]
            self.extra = list(extra)
            desired = [P.to_p4(e) for e in entries]
            session.reconcile(desired, tables, defaults)
            pairs = zip(extra, self.found_extra, strict=True)
            session.write([(~copy(e) if old is not None else +copy(e)) for e, old in pairs])
            super().__init__(session, {p: remote.ports[p][1] for p in ports}, ports, desired, tables, defaults)
        except BaseException:
            session.close()
            raise

    def dev_port(self, port: int) -> int:
        return self.port_map[port]

    def close(self) -> None:
        """Leave the device as found: the tables back to the snapshot."""
        try:
            self.session.reconcile(self.found, self.tables, self.defaults)
            undo = [~old if old is not None else -copy(e) for e, old in zip(self.extra, self.found_extra, strict=True)]
            if undo:
                self.session.write(undo)
        finally:
            super().close()

    def set_qdepth(self, port: int, depth: int) -> None:
        raise NotImplementedError("setting a queue depth needs BMv2's Thrift register write "
                                  "(PI has no P4Runtime register writes): not available on a remote device")


def _counts_every_frame(session: Session, counters: Sequence[str]) -> bool:
    """Whether the loaded program is the BMv2 build of ours, whose counters
    account for every frame in ingress and egress (testbed/settle.py): then
    checks wait on them. Tofino's switch drops in egress too (counted
    apart), other NIC tops have no egress counter: ptf's timeouts there."""
    known = session.switch.p4info.counters  # P4EntityMap: `in` does not look names up, get() does
    return all(known.get(c) is not None for c in counters) and known.get(EGRESS_CONGESTION_DROPS) is None


class SwitchRemoteTarget(SwitchCounters, RemoteTarget):
    def __init__(self, remote: RemoteDevice, state: S.SwitchState, ports: list[int]):
        super().__init__(remote, state.name, "switch", ports,
                         S.map_ports(state.entries(), remote.device_ports(ports, "switch")),
                         P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        self.state = state
        if _counts_every_frame(self.session, ("port_rx", "port_tx", "port_drop")):
            dev_ports = [self.dev_port(p) for p in ports]
            self.settler = Settler(state.name, lambda: switch_progress(self.session, dev_ports), self.received)

    def reset(self) -> None:
        super().reset()
        self.restore_tables()
        self.set_congestion(self.state.congestion)


class NicRemoteTarget(NicCounters, RemoteTarget):
    def __init__(self, remote: RemoteDevice, state: N.NicState, ports: list[int]):
        for p in ports:  # the NIC program's ports are constants (HOST_PORT, plane ports)
            if p in remote.ports and remote.ports[p][0] != p:
                raise RemoteConfigError(f"--port-map: NIC port {p} must be device port {p} "
                                        f"(the NIC program fixes its ports), got {remote.ports[p][0]}")
        super().__init__(remote, state.name, "nic", ports, state.entries(), P.NIC_TABLES, P.NIC_DEFAULTS,
                         [P.notice_session(state.notice)])
        self.state = state
        if _counts_every_frame(self.session, ("nic_events", "nic_drops", "nic_port_tx")):
            self.settler = Settler(state.name, lambda: nic_progress(self.session, ports), self.received)

    def reset(self) -> None:
        super().reset()
        self.session.reconcile(self.desired, self.tables, self.defaults)

