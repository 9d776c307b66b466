"""TLS reaches the wire without BMv2: a local gRPC server with TLS and
mutual authentication stands in for a P4Runtime device. It records who
connected (the client certificate's name) and refuses every call; the
controller's error does not matter here, only that the handshake was TLS
with the controller's certificate. A controller that dropped its
credentials (installer.connect) or mrcctl's --tls-* flags would connect
in plaintext, which this server never answers."""

from __future__ import annotations

import asyncio
from concurrent import futures

import grpc
import pytest
import yaml

from control_plane import cli, installer, pipelines, tls
from control_plane.topology import Device
from testbed.certs import make_ca

SERVER_NAME = "sw.lab"


class _Recorder(grpc.GenericRpcHandler):
    """Any P4Runtime method: note the peer's certificate name, refuse."""

    def __init__(self) -> None:
        self.peers: list[tuple[str, str]] = []  # (transport security, client certificate CN)

    def service(self, details):
        def refuse(requests, context):
            auth = context.auth_context()
            kind = b"".join(auth.get("transport_security_type", [b"none"])).decode()
            cn = b"".join(auth.get("x509_common_name", [b""])).decode()
            self.peers.append((kind, cn))
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "a test stub, not a switch")
        return grpc.stream_stream_rpc_method_handler(refuse)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = make_ca(d, "lab-ca")
    sw = ca.issue(d, "switch", server_names=("127.0.0.1", SERVER_NAME))
    ca.issue(d, "controller", client=True)
    creds = grpc.ssl_server_credentials([(sw.key.read_bytes(), sw.cert.read_bytes())],
                                        root_certificates=ca.cert.read_bytes(), require_client_auth=True)
    rec = _Recorder()
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[rec])
    port = srv.add_secure_port("127.0.0.1:0", creds)
    srv.start()
    yield rec, f"127.0.0.1:{port}", d
    srv.stop(None)


def _settings(d) -> tls.TlsSettings:
    return tls.from_fields({"ca_cert": d / "lab-ca.crt", "cert": d / "controller.crt", "key": d / "controller.key",
                            "server_name": SERVER_NAME}, {k: k for k in tls.KEYS})


def test_installer_connects_over_mutual_tls_with_the_devices_settings(server):
    rec, addr, d = server
    rec.peers.clear()
    p4info, _ = pipelines.artifacts("switch")

    async def attempt():
        async with installer.connect(Device("t0-p0-r0", addr, 1, tls=_settings(d)), p4info, timeout=5):
            pass

    with pytest.raises(installer.DeviceError):  # the stub refuses P4Runtime
        asyncio.run(attempt())
    assert rec.peers and set(rec.peers) == {("ssl", "controller")}


def test_mrcctl_tls_flags_reach_the_connection(server, tmp_path, capsys):
    rec, addr, d = server
    rec.peers.clear()
    topo = tmp_path / "t.yaml"  # no tls in the file: only the flags bring it
    topo.write_text(yaml.safe_dump({"planes": 1, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 1,
                                    "devices": [{"name": "t0-p0-r0", "grpc": addr}]}))
    flags = ["--tls-ca-cert", str(d / "lab-ca.crt"), "--tls-cert", str(d / "controller.crt"),
             "--tls-key", str(d / "controller.key"), "--tls-server-name", SERVER_NAME]
    assert cli.main(["verify", str(topo), *flags]) == 1  # refused by the stub, after the handshake
    assert rec.peers and set(rec.peers) == {("ssl", "controller")}
    assert "t0-p0-r0" in capsys.readouterr().err


def test_the_bare_probe_call_goes_over_mutual_tls_too(server):
    # installer.service_status: the one plain call made after a session ends INTERNAL (now and then, under load)
    rec, addr, d = server
    rec.peers.clear()
    code, _ = installer.service_status(Device("t0-p0-r0", addr, 1, tls=_settings(d)), 5.0) or ("", "")
    assert code == "UNIMPLEMENTED"  # the stub's refusal: the TLS handshake was made
    assert set(rec.peers) == {("ssl", "controller")}
