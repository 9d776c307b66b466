"""Start and stop BMv2 simple_switch_grpc instances on veth pairs.

Each switch port p is a veth pair: the switch side is given to BMv2, the
other side ("host side") is where tests and the demo send and receive.
gRPC listens on loopback only. IPv6 is disabled on both sides so the
kernel adds no traffic of its own.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from testbed import bmv2_thrift, netdev, process, toolchain

if TYPE_CHECKING:  # finsy only when BMv2 is used
    import finsy as fy

    from control_plane.session import Session

_ids = itertools.count()


@dataclass(frozen=True)
class ServerTls:
    """simple_switch_grpc's TLS: its certificate and key, and the CA its
    clients' certificates must chain to (required when `client_auth`)."""

    cert: Path
    key: Path
    client_ca: Path | None = None
    client_auth: bool = True

    def args(self) -> list[str]:
        out = ["--grpc-server-ssl", "--grpc-server-cert", str(self.cert), "--grpc-server-key", str(self.key)]
        if self.client_ca:
            out += ["--grpc-server-cacert", str(self.client_ca)]
        if self.client_auth:
            out.append("--grpc-server-with-client-auth")
        return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def make_veth(a: str, b: str) -> None:
    netdev.delete([a])
    netdev.ip("link", "add", "name", a, "type", "veth", "peer", "name", b)
    for dev in (a, b):
        netdev.ipv6_off(dev)
        netdev.ip("link", "set", dev, "mtu", "9000", "up")


@dataclass
class Bmv2Switch:
    """One simple_switch_grpc process with `ports` on veth pairs."""

    name: str
    ports: list[int]
    device_id: int = 1
    workdir: Path = Path("/tmp/mrc-bmv2")
    priority_queues: int = 8
    log: bool = True  # per-packet log file (slow: benchmarks turn it off)
    tls: ServerTls | None = None  # None: plaintext gRPC
    grpc_port: int = 0
    thrift_port: int = 0
    tag: str = field(default_factory=lambda: f"m{os.getpid() % 10000}x{next(_ids)}")
    proc: subprocess.Popen[bytes] | None = None
    _runtime: bmv2_thrift.Runtime | None = field(default=None, repr=False)

    @property
    def grpc_addr(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def switch_iface(self, port: int) -> str:
        return f"{self.tag}s{port}"

    def host_iface(self, port: int) -> str:
        return f"{self.tag}h{port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def start(self, timeout: float = 20.0) -> None:
        binary = toolchain.simple_switch_grpc()
        reason = toolchain.bmv2_unavailable()
        if reason or binary is None:
            raise RuntimeError(reason or "simple_switch_grpc not found")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.grpc_port = self.grpc_port or free_port()
        self.thrift_port = self.thrift_port or free_port()
        for p in self.ports:
            make_veth(self.switch_iface(p), self.host_iface(p))
        cmd = [binary, "--device-id", str(self.device_id), "--no-p4", "--thrift-port", str(self.thrift_port)]
        if self.log:
            cmd += ["--log-file", str(self.workdir / f"{self.name}-bmv2"), "--log-flush"]
        for p in self.ports:
            cmd += ["-i", f"{p}@{self.switch_iface(p)}"]
        cmd += ["--", "--grpc-server-addr", self.grpc_addr, "--priority-queues", str(self.priority_queues)]
        cmd += self.tls.args() if self.tls else []
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"{self.name}: simple_switch_grpc exited: {self.log_tail()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.grpc_port)) == 0:
                    return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name}: gRPC did not open on {self.grpc_addr} in {timeout:g} s")

    def runtime(self) -> bmv2_thrift.Runtime:
        """BMv2's Thrift runtime (for what P4Runtime on PI cannot do, such as
        register writes), connected on first use; failures raise ThriftError."""
        if self._runtime is None:
            self._runtime = bmv2_thrift.Runtime(self.name, self.thrift_port, toolchain.simple_switch_grpc())
        return self._runtime

    def log_tail(self, lines: int = 20) -> str:
        return process.log_tail(self.log_path, lines)

    def stop(self) -> None:
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None
        process.end(self.proc, 5)
        self.proc = None
        netdev.delete([self.switch_iface(p) for p in self.ports])

    def __enter__(self) -> Bmv2Switch:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_with_tables(name: str, ports: list[int], program: str, desired: Sequence[fy.P4TableEntry],
                      tables: Sequence[str], defaults: Sequence[str],
                      extra: Sequence[fy.P4CloneSessionEntry] = (), log: bool = True) -> tuple[Bmv2Switch, Session]:
    """The one start sequence: simple_switch_grpc on veth pairs, a primary
    P4Runtime session that pushes `program`, a reconcile of `desired`
    (finsy entities) into the tables the plan owns, then `extra` inserts
    (clone sessions). Returns (switch, session); stops the switch if any
    step fails."""
    from control_plane.session import Session  # finsy only when BMv2 is used
    from control_plane.topology import Device

    dev = Bmv2Switch(name, ports, log=log)
    dev.start()
    try:
        p4info, blob = toolchain.artifacts(program)
        session = Session(Device(name, dev.grpc_addr, dev.device_id), p4info, blob)
        try:
            session.reconcile(desired, tables, defaults)
            if extra:
                session.write([+e for e in extra])
        except BaseException:
            session.close()
            raise
    except BaseException:
        dev.stop()
        raise
    return dev, session
