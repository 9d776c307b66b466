"""Small scenarios for the timed-fabric checks, built in code."""

from __future__ import annotations

from typing import Any

from fabric_sim import scenario

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
