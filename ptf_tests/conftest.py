"""Fixtures: a `target` (switch) and `nic_target` (NIC) parametrized over
the reference model and BMv2 (the NIC also over DPDK's SWX pipeline, its
PNA program: testbed/swx_targets.py), or one running P4Runtime device.

By default the BMv2 switch is started once per session (simple_switch_grpc
on veth pairs, gRPC on loopback), loaded with the committed JSON and
P4Info, and given the demo T0's tables by our installer; the SWX NIC once
per session too (dpdk-pipeline on TAP devices, its two threads on one
core, stopped by its pid). Where BMv2 or SWX cannot run, their cases are
skipped with the reason; the model cases always run.

With --p4rt-addr the suites run against a device that is already running
(docs/ptf.md): the same test bodies, target "remote"; tests that need a
BMv2-only knob (marker `bmv2_knob`) or start their own BMv2s are skipped
with the reason.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_plane import grpc_address, tls
from ptf_tests.lib import nic_fabric
from ptf_tests.lib.fabric import T0, T0_PORTS
from testbed import toolchain
from testbed.model_targets import NicModelTarget, SwitchModelTarget
from testbed.remote import NicRemoteTarget, RemoteDevice, SwitchRemoteTarget, load_port_map, parse_interface
from testbed.swx_targets import NicSwxTarget
from testbed.targets import NicBmv2Target, SwitchBmv2Target

REMOTE_KEY = pytest.StashKey["RemoteDevice | None"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("remote", "the packet suites against a running P4Runtime device (docs/ptf.md)")
    g.addoption("--p4rt-addr", metavar="HOST:PORT", type=_address,
                help="run the switch or NIC suite on this running device")
    g.addoption("--p4rt-device-id", type=int, default=1, metavar="N", help="its P4Runtime device id (default 1)")
    g.addoption("--p4rt-program", choices=["switch", "nic"], default="switch",
                help="the program the device runs: which suite runs (default switch)")
    g.addoption("--p4rt-pipeline", choices=["loaded", "push"], default="loaded",
                help="use the pipeline the device has (default), or push ours (BMv2 JSON)")
    g.addoption("--p4rt-p4info", type=Path, metavar="FILE", help="P4Info (default: the committed one)")
    g.addoption("--p4rt-blob", type=Path, metavar="FILE", help="device config to push (default: committed BMv2 JSON)")
    g.addoption("--interface", action="append", default=[], metavar="[0-]PORT@IFACE",
                help="ptf's form: the interface cabled to this port (repeat per port)")
    g.addoption("--port-map", type=Path, metavar="FILE",
                help='JSON list of {"ptf_port", "p4_port", "iface_name"} (fabric-tna style), for device ports')
    for key, what in (("ca-cert", "CA certificate that signed the device's certificate (turns TLS on)"),
                      ("cert", "this client's certificate (mutual TLS)"), ("key", "this client's private key"),
                      ("server-name", "name to check the device's certificate against")):
        g.addoption(f"--p4rt-{key}", metavar="NAME" if key == "server-name" else "FILE", help=what)


def _address(text: str) -> str:
    """--p4rt-addr checked as parsed (control_plane/grpc_address.py), kept as written."""
    try:
        grpc_address.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "bmv2_knob(what): needs a BMv2-only knob; skipped on a remote device")
    addr = config.getoption("--p4rt-addr")
    remote = None
    if addr:
        ports = {port: (port, iface) for port, iface in map(parse_interface, config.getoption("--interface"))}
        if config.getoption("--port-map"):
            ports.update(load_port_map(config.getoption("--port-map")))
        settings = tls.from_flags({k: config.getoption(f"--p4rt-{k.replace('_', '-')}") for k in tls.KEYS}, "--p4rt-")
        remote = RemoteDevice(addr, config.getoption("--p4rt-device-id"),
                              config.getoption("--p4rt-pipeline") == "push", config.getoption("--p4rt-p4info"),
                              config.getoption("--p4rt-blob"), ports, settings)
    config.stash[REMOTE_KEY] = remote


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    remote = metafunc.config.stash[REMOTE_KEY]
    for name, local in (("target", ["model", "bmv2"]), ("nic_target", ["model", "bmv2", "swx"])):
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, ["remote"] if remote else local, indirect=True)


def _on_swx(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("nic_target") == "swx"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    remote = config.stash[REMOTE_KEY]
    if remote is None:
        # The SWX cases last, together: the app polls a core from its first case to the session's end.
        items.sort(key=_on_swx)
        return
    program = config.getoption("--p4rt-program")
    mine = "target" if program == "switch" else "nic_target"
    for item in items:
        if "ptf_tests" not in item.path.parts:
            continue
        knob = item.get_closest_marker("bmv2_knob")
        fixtures = getattr(item, "fixturenames", ())
        if knob:
            why = f"needs {knob.args[0]}, a BMv2-only knob: not on the remote device {remote.addr}"
        elif mine in fixtures:
            continue
        elif {"target", "nic_target"} & set(fixtures):
            other = "NIC" if program == "switch" else "switch"
            why = f"a {other} test: the remote device {remote.addr} runs the {program} program"
        else:
            why = f"starts its own BMv2 or kernel peers: not a test of the remote device {remote.addr}"
        item.add_marker(pytest.mark.skip(reason=why))


def bmv2_skip_reason(program: str = "switch") -> str | None:
    reason = toolchain.bmv2_unavailable()
    if reason:
        return reason
    for path in toolchain.artifacts(program):
        if not path.exists():
            return f"{path.name} missing: run 'make build' (needs p4c)"
    return toolchain.stale(program)


@pytest.fixture(scope="session")
def bmv2_t0() -> Iterator[SwitchBmv2Target]:
    reason = bmv2_skip_reason()
    if reason:
        pytest.skip(f"BMv2: {reason}")
    target = SwitchBmv2Target(T0, T0_PORTS)
    yield target
    target.close()


def _remote(request: pytest.FixtureRequest) -> RemoteDevice:
    """The running device --p4rt-addr named (the remote fixtures' one source)."""
    remote = request.config.stash[REMOTE_KEY]
    if remote is None:
        raise pytest.UsageError(f"{request.fixturename} needs a running device: pass --p4rt-addr (docs/ptf.md)")
    return remote


@pytest.fixture(scope="session")
def remote_switch(request: pytest.FixtureRequest) -> Iterator[SwitchRemoteTarget]:
    target = SwitchRemoteTarget(_remote(request), T0, T0_PORTS)
    yield target
    target.close()  # the tables as found


@pytest.fixture(scope="session")
def remote_nic(request: pytest.FixtureRequest) -> Iterator[NicRemoteTarget]:
    target = NicRemoteTarget(_remote(request), nic_fabric.NIC, nic_fabric.PORTS)
    yield target
    target.close()


@pytest.fixture
def target(
    request: pytest.FixtureRequest,
) -> Iterator[SwitchModelTarget | SwitchBmv2Target | SwitchRemoteTarget]:
    if request.param == "model":
        yield SwitchModelTarget(T0, T0_PORTS)
        return
    fixture = "remote_switch" if request.param == "remote" else "bmv2_t0"
    t: SwitchBmv2Target | SwitchRemoteTarget = request.getfixturevalue(fixture)
    t.reset()
    yield t
    t.reset()


@pytest.fixture(scope="session")
def bmv2_nic() -> Iterator[NicBmv2Target]:
    reason = bmv2_skip_reason("nic")
    if reason:
        pytest.skip(f"BMv2: {reason}")
    target = NicBmv2Target(nic_fabric.NIC, nic_fabric.PORTS)
    yield target
    target.close()


@pytest.fixture(scope="session")
def swx_nic() -> Iterator[NicSwxTarget]:
    reason = toolchain.swx_unavailable("nic-pna")
    if reason:
        pytest.skip(f"SWX: {reason}")
    target = NicSwxTarget(nic_fabric.NIC, nic_fabric.PORTS)
    yield target
    target.close()


@pytest.fixture
def nic_target(
    request: pytest.FixtureRequest,
) -> Iterator[NicModelTarget | NicBmv2Target | NicSwxTarget | NicRemoteTarget]:
    """NIC 0 of the demo fabric with QP 1 to NIC 3, fresh rotation."""
    if request.param == "model":
        yield NicModelTarget(nic_fabric.NIC, nic_fabric.PORTS)
        return
    fixture = {"remote": "remote_nic", "bmv2": "bmv2_nic", "swx": "swx_nic"}[request.param]
    t: NicBmv2Target | NicSwxTarget | NicRemoteTarget = request.getfixturevalue(fixture)
    t.reset()
    yield t
    t.reset()
