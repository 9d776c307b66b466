"""A NIC's desired state (DESIGN.md sections 3, 5, 7) as plain data.

Tables stay O(rows + planes + QPs): one carrier template per destination
row, one port per plane, and per QP its slots and peer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from control_plane import addressing as A
from control_plane.topology import Topology
from mrc_wire.constants import ACK_BYTES, EV_HEALTH_SLOTS, NIC_MAX_QPS, NIC_MAX_SLOTS, NOTICE_SESSION, ev_plane

# Re-exported: the NIC's tests and targets name its host port, plane ports and EV slots through the plan.
from mrc_wire.constants import HOST_PORT as HOST_PORT
from mrc_wire.constants import plane_port as plane_port
from mrc_wire.entries import (
    DestRow,
    EvStats,
    NicConfig,
    NoticeSession,
    PlanePort,
    QpEv,
    QpPeer,
)
from mrc_wire.entries import EvSlots as EvSlots
from mrc_wire.entries import SlotEv as SlotEv


@dataclass(frozen=True)
class QpSpec:
    """One QP of this NIC: its number, the peer's QP number, the EVs of
    its rotation (a power of two) and its backup EVs; whether the NIC
    runs its receiver (`offload`: MRC's; the RoCE baseline's receiver is
    its host's), whose SACKs' reverse EV follows the data (`follow`), and
    the payload bytes a SACK is coalesced over."""

    qpn: int
    peer_qpn: int
    evs: tuple[int, ...]
    backups: tuple[int, ...] = ()
    offload: bool = True
    follow: bool = True
    ack_bytes: int = ACK_BYTES
    # The NIC's data plane keeps the slots' health and passes over the
    # unusable ones (at most EV_HEALTH_SLOTS slots), keeping `min_active`;
    # `skip_on_mark`: a SACK's congestion mark skips the EV once.
    health: bool = False
    min_active: int = 1
    skip_on_mark: bool = False


@dataclass
class NicState:
    name: str
    config: NicConfig
    rows: list[DestRow] = field(default_factory=list)
    planes: list[PlanePort] = field(default_factory=list)
    qps: list[QpEv] = field(default_factory=list)
    slots: list[SlotEv] = field(default_factory=list)
    ev_stats: list[EvStats] = field(default_factory=list)
    peers: list[QpPeer] = field(default_factory=list)
    ev_slots: list[EvSlots] = field(default_factory=list)
    notice: NoticeSession = field(default_factory=lambda: NoticeSession(NOTICE_SESSION, HOST_PORT))

    def entries(self) -> list[object]:
        return [*self.rows, *self.planes, *self.qps, *self.slots, *self.ev_stats, *self.peers, *self.ev_slots,
                self.config]


def plane_words(planes: list[int]) -> tuple[int, int, int]:
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


# DestRow entries are the same for every NIC but its own row's: one object
# per (row, same_row), shared by every plan and NIC model that holds them
# (read, never changed), not one per NIC and row (rows x NICs of them).
_DEST_ROWS: dict[tuple[int, bool], DestRow] = {}


def dest_row(row: int, same_row: bool) -> DestRow:
    """The shared DestRow entry of `row`."""
    key = (row, same_row)
    e = _DEST_ROWS.get(key)
    if e is None:
        e = _DEST_ROWS[key] = DestRow(row, same_row)
    return e


def nic_locator(topo: Topology, plane: int, nic: int) -> int:
    row, k = divmod(nic, topo.hosts_per_t0)
    return int(A.carrier(topo, [A.usid(A.TIER_T0, plane, row), A.usid(A.TIER_DL, plane, k)]))


def nic_state(topo: Topology, nic: int, qps: list[QpSpec] = ()) -> NicState:  # type: ignore[assignment]
    if not 0 <= nic < topo.nics:
        raise ValueError(f"NIC {nic} is not in topology {topo.name!r} ({topo.nics} NICs)")
    row, k = divmod(nic, topo.hosts_per_t0)
    d = topo.dscp
    cfg = NicConfig(
        A.block_int(topo), row, int(A.nic_address(topo, nic)), d["control"], d["trimmed"], d["trimmed_lasthop"]
    )
    st = NicState(A.nic_name(nic), cfg)
    st.rows = [dest_row(r, r == row) for r in range(topo.t0_per_plane)]
    for p in range(topo.planes):
        t0 = A.usid(A.TIER_T0, p, row)
        st.planes.append(PlanePort(p, plane_port(p), nic_locator(topo, p, nic), A.nic_mac(p, nic),
                                   A.switch_mac(t0, topo.t0_downlink_port(k))))
    if len(qps) > NIC_MAX_QPS:
        raise ValueError(
            f"{st.name}: {len(qps)} QPs do not fit the NIC's {NIC_MAX_QPS} (qp_rotation register, qp_ev table)"
        )
    slots = sum(len(qp.evs) for qp in qps)
    if slots > NIC_MAX_SLOTS:
        raise ValueError(f"{st.name}: {slots} slots do not fit the NIC's slot_ev table ({NIC_MAX_SLOTS})")
    base = 0
    for index, qp in enumerate(qps):
        n = len(qp.evs)
        if n == 0 or n & (n - 1):
            raise ValueError(f"QP {qp.qpn}: {n} EVs, not a power of two")
        # Outgoing packets name the peer's QP in BTH.dqpn: that is the key.
        if qp.health and n > EV_HEALTH_SLOTS:
            raise ValueError(f"QP {qp.qpn}: health in the data plane covers {EV_HEALTH_SLOTS} slots, "
                             f"not its {n} EVs")
        st.qps.append(QpEv(qp.peer_qpn, index, base, n - 1, qp.health, qp.min_active,
                           plane_words([ev_plane(ev) for ev in qp.evs]) if qp.health else (0, 0, 0)))
        st.slots += [SlotEv(base + i, ev) for i, ev in enumerate(qp.evs)]
        st.peers.append(QpPeer(qp.qpn, qp.peer_qpn, index, qp.offload, qp.follow, qp.ack_bytes, qp.health,
                               qp.health and qp.skip_on_mark))
        if qp.health:
            st.ev_slots += ev_slot_entries(index, qp.evs)
        base += n
    evs = sorted({ev for qp in qps for ev in (*qp.evs, *qp.backups)})
    st.ev_stats = [EvStats(ev) for ev in evs]
    return st
