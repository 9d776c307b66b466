"""mrc_wire's MRC 1.0 headers against an independent table of offsets
(tests/wire/offsets.py, written from the two public readings): random
field values, the signed offsets' extremes among them, both ways, for
every header; the fast codec's builders and parser too."""

from __future__ import annotations

import random

import pytest

from mrc_wire import headers as L
from mrc_wire import packet as W
from mrc_wire.constants import OP_NACK, OP_SACK, OP_WRITE_ONLY, OP_WRITE_ONLY_IMM, SACK_OFFSET
from tests.wire import offsets as T

NAMES = sorted(T.SIZES)
SRC, DST = bytes(15) + b"\1", bytes(15) + b"\2"


def _random(name: str, rng: random.Random) -> dict[str, int]:
    out = {}
    for fname, _, _, _, bits, signed in T.fields(name):
        if signed:
            out[fname] = rng.choice([-(1 << (bits - 1)), (1 << (bits - 1)) - 1, -1, 0,
                                     rng.randrange(-(1 << (bits - 1)), 1 << (bits - 1))])
        else:
            out[fname] = rng.choice([0, (1 << bits) - 1, rng.randrange(1 << bits)])
    return out


@pytest.mark.parametrize("name", NAMES)
def test_sizes_agree(name):
    assert L.size(name) == T.SIZES[name]


@pytest.mark.parametrize("name", NAMES)
def test_packed_fields_sit_where_the_readings_put_them(name):
    rng = random.Random(name)
    for _ in range(300):
        values = _random(name, rng)
        assert T.decode(name, L.pack(name, **values)) == values


@pytest.mark.parametrize("name", NAMES)
def test_fields_the_readings_place_unpack_to_their_values(name):
    rng = random.Random(name + "back")
    for _ in range(300):
        values = _random(name, rng)
        got = L.unpack(name, T.encode(name, values))
        assert {k: got[k] for k in values} == values


def test_a_value_too_wide_for_its_field_is_refused_by_name():
    with pytest.raises(ValueError, match=r"seth\.ack_psn_offset = 32768"):
        L.pack("seth", ack_psn_offset=32768)
    with pytest.raises(ValueError, match="no field 'bogus'"):
        L.pack("bth", bogus=1)


# ---- the fast codec (mrc_wire.packet) ----------------------------------------

def _ext(raw: bytes) -> bytes:
    return raw[W.HDR_LEN:]


def test_data_headers_as_built_and_parsed():
    rng = random.Random(1)
    for _ in range(200):
        msg_id, offset, msg_len = rng.randrange(1 << 32), rng.randrange(1 << 32), rng.randrange(1 << 32)
        ts, r_key, psn = rng.randrange(1 << 16), rng.randrange(1 << 32), rng.randrange(1 << 24)
        raw = W.build(SRC, DST, 8, 2, 5, OP_WRITE_ONLY, 7, psn, W.data_ext(msg_id, offset, msg_len, ts, r_key),
                      b"xy", ackreq=1, retx=1)
        bth = T.decode("bth", raw, 48)
        assert (bth["opcode"], bth["dqp"], bth["psn"], bth["a"], bth["rtx"], bth["ts"]) == (OP_WRITE_ONLY, 7, psn,
                                                                                          1, 1, 1)
        ext = _ext(raw)
        assert T.decode("meth", ext) == {"rqmsn": 0, "msn": msg_id & 0xFFFF}
        assert T.decode("tseth", ext, 4) == {"tx_timestamp": ts, "tsr": 0, "ftype": 1}
        assert T.decode("reth", ext, 8) == {"va": (msg_id << 32) | offset, "r_key": r_key, "dmalen": msg_len}
        assert raw[-4:] == bytes(4)  # ICRC
        m = W.Mrc(raw)
        assert m.data() == (msg_id, offset, msg_len) and m.tx_timestamp() == ts and m.payload == b"xy"


def test_immediate_opcodes_carry_immdt_after_reth():
    ext = W.data_ext(1, 0, 4) + T.encode("immdt", {"imm": 0xCAFE})
    m = W.Mrc(W.build(SRC, DST, 8, 2, 5, OP_WRITE_ONLY_IMM, 7, 0, ext, b"abcd"))
    assert m.ext == 28 and m.payload == b"abcd"


def test_data_without_tseth_is_read_by_its_bth_flag():
    """Another MRC 1.0 sender may leave TSETH out (BTH TS clear): RETH then follows METH."""
    bth = T.encode("bth", {"opcode": OP_WRITE_ONLY, "dqp": 3, "psn": 9, "pkey": 0xFFFF})
    ext = T.encode("meth", {"msn": 4}) + T.encode("reth", {"va": (4 << 32) | 8192, "dmalen": 9000})
    udp = (1).to_bytes(2, "big") + (4791).to_bytes(2, "big") + (8 + 12 + len(ext) + 4).to_bytes(2, "big") + bytes(2)
    ip = bytes([0x60, 0, 0, 0]) + (8 + 12 + len(ext) + 4).to_bytes(2, "big") + bytes([17, 64]) + SRC + DST
    m = W.Mrc(ip + udp + bth + ext + bytes(4))
    assert m.data() == (4, 8192, 9000) and m.tx_timestamp() == 0 and m.payload_len == 0


