"""Plan entries (mrc_wire.entries dataclasses) to finsy P4Runtime entities, and
the checks that a P4Info has what the plan needs."""

from __future__ import annotations

from collections.abc import Iterable

import finsy as fy

from mrc_wire import entries as E

# Tables the switch plan owns: reconcile reads and diffs exactly these.
SWITCH_TABLES = ("my_usid", "usid_route", "port_neighbour", "dscp_class", "ecn_profile")
SWITCH_DEFAULTS = ("congestion_config",)
NIC_TABLES = ("dest_row", "plane_port", "qp_ev", "slot_ev", "ev_stats", "qp_peer", "ev_slots")
NIC_DEFAULTS = ("nic_config",)
# What mrcctl reconciles on a NIC: the tables the topology decides. The QP
# tables (qp_ev, slot_ev, ev_stats, qp_peer) belong to EV control at run
# time, so an install never deletes a live QP.
NIC_STATIC_TABLES = ("dest_row", "plane_port")
LO64 = (1 << 64) - 1  # the NIC program keeps IPv6 addresses as 64-bit halves


class P4InfoMismatch(ValueError):
    """The P4Info lacks a table, action or field that the plan needs."""


def to_p4(entry: object) -> fy.P4TableEntry:  # noqa: C901 (one flat case per entry type: the table's whole map)
    match entry:
        case E.MyUsid(locator):
            return fy.P4TableEntry("my_usid", match=fy.Match(locator=locator), action=fy.Action("usid_end"))
        case E.UsidRoute(locator, port):
            return fy.P4TableEntry(
                "usid_route", match=fy.Match(locator=locator), action=fy.Action("set_port", port=port)
            )
        case E.PortNeighbour(port, src, dst, host):
            return fy.P4TableEntry(
                "port_neighbour",
                match=fy.Match(port=port),
                action=fy.Action("set_neighbour", src_mac=src, dst_mac=dst, host_facing=int(host)),
            )
        case E.DscpClass(dscp, cls):
            return fy.P4TableEntry("dscp_class", match=fy.Match(dscp=dscp), action=fy.Action("set_class", cls=cls))
        case E.EcnStep(cls, threshold):
            return fy.P4TableEntry("ecn_profile", match=fy.Match(cls=cls),
                                   action=fy.Action("ecn_step", threshold=threshold))
        case E.EcnRamp(cls, kmin, kmax, pmax):
            return fy.P4TableEntry("ecn_profile", match=fy.Match(cls=cls),
                                   action=fy.Action("ecn_ramp", kmin=kmin, kmax=kmax, pmax=pmax))
        case E.CongestionConfig(ecn, trim, nbytes, dt, dtl):
            return fy.P4TableEntry(
                "congestion_config",
                is_default_action=True,
                action=fy.Action(
                    "set_congestion",
                    ecn_threshold=ecn,
                    trim_threshold=trim,
                    trim_bytes=nbytes,
                    dscp_trimmed=dt,
                    dscp_trimmed_lasthop=dtl,
                ),
            )
        case E.NicConfig(block, row, addr, dc, dt, dtl):
            return fy.P4TableEntry(
                "nic_config",
                is_default_action=True,
                action=fy.Action("set_nic", block=block, my_row=row, my_addr_hi=addr >> 64, my_addr_lo=addr & LO64,
                                 dscp_control=dc, dscp_trimmed=dt, dscp_trimmed_lasthop=dtl),
            )
        case E.DestRow(row, same):
            return fy.P4TableEntry(
                "dest_row", match=fy.Match(row=row), action=fy.Action("set_row", same_row=int(same), row=row)
            )
        case E.PlanePort(plane, port, src, smac, dmac):
            return fy.P4TableEntry("plane_port", match=fy.Match(plane=plane),
                                   action=fy.Action("set_plane", port=port, src_hi=src >> 64, src_lo=src & LO64,
                                                    src_mac=smac, dst_mac=dmac))
        case E.QpEv(qpn, index, base, mask, health, min_active, (b0, b1, b2)):
            return fy.P4TableEntry(
                "qp_ev", match=fy.Match(qpn=qpn),
                action=fy.Action("set_qp", qp_index=index, base=base, mask=mask, health=int(health),
                                 min_active=min_active, plane_bit0=b0, plane_bit1=b1, plane_bit2=b2))
        case E.EvSlots(index, ev, slots):
            return fy.P4TableEntry("ev_slots", match=fy.Match(qp_index=index, ev=ev),
                                   action=fy.Action("set_slots", slots=slots))
        case E.SlotEv(slot, ev):
            return fy.P4TableEntry("slot_ev", match=fy.Match(slot=slot), action=fy.Action("set_ev", ev=ev))
        case E.EvStats(ev):
            return fy.P4TableEntry("ev_stats", match=fy.Match(ev=ev), action=fy.Action("count_ev"))
        case E.QpPeer(qpn, peer, index, offload, follow, ack_bytes, health, skip_on_mark):
            return fy.P4TableEntry("qp_peer", match=fy.Match(qpn=qpn), action=fy.Action(
                "set_peer", qpn=peer, qp_index=index, offload=int(offload), follow=int(follow), ack_bytes=ack_bytes,
                health=int(health), skip_on_mark=int(skip_on_mark)))
    raise TypeError(f"no P4 table for {entry!r}")


def notice_session(session: E.NoticeSession) -> fy.P4CloneSessionEntry:
    return fy.P4CloneSessionEntry(session.session, replicas=[(session.port, 1)])


def check_schema(schema: fy.P4Schema, entities: Iterable[fy.P4TableEntry]) -> None:
    """Encode every entity once; name what the P4Info lacks if one fails."""
    seen: set[tuple[str, str]] = set()
    for ent in entities:
        action = ent.action.name if isinstance(ent.action, fy.P4TableAction) else ""
        if (ent.table_id, action) in seen:
            continue
        seen.add((ent.table_id, action))
        try:
            ent.encode(schema)
        except Exception as exc:  # finsy raises ValueError/KeyError subtypes
            raise P4InfoMismatch(
                f"P4Info {schema.name or '?'} cannot hold table {ent.table_id!r} action {action!r}: {exc}"
            ) from None
