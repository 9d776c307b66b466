"""The NIC's nic_drops counter read at the indices its program declares:
the values of the nic_drop_reason_t enum in the committed NIC P4Info (finsy's
P4Schema), with canned counter cells standing in for the device."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import finsy as fy
import pytest

from testbed import toolchain
from testbed.settle import Progress, nic_progress
from testbed.targets import NicCounters

CELLS = {
    ("nic_events", 0): 3, ("nic_events", 1): 2, ("nic_events", 2): 1,  # tx, rx, nack
    ("nack_reasons", 1): 1,  # the NACK is a trim's: its notice goes to the host too
    ("nic_drops", 0): 1, ("nic_drops", 8): 4,  # malformed, not_for_me
    ("nic_drops", 12): 5,  # no reason has this index: never read
    ("nic_port_tx", 0): 3, ("nic_port_tx", 1): 4,
}


class CannedNic:
    """Answers counter reads from CELLS; refuses a counter the P4Info lacks."""

    def __init__(self) -> None:
        self.switch = SimpleNamespace(p4info=fy.P4Schema(toolchain.artifacts("nic")[0]))
        self.cells_read: list[tuple[str, int]] = []

    def read(self, entities: Sequence[Any]) -> list[Any]:
        out = []
        for e in entities:
            self.switch.p4info.counters[e.counter_id]  # raises for an unknown counter
            self.cells_read.append((e.counter_id, e.index))
            n = CELLS.get((e.counter_id, e.index), 0)
            out.append(fy.P4CounterEntry(e.counter_id, index=e.index, data=fy.P4CounterData(packet_count=n)))
        return out


class Nic(NicCounters):
    def __init__(self, session: CannedNic):
        self.session = session

    def counter(self, name: str, index: int) -> int:
        [ent] = self.session.read([fy.P4CounterEntry(name, index=index)])
        return ent.data.packet_count


def test_nic_progress_counts_the_drops_of_every_declared_reason():
    session = CannedNic()
    assert nic_progress(session, [0, 1]) == Progress(ingress=3 + 2 + 1 + 1 + 4, egress=3 + 4,
                                                     egress_due=(2 + 1) + (3 + 1))
    assert sorted(i for name, i in session.cells_read if name == "nic_drops") == list(range(9))


def test_drop_count_reads_the_reasons_index_from_the_p4info():
    nic = Nic(CannedNic())
    assert (nic.drop_count("malformed"), nic.drop_count("not_for_me"), nic.drop_count("no_ev")) == (1, 4, 0)
    with pytest.raises(KeyError):
        nic.drop_count("no_such_reason")
