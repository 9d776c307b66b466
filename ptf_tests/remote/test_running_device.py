"""The suites' remote-device mode, proven on a BMv2 started here, outside
the suite, as a lab's device would be: we push the pipeline and a foreign
entry, run the suite in a child pytest with --p4rt-addr and ptf-style
--interface options, and check what ran, what was skipped and why, and
that the device's tables are exactly as before."""

from __future__ import annotations

import re
import subprocess
import sys

import finsy as fy
import pytest

from control_plane import p4_entities as P
from control_plane.installer import DeviceError
from control_plane.pipelines import artifacts
from control_plane.session import Session
from control_plane.topology import Device
from ptf_tests.conftest import bmv2_skip_reason
from ptf_tests.lib import nic_fabric
from ptf_tests.lib.fabric import T0_PORTS
from testbed.bmv2 import Bmv2Switch
from testbed.toolchain import REPO

SUITES = {
    # program: (suite folder, ports, tables, defaults, a foreign entry the suite must leave alone)
    "switch": ("ptf_tests/switch", T0_PORTS, P.SWITCH_TABLES, P.SWITCH_DEFAULTS,
               fy.P4TableEntry("usid_route", match=fy.Match(locator=0xFCBB_BBBB_0999),
                               action=fy.Action("set_port", port=T0_PORTS[-1]))),
    "nic": ("ptf_tests/nic", nic_fabric.PORTS, P.NIC_TABLES, P.NIC_DEFAULTS,
            fy.P4TableEntry("qp_peer", match=fy.Match(qpn=4000),
                            action=fy.Action("set_peer", qpn=4001, qp_index=0, offload=0, follow=0, ack_bytes=0,
                                             health=0, skip_on_mark=0))),
}


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(bmv2_skip_reason() is not None, reason=f"BMv2: {bmv2_skip_reason()}")
@pytest.mark.parametrize("program", sorted(SUITES))
def test_suite_runs_against_an_externally_started_bmv2(program):
    folder, ports, tables, defaults, foreign = SUITES[program]
    p4info, blob = artifacts(program)
    with Bmv2Switch(f"ext-{program}", ports) as dev:
        with Session(Device(f"ext-{program}", dev.grpc_addr, dev.device_id), p4info, blob) as s:
            s.write([+foreign])
            before = s.snapshot(tables, defaults)
        opts = ["--p4rt-addr", dev.grpc_addr, "--p4rt-device-id", str(dev.device_id), "--p4rt-program", program,
                "--p4rt-pipeline", "loaded", *(f"--interface={p}@{dev.host_iface(p)}" for p in ports)]
        listed = _pytest("--collect-only", "-q", folder, *opts)
        remote_ids = [ln for ln in listed.stdout.splitlines() if re.search(r"\[(.*-)?remote(-.*)?\]$", ln)]
        assert remote_ids, listed.stdout[-2000:]
        run = _pytest("-q", "-rs", folder, *opts)
        assert run.returncode == 0, run.stdout[-4000:]
        skips = re.findall(r"^SKIPPED \[(\d+)\] ([^:]+)(?::\d+)?: (.*)$", run.stdout, re.M)
        knob = sum(int(n) for n, _, why in skips if "a BMv2-only knob" in why)
        passed = int(re.search(r"(\d+) passed", run.stdout).group(1))
        assert passed + knob == len(remote_ids), run.stdout[-3000:]
        assert passed > 0 and all("remote device" in why for _, _, why in skips), skips
        with Session(Device(f"ext-{program}", dev.grpc_addr, dev.device_id), p4info, loaded=True) as s:
            after = s.snapshot(tables, defaults)
    key = lambda e: repr(e)  # noqa: E731 (a one-line helper)
    assert sorted(after, key=key) == sorted(before, key=key)


@pytest.mark.skipif(bmv2_skip_reason() is not None, reason=f"BMv2: {bmv2_skip_reason()}")
def test_loaded_pipeline_that_is_not_ours_is_refused_by_name():
    """--p4rt-pipeline loaded on a device running another program: a clear
    error naming the device and the differing entities, nothing written."""
    nic_info, nic_blob = artifacts("nic")
    with Bmv2Switch("ext-other", [0, 1]) as dev:
        device = Device("ext-other", dev.grpc_addr, dev.device_id)
        with Session(device, nic_info, nic_blob):
            pass
        with pytest.raises(DeviceError, match=r"ext-other: loaded pipeline's P4Info differs from "
                                              r"switch.p4info.txtpb: \d+ entities differ"):
            Session(device, artifacts("switch")[0], loaded=True)
        with Session(device, nic_info, loaded=True) as s:  # the NIC's own P4Info matches
            assert s.snapshot(P.NIC_TABLES, ()) == []


@pytest.mark.skipif(bmv2_skip_reason() is not None, reason=f"BMv2: {bmv2_skip_reason()}")
def test_suite_runs_against_a_device_that_requires_mutual_tls(tmp_path):
    """The remote mode over TLS (--p4rt-ca-cert/--p4rt-cert/--p4rt-key), on
    a BMv2 started here with client authentication; without the client
    certificate the same run is refused, naming the TLS cause."""
    from testbed.bmv2 import ServerTls
    from testbed.certs import make_ca

    ca = make_ca(tmp_path, "lab-ca")
    server = ca.issue(tmp_path, "switch", server_names=("127.0.0.1", "localhost"))
    client = ca.issue(tmp_path, "controller", client=True)
    p4info, blob = artifacts("switch")
    with Bmv2Switch("ext-tls", T0_PORTS, tls=ServerTls(server.cert, server.key, client_ca=ca.cert)) as dev:
        opts = ["--p4rt-addr", dev.grpc_addr, "--p4rt-pipeline", "push", "--p4rt-ca-cert", str(ca.cert),
                *(f"--interface={p}@{dev.host_iface(p)}" for p in T0_PORTS)]
        run = _pytest("-q", "ptf_tests/switch/test_forwarding.py", *opts, "--p4rt-cert", str(client.cert),
                      "--p4rt-key", str(client.key))
        assert run.returncode == 0 and re.search(r"\d+ passed", run.stdout), run.stdout[-3000:]
        refused = _pytest("-q", "ptf_tests/switch/test_forwarding.py", *opts)
        assert refused.returncode != 0
        assert "the device refused this controller's client certificate: none was given" in refused.stdout
