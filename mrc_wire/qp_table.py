"""A NIC's QPs as its driver keeps them: the one place a QP's index, its
slot range and the numbering between the host's QP and its peer's are
worked out (the reference model, the BMv2 NIC and the planner all use it).

`QpTable.create` takes what the host asks for (mrc_wire.pcie.QpCreate)
and gives the entries the QP puts in the NIC's tables (DESIGN.md section
5): qp_ev (keyed by the peer's QP number, as the host's packets name it),
its slots in slot_ev, qp_peer (keyed by the host's number), ev_slots for
path health and ev_stats per EV. Indices and slot ranges are the first
free ones, so QPs created in order get the indices and ranges a static
plan gives them.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

from mrc_wire.constants import EV_HEALTH_SLOTS, NIC_MAX_QPS, NIC_MAX_SLOTS, ev_plane
from mrc_wire.entries import EvSlots, EvStats, QpEv, QpPeer, SlotEv
from mrc_wire.pcie import QpCreate


def plane_words(planes: Sequence[int]) -> tuple[int, int, int]:
    """The three plane-bit words of a rotation whose slot s is on plane
    planes[s] (bit s of word k: bit k of that plane): what the data plane
    reads to find a plane's slots."""
    b0 = b1 = b2 = 0
    for s, p in enumerate(planes):
        b0 |= (p & 1) << s
        b1 |= (p >> 1 & 1) << s
        b2 |= (p >> 2 & 1) << s
    return b0, b1, b2


def ev_slot_entries(qp_index: int, slots: Sequence[int]) -> list[EvSlots]:
    """ev_slots of a QP whose slot s holds slots[s]: each EV's slot bits."""
    bits: dict[int, int] = {}
    for s, ev in enumerate(slots):
        bits[ev] = bits.get(ev, 0) | 1 << s
    return [EvSlots(qp_index, ev, b) for ev, b in bits.items()]


@dataclass(frozen=True, slots=True)
class QpPlace:
    """Where a QP sits in its NIC: all the table keeps of it (its entries
    are worked out from this when asked, so a NIC of many QPs holds no
    copy of what its tables hold)."""

    spec: QpCreate
    index: int
    base: int

    @property
    def n(self) -> int:
        return len(self.spec.evs)


@dataclass
class QpEntries:
    """What one QP holds in its NIC's tables."""

    place: QpPlace
    qp_ev: QpEv
    peer: QpPeer
    slots: list[SlotEv]
    ev_slots: list[EvSlots]  # empty without health
    ev_stats: list[EvStats] = field(default_factory=list)  # its EVs no other QP counts

    @property
    def spec(self) -> QpCreate:
        return self.place.spec

    @property
    def index(self) -> int:
        return self.place.index

    @property
    def base(self) -> int:
        return self.place.base

    def entries(self) -> list[object]:
        return [self.qp_ev, *self.slots, *self.ev_stats, self.peer, *self.ev_slots]


def qp_entries(at: QpPlace, ev_stats: list[EvStats]) -> QpEntries:
    """The table entries of the QP at `at` (DESIGN.md section 5)."""
    qp, index, base, n = at.spec, at.index, at.base, at.n
    planes = plane_words([ev_plane(ev) for ev in qp.evs]) if qp.health else (0, 0, 0)
    return QpEntries(at, QpEv(qp.peer_qpn, index, base, n - 1, qp.health, qp.min_active, planes),
                     QpPeer(qp.qpn, qp.peer_qpn, index, qp.offload, qp.follow, qp.ack_bytes, qp.health,
                            qp.health and qp.skip_on_mark),
                     [SlotEv(base + i, ev) for i, ev in enumerate(qp.evs)],
                     ev_slot_entries(index, qp.evs) if qp.health else [], ev_stats)


