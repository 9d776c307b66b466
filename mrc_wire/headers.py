"""The MRC 1.0 header layouts, defined once (DESIGN.md section 6).

Each header is its fields in wire order, most significant bit first, as
(name, bits) or (name, bits, signed). The P4 programs' headers
(p4src/include/headers.p4, `<name>_t`) are held equal to these field for
field by tests/wire/test_layouts.py; the fast codec (mrc_wire.packet)
writes the same bits with `struct` and is held to `pack`/`unpack` here;
the dissector (mrc_wire.dissect) and the Wireshark dissector
(mrc_wire.lua, generated from this table) read through them.

Sources: two public readings of the OCP MRC 1.0 specification (Revision
1.0), the ns-3 model in HanGuTalker/uet-simulator (src/mrc/model/
mrc-header.*, src/roce/model/roce-v2-header.*) and anichol67/MRC-Client
(core/mrc_headers.py, which cites the specification's tables 6-3 to
7-23). Where they differ the choice is in docs/nic.md ("Choices"); fields
named `reserved*` are written as zero and not reported.
"""

from __future__ import annotations

from typing import Final, NamedTuple


class Field(NamedTuple):
    name: str
    bits: int
    signed: bool = False


def _f(name: str, bits: int, signed: bool = False) -> Field:
    return Field(name, bits, signed)


# The type/next bits in front of SETH, NETH, PETH, ERTH and EETH: zero in
# both readings' packets; named htype/nxt (P4 reserves `type` and `next`).
_TYPE_NEXT: Final = (_f("htype", 4), _f("nxt", 5))

LAYOUTS: Final[dict[str, tuple[Field, ...]]] = {
    # Base Transport Header. Byte 1 as IBTA (SE, M, pad count, version: the
    # ns-3 reading; MRC-Client swaps SE and M); byte 4 holds IBTA's FECN and
    # BECN (reserved in MRC: the RoCE baseline's ACK echoes congestion in
    # BECN); byte 8: A, reserved, RTX, TS (MRC-Client's; ns-3: RTX at 0x40).
    "bth": (_f("opcode", 8), _f("se", 1), _f("m", 1), _f("padcnt", 2), _f("tver", 4), _f("pkey", 16),
            _f("fecn", 1), _f("becn", 1), _f("reserved", 6), _f("dqp", 24),
            _f("a", 1), _f("reserved2", 1), _f("rtx", 1), _f("ts", 1), _f("reserved3", 4), _f("psn", 24)),
    "meth": (_f("rqmsn", 16), _f("msn", 16)),
    "tseth": (_f("tx_timestamp", 16), _f("tsr", 1), _f("reserved", 11), _f("ftype", 4)),
    "reth": (_f("va", 64), _f("r_key", 32), _f("dmalen", 32)),
    "immdt": (_f("imm", 32),),
    "seth": (*_TYPE_NEXT, _f("m", 2), _f("reserved", 3), _f("pr", 1), _f("reserved2", 1),
             _f("ack_psn_offset", 16, True), _f("entropy", 32), _f("spdcid", 16), _f("dpdcid", 16),
             _f("reserved3", 8), _f("cack_psn", 24), _f("cc_type", 4), _f("cc_fl", 4), _f("mpr", 8),
             _f("sack_offset", 16, True), _f("sack_bitmap", 64)),
    "cc_state": (_f("tx_timestamp", 16), _f("reserved", 1), _f("ooo_count", 15), _f("r_c", 1),
                 _f("rcv_cwnd_pen", 7), _f("rcvd_bytes", 24)),
    "neth": (*_TYPE_NEXT, _f("reserved", 7), _f("nack_reason", 8), _f("vendor_info", 8), _f("entropy", 32),
             _f("spdcid", 16), _f("dpdcid", 16), _f("reserved2", 8), _f("nack_psn", 24), _f("cc_type", 4),
             _f("cc_fl", 4), _f("reserved3", 8), _f("tx_timestamp", 16)),
    "peth": (*_TYPE_NEXT, _f("reserved", 7), _f("reserved2", 8), _f("vendor_info", 8), _f("probe_id", 16),
             _f("reserved3", 16), _f("spdcid", 16), _f("dpdcid", 16), _f("tx_timestamp", 16), _f("tsr", 1),
             _f("reserved4", 11), _f("ftype", 4)),
    "aeth": (_f("syndrome", 8), _f("msn", 24)),
    # Endpoint request and response: MRC-Client's layouts (the ns-3 reading
    # does not give their bytes).
    "erth": (*_TYPE_NEXT, _f("reserved", 5), _f("op", 2), _f("reserved2", 8), _f("vendor_info", 8),
             _f("port_status_mask", 32), _f("reserved3", 32), _f("tx_timestamp", 16), _f("tsr", 1),
             _f("reserved4", 11), _f("ftype", 4)),
    "eeth": (*_TYPE_NEXT, _f("reserved", 1), _f("op", 2), _f("reserved2", 1), _f("reserved3", 19),
             _f("reserved4", 64), _f("reserved5", 64), _f("reserved6", 64),  # no field wider than 64 bits (p4c-dpdk)
             _f("tx_timestamp", 16), _f("reserved7", 16), _f("reserved8", 32)),
    "icrc": (_f("icrc", 32),),
}


