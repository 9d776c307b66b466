"""The Wireshark Lua dissector (wireshark/mrc.lua): generated from
mrc_wire.headers, and, where tshark is installed, decoding every header
kind of a capture to the values mrc_wire.dissect gives, field for field."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mrc_wire import headers as L
from mrc_wire import lua, pcap
from tests.wire.test_dissect import _frames

LUA = Path(__file__).resolve().parents[2] / "wireshark" / "mrc.lua"


def test_the_committed_dissector_is_generated_from_the_layouts():
    assert LUA.read_text() == lua.lua(), "run: python -m mrc_wire.lua > wireshark/mrc.lua"


def _fields() -> list[tuple[str, str]]:
    return [(h, f.name) for h, fs in L.LAYOUTS.items() for f in fs if not f.name.startswith("reserved")]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed (Debian: apt-get install tshark)")
def test_tshark_decodes_every_field_as_the_python_dissector(tmp_path):
    path = tmp_path / "c.pcap"
    frames = _frames()[:8]  # the MRC ones
    pcap.write(path, [(float(i), f) for i, f in enumerate(frames)])
    names = _fields()
    cmd = ["tshark", "-X", f"lua_script:{LUA}", "-o", "udp.try_heuristic_first:TRUE", "-r", str(path), "-T",
           "fields", "-E", "occurrence=l"] + [a for h, f in names for a in ("-e", f"mrc.{h}.{f}")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    py = subprocess.run([sys.executable, "-m", "mrc_wire.dissect", str(path)], capture_output=True, text=True,
                        timeout=60).stdout.splitlines()
    rows = out.stdout.splitlines()
    assert len(rows) == len(py) == 8
    for row, line in zip(rows, py, strict=True):
        want = json.loads(line)
        got = {(h, f): int(v, 0) for (h, f), v in zip(names, row.split("\t"), strict=True) if v}
        assert got == {(h, f): v for h, fields in want.items() if h in L.LAYOUTS for f, v in fields.items()}
