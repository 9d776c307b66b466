"""The controller against real BMv2: the demo fabric's 8 switches at once,
verify, tamper and repair, and the bad cases (unreachable device,
mismatched P4Info, lower election id, an update the device rejects)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import finsy as fy
import pytest
import yaml

from control_plane import cli, installer
from control_plane import nic_plan as N
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane.p4_entities import P4InfoMismatch
from control_plane.session import Session
from control_plane.topology import Device
from ptf_tests.conftest import bmv2_skip_reason
from ptf_tests.lib.fabric import DEMO_TOPOLOGY, TOPO
from testbed import toolchain
from testbed.bmv2 import Bmv2Switch, free_port

NAMES = S.switch_names(TOPO)


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    reason = bmv2_skip_reason()
    if reason:
        pytest.skip(f"BMv2: {reason}")
    switches = {n: Bmv2Switch(n, ports=[]) for n in NAMES}
    try:
        for sw in switches.values():
            sw.start()
        data = yaml.safe_load(DEMO_TOPOLOGY.read_text())
        data["devices"] = [{"name": n, "grpc": sw.grpc_addr, "device_id": sw.device_id} for n, sw in switches.items()]
        path = tmp_path_factory.mktemp("fabric") / "demo-bmv2.yaml"
        path.write_text(yaml.safe_dump(data))
        assert cli.main(["install", str(path)]) == 0
        yield path, switches
    finally:
        for sw in switches.values():
            sw.stop()


def _session(switches, name: str, **kw) -> Session:
    sw = switches[name]
    p4info, blob = toolchain.artifacts("switch")
    return Session(Device(name, sw.grpc_addr, sw.device_id), kw.pop("p4info", p4info), None, **kw)


def _desired(name: str):
    return [P.to_p4(e) for e in S.switch_state(TOPO, name).entries()]


def test_install_on_all_switches_then_verify(fabric, capsys):
    path, _ = fabric
    assert cli.main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert all(f"{n}: OK" in out for n in NAMES), out


def test_install_again_writes_nothing(fabric, capsys):
    path, _ = fabric
    assert cli.main(["install", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("0 to insert, 0 to modify, 0 to delete") == len(NAMES), out


def test_tampered_entry_found_by_diff_and_repaired_alone(fabric, capsys):
    path, switches = fabric
    victim = "t1-p1-s0"
    route = S.switch_state(TOPO, victim).routes[1]
    with _session(switches, victim, election_id=20) as s:
        s.write([~P.to_p4(replace(route, port=route.port + 7))])
    capsys.readouterr()
    assert cli.main(["diff", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{victim}: 0 to insert, 1 to modify, 0 to delete" in out
    assert out.count("0 to insert, 0 to modify, 0 to delete") == len(NAMES) - 1
    assert cli.main(["verify", str(path)]) == 1
    assert cli.main(["install", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{victim}: installed (0 to insert, 1 to modify, 0 to delete)" in out
    assert cli.main(["verify", str(path)]) == 0


def test_extra_and_missing_entries_reconciled(fabric):
    _, switches = fabric
    name = "t0-p1-r1"
    desired = _desired(name)
    with _session(switches, name, election_id=20) as s:
        extra = S.UsidRoute(0xFCBBBB00DEAD, 1)
        s.write([+P.to_p4(extra), -desired[2]])
        d = s.verify(desired, P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        assert (len(d.inserts), len(d.modifies), len(d.deletes)) == (1, 0, 1)
        d = s.reconcile(desired, P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        assert (len(d.inserts), len(d.deletes)) == (1, 1)
        assert not s.verify(desired, P.SWITCH_TABLES, P.SWITCH_DEFAULTS)


def test_unreachable_device_named_with_bounded_timeout(fabric, tmp_path, capsys):
    path, _ = fabric
    data = yaml.safe_load(Path(path).read_text())
    data["devices"][0]["grpc"] = f"127.0.0.1:{free_port()}"  # nothing listens there
    bad = tmp_path / "unreachable.yaml"
    bad.write_text(yaml.safe_dump(data))
    start = time.monotonic()
    assert cli.main(["verify", str(bad)]) == 1
    assert time.monotonic() - start < installer.DEFAULT_TIMEOUT + 5
    err = capsys.readouterr().err
    assert f"error: {data['devices'][0]['name']}: unreachable at {data['devices'][0]['grpc']}" in err


def test_p4info_without_the_plans_tables_is_refused(fabric):
    _, switches = fabric
    l2_info, _ = toolchain.artifacts("l2fwd")
    name = "t0-p0-r0"
    with _session(switches, name, p4info=l2_info, election_id=20) as s:
        with pytest.raises(P4InfoMismatch, match="my_usid"):
            s.reconcile(_desired(name), P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
    with _session(switches, name) as s:
        assert not s.verify(_desired(name), P.SWITCH_TABLES, P.SWITCH_DEFAULTS)


def test_lower_election_id_cannot_write(fabric):
    _, switches = fabric
    name = "t0-p0-r1"
    with _session(switches, name, election_id=30):
        with _session(switches, name, election_id=5) as backup:
            assert not backup.switch.is_primary
            with pytest.raises(installer.DeviceError, match="not primary"):
                backup.reconcile(_desired(name), P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
            with pytest.raises(Exception, match="PERMISSION_DENIED|not primary"):
                backup.write([+P.to_p4(S.UsidRoute(0xFCBBBB00BEEF, 1))])


def test_rejected_updates_reported_exactly_and_reconcile_finishes(fabric):
    _, switches = fabric
    name = "t1-p0-s1"
    good = _desired(name)
    # my_usid holds 4 entries: with the planned one, the fourth extra is refused.
    extra = [P.to_p4(S.MyUsid(0xFCBBBB00F000 + i)) for i in range(4)]
    with _session(switches, name, election_id=20) as s:
        with pytest.raises(installer.DeviceError) as info:
            s.reconcile(good + extra, P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        msg = str(info.value)
        assert msg.startswith(f"{name}: partially updated: 3 of 4 inserts applied")
        # BMv2 (PI) reports a full table as UNKNOWN with its own message.
        assert "rejected: update 3 (" in msg and "Error when adding match entry" in msg
        assert msg.endswith("run install again to reconcile")
        d = s.reconcile(good, P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        assert len(d.deletes) == 3
        assert not s.verify(good, P.SWITCH_TABLES, P.SWITCH_DEFAULTS)


def test_nic_devices_get_their_static_tables_and_keep_their_qps(tmp_path, capsys):
    """A NIC in `devices`: install writes its rows, plane ports, config and
    notice clone session; verify says OK; a tampered row is reported and
    repaired; a QP written at run time (EV control's) is never deleted."""
    reason = bmv2_skip_reason("nic")
    if reason:
        pytest.skip(f"BMv2: {reason}")
    with Bmv2Switch("nic-1", ports=[]) as sw:
        data = yaml.safe_load(DEMO_TOPOLOGY.read_text())
        data["devices"] = [{"name": "nic-1", "grpc": sw.grpc_addr, "device_id": sw.device_id}]
        path = tmp_path / "nic.yaml"
        path.write_text(yaml.safe_dump(data))
        assert cli.main(["install", str(path)]) == 0
        assert "nic-1: installed (" in capsys.readouterr().out
        p4info, _ = toolchain.artifacts("nic")
        with Session(Device("nic-1", sw.grpc_addr, sw.device_id), p4info, election_id=20) as s:
            [session] = s.read([fy.P4CloneSessionEntry(N.nic_state(TOPO, 1).notice.session)])
            assert [(r.port, r.instance) for r in session.replicas] == [(N.nic_state(TOPO, 1).notice.port, 1)]
            peer = fy.Action("set_peer", qpn=9, qp_index=0, offload=0, follow=0, ack_bytes=0, health=0, skip_on_mark=0)
            qp = fy.P4TableEntry("qp_peer", match=fy.Match(qpn=7), action=peer)
            s.write([+qp])
            row = [e for e in s.read([fy.P4TableEntry("dest_row")])][0]
            s.write([-row])
        assert cli.main(["verify", str(path)]) == 1
        assert "nic-1: DIFFERS: 1 to insert, 0 to modify, 0 to delete" in capsys.readouterr().out
        assert cli.main(["install", str(path)]) == 0 and cli.main(["verify", str(path)]) == 0
        assert "nic-1: OK" in capsys.readouterr().out
        with Session(Device("nic-1", sw.grpc_addr, sw.device_id), p4info, election_id=20) as s:
            assert len(s.read([fy.P4TableEntry("qp_peer")])) == 1  # the run-time QP survived
