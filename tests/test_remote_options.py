"""The packet suites' remote-device options (docs/ptf.md): ptf's interface
form, fabric-tna's port map, and errors that name the option and value."""

import json
import os

import pytest

from testbed.remote import RemoteConfigError, RemoteDevice, load_port_map, parse_interface


def test_interface_forms_of_ptf():
    assert parse_interface("3@veth7") == (3, "veth7")
    assert parse_interface("0-2@eth1") == (2, "eth1")
    for bad in ("veth7", "x@veth7", "1-3@eth1"):
        with pytest.raises(RemoteConfigError, match="--interface"):
            parse_interface(bad)


def test_port_map_file(tmp_path):
    f = tmp_path / "pm.json"
    f.write_text(json.dumps([{"ptf_port": 0, "p4_port": 128, "iface_name": "eth0"}]))
    assert load_port_map(f) == {0: (128, "eth0")}
    f.write_text(json.dumps([{"ptf_port": 0, "p4_port": "128", "iface_name": "eth0"}]))
    with pytest.raises(RemoteConfigError, match=r"entry \[0\]\.p4_port: expected int, got '128'"):
        load_port_map(f)
    f.write_text(json.dumps([{"ptf_port": 0, "p4_port": 1, "iface_name": "a"}] * 2))
    with pytest.raises(RemoteConfigError, match=r"entry \[1\]\.ptf_port: 0 is listed twice"):
        load_port_map(f)
    with pytest.raises(RemoteConfigError, match="--port-map"):
        load_port_map(tmp_path / "missing.json")


def test_every_port_a_suite_sends_on_needs_an_interface():
    dev = RemoteDevice("127.0.0.1:1", ports={0: (128, "a"), 1: (136, "b")})
    assert dev.device_ports([0, 1], "switch") == {0: 128, 1: 136}
    with pytest.raises(RemoteConfigError, match=r"ports \[2, 3\] have no interface"):
        dev.device_ports([0, 1, 2, 3], "switch")


def test_a_port_map_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    from tests.config.test_hostile_files import within

    f = tmp_path / "map.json"
    os.mkfifo(f)
    with within(10), pytest.raises(RemoteConfigError, match=r"^--port-map .*: not a regular file \(a FIFO\)"):
        load_port_map(f)
