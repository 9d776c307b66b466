"""control_plane.counters against finsy's real P4Info (P4Schema) of the
committed programs, with a session that answers reads from canned counter
entries: which counters are read depends on what the P4Info names."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import finsy as fy
import pytest

from control_plane.counters import EGRESS_CONGESTION_DROPS, read_drops
from testbed import tofino, toolchain

CONGESTION = 6  # drop_reason_t.CONGESTION


class CannedSession:
    """Answers P4Runtime reads from canned cells; refuses a counter its
    P4Info does not have, as a device would."""

    def __init__(self, p4info: fy.P4Schema, drop_stats: dict[int, int], egress_drops: dict[int, int]):
        self.switch = SimpleNamespace(p4info=p4info)
        self.drop_stats, self.egress_drops = drop_stats, egress_drops
        self.counters_read: list[str] = []

    def read(self, entities: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for ent in entities:
            if isinstance(ent, fy.P4DirectCounterEntry):
                out += [fy.P4DirectCounterEntry(table_entry=fy.P4TableEntry("drop_stats", match=fy.Match(reason=r)),
                                                data=fy.P4CounterData(packet_count=n))
                        for r, n in self.drop_stats.items()]
            else:
                self.switch.p4info.counters[ent.counter_id]  # raises where the program has no such counter
                self.counters_read.append(ent.counter_id)
                out += [fy.P4CounterEntry(ent.counter_id, index=i, data=fy.P4CounterData(packet_count=n))
                        for i, n in self.egress_drops.items()]
        return out


def test_tofino_adds_the_egress_congestion_drops_of_every_port():
    schema = fy.P4Schema(tofino.p4info_path())
    session = CannedSession(schema, {CONGESTION: 3, 3: 2}, {5: 4, 9: 1})
    drops = read_drops(session)
    assert session.counters_read == [EGRESS_CONGESTION_DROPS]
    assert drops["congestion"] == 3 + 4 + 1
    assert drops["no_route"] == 2
    assert sum(drops.values()) == 10


def test_bmv2_has_no_egress_congestion_counter_and_does_not_read_one():
    schema = fy.P4Schema(toolchain.artifacts("switch")[0])
    with pytest.raises(ValueError, match="no P4Counter named"):
        schema.counters[EGRESS_CONGESTION_DROPS]
    session = CannedSession(schema, {CONGESTION: 3}, {5: 4})
    drops = read_drops(session)
    assert session.counters_read == []
    assert drops["congestion"] == 3
    assert sum(drops.values()) == 3
