"""EV control over P4Runtime, after the OCP MRC controller API (`mrc_ctl.h`):
a QP's EV profile (mrc_host.ev.EvProfile) decides; this module writes what
it decided into the NIC's slot table, one batched Write per change, and,
for a QP whose data plane keeps path health, ev_slots beside it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import finsy as fy

from control_plane import nic_plan as N
from control_plane import p4_entities as P


class TableWriter(Protocol):
    """Where table updates go: a P4Runtime session, or SWX's CLI (testbed/swx.py)."""

    def write(self, updates: Sequence[fy.P4TableEntry]) -> None: ...


def slot_updates(writes: Sequence[tuple[int, int]], base: int = 0) -> list[fy.P4TableEntry]:
    """MODIFY updates of slot_ev for (slot within the QP, EV) pairs."""
    return [~P.to_p4(N.SlotEv(base + slot, ev)) for slot, ev in writes]


def ev_slot_updates(qp_index: int, before: Sequence[int], after: Sequence[int]) -> list[fy.P4TableEntry]:
    """The ev_slots writes that take a QP's slots from `before` to `after`
    (EV of each slot): deletes of EVs no slot holds any more, modifies of
    those whose slots changed, inserts of new ones (nic_plan.ev_slot_entries)."""
    old = {e.ev: e.slots for e in N.ev_slot_entries(qp_index, before)}
    new = {e.ev: e.slots for e in N.ev_slot_entries(qp_index, after)}
    out = [-P.to_p4(N.EvSlots(qp_index, ev, 0)) for ev in old if ev not in new]
    for ev, bits in new.items():
        if ev not in old:
            out.append(+P.to_p4(N.EvSlots(qp_index, ev, bits)))
        elif old[ev] != bits:
            out.append(~P.to_p4(N.EvSlots(qp_index, ev, bits)))
    return out


def rewrite(qp_index: int, base: int, slots: Sequence[int] | None, writes: Sequence[tuple[int, int]]
            ) -> tuple[list[fy.P4TableEntry], list[int] | None]:
    """The updates that write `writes` (slot within the QP, EV) into a QP's
    slot_ev and, for a QP with path health whose slots hold `slots`, keep
    its ev_slots equal; and its slots after (None without health)."""
    updates = slot_updates(writes, base)
    if slots is None:
        return updates, None
    after = list(slots)
    for slot, ev in writes:
        after[slot] = ev
    return updates + ev_slot_updates(qp_index, slots, after), after


class NicEvControl:
    """Pushes EV retire/restore rewrites of one NIC's QPs to its slot_ev
    (and ev_slots for a QP with path health in the data plane)."""

    def __init__(self, session: TableWriter, state: N.NicState):
        self.session = session
        by_peer = {q.qpn: q for q in state.qps}
        # QP number (local) -> its qp_ev entry (the slot range).
        self.qp = {p.qpn: by_peer[p.peer_qpn] for p in state.peers}
        planned = {s.slot: s.ev for s in state.slots}
        # A health QP's slots as written: what ev_slots is kept equal to.
        self.slots = {qpn: [planned[q.base + i] for i in range(q.mask + 1)]
                      for qpn, q in self.qp.items() if q.health}

    def push(self, qpn: int, writes: Sequence[tuple[int, int]]) -> None:
        if not writes:
            return
        q = self.qp[qpn]
        updates, after = rewrite(q.qp_index, q.base, self.slots.get(qpn), writes)
        if after is not None:
            self.slots[qpn] = after
        self.session.write(updates)

    def push_slots(self, writes: Sequence[tuple[int, int]]) -> None:
        """Rewrites of absolute slots (slot_ev's keys): a health QP's through
        `push` (ev_slots kept beside), the others in one batched Write."""
        for qpn, q in self.qp.items():
            mine = [(s - q.base, ev) for s, ev in writes if q.base <= s <= q.base + q.mask]
            if qpn in self.slots and mine:
                self.push(qpn, mine)
        rest = [(s, ev) for s, ev in writes if not any(
            q.base <= s <= q.base + q.mask for qpn, q in self.qp.items() if qpn in self.slots)]
        if rest:
            self.session.write(slot_updates(rest))


def slot_deletes(state: N.NicState, qpn: int) -> list[fy.P4TableEntry]:
    """Deletes of every slot_ev entry of QP `qpn` (qp_ev's key: the peer's QP number)."""
    [qp] = [q for q in state.qps if q.qpn == qpn]
    return [-P.to_p4(N.SlotEv(s, 0)) for s in range(qp.base, qp.base + qp.mask + 1)]
