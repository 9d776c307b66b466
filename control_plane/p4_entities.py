"""Plan entries (switch_plan dataclasses) to finsy P4Runtime entities, and
the checks that a P4Info has what the plan needs."""

from __future__ import annotations

from typing import Iterable

import finsy as fy

from control_plane import switch_plan as S

# Tables the switch plan owns: reconcile reads and diffs exactly these.
SWITCH_TABLES = ("my_usid", "usid_route", "port_neighbour", "dscp_class")
SWITCH_DEFAULTS = ("congestion_config",)


class P4InfoMismatch(ValueError):
    """The P4Info lacks a table, action or field that the plan needs."""


def to_p4(entry: object) -> fy.P4TableEntry:
    match entry:
        case S.MyUsid(locator):
            return fy.P4TableEntry("my_usid", match=fy.Match(locator=locator), action=fy.Action("usid_end"))
        case S.UsidRoute(locator, port):
            return fy.P4TableEntry("usid_route", match=fy.Match(locator=locator), action=fy.Action("set_port", port=port))
        case S.PortNeighbour(port, src, dst, host):
            return fy.P4TableEntry(
                "port_neighbour",
                match=fy.Match(port=port),
                action=fy.Action("set_neighbour", src_mac=src, dst_mac=dst, host_facing=int(host)),
            )
        case S.DscpClass(dscp, cls):
            return fy.P4TableEntry("dscp_class", match=fy.Match(dscp=dscp), action=fy.Action("set_class", cls=cls))
        case S.CongestionConfig(ecn, trim, nbytes, dt, dtl):
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
    raise TypeError(f"no P4 table for {entry!r}")


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
