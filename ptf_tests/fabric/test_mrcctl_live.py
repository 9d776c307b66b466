"""mrcctl on a running fabric (testbed/live.py: the demo topology's
switches and two NICs, reference models or BMv2): a QP pair created
between two NICs through their hosts' MRC API, data flows, an EV set
DENIED leaves the NIC's rotation (no more data on it) and the EV event
reaches the `mrcctl ev watch` that was waiting for it. One body, both
targets."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading

import pytest

from control_plane import cli
from ptf_tests.conftest import bmv2_skip_reason
from testbed import toolchain

STARTUP_TIMEOUT = 180.0  # seconds: ten BMv2 devices started and configured on a busy machine
DEMO = str(toolchain.REPO / "bmv2_configs" / "topologies" / "demo.yaml")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=["model", "bmv2"])
def live(request):
    """`python -m testbed.live` on the demo topology's nic-0 and nic-3, as a user starts it."""
    extra = ["--model"] if request.param == "model" else []
    if request.param == "bmv2":
        reason = bmv2_skip_reason("switch") or bmv2_skip_reason("nic")
        if reason:
            pytest.skip(f"BMv2: {reason}")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "testbed.live", DEMO, "--nics", "nic-0,nic-3", "--port", str(port),
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    # A fabric that never says it is up is killed rather than waited on for
    # ever; what it printed instead is the failure's message.
    watchdog = threading.Timer(STARTUP_TIMEOUT, proc.kill)
    watchdog.start()
    try:
        line = proc.stdout.readline()
        watchdog.cancel()
        if not line.startswith("live fabric"):
            try:  # it is ending on its own (a refusal, a traceback): all it prints is the message
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            pytest.fail(f"testbed.live did not say it was up (exit {proc.poll()}): {line}{proc.stdout.read()}")
        yield f"127.0.0.1:{port}"
    finally:
        watchdog.cancel()
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def mrcctl(capsys, *args: str) -> str:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def sent(out: str, ev: int) -> int:
    """The `sent` count `mrcctl ev show` printed for `ev`."""
    [m] = re.findall(rf"^{ev:#010x} port \d+\s+\w+\s+\d+ slots\s+(\d+) sent$", out, re.M)
    return int(m)


def test_a_qp_pair_carries_data_and_a_denied_ev_leaves_it_with_its_event_watched(live, capsys):
    agent = ["--agent", live]
    out = mrcctl(capsys, "qp", "create", "nic-0", "nic-3", "--evs", "8", *agent)
    m = re.search(r"^nic-0 QP 1: EVs (.*)$", out, re.M)
    assert m is not None, out
    a_evs = [int(x, 16) for x in m.group(1).split()]
    watcher = subprocess.Popen([sys.executable, "-m", "control_plane.cli", "ev", "watch", "nic-0", "--count", "1",
                                "--timeout", "60", *agent], stdout=subprocess.PIPE, text=True)
    assert watcher.stdout is not None
    try:
        assert watcher.stdout.readline().startswith("watching nic-0")
        assert "delivered" in mrcctl(capsys, "qp", "send", "nic-0", "1", "65536", "--wait", "60", *agent)
        bad = a_evs[2]
        before = sent(mrcctl(capsys, "ev", "show", "nic-0", "1", *agent), bad)
        assert before > 0  # it carried data
        mrcctl(capsys, "ev", "set", "nic-0", "1", hex(bad), "DENIED", *agent)
        assert "delivered" in mrcctl(capsys, "qp", "send", "nic-0", "1", "65536", "--wait", "60", *agent)
        after = mrcctl(capsys, "ev", "show", "nic-0", "1", *agent)
        assert sent(after, bad) == before and re.search(rf"^{bad:#010x} port \d+\s+DENIED\s+0 slots", after, re.M)
        assert all(sent(after, ev) > before for ev in a_evs if ev != bad)  # the rest took the second message
        watched, _ = watcher.communicate(timeout=60)
        assert f"EV {bad:#010x}" in watched and "DENIED (admin)" in watched and watcher.returncode == 0
    finally:
        if watcher.poll() is None:
            watcher.kill()


def test_a_refused_request_is_one_line_naming_the_field(live, capsys):
    code = cli.main(["ev", "set", "nic-0", "7", "0x8", "DENIED", "--agent", live])
    _, err = capsys.readouterr()
    assert code == 1 and err.strip() == "error: qpn: nic-0 has no QP 7 (its QPs: [])"


def test_no_live_fabric_is_one_line():
    code = subprocess.run([sys.executable, "-m", "control_plane.cli", "qp", "show", "nic-0", "--agent",
                           f"127.0.0.1:{_free_port()}"], capture_output=True, text=True)
    assert code.returncode == 1 and code.stderr.count("\n") == 1 and "no live fabric answers there" in code.stderr
