"""python -m mrc_wire.dissect on hostile captures: each frame checked
against its capture length and its own length fields (as the switch's P4
checks payload_len against the frame), a snapped frame reported as such
with the fields it could read, a bad record reported and skipped where
the next one can be found, undefined opcodes and unknown link types
named, every read error one line, exit status 1 when any frame was
unreadable, 3 when the output could not be written, streaming in
bounded memory and refusing an endless input. The records are written
here byte by byte (pcap: libpcap's savefile format; pcapng: the IETF
draft's blocks), not by the dissector's reader."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys

import pytest

from mrc_wire import dissect
from mrc_wire import packet as W
from mrc_wire.constants import OP_SACK, OP_WRITE_FIRST
from tests.config.test_hostile_files import within

SRC, DST = bytes(15) + b"\1", bytes(15) + b"\2"
ETH = bytes(12) + b"\x86\xdd"
PAYLOAD = 1024
# a data packet: IPv6 40, UDP 8, BTH 12, METH 4, TSETH 4, RETH 16, payload, ICRC 4: UDP and IPv6 say 1072
DATA = ETH + W.build(SRC, DST, 8, 2, 0x12345678, OP_WRITE_FIRST, 7, 99, W.data_ext(3, 0, 9000, 77, 5), bytes(PAYLOAD))
SACK = ETH + W.build(SRC, DST, 46, 0, 0x1234, OP_SACK, 7, 99, W.sack_ext(0xAB, 100, 90, 0b101))


def outer(inner: bytes, plen: int | None = None) -> bytes:
    """Ethernet, an outer IPv6 header (next header 41) and `inner` (an IPv6 packet)."""
    n = len(inner) if plen is None else plen
    return ETH + bytes([0x60, 0, 0, 0]) + n.to_bytes(2, "big") + bytes([41, 64]) + bytes(32) + inner


def pcap(records: list[tuple[bytes, int]], link: int = 1) -> bytes:
    """A little-endian microsecond pcap of (captured bytes, original length) records."""
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, link)
    for i, (data, length) in enumerate(records):
        out += struct.pack("<IIII", i, 0, len(data), length) + data
    return out


def block(btype: int, body: bytes) -> bytes:
    body += bytes(-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


SHB = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))


def idb(link: int = 1) -> bytes:
    return block(1, struct.pack("<HHI", link, 0, 0))


def epb(frame: bytes, iface: int = 0, length: int | None = None) -> bytes:
    return block(6, struct.pack("<IIIII", iface, 0, 0, len(frame), len(frame) if length is None else length) + frame)


def run(tmp_path, capsys, data: bytes) -> tuple[int, list[dict], list[str]]:
    path = tmp_path / "c.pcap"
    path.write_bytes(data)
    with within(60):
        code = dissect.main([str(path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and all(line.isprintable() for line in err.splitlines()), err
    return code, [json.loads(line) for line in out.splitlines()], err.splitlines()


# ---- each frame against its capture length and its own length fields -------------------------------------------

def test_a_snapped_frame_is_marked_with_the_payload_its_length_fields_give(tmp_path, capsys):
    """tcpdump -s 128: every header is there, the payload is not; the lengths are the packet's."""
    code, [f], err = run(tmp_path, capsys, pcap([(DATA[:128], len(DATA))]))
    assert f["snapped"] == {"captured": 128, "length": len(DATA)} and "error" not in f
    assert f["ipv6"]["payload_len"] == 1072 and f["udp"]["len"] == 1072
    assert f["payload_len"] == PAYLOAD and f["reth"]["dmalen"] == 9000
    assert code == 0 and err == []


def test_a_frame_snapped_inside_its_headers_gives_what_it_could_read_and_fails(tmp_path, capsys):
    frame = outer(DATA[14:])  # 40 bytes more of headers: -s 128 cuts inside the RETH
    code, [f], err = run(tmp_path, capsys, pcap([(frame[:128], len(frame))]))
    assert f["snapped"] == {"captured": 128, "length": len(frame)}
    assert f["outer"]["next_header"] == 41 and f["bth"]["psn"] == 99 and f["meth"]["msn"] == 3 and "reth" not in f
    assert f["error"] == f"snapped inside the RETH: the capture kept 128 of the frame's {len(frame)} bytes"
    assert code == 1 and err == [f"error: {tmp_path / 'c.pcap'}: 1 of 1 frames unreadable (their lines say why)"]


