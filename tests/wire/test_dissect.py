"""python -m mrc_wire.dissect on captures written here: every header kind,
inner and encapsulated frames, frames that are not MRC, pcapng."""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest

from mrc_wire import dissect, pcap
from mrc_wire import packet as W
from mrc_wire.constants import (
    EP_PORT_STATUS,
    NACK_PSN_OOR_WINDOW,
    OP_ACK,
    OP_EP_REQUEST,
    OP_EP_RESPONSE,
    OP_NACK,
    OP_PROBE,
    OP_SACK,
    OP_WRITE_FIRST,
)

SRC, DST = bytes(15) + b"\1", bytes(15) + b"\2"
ETH = bytes(12) + b"\x86\xdd"


def _frames() -> list[bytes]:
    b = lambda op, ext, **kw: ETH + W.build(SRC, DST, 46, 0, 0x12345678, op, 7, 99, ext, **kw)  # noqa: E731
    data = W.build(SRC, DST, 8, 2, 0x12345678, OP_WRITE_FIRST, 7, 99, W.data_ext(3, 4096, 9000, 77, 5), bytes(10))
    outer = bytes([0x60, 0, 0, 0]) + (len(data)).to_bytes(2, "big") + bytes([41, 64]) + bytes(32)
    return [ETH + data, ETH + outer + data,
            b(OP_SACK, W.sack_ext(0xAB, 100, 90, 0b101, m=1, ooo=2, rcvd=16)),
            b(OP_NACK, W.nack_ext(0xCD, NACK_PSN_OOR_WINDOW, 5000, ts=9)),
            b(OP_PROBE, W.probe_ext(42)), b(OP_ACK, W.aeth_ext(0x1F, 3)),
            b(OP_EP_REQUEST, W.erth_ext(EP_PORT_STATUS, 0b10)), b(OP_EP_RESPONSE, W.eeth_ext(EP_PORT_STATUS)),
            bytes(12) + b"\x08\x00" + bytes(40),  # IPv4
            (ETH + data)[:80]]  # cut inside the TSETH


def _run(tmp_path, frames):
    path = tmp_path / "c.pcap"
    pcap.write(path, [(float(i), f) for i, f in enumerate(frames)])
    out = subprocess.run([sys.executable, "-m", "mrc_wire.dissect", str(path)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 1 and out.stderr == f"error: {path}: 1 of 10 frames unreadable (their lines say why)\n"
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_every_header_kind_decodes_to_its_fields(tmp_path):
    got = _run(tmp_path, _frames())
    assert [g["frame"] for g in got] == list(range(1, 11))
    data, encap, sack, nack, probe, ack, req, resp, ipv4, cut = got
    assert data["bth"]["opcode"] == OP_WRITE_FIRST and data["bth"]["ts"] == 1 and data["bth"]["psn"] == 99
    assert data["meth"]["msn"] == 3 and data["tseth"]["tx_timestamp"] == 77
    assert data["reth"] == {"va": (3 << 32) | 4096, "r_key": 5, "dmalen": 9000}
    assert data["payload_len"] == 10 and data["ev"] == 0x12345678 and "outer" not in data
    assert encap["outer"]["next_header"] == 41 and encap["reth"] == data["reth"]
    assert (sack["seth"]["cack_psn"], sack["seth"]["ack_psn_offset"], sack["seth"]["sack_offset"]) == (99, -9, 2)
    assert (sack["seth"]["m"], sack["seth"]["entropy"], sack["seth"]["sack_bitmap"]) == (1, 0xAB, 0b101)
    assert sack["cc_state"]["ooo_count"] == 2 and sack["cc_state"]["rcvd_bytes"] == 16
    assert nack["neth"]["nack_reason"] == NACK_PSN_OOR_WINDOW and nack["neth"]["nack_psn"] == 5000
    assert probe["peth"]["probe_id"] == 42 and ack["aeth"] == {"syndrome": 0x1F, "msn": 3}
    assert req["erth"]["port_status_mask"] == 0b10 and resp["eeth"]["op"] == EP_PORT_STATUS
    assert ipv4 == {"frame": 9, "not_mrc": "ethertype 0x0800 is not IPv6"}
    assert cut["frame"] == 10 and cut["error"] == "IPv6 payload length 58 runs 32 bytes past the frame's end (80 bytes)"


def test_pcapng_is_read_too():
    shb = struct.pack("<IIIHHq", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1) + struct.pack("<I", 28)
    idb = struct.pack("<IIHHI", 1, 20, 1, 0, 0) + struct.pack("<I", 20)
    frame = _frames()[2]
    pad = (-len(frame)) % 4
    epb_len = 32 + len(frame) + pad
    epb = struct.pack("<IIIIIII", 6, epb_len, 0, 0, 0, len(frame), len(frame)) + frame + bytes(pad) + \
        struct.pack("<I", epb_len)
    [line] = list(dissect.lines(shb + idb + epb))
    assert json.loads(line)["seth"]["cack_psn"] == 99


def test_a_big_endian_pcap_is_read_in_its_own_byte_order():
    """libpcap writes the host's byte order: magic a1b2c3d4 first is big-endian (the mutation run's survivor:
    every file read as little-endian passed the tests)."""
    frame = _frames()[2]
    head = struct.pack(">IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)  # Ethernet
    rec = struct.pack(">IIII", 0, 0, len(frame), len(frame)) + frame
    [line] = list(dissect.lines(head + rec))
    assert json.loads(line)["seth"]["cack_psn"] == 99


def test_a_file_that_is_not_a_capture_is_one_line_and_exit_1(tmp_path):
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"hello world")
    out = subprocess.run([sys.executable, "-m", "mrc_wire.dissect", str(bad)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 1 and out.stderr.strip() == f"error: {bad}: not pcap or pcapng (magic 68656c6c)"


@pytest.mark.parametrize("data, why", [
    (b"", "too short for a capture header"),
    (b"\xd4\xc3", "too short for a capture header"),
    (b"\xd4\xc3\xb2\xa1", "pcap header cut short"),  # a magic alone: the file's own header is cut
    (b"\xd4\xc3\xb2\xa1" + bytes(19), "pcap header cut short"),
    (b"\x0a\x0d\x0d\x0a", "pcapng section header cut short"),  # not an empty capture
    (b"\x0a\x0d\x0d\x0a" + bytes(23), "pcapng section header cut short"),
])
def test_a_capture_cut_short_is_an_error_saying_where(data, why):
    with pytest.raises(dissect.CaptureError, match=why):
        list(dissect.frames(data))
