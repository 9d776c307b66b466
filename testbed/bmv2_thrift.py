"""BMv2's runtime over Thrift, for what P4Runtime on PI cannot do
(register writes and resets).

Calls go through BMv2's own Python bindings (`bm_runtime`, installed with
BMv2, never copied here) so that a failure is the server's exception with
its error code, not a line of CLI text to search. The bindings are found
on this interpreter's path, in $BMV2_PYTHONPATH, or in the site-packages
next to simple_switch_grpc's install prefix; the `thrift` package comes
with the project's `test` extra.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any


def _candidates(binary: str | None) -> list[Path]:
    out = [Path(p) for p in os.environ.get("BMV2_PYTHONPATH", "").split(os.pathsep) if p]
    if binary:
        prefix = Path(binary).resolve().parent.parent
        out += sorted(prefix.glob("lib/python3*/site-packages")) + sorted(prefix.glob("lib/python3*/dist-packages"))
    return out


@functools.cache
def unavailable(server: str | None) -> str | None:
    """Why the Thrift runtime cannot be used from this interpreter, or None.
    `server`: the simple_switch_grpc binary, whose install prefix holds the
    bindings."""
    try:
        importlib.import_module("thrift")
    except ImportError:
        return (f"the Python 'thrift' package is missing in {sys.executable} "
                "(pip install -e '.[test]'): BMv2 registers are set over Thrift")
    try:
        importlib.import_module("bm_runtime.standard.Standard")
        return None
    except ImportError:
        pass
    for path in _candidates(server):
        if (path / "bm_runtime" / "standard" / "Standard.py").is_file():
            # That folder ships a google/__init__.py (PI's google.rpc): a
            # regular package there would hide protobuf's namespace package
            # `google` from every later import, so protobuf comes in first.
            importlib.import_module("google.protobuf")
            sys.path.append(str(path))
            importlib.invalidate_caches()
            return None
    env = os.environ.get("BMV2_PYTHONPATH")
    where = [f"$BMV2_PYTHONPATH ({env})" if env else "$BMV2_PYTHONPATH (unset)"]
    where.append(f"{Path(server).resolve().parent.parent}/lib/python3*/site-packages" if server
                 else "simple_switch_grpc's install prefix (simple_switch_grpc not found)")
    return (f"BMv2's Python Thrift bindings (bm_runtime) not found in this interpreter's path, {', '.join(where)}: "
            "set BMV2_PYTHONPATH to the site-packages where BMv2 installed them")


class ThriftError(RuntimeError):
    pass


class Runtime:
    """One Thrift connection to a simple_switch's standard runtime service."""

    def __init__(self, device: str, port: int, server: str | None, host: str = "127.0.0.1"):
        why = unavailable(server)
        if why:
            raise ThriftError(f"{device}: {why}")
        from bm_runtime.standard import Standard  # found at run time
        from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
        from thrift.transport import TSocket, TTransport

        self.device = device
        self._transport = TTransport.TBufferedTransport(TSocket.TSocket(host, port))
        proto = TMultiplexedProtocol.TMultiplexedProtocol(TBinaryProtocol.TBinaryProtocol(self._transport), "standard")
        self.client: Any = Standard.Client(proto)
        try:
            self._transport.open()
        except Exception as exc:
            raise ThriftError(f"{device}: Thrift runtime at {host}:{port} unreachable: {exc}") from exc
        self._registers: list[str] | None = None

    def close(self) -> None:
        self._transport.close()

    def register(self, name: str) -> str:
        """The device's full name of register `name` (its last component
        is enough when unique), from the JSON the device runs."""
        if self._registers is None:
            config = json.loads(self.client.bm_get_config())
            self._registers = [r["name"] for r in config.get("register_arrays", [])]
        found = [n for n in self._registers if n == name] or [
            n for n in self._registers if n.rsplit(".", 1)[-1] == name
        ]
        if len(found) != 1:
            what = "is ambiguous" if found else "is not in the running program"
            raise ThriftError(
                f"{self.device}: register {name!r} {what} (registers: {', '.join(self._registers) or 'none'})"
            )
        return found[0]

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        from bm_runtime.standard.ttypes import InvalidRegisterOperation, RegisterOperationErrorCode

        try:
            return fn(0, *args)
        except InvalidRegisterOperation as exc:
            code = RegisterOperationErrorCode._VALUES_TO_NAMES.get(exc.code, str(exc.code))
            raise ThriftError(f"{self.device}: {what} refused: {code}") from exc

    def register_write(self, name: str, index: int, value: int) -> None:
        full = self.register(name)
        self._call(f"register_write {full}[{index}] = {value}", self.client.bm_register_write, full, index, value)

    def register_read(self, name: str, index: int) -> int:
        full = self.register(name)
        return int(self._call(f"register_read {full}[{index}]", self.client.bm_register_read, full, index))

    def register_reset(self, name: str) -> None:
        full = self.register(name)
        self._call(f"register_reset {full}", self.client.bm_register_reset, full)