def test_a_frame_cut_inside_its_ipv6_header_is_not_called_not_ipv6(tmp_path, capsys):
    code, [f], _ = run(tmp_path, capsys, pcap([(DATA[:34], 34)]))
    assert f == {"frame": 1, "error": "cut short inside the IPv6 header: 20 of its 40 bytes"}
    assert code == 1


def test_a_frame_shorter_than_its_ipv6_length_is_an_error_not_a_short_payload(tmp_path, capsys):
    code, [f], _ = run(tmp_path, capsys, pcap([(DATA[:100], 100)]))  # not snapped: the record says 100 of 100
    assert f["error"] == "IPv6 payload length 1072 runs 1026 bytes past the frame's end (100 bytes)"
    assert f["ipv6"]["payload_len"] == 1072 and "payload_len" not in f and code == 1


def test_udp_and_ipv6_lengths_must_agree(tmp_path, capsys):
    bad = bytearray(DATA)
    bad[14 + 40 + 4:14 + 40 + 6] = (1000).to_bytes(2, "big")  # UDP length 1000, IPv6 1072
    code, [f], _ = run(tmp_path, capsys, pcap([(bytes(bad), len(bad))]))
    assert f["error"] == "UDP length 1000 is not the IPv6 payload length 1072" and code == 1


def test_a_trimmed_fabric_frame_is_marked_trimmed_not_broken(tmp_path, capsys):
    """The switch cuts a trimmed frame to 256 bytes and sets the outer payload length (congestion.p4);
    the inner lengths still say what the packet carried."""
    frame = outer(DATA[14:], plen=256 - 54)[:256]
    code, [f], _ = run(tmp_path, capsys, pcap([(frame, 256)]))
    assert f["trimmed"] == {"kept": 256 - 14 - 40, "length": 1112} and "error" not in f  # of the inner packet
    assert f["payload_len"] == PAYLOAD and f["reth"]["dmalen"] == 9000 and code == 0


@pytest.mark.parametrize("opcode", [0x00, 0xFF, 0x04])
def test_an_opcode_mrc_does_not_define_is_not_mrc(tmp_path, capsys, opcode):
    frame = bytearray(SACK)
    frame[14 + 40 + 8] = opcode
    code, [f], _ = run(tmp_path, capsys, pcap([(bytes(frame), len(frame))]))
    assert f["not_mrc"] == f"BTH opcode 0x{opcode:02x} is not one MRC defines" and "seth" not in f
    assert code == 0  # read, and not MRC: not an unreadable frame


def test_ipv4_is_not_mrc_and_not_an_error(tmp_path, capsys):
    code, [f], _ = run(tmp_path, capsys, pcap([(bytes(12) + b"\x08\x00" + bytes(40), 54)]))
    assert f == {"frame": 1, "not_mrc": "ethertype 0x0800 is not IPv6"} and code == 0


# ---- records ------------------------------------------------------------------------------------------------------

def test_a_record_of_length_0xffffffff_is_reported_and_the_next_found(tmp_path, capsys):
    data = bytearray(pcap([(SACK, len(SACK))] * 3))
    second = 24 + 16 + len(SACK)
    data[second + 8:second + 12] = struct.pack("<I", 0xFFFFFFFF)  # its capture length; its original one is right
    code, got, err = run(tmp_path, capsys, bytes(data))
    assert [g["frame"] for g in got] == [1, 2, 3] and "seth" in got[0] and "seth" in got[2]
    assert got[1] == {"frame": 2, "error": "bad record: capture length 4,294,967,295 over 262,144 (the most a "
                                           "capture keeps); skipped by its original length"}
    assert code == 1


def test_a_record_whose_next_cannot_be_found_ends_the_file_in_one_line(tmp_path, capsys):
    data = bytearray(pcap([(SACK, len(SACK))] * 3))
    second = 24 + 16 + len(SACK)
    data[second + 8:second + 16] = struct.pack("<II", 0xFFFFFFFF, 0xFFFFFFF0)
    code, got, err = run(tmp_path, capsys, bytes(data))
    assert [g["frame"] for g in got] == [1]
    assert err == [f"error: {tmp_path / 'c.pcap'}: record 2 at offset {second}: capture length 4,294,967,295 over "
                   "262,144 (the most a capture keeps): the records after it cannot be found"]
    assert code == 1


def test_a_capture_cut_inside_a_record_says_so(tmp_path, capsys):
    code, got, err = run(tmp_path, capsys, pcap([(SACK, len(SACK))] * 2)[:-10])
    assert got[1]["error"] == f"the file ends inside this record: {len(SACK) - 10} of its {len(SACK)} bytes"
    assert code == 1


