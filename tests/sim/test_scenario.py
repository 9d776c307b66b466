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
    ({"transports": [{"kind": "tcp"}]}, "transports[0].kind", "not one of"),
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
    ({"workload": {"pattern": "flows", "message_bytes": 1}}, "workload.flows", "non-empty list"),
    ({"workload": {"pattern": "flows", "message_bytes": 1, "flows": [{"src": "nic-1", "dst": "t0-p0-r0"}]}},
     "workload.flows[0].dst", "is a t0"),
    ({"workload": {"pattern": "flows", "message_bytes": 1, "flows": [{"src": "nic-1", "dst": "nic-2"},
                                                                      {"src": "nic-1", "dst": "nic-2"}]}},
     "workload.flows[1].dst", "has a flow already"),
    ({"workload": {"pattern": "flows", "message_bytes": 1,
                   "flows": [{"src": "nic-1", "dst": "nic-2", "pin": {"plane": 0, "spines": [0, 1, 2]}}]}},
     "workload.flows[0].pin.spines", "power of two"),
    ({"workload": {"pattern": "flows", "message_bytes": 1,
                   "flows": [{"src": "nic-1", "dst": "nic-2", "pin": {"plane": 0, "spines": [9]}}]}},
     "workload.flows[0].pin", "beyond transport mrc"),
    ({"workload": {"pattern": "permutation", "message_bytes": 1, "placement": "random"}}, "workload.placement",
     "not one of"),
    ({"transports": [{"kind": "mrc", "ecn_move": "jump"}]}, "transports[0].ecn_move", "not one of"),
    ({"transports": [{"kind": "mrc", "evs_per_qp": 16, "topology": {**SMALL, "hosts_per_t0": 2}}]},
     "transports[0].topology", "8 NICs"),
    ({"transports": [{"kind": "mrc", "evs_per_qp": 16, "links": {"nic_gbps": -1}}]}, "transports[0].links.nic_gbps",
     "outside"),
    ({"transports": [{"kind": "mrc", "evs_per_qp": 16, "topology": {**SMALL, "planes": 1, "t0_per_plane": 4}}],
      "events": [{"at_us": 1, "plane_down": 2}]}, "events[0].plane_down", "transport mrc's topology"),
    ({"events": [{"at_us": 1, "nic_rx_loss": {"rate": 0.5, "nic": "t1-p0-s0"}}]}, "events[0].nic_rx_loss.nic",
     "is a t1"),
    ({"events": [{"at_us": 1, "ev_loss": {"nic": "nic-0", "plane": 1}}]}, "events[0].ev_loss.rate", "missing"),
    ({"sweep": {"workload.message_bytes": 5}}, "sweep.workload.message_bytes", "non-empty list"),
    ({"sweep": {"workload.nothing.here": [1]}}, "sweep.workload.nothing.here", "workload.nothing is not in the file"),
    ({"sweep": {"workload.message_bytes": [10, "big"]}}, "sweep (workload.message_bytes=big): workload.message_bytes",
     "expected an integer"),
    ({"topology": "missing-file.yaml"}, "topology", "cannot read"),
])
def test_errors_name_the_field(patch, path, words):
    e = err({**BASE, **patch})
    assert e.path == path, str(e)
    assert words in e.reason, str(e)


def test_a_valid_file_with_every_event_kind_parses():
    events = [
        {"at_us": 1, "link_down": ["nic-1", "t0-p2-r0"]},
        {"at_us": 2, "link_up": ["t0-p0-r1", "t1-p0-s3"]},
        {"at_us": 3, "switch_down": "t1-p1-s0"},
        {"at_us": 4, "switch_up": "t0-p3-r3"},
        {"at_us": 5, "plane_down": 3},
        {"at_us": 6, "plane_up": 3},
        {"at_us": 7, "nic_port_down": {"nic": "nic-15", "plane": 0}},
        {"at_us": 8, "nic_port_up": {"nic": "nic-15", "plane": 0}},
        {"at_us": 9, "link_loss": {"link": ["t0-p0-r0", "t1-p0-s0"], "rate": 0.01}},
        {"at_us": 10, "link_rate": {"link": ["t0-p0-r0", "t1-p0-s0"], "gbps": 25}},
        {"at_us": 11, "link_latency": {"link": ["t0-p0-r0", "t1-p0-s0"], "us": 2}},
    ]
    sc = scenario.parse({**BASE, "events": events})
    assert [e.kind for e in sc.events] == [next(k for k in e if k != "at_us") for e in events]
    assert sc.events[9].args == ("t0-p0-r0", "t1-p0-s0", 25)


def test_a_sweep_runs_every_combination_with_dotted_paths():
    doc = {**BASE, "events": [{"at_us": 0, "nic_rx_loss": {"rate": 0}}],
           "sweep": {"workload.message_bytes": [1000, 2000], "events[0].nic_rx_loss.rate": [0, 0.01, 0.1]}}
    runs = scenario.variants(scenario.parse(doc))
    assert [(v["workload.message_bytes"], v["events[0].nic_rx_loss.rate"]) for v, _ in runs] == \
        [(s, r) for s in (1000, 2000) for r in (0, 0.01, 0.1)]
    assert [(sc.workload.message_bytes, sc.events[0].args[0]) for _, sc in runs] == \
        [(s, r) for s in (1000, 2000) for r in (0, 0.01, 0.1)]
    assert scenario.variants(scenario.parse(BASE)) == [({}, scenario.parse(BASE))]


def test_the_shipped_scenarios_load():
    from control_plane.pipelines import REPO

    paths = [p for p in sorted((REPO / "scenarios").rglob("*.yaml")) if "topologies" not in p.parts]
    assert any(p.parent.name == "paper" for p in paths)
    for path in paths:
        assert scenario.load(path).transports, path
