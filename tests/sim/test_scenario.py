"""Scenario files: every mistake is an error that names its field."""

from __future__ import annotations

import pytest

from fabric_sim import scenario
from fabric_sim.scenario import ScenarioError
from tests.sim.helpers import SMALL

BASE = {"topology": SMALL, "workload": {"pattern": "permutation", "message_bytes": 1000}}


def err(doc) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        scenario.parse(doc)
    return info.value


@pytest.mark.parametrize("patch, path, words", [
    ({"workload": {"pattern": "shuffle", "message_bytes": 1}}, "workload.pattern", "not one of"),
    ({"workload": {"pattern": "permutation"}}, "workload.message_bytes", "missing"),
    ({"workload": {"pattern": "incast", "message_bytes": 1, "fan_in": 16}}, "workload.fan_in", "outside"),
    ({"links": {"nic_gbps": "fast"}}, "links.nic_gbps", "expected a number"),
    ({"links": {"speed": 1}}, "links.speed", "unknown key"),
    ({"transports": [{"kind": "mrc", "evs_per_qp": 48}]}, "transports[0].evs_per_qp", "power of two"),
    ({"transports": [{"kind": "roce"}]}, "transports[0].kind", "not one of"),
    ({"transports": [{"kind": "mrc"}, {"kind": "mrc"}]}, "transports[1].name", "used twice"),
    ({"events": [{"at_us": 1, "link_down": ["t0-p0-r0", "t0-p0-r1"]}]}, "events[0].link_down", "no cable"),
    ({"events": [{"at_us": 1, "switch_down": "t1-p9-s0"}]}, "events[0].switch_down", "not a device"),
    ({"events": [{"at_us": 1, "switch_down": "nic-3"}]}, "events[0].switch_down", "is a nic"),
    ({"events": [{"at_us": 1, "plane_down": 4}]}, "events[0].plane_down", "plane 0..3"),
    ({"events": [{"plane_down": 1}]}, "events[0].at_us", "missing"),
    ({"events": [{"at_us": 1, "plane_down": 1, "plane_up": 1}]}, "events[0]", "exactly one"),
    ({"events": [{"at_us": 1, "link_loss": {"link": ["nic-0", "t0-p0-r0"], "rate": 2}}]},
     "events[0].link_loss.rate", "outside"),
    ({"topology": {**SMALL, "planes": 9}}, "topology.planes", "outside"),
    ({"topology": "missing-file.yaml"}, "topology", "cannot read"),
])
def test_errors_name_the_field(patch, path, words):
    e = err({**BASE, **patch})
    assert e.path == path, str(e)
    assert words in e.reason, str(e)


def test_a_valid_file_with_every_event_kind_parses():
    events = [
        {"at_us": 1, "link_down": ["nic-1", "t0-p2-r0"]}, {"at_us": 2, "link_up": ["t0-p0-r1", "t1-p0-s3"]},
        {"at_us": 3, "switch_down": "t1-p1-s0"}, {"at_us": 4, "switch_up": "t0-p3-r3"},
        {"at_us": 5, "plane_down": 3}, {"at_us": 6, "plane_up": 3},
        {"at_us": 7, "nic_port_down": {"nic": "nic-15", "plane": 0}}, {"at_us": 8, "nic_port_up": {"nic": "nic-15", "plane": 0}},
        {"at_us": 9, "link_loss": {"link": ["t0-p0-r0", "t1-p0-s0"], "rate": 0.01}},
        {"at_us": 10, "link_rate": {"link": ["t0-p0-r0", "t1-p0-s0"], "gbps": 25}},
        {"at_us": 11, "link_latency": {"link": ["t0-p0-r0", "t1-p0-s0"], "us": 2}},
    ]
    sc = scenario.parse({**BASE, "events": events})
    assert [e.kind for e in sc.events] == [next(k for k in e if k != "at_us") for e in events]
    assert sc.events[9].args == ("t0-p0-r0", "t1-p0-s0", 25)


def test_the_shipped_scenarios_load():
    from control_plane.pipelines import REPO

    for path in sorted((REPO / "scenarios").glob("*.yaml")):
        assert scenario.load(path).transports, path
