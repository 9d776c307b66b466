"""Small scenarios for the timed-fabric checks, built in code."""

from __future__ import annotations

from typing import Any

from fabric_sim import scenario
from mrc_wire.frame import HDRS, Frame

SMALL = {"planes": 4, "t0_per_plane": 4, "t1_per_plane": 4, "hosts_per_t0": 4}


def make(workload: dict[str, Any], transports: list[dict[str, Any]] | None = None, events: list[dict] = (),
         topology: dict[str, Any] | None = None, **top: Any) -> scenario.Scenario:
    doc = {"name": "test", "seed": 3, "topology": topology or dict(SMALL), "workload": workload,
           "transports": transports or [{"name": "mrc", "kind": "mrc", "evs_per_qp": 16}],
           "events": list(events), "duration_us": 3000, "bins": 300, **top}
    return scenario.parse(doc)


def exactly_once(r) -> bool:
    """Every message delivered and, by the ledger (not the driver's own
    counter), every posted byte placed exactly once and nothing else placed;
    the driver's count of parts delivered twice agrees."""
    v = r.ledger
    assert v is not None, "the run kept no ledger"
    assert v.exactly_once and v.placed == v.posted, f"{r.transport.name}: {v.problems}"
    return r.complete and r.events["delivered_twice"] == 0


def sized(size: int, tag: int = 0) -> Frame:
    """A frame of `size` bytes on the wire (its headers carried, the rest
    as zeros not carried), its Ethernet header filled with `tag`: for the
    link checks, which look only at sizes and which frame arrived."""
    return Frame(bytes([tag]) * 14, 0, 0, size - HDRS, 0, 64, bytes(16), bytes(16), b"", size - HDRS)
