"""P4Runtime over mutual TLS against BMv2: simple_switch_grpc
with TLS and client authentication, a throwaway CA made here (no key is
committed). The controller installs, verifies and diffs with the right
certificates; no certificate, one from another CA, an expired one and a
plaintext client are refused with the device and the TLS cause named, and
the switch's tables are unchanged after each refusal."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import replace

import pytest
import yaml

from control_plane import cli, installer
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane.session import Session
from control_plane.tls import TlsSettings
from control_plane.topology import Device
from ptf_tests.conftest import bmv2_skip_reason
from ptf_tests.lib.fabric import DEMO_TOPOLOGY, TOPO
from testbed import toolchain
from testbed.bmv2 import Bmv2Switch, ServerTls

NAME = "t0-p0-r0"
SERVER_NAME = "t0-p0-r0.fabric.lab"
EXPIRED_AT = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(days=2)
REFUSAL_BUDGET = 6.0  # seconds: a refusal is quick (the probe's own limit is 3 s)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """(switch, certificate folder): BMv2 requiring client certificates of `lab-ca`."""
    reason = bmv2_skip_reason()
    if reason:
        pytest.skip(f"BMv2: {reason}")
    from testbed.certs import make_ca

    d = tmp_path_factory.mktemp("pki")
    ca, other = make_ca(d, "lab-ca"), make_ca(d, "other-ca")
    server = ca.issue(d, "switch", server_names=("127.0.0.1", "localhost", SERVER_NAME))
    ca.issue(d, "controller", client=True)
    other.issue(d, "stranger", client=True)
    ca.issue(d, "expired", client=True, not_before=EXPIRED_AT - dt.timedelta(days=30), not_after=EXPIRED_AT)
    sw = Bmv2Switch(NAME, ports=[], tls=ServerTls(server.cert, server.key, client_ca=ca.cert))
    sw.start()
    try:
        yield sw, d
    finally:
        sw.stop()


def settings(d, cert: str | None = "controller", ca: str = "lab-ca", server_name: str | None = None) -> TlsSettings:
    return TlsSettings(d / f"{ca}.crt", d / f"{cert}.crt" if cert else None, d / f"{cert}.key" if cert else None,
                       server_name)


def topo_file(lab, tmp_path, tls: dict | None) -> str:
    """The demo topology with only NAME listed, at the TLS switch, with `tls`."""
    sw, _ = lab
    data = yaml.safe_load(DEMO_TOPOLOGY.read_text())
    data["devices"] = [{"name": NAME, "grpc": sw.grpc_addr, "device_id": sw.device_id, **({"tls": tls} if tls else {})}]
    path = tmp_path / "lab.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def good_tls(lab) -> dict:
    _, d = lab
    return {"ca_cert": str(d / "lab-ca.crt"), "cert": str(d / "controller.crt"), "key": str(d / "controller.key")}


def session(lab, **kw) -> Session:
    sw, d = lab
    p4info, blob = toolchain.artifacts("switch")
    return Session(Device(NAME, sw.grpc_addr, sw.device_id, tls=settings(d)), p4info, blob, **kw)


def desired():
    return [P.to_p4(e) for e in S.switch_state(TOPO, NAME).entries()]


def tables(s: Session) -> list[bytes]:
    """Every entry of the tables the plan owns, as bytes, in order."""
    ents = s.run(installer.read_entries(s.switch, P.SWITCH_TABLES, P.SWITCH_DEFAULTS))
    return sorted(e.encode(s.switch.p4info).SerializeToString(deterministic=True) for e in ents)


@pytest.fixture
def tampered(lab):
    """The planned tables with one route moved, so that any install that
    gets through changes them; the tables as they are then. The session is
    closed, so mrcctl's election id 10 makes it primary."""
    route = S.switch_state(TOPO, NAME).routes[0]
    with session(lab, election_id=20) as s:
        s.reconcile(desired(), P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        s.write([~P.to_p4(replace(route, port=route.port + 5))])
        return tables(s)


def test_install_verify_and_diff_over_mutual_tls(lab, tmp_path, tampered, capsys):
    path = topo_file(lab, tmp_path, good_tls(lab))
    assert cli.main(["diff", path]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{NAME}: 0 to insert, 1 to modify, 0 to delete\n  ~ "), out
    assert cli.main(["verify", path]) == 1
    assert capsys.readouterr().out == f"{NAME}: DIFFERS: 0 to insert, 1 to modify, 0 to delete\n"
    assert cli.main(["install", path]) == 0
    assert capsys.readouterr().out == f"{NAME}: installed (0 to insert, 1 to modify, 0 to delete)\n"
    assert cli.main(["verify", path]) == 0
    assert capsys.readouterr().out == f"{NAME}: OK\n"


def test_flags_stand_in_for_the_topologys_tls(lab, tmp_path, tampered, capsys):
    _, d = lab
    path = topo_file(lab, tmp_path, None)
    flags = ["--tls-ca-cert", str(d / "lab-ca.crt"), "--tls-cert", str(d / "controller.crt"),
             "--tls-key", str(d / "controller.key"), "--tls-server-name", SERVER_NAME]
    assert cli.main(["install", path, *flags]) == 0
    assert capsys.readouterr().out == f"{NAME}: installed (0 to insert, 1 to modify, 0 to delete)\n"


def refused_cases(d):
    addr = "{addr}"
    cert_refused = f"error: {NAME}: TLS refused at {addr}: the device refused this controller's client certificate: "
    when = EXPIRED_AT.strftime("%Y-%m-%d %H:%M:%S UTC")
    return {
        "no certificate": (
            {"ca_cert": str(d / "lab-ca.crt")},
            cert_refused + "none was given (tls.cert and tls.key are not set) and the device requires one",
        ),
        "another CA": (
            {"ca_cert": str(d / "lab-ca.crt"), "cert": str(d / "stranger.crt"), "key": str(d / "stranger.key")},
            cert_refused
            + f"{d / 'stranger.crt'} is issued by 'CN=other-ca', not by the CA in tls.ca_cert ('CN=lab-ca')",
        ),
        "expired": (
            {"ca_cert": str(d / "lab-ca.crt"), "cert": str(d / "expired.crt"), "key": str(d / "expired.key")},
            cert_refused + f"{d / 'expired.crt'} expired on {when}",
        ),
        "plaintext": (
            None,
            f"error: {NAME}: plaintext refused at {addr}: the device requires TLS "
            "(it answered a TLS handshake); give its tls settings (ca_cert, cert, key)",
        ),
        # The controller's side of the handshake: it checks the switch too.
        "switch not trusted": (
            {"ca_cert": str(d / "other-ca.crt"), "cert": str(d / "controller.crt"), "key": str(d / "controller.key")},
            f"error: {NAME}: TLS handshake failed at {addr}: the device's certificate is not trusted "
            f"by tls.ca_cert ({d / 'other-ca.crt'}): self signed certificate in certificate chain",
        ),
        "wrong server name": (
            {
                "ca_cert": str(d / "lab-ca.crt"),
                "cert": str(d / "controller.crt"),
                "key": str(d / "controller.key"),
                "server_name": "t9.fabric.lab",
            },
            f"error: {NAME}: TLS handshake failed at {addr}: the device's certificate does not name 't9.fabric.lab'",
        ),
    }


@pytest.mark.parametrize("case", ["no certificate", "another CA", "expired", "plaintext", "switch not trusted",
                                  "wrong server name"])
def test_refused_with_the_device_and_cause_named_and_tables_unchanged(lab, tmp_path, tampered, capsys, case):
    sw, d = lab
    tls, message = refused_cases(d)[case]
    path = topo_file(lab, tmp_path, tls)
    for command in ("install", "verify", "diff"):
        start = time.monotonic()
        assert cli.main([command, path]) == 1
        assert time.monotonic() - start < REFUSAL_BUDGET
        captured = capsys.readouterr()
        assert captured.err == message.format(addr=sw.grpc_addr) + "\n"
        assert captured.out == ""
    with session(lab, election_id=5) as s:  # a backup: reads only
        assert tables(s) == tampered


def test_server_name_override_checks_the_name_the_certificate_holds(lab, tmp_path, tampered, capsys):
    path = topo_file(lab, tmp_path, {**good_tls(lab), "server_name": SERVER_NAME})
    assert cli.main(["verify", path]) == 1
    assert capsys.readouterr().out == f"{NAME}: DIFFERS: 0 to insert, 1 to modify, 0 to delete\n"


def test_backup_controller_reads_while_the_primary_writes(lab, tmp_path, tampered, capsys):
    path = topo_file(lab, tmp_path, good_tls(lab))
    with session(lab, election_id=30) as primary:
        assert primary.switch.is_primary
        assert cli.main(["diff", path, "--election-id", "5"]) == 0
        assert capsys.readouterr().out.startswith(f"{NAME}: 0 to insert, 1 to modify, 0 to delete\n")
        assert cli.main(["install", path, "--election-id", "5"]) == 1
        assert capsys.readouterr().err == f"error: {NAME}: not primary (election id 5 < 30): cannot write\n"
        assert tables(primary) == tampered
        primary.reconcile(desired(), P.SWITCH_TABLES, P.SWITCH_DEFAULTS)
        assert cli.main(["verify", path, "--election-id", "5"]) == 0
        assert capsys.readouterr().out == f"{NAME}: OK\n"
