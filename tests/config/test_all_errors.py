"""Every mistake of a file is reported in one run, each with its field path:
one error class for topology, scenario and TLS files."""

from __future__ import annotations

import pytest

from control_plane import config, tls, topology
from fabric_sim import scenario
from tests.sim.helpers import SMALL

BASE = {"topology": SMALL, "workload": {"pattern": "permutation", "message_bytes": 1000}}


def errors(doc) -> list[tuple[str, str]]:
    with pytest.raises(config.ConfigError) as info:
        scenario.parse(doc)
    return info.value.errors


def test_three_mistakes_in_three_sections_are_three_errors():
    doc = {**BASE, "links": {"nic_gbps": "fast"}, "workload": {"pattern": "shuffle", "message_bytes": 1000},
           "transports": [{"kind": "mrc", "evs_per_qp": 0}]}
    assert errors(doc) == [
        ("links.nic_gbps", "expected a number, got 'fast'"),
        (
            "workload.pattern",
            "'shuffle' is not one of 'permutation', 'all_to_all', 'incast', 'ring_allreduce', 'sendrecv', 'flows' "
            "or 'chakra'",
        ),
        ("transports[0].evs_per_qp", "0 is outside 1..65536"),
    ]


def test_three_mistakes_in_one_section_are_three_errors():
    doc = {**BASE, "endpoint": {"mtu": 10, "retry_limit": -1, "acks": 1}}
    assert errors(doc) == [
        ("endpoint.mtu", "10 is outside 64..9000"),
        ("endpoint.retry_limit", "-1 is outside 0..1000"),
        (
            "endpoint.acks",
            "unknown key (expected mtu, rto_us, retry_limit, probe_interval_us, "
            "reorder_window_us, tx_backlog, ack_bytes)",
        ),
    ]


def test_three_mistakes_against_the_topology_are_three_errors():
    doc = {**BASE, "events": [{"at_us": 1, "switch_down": "nic-3"}, {"at_us": 2, "plane_down": 4},
                              {"at_us": 3, "link_down": ["t0-p0-r0", "t0-p0-r1"]}]}
    assert [p for p, _ in errors(doc)] == ["events[0].switch_down", "events[1].plane_down", "events[2].link_down"]


def test_the_topology_reports_every_mistake_too():
    with pytest.raises(topology.TopologyError) as info:
        topology.parse({"planes": 9, "t0_per_plane": 0, "hosts_per_t0": 2, "dscp": {"trimmed": 8}})
    assert [p for p, _ in info.value.errors] == ["planes", "t0_per_plane", "t1_per_plane", "dscp.trimmed"]


def test_one_error_family():
    assert topology.TopologyError is scenario.ScenarioError is tls.TlsError is config.ConfigError
    assert issubclass(config.ConfigError, ValueError)


def test_keyword_construction_and_defaults_written_once():
    t = scenario.Transport(kind="roce")
    assert (t.name, t.evs_per_qp, t.ecn_move) == ("roce", 64, "swap")
    from fabric_sim.net.fabric import LinkConfig

    assert LinkConfig is scenario.Links and scenario.Links().nic_gbps == 100.0
    with pytest.raises(TypeError):
        scenario.Transport("mrc", "mrc")  # the positional form is gone
