"""The client side of a live fabric's control socket (testbed/agent.py):
one JSON request a line, its answer a line; a watch streams its events.
What `mrcctl qp`, `mrcctl ev` and `mrcctl port` send."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

from control_plane import grpc_address

DEFAULT = "127.0.0.1:7070"


class AgentError(RuntimeError):
    """The agent refused a request (its reason), or could not be reached."""


class Agent:
    def __init__(self, address: str = DEFAULT, timeout: float = 30.0):
        a = grpc_address.parse(address)
        if a.path:
            raise AgentError(f"--agent {address}: a host:port, not a Unix socket")
        try:
            self.sock = socket.create_connection((a.host, a.port), timeout=timeout)
        except OSError as exc:
            raise AgentError(f"--agent {address}: no live fabric answers there ({exc.strerror or exc}); "
                             "start one with `python -m testbed.live TOPO`") from None
        self.file = self.sock.makefile("rb")

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        """One request; its answer (AgentError with the agent's reason if refused)."""
        self.sock.sendall(json.dumps({"op": op, **fields}).encode() + b"\n")
        out = self._line()
        if not out.get("ok"):
            raise AgentError(str(out.get("error", out)))
        return out

    def events(self) -> Iterator[dict[str, Any]]:
        """The lines a watch streams, as they come."""
        while True:
            yield self._line()["event"]

    def _line(self) -> dict[str, Any]:
        line = self.file.readline()
        if not line:
            raise AgentError("the live fabric closed the connection")
        out = json.loads(line)
        if not isinstance(out, dict):
            raise AgentError(f"not an answer: {line[:80]!r}")
        return out
