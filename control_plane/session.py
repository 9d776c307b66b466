"""A blocking P4Runtime session to one device, for tests, the demo and the
shell-free tools: a finsy Switch kept open on an event loop in a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

import finsy as fy
from finsy.p4entity import P4Entity

from control_plane import installer
from control_plane.topology import Device

T = TypeVar("T")
E = TypeVar("E", bound=P4Entity)


class Session:
    def __init__(self, device: Device, p4info: Path, p4blob: Path | None = None, *, election_id: int = 10,
                 timeout: float = 10.0, loaded: bool = False):
        self.device = device
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"p4rt-{device.name}", daemon=True)
        self._thread.start()
        self._cm = installer.connect(device, p4info, p4blob, election_id=election_id, timeout=timeout, loaded=loaded)
        try:
            self.switch: fy.Switch = self.run(self._cm.__aenter__())
        except BaseException:
            self._stop_loop()
            raise

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def close(self) -> None:
        try:
            self.run(self._cm.__aexit__(None, None, None))
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Blocking helpers over finsy.
    def reconcile(
        self,
        desired: Sequence[fy.P4TableEntry],
        tables: Sequence[str],
        defaults: Sequence[str],
        batch_size: int = installer.DEFAULT_BATCH,
    ) -> installer.Diff:
        return self.run(installer.reconcile(self.switch, desired, tables, defaults, batch_size=batch_size))

    def verify(
        self, desired: Sequence[fy.P4TableEntry], tables: Sequence[str], defaults: Sequence[str]
    ) -> installer.Diff:
        return self.run(installer.verify(self.switch, desired, tables, defaults))

    def snapshot(self, tables: Sequence[str], defaults: Sequence[str]) -> list[fy.P4TableEntry]:
        """What `tables` (and the default actions of `defaults`) hold now:
        reconcile to it later to leave the device as it was found."""
        return self.run(installer.read_entries(self.switch, tables, defaults))

    def write(self, updates: Sequence[Any]) -> None:
        self.run(self.switch.write(updates))

    def read(self, entities: Sequence[E]) -> list[E]:
        async def collect() -> list[E]:
            return [e async for e in installer.read_each(self.switch, entities)]

        return self.run(collect())

    def counter(self, name: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of one counter cell."""
        [ent] = self.read([fy.P4CounterEntry(name, index=index)])
        data = ent.data
        return (data.packet_count, data.byte_count) if data else (0, 0)
