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
