"""MRC 1.0's header fields as byte offsets and masks, written by hand from
the two public readings of the specification (the ns-3 model in
HanGuTalker/uet-simulator: src/mrc/model/mrc-header.cc and
src/roce/model/roce-v2-header.cc; anichol67/MRC-Client:
core/mrc_headers.py), not from mrc_wire: the conformance tests decode and
encode with this table and hold mrc_wire to it.

A field is (name, first byte, bytes read, right shift, bits, signed). The
bits where the readings differ (BTH byte 1's SE/M, BTH byte 8's RTX and
TS, the type/next bits) are marked DISPUTED and only round-tripped, never
held to one reading's value.
"""

from __future__ import annotations

Field = tuple[str, int, int, int, int, bool]


def f(name: str, at: int, n: int, shift: int, bits: int, signed: bool = False) -> Field:
    return (name, at, n, shift, bits, signed)


SIZES = {"bth": 12, "meth": 4, "tseth": 4, "reth": 16, "immdt": 4, "seth": 28, "cc_state": 8, "neth": 20,
         "peth": 16, "aeth": 4, "erth": 16, "eeth": 36}

# Both readings agree on these.
AGREED: dict[str, list[Field]] = {
    "bth": [f("opcode", 0, 1, 0, 8), f("padcnt", 1, 1, 4, 2), f("pkey", 2, 2, 0, 16), f("dqp", 5, 3, 0, 24),
            f("a", 8, 1, 7, 1), f("psn", 9, 3, 0, 24)],
    "meth": [f("rqmsn", 0, 2, 0, 16), f("msn", 2, 2, 0, 16)],
    "tseth": [f("tx_timestamp", 0, 2, 0, 16), f("tsr", 2, 1, 7, 1), f("ftype", 3, 1, 0, 4)],
    "reth": [f("va", 0, 8, 0, 64), f("r_key", 8, 4, 0, 32), f("dmalen", 12, 4, 0, 32)],
    "immdt": [f("imm", 0, 4, 0, 32)],
    "seth": [f("m", 1, 1, 5, 2), f("pr", 1, 1, 1, 1), f("ack_psn_offset", 2, 2, 0, 16, True),
             f("entropy", 4, 4, 0, 32), f("spdcid", 8, 2, 0, 16), f("dpdcid", 10, 2, 0, 16),
             f("cack_psn", 13, 3, 0, 24), f("cc_type", 16, 1, 4, 4), f("cc_fl", 16, 1, 0, 4), f("mpr", 17, 1, 0, 8),
             f("sack_offset", 18, 2, 0, 16, True), f("sack_bitmap", 20, 8, 0, 64)],
    "cc_state": [f("tx_timestamp", 0, 2, 0, 16), f("ooo_count", 2, 2, 0, 15), f("r_c", 4, 1, 7, 1),
                 f("rcv_cwnd_pen", 4, 1, 0, 7), f("rcvd_bytes", 5, 3, 0, 24)],
    "neth": [f("nack_reason", 2, 1, 0, 8), f("vendor_info", 3, 1, 0, 8), f("entropy", 4, 4, 0, 32),
             f("spdcid", 8, 2, 0, 16), f("dpdcid", 10, 2, 0, 16), f("nack_psn", 13, 3, 0, 24),
             f("cc_type", 16, 1, 4, 4), f("tx_timestamp", 18, 2, 0, 16)],
    "peth": [f("vendor_info", 3, 1, 0, 8), f("probe_id", 4, 2, 0, 16), f("spdcid", 8, 2, 0, 16),
             f("dpdcid", 10, 2, 0, 16), f("tx_timestamp", 12, 2, 0, 16), f("tsr", 14, 1, 7, 1),
             f("ftype", 15, 1, 0, 4)],
    "aeth": [f("syndrome", 0, 1, 0, 8), f("msn", 1, 3, 0, 24)],
    # ERTH/EETH: MRC-Client's alone (the ns-3 reading gives no bytes for them).
    "erth": [f("op", 1, 1, 0, 2), f("vendor_info", 3, 1, 0, 8), f("port_status_mask", 4, 4, 0, 32),
             f("tx_timestamp", 12, 2, 0, 16), f("tsr", 14, 1, 7, 1), f("ftype", 15, 1, 0, 4)],
    "eeth": [f("op", 1, 1, 4, 2), f("tx_timestamp", 28, 2, 0, 16)],
}

# Where the readings differ: this project's choice (docs/nic.md, "Choices").
DISPUTED: dict[str, list[Field]] = {
    "bth": [f("se", 1, 1, 7, 1), f("m", 1, 1, 6, 1), f("tver", 1, 1, 0, 4), f("rtx", 8, 1, 5, 1), f("ts", 8, 1, 4, 1)],
    **{h: [f("htype", 0, 1, 4, 4), f("nxt", 0, 2, 7, 5)] for h in ("seth", "neth", "peth", "erth", "eeth")},
}


def fields(name: str) -> list[Field]:
    return AGREED[name] + DISPUTED.get(name, [])


def decode(name: str, buf: bytes, at: int = 0) -> dict[str, int]:
    out = {}
    for fname, first, n, shift, bits, signed in fields(name):
        v = (int.from_bytes(buf[at + first:at + first + n], "big") >> shift) & ((1 << bits) - 1)
        out[fname] = v - (1 << bits) if signed and v >> (bits - 1) else v
    return out


def encode(name: str, values: dict[str, int]) -> bytes:
    buf = bytearray(SIZES[name])
    for fname, first, n, shift, bits, _ in fields(name):
        v = values.get(fname, 0) & ((1 << bits) - 1)
        word = int.from_bytes(buf[first:first + n], "big") | (v << shift)
        buf[first:first + n] = word.to_bytes(n, "big")
    return bytes(buf)