class QpTable:
    """The QPs of one NIC. `name` names the NIC in errors."""

    def __init__(self, name: str = "nic", max_qps: int = NIC_MAX_QPS, max_slots: int = NIC_MAX_SLOTS):
        self.name, self.max_qps, self.max_slots = name, max_qps, max_slots
        self.qps: dict[int, QpPlace] = {}  # the host's QP number -> where it sits
        self._local: dict[int, int] = {}  # the peer's QP number -> the host's
        self._counted: dict[int, int] = {}  # EV -> QPs counting it in ev_stats
        self._freed: list[int] = []  # QP indices given back, lowest first (a heap)
        self._next_index = 0  # every index from here on is free
        self._top = 0  # every slot from here on is free
        self._used = 0  # slots held by the QPs
        self._by_index: dict[int, int] = {}  # QP index -> the host's QP number

    def create(self, qp: QpCreate) -> QpEntries:
        """Allocate `qp` (ValueError, naming it, if it cannot be)."""
        n = len(qp.evs)
        what = f"{self.name}: QP {qp.qpn}"
        if qp.qpn in self.qps:
            raise ValueError(f"{what} exists")
        if qp.peer_qpn in self._local:
            raise ValueError(f"{what}: peer QP {qp.peer_qpn} is QP {self._local[qp.peer_qpn]}'s peer already "
                             "(qp_ev is keyed by the peer's QP number)")
        if n == 0 or n & (n - 1):
            raise ValueError(f"{what}: {n} EVs, not a power of two")
        if qp.health and n > EV_HEALTH_SLOTS:
            raise ValueError(f"{what}: health in the data plane covers {EV_HEALTH_SLOTS} slots, not its {n} EVs")
        if qp.health and not 0 <= qp.min_active <= n:
            raise ValueError(f"{what}: min_active {qp.min_active} is not within 0..{n}")
        index = self._take_index()
        if index is None:
            raise ValueError(f"{what}: the NIC's {self.max_qps} QPs are all in use (qp_rotation register, "
                             "qp_ev table)")
        base = self._free_range(n)
        if base is None:
            self._give_index(index)
            raise ValueError(f"{what}: {n} slots do not fit the NIC's slot_ev table ({self.max_slots}, "
                             f"{self.slots_used()} in use)")
        at = QpPlace(qp, index, base)
        stats = []
        for ev in dict.fromkeys((*qp.evs, *qp.spares)):
            self._counted[ev] = self._counted.get(ev, 0) + 1
            if self._counted[ev] == 1:
                stats.append(EvStats(ev))
        self.qps[qp.qpn] = at
        self._local[qp.peer_qpn] = qp.qpn
        self._by_index[index] = qp.qpn
        self._used += n
        return qp_entries(at, stats)

    def destroy(self, qpn: int) -> QpEntries:
        """Free QP `qpn`; its entries (ev_stats: the EVs no other QP counts any more)."""
        at = self.qps.pop(qpn, None)
        if at is None:
            raise ValueError(f"{self.name}: no QP {qpn}")
        del self._local[at.spec.peer_qpn]
        del self._by_index[at.index]
        self._give_index(at.index)
        self._used -= at.n
        if at.base + at.n == self._top:
            self._top = max((q.base + q.n for q in self.qps.values()), default=0)
        stats = []
        for ev in dict.fromkeys((*at.spec.evs, *at.spec.spares)):
            self._counted[ev] -= 1
            if not self._counted[ev]:
                del self._counted[ev]
                stats.append(EvStats(ev))
        return qp_entries(at, stats)

    def get(self, qpn: int) -> QpPlace | None:
        return self.qps.get(qpn)

    def local_of(self, peer_qpn: int) -> int | None:
        """The host's QP whose peer is `peer_qpn` (what its packets name in BTH.dqpn)."""
        return self._local.get(peer_qpn)

    def qpn_of_index(self, index: int) -> int | None:
        """The host's QP at QP index `index` (what the data plane's digests name)."""
        return self._by_index.get(index)

    def slots_used(self) -> int:
        return self._used

    def _take_index(self) -> int | None:
        if self._freed:
            return heapq.heappop(self._freed)
        if self._next_index < self.max_qps:
            self._next_index += 1
            return self._next_index - 1
        return None

    def _give_index(self, index: int) -> None:
        heapq.heappush(self._freed, index)

    def _free_range(self, n: int) -> int | None:
        """The lowest base of `n` free slots in a row (after the last QP's
        range while no QP was destroyed below it: no search)."""
        base = self._top
        if self._top != self._used:  # a hole below
            at = 0
            for lo, hi in sorted((q.base, q.base + q.n) for q in self.qps.values()):
                if lo - at >= n:
                    base = at
                    break
                at = max(at, hi)
        if base + n > self.max_slots:
            return None
        self._top = max(self._top, base + n)
        return base
