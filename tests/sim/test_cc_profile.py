"""`transports[].cc` (fabric_sim/scenario/cc_profile.py): NSCC by default with its
defaults scaled to the fabric, the OCP fields overriding them, `aimd` as
an option, and every mistake named by its field."""

from __future__ import annotations

import pytest

from fabric_sim import scenario
from fabric_sim.scenario import ScenarioError, cc_profile
from fabric_sim.transports.qps import initial_cc
from mrc_host.cc import Aimd
from mrc_host.nscc import Nscc
from tests.sim.helpers import SMALL

BASE = {"topology": SMALL, "workload": {"pattern": "permutation", "message_bytes": 1000}}


def transport(**cc):
    doc = {**BASE, "transports": [{"kind": "mrc", **({"cc": cc} if cc else {})}]}
    return scenario.parse(doc).transports[0]


@pytest.mark.parametrize("t, path, words", [
    ({"kind": "mrc", "cc": {"profile": "dctcp"}}, "transports[0].cc.profile", "not one of"),
    ({"kind": "mrc", "cc": {"gamma": 2}}, "transports[0].cc.gamma", "outside"),
    ({"kind": "mrc", "cc": {"target_delay": 5}}, "transports[0].cc.target_delay", "unknown key"),
    ({"kind": "mrc", "cc": {"qa_gate": 1.5}}, "transports[0].cc.qa_gate", "an integer"),
    ({"kind": "mrc", "cc": {"profile": "aimd", "fi": 3}}, "transports[0].cc.fi", "profile aimd has none"),
    ({"kind": "roce", "cc": {"profile": "aimd"}}, "transports[0].cc", "DCQCN"),
])
def test_errors_name_the_field(t, path, words):
    with pytest.raises(ScenarioError) as info:
        scenario.parse({**BASE, "transports": [t]})
    assert info.value.path == path and words in info.value.reason


def test_nscc_is_the_default_with_uecs_constants_scaled_to_the_fabric():
    """800 Gb/s NIC, base RTT 6 µs, 4096-byte MTU, 4 flows: a = 800 x 6 / (100 x 12) = 4; the window
    starts at the NIC's BDP (600,000 bytes) over 4 and may reach 1.5 BDPs."""
    cc = initial_cc(transport(), 800.0, 4096, 6.0, 4)
    assert isinstance(cc, Nscc)
    assert cc.cwnd == 150_000 and cc.max_cwnd == 900_000
    assert (cc.cfg.target_delay, cc.cfg.qa_threshold, cc.cfg.gamma) == (4.5, 18.0, 0.8)
    assert cc.cfg.fi == pytest.approx(5 * 4096 * 4)


def test_ocp_fields_override_and_a_target_delay_moves_qa_threshold_with_it():
    t = transport(target_delay_us=3.0, max_cwnd=100_000, gamma=0.5, disable_qa=True)
    cc = initial_cc(t, 800.0, 4096, 6.0, 1)
    assert (cc.cfg.target_delay, cc.cfg.qa_threshold, cc.cfg.gamma, cc.cfg.disable_qa) == (3.0, 12.0, 0.5, True)
    assert cc.max_cwnd == 100_000 and cc.cwnd == 100_000  # the BDP share, 600,000, held at max_cwnd


def test_aimd_keeps_the_earlier_window():
    """A BDP of 600,000 bytes = 146.5 packets of 4096 over 4 flows: 36.6 packets, room to double."""
    cc = initial_cc(transport(profile="aimd"), 800.0, 4096, 6.0, 4)
    assert isinstance(cc, Aimd)
    assert cc.cwnd == pytest.approx(600_000 / 4096 / 4) and cc.max_cwnd == pytest.approx(2 * 600_000 / 4096 / 4)
    assert cc.target_delay == 12.0
    assert transport(profile="aimd").cc == cc_profile.CcProfile(profile=cc_profile.AIMD)


def test_the_nic_scheduler_backlog_defaults_to_8_packets_per_port_and_0_switches_it_off():
    assert scenario.parse(BASE).endpoint.tx_backlog == 8
    assert scenario.parse({**BASE, "endpoint": {"tx_backlog": 0}}).endpoint.tx_backlog == 0
    with pytest.raises(ScenarioError) as info:
        scenario.parse({**BASE, "endpoint": {"tx_backlog": -1}})
    assert info.value.path == "endpoint.tx_backlog"