def test_sack_as_built():
    rng = random.Random(2)
    for _ in range(300):
        ev, cum, bitmap = rng.randrange(1 << 32), rng.randrange(1 << 24), rng.randrange(1 << 64)
        ack_psn = (cum - 1 + rng.choice([-40000, -32768, -1, 0, 1, 32767, 40000, rng.randrange(-99, 99)])) & 0xFFFFFF
        m, ts, ooo, rcvd = rng.randrange(3), rng.randrange(1 << 16), rng.randrange(1 << 15), rng.randrange(1 << 24)
        raw = W.build(SRC, DST, 46, 0, 5, OP_SACK, 7, 0, W.sack_ext(ev, cum, ack_psn, bitmap, m=m, spdcid=0x1234,
                                                                   dpdcid=0x10005, ts=ts, ooo=ooo, rcvd=rcvd))
        seth = T.decode("seth", _ext(raw))
        cack = (cum - 1) & 0xFFFFFF
        d = ((ack_psn - cack + (1 << 23)) & 0xFFFFFF) - (1 << 23)
        assert seth == {"m": m, "pr": 0, "ack_psn_offset": max(-32768, min(32767, d)), "entropy": ev,
                        "spdcid": 0x1234, "dpdcid": 5, "cack_psn": cack, "cc_type": 0, "cc_fl": 0, "mpr": 0,
                        "sack_offset": SACK_OFFSET, "sack_bitmap": bitmap, "htype": 0, "nxt": 0}
        assert T.decode("cc_state", _ext(raw), 28) == {"tx_timestamp": ts, "ooo_count": ooo, "r_c": 0,
                                                        "rcv_cwnd_pen": 0, "rcvd_bytes": rcvd}


def test_sack_parsed_whatever_offset_the_receiver_chose():
    """Bitmap bit k is PSN cack_psn + sack_offset + k (the readings); Mrc.sack() gives it from cum + 1."""
    rng = random.Random(3)
    for _ in range(300):
        cack, off = rng.randrange(1 << 24), rng.choice([-32768, -1, 1, 2, 3, 64, 32767, rng.randrange(1, 200)])
        ack_off = rng.choice([-32768, 32767, rng.randrange(-500, 500)])
        bitmap = rng.randrange(1 << 64)
        seth = T.encode("seth", {"m": 1, "ack_psn_offset": ack_off, "entropy": 77, "cack_psn": cack,
                                 "sack_offset": off, "sack_bitmap": bitmap})
        raw = W.build(SRC, DST, 46, 0, 5, OP_SACK, 7, 0, seth + bytes(8))
        ev, mark, cum, ack_psn, bits = W.Mrc(raw).sack()
        assert (ev, mark, cum, ack_psn) == (77, 1, (cack + 1) & 0xFFFFFF, (cack + ack_off) & 0xFFFFFF)
        got = {(cum + 1 + k) & 0xFFFFFF for k in range(bits.bit_length()) if bits >> k & 1}
        want = {(cack + off + k) & 0xFFFFFF for k in range(64) if bitmap >> k & 1}
        assert got == {p for p in want if ((p - cum - 1) & 0xFFFFFF) < 1 << 23}


def test_probe_and_its_answer():
    for pid in (0, 1, 0x7FFF, 0x8000, 0xFFFF):
        peth = T.decode("peth", _ext(W.build(SRC, DST, 46, 0, 5, 0xDE, 7, 0, W.probe_ext(pid, spdcid=1, dpdcid=2))))
        assert (peth["probe_id"], peth["spdcid"], peth["dpdcid"], peth["ftype"]) == (pid, 1, 2, 1)
        reply = W.Mrc(W.build(SRC, DST, 46, 0, 5, OP_SACK, 7, 0, W.probe_reply_ext(0xABCDEF, pid, 10, 0)))
        seth = T.decode("seth", _ext(reply.raw))
        assert seth["pr"] == 1 and seth["entropy"] == 0xABCDEF and seth["ack_psn_offset"] & 0xFFFF == pid
        assert reply.probe_response and reply.probe_reply() == (0xABCDEF, pid)


def test_nack_as_built_and_parsed():
    rng = random.Random(4)
    for _ in range(200):
        ev, reason = rng.randrange(1 << 32), rng.choice([1, 2, 6, 7, 0xA, 0xB, 0x19])
        psn, ts = rng.randrange(1 << 24), rng.randrange(1 << 16)
        raw = W.build(SRC, DST, 46, 0, 5, OP_NACK, 7, psn, W.nack_ext(ev, reason, psn, spdcid=3, dpdcid=4, ts=ts))
        assert T.decode("neth", _ext(raw)) == {"nack_reason": reason, "vendor_info": 0, "entropy": ev, "spdcid": 3,
                                               "dpdcid": 4, "nack_psn": psn, "cc_type": 2, "tx_timestamp": ts,
                                               "htype": 0, "nxt": 0}
        assert W.Mrc(raw).nack() == (ev, reason, psn)


def test_endpoint_request_response_and_aeth():
    for op, mask in ((0, 0), (0, 0xFF), (1, 0xFFFFFFFF)):
        erth = T.decode("erth", W.erth_ext(op, mask, ts=9))
        assert (erth["op"], erth["port_status_mask"], erth["tx_timestamp"], erth["ftype"]) == (op, mask, 9, 1)
        m = W.Mrc(W.build(SRC, DST, 46, 0, 5, 0xD8, 7, 0, W.erth_ext(op, mask)))
        assert m.endpoint_op() == (op, mask)
        assert T.decode("eeth", W.eeth_ext(op, ts=5))["op"] == op
        assert W.Mrc(W.build(SRC, DST, 46, 0, 5, 0xD9, 7, 0, W.eeth_ext(op))).endpoint_op() == (op, 0)
    assert T.decode("aeth", W.aeth_ext(0x60, 0x123456)) == {"syndrome": 0x60, "msn": 0x123456}
