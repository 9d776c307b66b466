"""EV control over P4Runtime, after the OCP MRC controller API (`mrc_ctl.h`):
a QP's EV profile (nic_model.ev.EvProfile) decides; this module writes what
it decided into the NIC's slot table, one batched Write per change."""

from __future__ import annotations

from collections.abc import Sequence

import finsy as fy

from control_plane import nic_plan as N
from control_plane import p4_entities as P
from control_plane.session import Session


def slot_updates(writes: Sequence[tuple[int, int]], base: int = 0) -> list[fy.P4TableEntry]:
    """MODIFY updates of slot_ev for (slot within the QP, EV) pairs."""
    return [~P.to_p4(N.SlotEv(base + slot, ev)) for slot, ev in writes]


class NicEvControl:
    """Pushes EV retire/restore rewrites of one NIC's QPs to its slot_ev."""

    def __init__(self, session: Session, state: N.NicState):
        self.session = session
        # QP number (local) -> base of its slot range.
        by_peer = {q.qpn: q.base for q in state.qps}
        self.base = {p.qpn: by_peer[p.peer_qpn] for p in state.peers}

    def push(self, qpn: int, writes: Sequence[tuple[int, int]]) -> None:
        if writes:
            self.session.write(slot_updates(writes, self.base[qpn]))
