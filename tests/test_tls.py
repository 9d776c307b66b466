"""TLS settings without a device: the loader's errors name the
field and the path, the plaintext warning, mrcctl's flags, and how a
refusal is explained from the controller's own files. The BMv2 proof is
ptf_tests/controller/test_tls.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from pathlib import Path

import pytest
import yaml

from control_plane import cli, installer, pipelines, tls, tls_errors, topology
from control_plane.topology import Device, TopologyError
from testbed.certs import make_ca

BASE = {"planes": 1, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 1}
NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca, other = make_ca(d, "lab-ca"), make_ca(d, "other-ca")
    return {
        "dir": d,
        "ca": ca,
        "client": ca.issue(d, "client", client=True),
        "other": other.issue(d, "client-other", client=True),
        "expired": ca.issue(d, "client-expired", client=True, not_before=NOW - dt.timedelta(days=9),
                            not_after=NOW - dt.timedelta(days=2)),
        "future": ca.issue(d, "client-future", client=True, not_before=NOW + dt.timedelta(days=2)),
    }


def load_with(tmp_path: Path, tls_raw) -> topology.Topology:
    """A topology file with one device whose `tls` is `tls_raw`, loaded."""
    path = tmp_path / "topo.yaml"
    path.write_text(
        yaml.safe_dump({**BASE, "devices": [{"name": "t0-p0-r0", "grpc": "127.0.0.1:50001", "tls": tls_raw}]})
    )
    return topology.load(path)


def load_error(tmp_path: Path, tls_raw) -> str:
    with pytest.raises(TopologyError) as info:
        load_with(tmp_path, tls_raw)
    return str(info.value)


def test_relative_paths_are_read_from_the_topology_folder(pki):
    topo = load_with(pki["dir"], {"ca_cert": "lab-ca.crt", "cert": "client.crt", "key": "client.key",
                                  "server_name": "t0-p0-r0.fabric.lab"})
    d = pki["dir"].resolve()
    assert topo.devices["t0-p0-r0"].tls == tls.TlsSettings(d / "lab-ca.crt", d / "client.crt", d / "client.key",
                                                           "t0-p0-r0.fabric.lab")


def test_no_tls_key_means_plaintext(tmp_path):
    assert load_with(tmp_path, None).devices["t0-p0-r0"].tls is None


def test_bad_files_are_errors_naming_the_field_and_the_path(pki, tmp_path):
    d = pki["dir"].resolve()
    cases = [
        ({"ca_cert": "nope.pem"}, f"devices[0].tls.ca_cert: file not found: {tmp_path.resolve() / 'nope.pem'}"),
        ({"ca_cert": str(d)}, f"devices[0].tls.ca_cert: not a regular file (a folder): {d}"),
        ({"ca_cert": str(d / "client.key")}, f"devices[0].tls.ca_cert: not a PEM certificate: {d / 'client.key'}"),
        ({"ca_cert": str(d / "lab-ca.crt"), "cert": str(d / "client.key"), "key": str(d / "client.key")},
         f"devices[0].tls.cert: not a PEM certificate: {d / 'client.key'}"),
        ({"ca_cert": str(d / "lab-ca.crt"), "cert": str(d / "client.crt"), "key": str(d / "client.crt")},
         f"devices[0].tls.key: not a PEM private key: {d / 'client.crt'}"),
        ({"ca_cert": str(d / "lab-ca.crt"), "cert": str(d / "client.crt"), "key": str(d / "client-other.key")},
         f"devices[0].tls.key: {d / 'client-other.key'} is not the key of the certificate in "
         f"devices[0].tls.cert ({d / 'client.crt'})"),
    ]
    for raw, message in cases:
        assert load_error(tmp_path, raw) == message


def test_missing_and_unknown_fields_are_named(pki, tmp_path):
    ca = str(pki["dir"] / "lab-ca.crt")
    assert load_error(tmp_path, {"cert": "c.crt", "key": "c.key"}) == (
        "devices[0].tls.ca_cert: missing: the CA certificate that signed the device's certificate")
    assert load_error(tmp_path, {"ca_cert": ca, "cert": "c.crt"}) == (
        "devices[0].tls.key: missing: devices[0].tls.cert is given, and a client certificate needs both cert and key")
    assert load_error(tmp_path, {"ca_cert": ca, "client_cert": "c.crt"}).startswith(
        "devices[0].tls.client_cert: unknown key (expected ca_cert, cert, key, server_name)")
    assert load_error(tmp_path, "yes").startswith("devices[0].tls: expected a mapping")
    assert (
        load_error(tmp_path, {"ca_cert": ca, "server_name": 7}) == "devices[0].tls.server_name: expected a name, got 7"
    )


def test_encrypted_key_is_refused_by_name(pki, tmp_path):
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(pki["client"].key.read_bytes(), None)
    locked = tmp_path / "locked.key"
    locked.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.BestAvailableEncryption(b"secret")))
    raw = {"ca_cert": str(pki["ca"].cert), "cert": str(pki["client"].cert), "key": str(locked)}
    assert load_error(tmp_path, raw) == f"devices[0].tls.key: encrypted private keys are not supported: {locked}"


def test_credentials_carry_the_files_and_the_server_name(pki):
    s = tls.TlsSettings(pki["ca"].cert, pki["client"].cert, pki["client"].key, "sw.lab")
    c = s.credentials()
    assert (c.cacert, c.cert, c.private_key, c.target_name_override) == (s.ca_cert, s.cert, s.key, "sw.lab")
    assert tls.TlsSettings(pki["ca"].cert).credentials().cert is None


def test_plaintext_warning_only_away_from_loopback(pki):
    for addr in ("127.0.0.1:9559", "127.3.0.1:9559", "localhost:9559", "[::1]:9559"):
        assert tls.plaintext_warning("t0-p0-r0", addr, None) is None
    assert tls.plaintext_warning("t0-p0-r0", "10.0.0.1:9559", tls.TlsSettings(pki["ca"].cert)) is None
    assert tls.plaintext_warning("t0-p0-r0", "10.0.0.1:9559", None) == (
        "t0-p0-r0 (10.0.0.1:9559): plaintext P4Runtime, no tls settings: "
        "anyone who reaches this address can rewrite the device's tables")
    assert tls.plaintext_warning("leaf", "switch.lab:9559", None).startswith("leaf (switch.lab:9559): plaintext")


def test_connect_warns_once_for_a_plaintext_remote_device(caplog):
    p4info, _ = pipelines.artifacts("switch")
    dev = Device("t0-p0-r0", "192.0.2.1:9559", 1)  # TEST-NET-1: nothing answers
    caplog.set_level(logging.WARNING, logger="control_plane.tls")

    async def attempt():
        async with installer.connect(dev, p4info, timeout=0.5):
            pass

    with pytest.raises(installer.DeviceError):
        asyncio.run(attempt())
    assert [r.getMessage() for r in caplog.records if r.name == "control_plane.tls"] == [
        tls.plaintext_warning(dev.name, dev.grpc_addr, None)]


def test_client_cert_problem_from_the_controllers_files(pki):
    ca = pki["ca"].cert
    assert tls_errors.client_cert_problem(tls.TlsSettings(ca)) == (
        "none was given (tls.cert and tls.key are not set) and the device requires one")
    exp = pki["expired"]
    assert tls_errors.client_cert_problem(tls.TlsSettings(ca, exp.cert, exp.key)) == (
        f"{exp.cert} expired on {(NOW - dt.timedelta(days=2)).strftime('%Y-%m-%d %H:%M:%S')} UTC")
    fut = pki["future"]
    assert tls_errors.client_cert_problem(tls.TlsSettings(ca, fut.cert, fut.key)).startswith(
        f"{fut.cert} is not valid before {(NOW + dt.timedelta(days=2)).strftime('%Y-%m-%d %H:%M:%S')} UTC")
    oth = pki["other"]
    assert tls_errors.client_cert_problem(tls.TlsSettings(ca, oth.cert, oth.key)) == (
        f"{oth.cert} is issued by 'CN=other-ca', not by the CA in tls.ca_cert ('CN=lab-ca')")
    ok = pki["client"]
    assert tls_errors.client_cert_problem(tls.TlsSettings(ca, ok.cert, ok.key)).startswith(
        f"{ok.cert} (issued by 'CN=lab-ca', valid until ")


def test_grpc_handshake_messages_explained(pki):
    s = tls.TlsSettings(pki["ca"].cert)
    grpc = "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: "
    verify = grpc + ("Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:SSL routines:"
                     "OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: self signed certificate in certificate chain: OK")
    assert tls_errors.explain("127.0.0.1:1", s, verify) == (
        f"TLS handshake failed at 127.0.0.1:1: the device's certificate is not trusted by tls.ca_cert "
        f"({s.ca_cert}): self signed certificate in certificate chain")
    name = grpc + "Custom verification check failed with error: UNAUTHENTICATED: Hostname Verification Check failed."
    assert tls_errors.explain("127.0.0.1:1", s, name) == (
        "TLS handshake failed at 127.0.0.1:1: the device's certificate does not name '127.0.0.1' "
        "(set tls.server_name to a name it holds)")
    version = grpc + "Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: WRONG_VERSION_NUMBER"
    assert tls_errors.explain("127.0.0.1:1", s, version) == (
        "TLS handshake failed at 127.0.0.1:1: the device does not speak TLS there (a plaintext P4Runtime server?)")
    refused = "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:127.0.0.1:1: Connection refused"
    assert tls_errors.explain("127.0.0.1:1", None, refused) is None
    assert tls_errors.explain("127.0.0.1:1", s, refused) is None


def test_mrcctl_tls_flags_checked_like_the_file(pki, tmp_path, capsys):
    topo = tmp_path / "t.yaml"
    topo.write_text(yaml.safe_dump({**BASE, "devices": [{"name": "t0-p0-r0", "grpc": "127.0.0.1:50001"}]}))
    assert cli.main(["verify", str(topo), "--tls-ca-cert", str(tmp_path / "none.crt")]) == 2
    assert capsys.readouterr().err == f"error: --tls-ca-cert: file not found: {tmp_path.resolve() / 'none.crt'}\n"
    assert (
        cli.main(["verify", str(topo), "--tls-ca-cert", str(pki["ca"].cert), "--tls-cert", str(pki["client"].cert)])
        == 2
    )
    assert capsys.readouterr().err == (
        "error: --tls-key: missing: --tls-cert is given, and a client certificate needs both cert and key\n")
    assert cli.main(["verify", str(topo), "--tls-server-name", "sw.lab"]) == 2
    assert "error: --tls-ca-cert: missing" in capsys.readouterr().err


def test_mrcctl_names_the_field_of_a_bad_topology_tls(tmp_path, capsys):
    topo = tmp_path / "t.yaml"
    topo.write_text(yaml.safe_dump({**BASE, "devices": [
        {"name": "t0-p0-r0", "grpc": "127.0.0.1:50001", "tls": {"ca_cert": "certs/ca.pem"}}]}))
    assert cli.main(["install", str(topo)]) == 2
    assert (
        capsys.readouterr().err == f"error: devices[0].tls.ca_cert: file not found: {tmp_path.resolve()}/certs/ca.pem\n"
    )


def test_throwaway_certificates_from_the_generator_load(tmp_path, capsys):
    from testbed import certs

    assert certs.main([str(tmp_path), "--server-name", "sw.lab"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"CA certificate: {tmp_path / 'mrc-test-ca.crt'}"
    s = tls.load({"ca_cert": "mrc-test-ca.crt", "cert": "controller.crt", "key": "controller.key"}, "tls", tmp_path)
    assert s.cert == (tmp_path / "controller.crt").resolve()
    assert (tmp_path / "controller.key").stat().st_mode & 0o077 == 0  # keys are private to their owner
