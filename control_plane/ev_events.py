"""EV events from the NIC's data plane, as the OCP MRC controller API's
EV event (`mrc_ctl.h`: QP, EV, old and new state, reason).

The data plane reports each change it makes to a QP's path health as one
digest (p4src/nic/ev_health.p4, `ev_event_t`; the model's `EvChange`)
naming the QP by its index and the EVs by slot bits or planes. The
controller knows the slot table it wrote, so `expand` turns a digest into
one event per EV. `DigestListener` receives the digests over P4Runtime.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import finsy as fy

from control_plane import nic_plan as N
from control_plane.session import Session
from mrc_wire.constants import (
    EV_REASON_NAMES,
    EV_STATE_NAMES,
    EVR_PORT_STATUS,
    EVS_GOOD,
    EVS_PLANE_DOWN,
    ev_plane,
)
from mrc_wire.entries import EvChange

DIGEST = "ev_event_t"


@dataclass(frozen=True)
class EvEvent:
    """One EV's state change, as mrc_ctl reports it."""

    qpn: int  # the local QP
    ev: int
    old: str  # EV_STATE_NAMES
    new: str
    reason: str  # EV_REASON_NAMES


class SlotView:
    """The controller's view of a NIC's QPs and slots (what it wrote)."""

    def __init__(self, state: N.NicState):
        self.qpn = {p.qp_index: p.qpn for p in state.peers}
        self.range = {q.qp_index: (q.base, q.mask + 1) for q in state.qps}
        self.slots = {s.slot: s.ev for s in state.slots}

    def rewrite(self, writes: Sequence[tuple[int, int]]) -> None:
        self.slots.update(writes)

    def evs(self, qp_index: int, bits: int) -> list[int]:
        """The distinct EVs in the QP's slots `bits`, in slot order."""
        base, n = self.range[qp_index]
        return list(dict.fromkeys(self.slots[base + s] for s in range(n) if bits >> s & 1))

    def on_planes(self, qp_index: int, planes: int) -> list[int]:
        base, n = self.range[qp_index]
        return list(dict.fromkeys(ev for s in range(n) if planes >> ev_plane(ev := self.slots[base + s]) & 1))


def expand(change: EvChange, view: SlotView) -> list[EvEvent]:
    """One digest as mrc_ctl's per-EV events."""
    qpn, reason = view.qpn[change.qp_index], EV_REASON_NAMES[change.reason]
    if change.reason == EVR_PORT_STATUS:
        down, up = EV_STATE_NAMES[EVS_PLANE_DOWN], EV_STATE_NAMES[EVS_GOOD]
        return ([EvEvent(qpn, ev, up, down, reason) for ev in view.on_planes(change.qp_index, change.planes_down)]
                + [EvEvent(qpn, ev, down, up, reason) for ev in view.on_planes(change.qp_index, change.planes_up)])
    old, new = EV_STATE_NAMES[change.old_state], EV_STATE_NAMES[change.new_state]
    evs = [change.ev] if change.ev else view.evs(change.qp_index, change.slots)
    return [EvEvent(qpn, ev, old, new, reason) for ev in evs]


def from_digest(data: dict[str, int]) -> EvChange:
    """A decoded ev_event_t digest member (finsy gives a dict by field name)."""
    return EvChange(data["qp_index"], data["reason"], data["ev"], data["slots"], data["old_state"],
                    data["new_state"], data["planes_down"], data["planes_up"])


class DigestListener:
    """Receives a NIC's EV event digests over a P4Runtime session (it
    enables the digest first) and keeps them until `drain`."""

    def __init__(self, session: Session):
        self.session = session
        self._got: list[EvChange] = []
        self._lock = threading.Lock()
        session.write([+fy.P4DigestEntry(DIGEST, max_list_size=1, max_timeout_ns=0, ack_timeout_ns=1_000_000)])
        self._task = session.run(self._start())

    async def _start(self) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(self._listen())

    async def _listen(self) -> None:
        switch = self.session.switch
        async for digests in switch.read_digests(DIGEST):
            with self._lock:
                self._got += [from_digest(d) for d in digests if isinstance(d, dict)]
            await switch.write([digests.ack()])

    def drain(self) -> list[EvChange]:
        with self._lock:
            out, self._got = self._got, []
        return out

    def close(self) -> None:
        self.session.run(self._cancel())

    async def _cancel(self) -> None:
        self._task.cancel()