def size(name: str) -> int:
    """Bytes of header `name`."""
    bits = sum(f.bits for f in LAYOUTS[name])
    assert bits % 8 == 0, name
    return bits // 8


def unpack(name: str, buf: bytes, at: int = 0) -> dict[str, int]:
    """Header `name` read from `buf` at byte `at`: every field but the
    reserved ones, as integers (signed where the layout says so)."""
    n = size(name)
    if len(buf) < at + n:
        raise ValueError(f"{name}: {n} bytes needed at offset {at}, {max(0, len(buf) - at)} there")
    word = int.from_bytes(buf[at:at + n], "big")
    left = n * 8
    out: dict[str, int] = {}
    for f in LAYOUTS[name]:
        left -= f.bits
        v = (word >> left) & ((1 << f.bits) - 1)
        if f.signed and v >> (f.bits - 1):
            v -= 1 << f.bits
        if not f.name.startswith("reserved"):
            out[f.name] = v
    return out


def pack(name: str, **values: int) -> bytes:
    """Header `name` with the given fields (the rest zero). A value that
    does not fit its field raises ValueError naming it."""
    fields = LAYOUTS[name]
    known = {f.name for f in fields}
    for k in values:
        if k not in known:
            raise ValueError(f"{name} has no field {k!r}")
    word = 0
    for f in fields:
        v = values.get(f.name, 0)
        lo, hi = (-(1 << (f.bits - 1)), (1 << (f.bits - 1)) - 1) if f.signed else (0, (1 << f.bits) - 1)
        if not lo <= v <= hi:
            raise ValueError(f"{name}.{f.name} = {v} does not fit {f.bits} bits")
        word = (word << f.bits) | (v & ((1 << f.bits) - 1))
    return word.to_bytes(size(name), "big")


# The headers after the BTH, per opcode (DESIGN.md section 6); a data
# packet's TSETH only when the BTH's TS flag says so.
_DATA_STACK: Final = ("meth", "tseth", "reth")
_CONTROL_STACK: Final[dict[int, tuple[str, ...]]] = {
    0xD1: ("aeth",), 0xD8: ("erth",), 0xD9: ("eeth",), 0xDC: ("seth", "cc_state"), 0xDD: ("neth",), 0xDE: ("peth",)}
DATA_OPCODE_RANGE: Final = (0xC6, 0xCB)
IMM_OPCODE_SET: Final = (0xC9, 0xCB)


def stack(opcode: int, ts: int) -> tuple[str, ...]:
    """The MRC headers after a BTH of `opcode` with TS flag `ts` (empty for
    an opcode MRC does not define)."""
    if DATA_OPCODE_RANGE[0] <= opcode <= DATA_OPCODE_RANGE[1]:
        hdrs = _DATA_STACK if ts else ("meth", "reth")
        return hdrs + ("immdt",) if opcode in IMM_OPCODE_SET else hdrs
    return _CONTROL_STACK.get(opcode, ())
