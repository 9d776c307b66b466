"""A NIC's desired state (DESIGN.md sections 3, 5, 7) as plain data.

Tables stay O(rows + planes + QPs): one carrier template per destination
row, one port per plane, and per QP its slots and peer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from control_plane import addressing as A
from control_plane.topology import Topology

# Re-exported: the NIC's tests and targets name its host port, plane ports and EV slots through the plan.
from mrc_wire.constants import HOST_PORT as HOST_PORT
from mrc_wire.constants import NOTICE_SESSION
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

# Re-exported: a NIC planned with its QPs takes them as their hosts create them.
from mrc_wire.pcie import QpCreate as QpCreate
from mrc_wire.qp_table import QpTable
from mrc_wire.qp_table import ev_slot_entries as ev_slot_entries


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


def nic_state(topo: Topology, nic: int, qps: Sequence[QpCreate] = ()) -> NicState:
    """NIC `nic`'s tables: its identity, a template per destination row, a
    port per plane, the notice clone session; and, for a NIC planned with
    its QPs (the packet suites' NICs), each QP's entries as its host would
    create them (mrc_wire.qp_table, the one place a QP's index and slots
    are worked out)."""
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
    table = QpTable(st.name)
    for qp in qps:
        e = table.create(qp)
        st.qps.append(e.qp_ev)
        st.slots += e.slots
        st.ev_stats += e.ev_stats
        st.peers.append(e.peer)
        st.ev_slots += e.ev_slots
    return st
