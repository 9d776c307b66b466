"""mrcctl's subcommands and edges: each
command with its own options, errors in one line before any device is
touched, and the faults a lab meets explained."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
from types import SimpleNamespace

import pytest
import yaml

from control_plane import cli, config, installer, tls, topology
from control_plane.pipelines import REPO
from testbed.certs import make_ca
from tests.config.test_sim_cli import undocumented_flags

DEMO = REPO / "bmv2_configs" / "topologies" / "demo.yaml"
ONE = {"planes": 1, "t0_per_plane": 1, "t1_per_plane": 1, "hosts_per_t0": 1}


def helps(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as info:
        cli.main([*argv, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def test_plan_help_shows_plans_options_only(capsys):
    out = helps(capsys, "plan")
    assert out.startswith("usage: mrcctl plan [-h] [--device NAME] [--write DIR] topology")
    assert "--batch-size" not in out and "--tls" not in out and "--election-id" not in out


@pytest.mark.parametrize("argv", [[], ["plan"], ["install"], ["verify"], ["diff"]])
def test_every_flag_of_every_command_has_help(capsys, argv):
    out = helps(capsys, *argv)
    assert undocumented_flags(out) == [], out


def test_install_help_has_the_batch_size(capsys):
    assert "--batch-size BATCH_SIZE" in helps(capsys, "install")
    assert "--batch-size" not in helps(capsys, "verify")


def refused(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as info:
        cli.main(list(argv))
    assert info.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_an_option_of_another_command_is_refused(capsys):
    assert refused(capsys, "plan", str(DEMO), "--batch-size", "5") == \
        "mrcctl: error: unrecognized arguments: --batch-size 5"


@pytest.mark.parametrize("value, why", [("0", "0: a WriteRequest carries at least 1 update"),
                                        ("-3", "-3: a WriteRequest carries at least 1 update"),
                                        ("many", "expected a whole number, got 'many'")])
def test_the_batch_size_is_checked_as_parsed(capsys, value, why):
    assert refused(capsys, "install", str(DEMO), "--batch-size", value) == \
        f"mrcctl install: error: argument --batch-size: {why}"


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_file_errors_are_one_line(tmp_path, capsys):
    assert cli.main(["plan", str(tmp_path / "nope.yaml")]) == 2
    assert one_line(capsys) == f"error: {tmp_path / 'nope.yaml'}: cannot read: No such file or directory"
    bad = tmp_path / "bad.yaml"
    bad.write_text("planes: [1\n")
    assert cli.main(["verify", str(bad)]) == 2
    assert one_line(capsys).startswith(f"error: {bad}: not valid YAML: ")
    assert cli.main(["plan", str(DEMO), "--write", str(tmp_path / "bad.yaml" / "out")]) == 2
    assert one_line(capsys) == f"error: --write: {tmp_path / 'bad.yaml' / 'out'}: Not a directory"


@pytest.mark.parametrize("second", ["127.0.0.1:50001", "localhost:50001", "LocalHost:50001"])
def test_one_address_and_device_id_twice_is_refused_naming_both(second):
    devices = [{"name": "t0-p0-r0", "grpc": "127.0.0.1:50001"}, {"name": "t1-p0-s0", "grpc": second}]
    with pytest.raises(config.ConfigError) as info:
        topology.parse({**ONE, "devices": devices})
    assert info.value.errors == [("devices[1].grpc", f"{second} device 1 is already used by t0-p0-r0 "
                                                     "(t1-p0-s0 and t0-p0-r0 would be the same device)")]
    assert topology.parse({**ONE, "devices": [devices[0], {**devices[1], "device_id": 2}]})  # ids differ: fine


def test_the_nic_prefix_must_be_outside_the_usid_block():
    with pytest.raises(config.ConfigError) as info:
        topology.parse({**ONE, "usid_block": "fcbb:bb00::/32", "nic_prefix": "fcbb:bb00:0:1::/64"})
    assert info.value.errors == [("nic_prefix", "fcbb:bb00:0:1::/64 is inside usid_block fcbb:bb00::/32: NIC "
                                                "addresses and uSIDs are separate (DESIGN.md section 3)")]


def test_a_private_key_others_can_read_is_warned_about(tmp_path, caplog):
    ca = make_ca(tmp_path, "lab-ca")
    client = ca.issue(tmp_path, "client", client=True)
    raw = {"ca_cert": str(ca.cert), "cert": str(client.cert), "key": str(client.key)}
    with caplog.at_level(logging.WARNING, logger="control_plane.tls"):
        tls.load(raw, "devices[0].tls")
        assert caplog.messages == []  # 0600: quiet
        os.chmod(client.key, 0o644)
        tls.load(raw, "devices[0].tls")
    assert caplog.messages == [f"devices[0].tls.key: {client.key} is readable by others (mode 644): chmod 600 it"]


@contextlib.contextmanager
def http1_server():
    """A plain TCP server on 127.0.0.1 answering HTTP/1.1 400 to anything."""
    srv = socket.create_server(("127.0.0.1", 0))

    def serve():
        with contextlib.suppress(OSError):
            while True:
                c, _ = srv.accept()
                with c:
                    c.recv(1024)
                    c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    threading.Thread(target=serve, daemon=True).start()
    try:
        yield srv.getsockname()[1]
    finally:
        srv.close()


SERVER = """
import sys, grpc
from concurrent import futures
srv = grpc.server(futures.ThreadPoolExecutor(1))
port = srv.add_insecure_port("127.0.0.1:0")
srv.start()  # before the port is told: a call to a bound port not yet serving can fail INTERNAL
print(port, flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def grpc_server_without_p4runtime():
    """A gRPC server with no service, in a process of its own: gRPC's state
    in this one (Ray's workers use it) must not decide how it answers."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        yield int(proc.stdout.readline())
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def test_one_bare_call_tells_a_server_without_the_service():
    # What a session's INTERNAL error ("Internal error from Core", now and then) is checked against.
    dev = SimpleNamespace(grpc_addr="", tls=None)
    with grpc_server_without_p4runtime() as port:
        dev.grpc_addr = f"127.0.0.1:{port}"
        assert installer.service_status(dev, 5.0) == ("UNIMPLEMENTED", "Method not found!")


@pytest.mark.parametrize("server, why", [
    (http1_server, "it does not speak gRPC (HTTP/2)"),
    (grpc_server_without_p4runtime, "it answers gRPC but has no P4Runtime service (Method not found!)")])
def test_a_server_that_is_not_p4runtime_is_one_line(tmp_path, server, why):
    with server() as port:
        topo = tmp_path / "t.yaml"
        topo.write_text(yaml.safe_dump({**ONE, "devices": [{"name": "t0-p0-r0", "grpc": f"127.0.0.1:{port}"}]}))
        p = subprocess.run([sys.executable, "-m", "control_plane.cli", "verify", str(topo)], capture_output=True,
                           text=True, timeout=120, cwd=REPO)
    assert p.returncode == 1
    assert p.stderr.splitlines() == [f"error: t0-p0-r0: not a P4Runtime server at 127.0.0.1:{port}: {why}"]


class FakeP4Error(Exception):
    """What finsy raises for a read on a device with no pipeline."""

    code = SimpleNamespace(name="FAILED_PRECONDITION")
    message = "No forwarding pipeline config set"


def test_no_pipeline_is_explained(tmp_path, capsys, monkeypatch):
    @contextlib.asynccontextmanager
    async def connect(*a, **k):
        raise FakeP4Error("operation=read code=FAILED_PRECONDITION message='No forwarding pipeline config set'")
        yield  # unreachable: gives the function a generator's shape, as a context manager needs
    monkeypatch.setattr(installer, "connect", connect)
    topo = tmp_path / "t.yaml"
    topo.write_text(yaml.safe_dump({**ONE, "devices": [{"name": "t0-p0-r0", "grpc": "127.0.0.1:9559",
                                                         "device_id": 7}]}))
    assert cli.main(["verify", str(topo)]) == 1
    assert one_line(capsys) == (
        "error: t0-p0-r0: no pipeline on device_id 7 at 127.0.0.1:9559 (No forwarding pipeline config set): "
        "either device_id is wrong for this server, or no pipeline was pushed (mrcctl install pushes one)")


# ---- P4Runtime addresses: parsed once, where the topology or a flag is read ---------------------------------------

@pytest.mark.parametrize("addr", ["127.0.0.1:\u00b2", "127.0.0.1:\u0663", "h:1:2", " 127.0.0.1:1", "127.0.0.1:1 ",
                                  "unix:///tmp/s:1", "unix://host/s", "unix:", "::1:50051", "[::1]", "[nope]:1",
                                  "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:+1", "h:", ":1", "a b:1",
                                  "h\u00e9:1", "x" * 300 + ":1"])
def test_an_address_that_can_never_work_is_refused(addr):
    with pytest.raises(config.ConfigError) as info:
        topology.parse({**ONE, "devices": [{"name": "t0-p0-r0", "grpc": addr}]})
    [(path, reason)] = info.value.errors
    assert path == "devices[0].grpc" and len(reason) < 200 and reason.isprintable(), reason


@pytest.mark.parametrize("addr", ["127.0.0.1:1", "localhost:65535", "[::1]:50051", "[fe80::1]:9559",
                                  "switch-1.lab.example:9559", "unix:/tmp/p4rt.sock", "unix:///tmp/p4rt.sock"])
def test_addresses_that_may_work_are_kept_as_written(addr):
    topo = topology.parse({**ONE, "devices": [{"name": "t0-p0-r0", "grpc": addr}]})
    assert topo.devices["t0-p0-r0"].grpc_addr == addr


def test_one_ipv6_address_written_two_ways_is_one_device():
    devices = [{"name": "t0-p0-r0", "grpc": "[::1]:1"}, {"name": "t1-p0-s0", "grpc": "[0:0::1]:1"}]
    with pytest.raises(config.ConfigError) as info:
        topology.parse({**ONE, "devices": devices})
    assert info.value.errors[0][0] == "devices[1].grpc"


@pytest.mark.parametrize("value", ["-1", "0", str(2**128), str(2**200), "1e3", "\u0663", "1" * 5000, " 5", "ten"])
def test_the_election_id_is_checked_as_parsed(capsys, value):
    line = refused(capsys, "verify", str(DEMO), "--election-id", value)
    assert line.startswith("mrcctl verify: error: argument --election-id: ") and len(line) < 200, line


def test_the_largest_election_id_is_taken(monkeypatch):
    seen = {}

    async def each(topo, names, action, batch, election_id=10):
        seen["id"] = election_id
        return 0
    monkeypatch.setattr(cli, "_each", each)
    assert cli.main(["verify", str(DEMO), "--election-id", str(2**128 - 1)]) == 0
    assert seen["id"] == 2**128 - 1


@pytest.mark.parametrize("command", ["plan", "install", "verify", "diff"])
def test_a_device_given_twice_is_refused(capsys, command):
    line = refused(capsys, command, str(DEMO), "--device", "t0-p0-r0", "--device", "t0-p0-r0")
    assert line == f"mrcctl {command}: error: argument --device: 't0-p0-r0' is given twice"


# ---- plan --write: a folder that cannot take the tables is one line -------------------------------------------------

@pytest.mark.parametrize("where", ["/proc/self", "/sys/kernel", "a folder in a table's place"])
def test_plan_write_where_it_cannot_is_one_line(tmp_path, capsys, where):
    if where.startswith("a folder"):
        (tmp_path / "t0-p0-r0.json").mkdir()
        where = str(tmp_path)
    assert cli.main(["plan", str(DEMO), "--write", where]) == 2
    line = one_line(capsys)
    assert line.startswith("error: --write: ") and "Traceback" not in line, line


def test_a_huge_device_name_is_echoed_cut(capsys):
    assert cli.main(["plan", str(DEMO), "--device", "t0-p0-r0\x1b[2J" + "x" * 5000]) == 2
    line = one_line(capsys)
    assert line.startswith("error: --device: 't0-p0-r0\\x1b[2J") and len(line) < 300 and line.isprintable(), line
