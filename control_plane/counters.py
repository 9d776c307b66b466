"""Named counters read from a device, with the names taken from the P4Info.

The switch counts drops in `drop_stats`, a table keyed by the P4 enum
`drop_reason_t`; the NIC in `nic_drops`, a counter indexed by the value of
the P4 enum `nic_drop_reason_t`. The enums' members are in the P4Info's
type_info, so the reasons a device reports are the ones its program
declares, whatever program or target it runs. Names come back lower-case
("no_route").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import finsy as fy

if TYPE_CHECKING:
    from control_plane.session import Session

DROP_ENUM = "drop_reason_t"
DROP_TABLE = "drop_stats"
NIC_DROP_ENUM = "nic_drop_reason_t"
NIC_DROP_COUNTER = "nic_drops"
EGRESS_CONGESTION_DROPS = "congestion_drop"  # Tofino only (switch_tna.p4)


def enum_members(schema: fy.P4Schema, enum: str) -> dict[str, int]:
    """{lower-case member name: value} of a serializable enum in the P4Info."""
    enums = schema.type_info.serializable_enums if schema.type_info else {}
    if enum not in enums:
        raise KeyError(f"P4Info has no serializable enum {enum!r} (has: {', '.join(sorted(enums)) or 'none'})")
    return {name.lower(): value for name, value in enums[enum].members.items()}


def drop_reasons(p4info: Path | fy.P4Schema, enum: str = DROP_ENUM) -> dict[str, int]:
    """{reason: value} of the switch's (or, with NIC_DROP_ENUM, the NIC's) drop enum."""
    schema = p4info if isinstance(p4info, fy.P4Schema) else fy.P4Schema(p4info)
    return enum_members(schema, enum)


def read_drops(session: Session, table: str = DROP_TABLE) -> dict[str, int]:
    """Packets dropped per reason: every reason of the enum, zero included.
    On Tofino congestion drops happen in egress, after the TM, and are
    counted per port in `congestion_drop`: they are added in."""
    reasons = enum_members(session.switch.p4info, DROP_ENUM)
    by_value = {v: name for name, v in reasons.items()}
    out = dict.fromkeys(reasons, 0)
    wildcard = fy.P4DirectCounterEntry(table_entry=fy.P4TableEntry(table))
    for ent in session.read([wildcard]):
        match = ent.table_entry.match if ent.table_entry else None
        if match is None:  # a direct counter is read back with its table entry, key and all
            raise ValueError(f"{table}: a direct counter read back without its entry's key")
        value = match["reason"]
        name = by_value.get(int(value, 0) if isinstance(value, str) else int(value))
        if name is not None and ent.data:
            out[name] += ent.data.packet_count
    # finsy's P4EntityMap iterates over entities, not names: `name in map`
    # is always False there; get() looks the name up.
    if session.switch.p4info.counters.get(EGRESS_CONGESTION_DROPS) is not None:
        out["congestion"] += read_total(session, EGRESS_CONGESTION_DROPS)
    return out


def read_total(session: Session, counter: str) -> int:
    """Packets counted by every cell of an indexed counter (e.g. `trimmed`,
    which the switch keeps per egress port)."""
    return sum(ent.data.packet_count for ent in session.read([fy.P4CounterEntry(counter)]) if ent.data)