def test_a_pcap_of_a_link_type_it_does_not_read_is_one_line(tmp_path, capsys):
    code, got, err = run(tmp_path, capsys, pcap([(SACK, len(SACK))], link=105))
    assert got == [] and code == 1
    assert err == [f"error: {tmp_path / 'c.pcap'}: link type 105 is not Ethernet (1) or raw IP (101, 228, 229)"]


def test_pcapng_followed_by_random_bytes_is_one_line_and_exit_1(tmp_path, capsys):
    rng = random.Random(5)
    code, got, err = run(tmp_path, capsys, SHB + idb() + epb(SACK) + rng.randbytes(1 << 20))
    assert [g["frame"] for g in got] == [1] and code == 1
    assert len(err) == 1 and err[0].startswith(f"error: {tmp_path / 'c.pcap'}: pcapng block at offset "), err


def test_pcapng_unknown_interface_and_link_type_are_frame_errors(tmp_path, capsys):
    data = SHB + idb(1) + idb(105) + epb(SACK, 0) + epb(SACK, 1) + epb(SACK, 7) + epb(SACK, 0)
    code, got, _ = run(tmp_path, capsys, data)
    assert [g["frame"] for g in got] == [1, 2, 3, 4] and "seth" in got[0] and "seth" in got[3]
    assert got[1]["error"] == "link type 105 (interface 1) is not Ethernet (1) or raw IP (101, 228, 229)"
    assert got[2]["error"] == "interface 7 is not described in this section (it describes 2)"
    assert code == 1


def test_a_pcapng_packet_block_too_short_for_its_fields_is_skipped(tmp_path, capsys):
    short = block(6, struct.pack("<II", 0, 0))  # 8 bytes of a 20-byte fixed part: struct.error before
    code, got, _ = run(tmp_path, capsys, SHB + idb() + short + epb(SACK))
    assert got[0] == {"frame": 1, "error": "bad record: enhanced packet block of 20 bytes (at least 32)"}
    assert "seth" in got[1] and code == 1


# ---- inputs and outputs ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["fifo", "/dev/zero", "folder"])
def test_an_input_that_is_not_a_regular_file_is_refused_not_read(tmp_path, capsys, which):
    path = {"fifo": tmp_path / "p", "/dev/zero": "/dev/zero", "folder": tmp_path}[which]
    if which == "fifo":
        os.mkfifo(path)
    with within(10):
        assert dissect.main([str(path)]) == 1
    what = {"fifo": "a FIFO", "/dev/zero": "a character device", "folder": "a folder"}[which]
    assert capsys.readouterr().err == f"error: {path}: not a regular file ({what})\n"


def test_a_closed_stdout_ends_quietly(tmp_path):
    path = tmp_path / "c.pcap"
    path.write_bytes(pcap([(SACK, len(SACK))] * 20_000))
    proc = subprocess.Popen([sys.executable, "-m", "mrc_wire.dissect", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline()
    proc.stdout.close()  # `| head -1`
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3 and err == b""


def test_a_full_stdout_is_an_output_error_not_the_files(tmp_path):
    path = tmp_path / "c.pcap"
    path.write_bytes(pcap([(SACK, len(SACK))] * 100))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "mrc_wire.dissect", str(path)], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 3 and proc.stderr == "error: output: cannot write: No space left on device\n"


def test_a_large_capture_is_read_in_bounded_memory(tmp_path):
    """A 200 MB capture of 64 KB frames (not MRC, so the output is small): the dissector's peak RSS stays
    under 60 MiB (it read the whole file into memory: 1.2 GB for a 600 MB capture)."""
    frame = bytes(12) + b"\x08\x00" + bytes(65_000)
    rec = struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame
    path = tmp_path / "big.pcap"
    with open(path, "wb") as fh:
        fh.write(pcap([]))
        for _ in range(200_000_000 // len(rec)):
            fh.write(rec)
    # VmHWM is the child's own peak (ru_maxrss would count the parent's pages it was forked with)
    child = ("import sys; from mrc_wire import dissect; code = dissect.main(sys.argv[1:]); "
             "print([ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0], file=sys.stderr); "
             "sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", child, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=120)
    peak_kib = int(proc.stderr.split()[-2])
    assert proc.returncode == 0 and peak_kib < 60 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB"


def test_the_help_says_what_the_exit_status_means(capsys):
    assert dissect.main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "Exit status: 0" in text and "1 when any frame" in text and "3 when the output" in text
