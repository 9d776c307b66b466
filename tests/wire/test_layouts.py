"""The MRC 1.0 layouts live once in mrc_wire (headers.LAYOUTS) and once in
the P4 programs (p4src/include/headers.p4): every header field for field,
name and width, in order; and the lengths mrc_wire.constants names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mrc_wire import constants as C
from mrc_wire import headers as L

HEADERS_P4 = Path(__file__).resolve().parents[2] / "p4src" / "include" / "headers.p4"


def p4_header(name: str) -> list[tuple[str, int]]:
    text = HEADERS_P4.read_text()
    m = re.search(rf"header {name}_t \{{(.*?)\}}", text, re.S)
    assert m, f"no header {name}_t in {HEADERS_P4.name}"
    return [(f, int(w)) for w, f in re.findall(r"bit<(\d+)>\s+(\w+);", m.group(1))]


@pytest.mark.parametrize("name", sorted(L.LAYOUTS))
def test_the_p4_header_equals_the_layout(name):
    assert p4_header(name) == [(f.name, f.bits) for f in L.LAYOUTS[name]]


def test_the_constants_name_the_layouts_sizes():
    assert [L.size(n) for n in ("bth", "meth", "tseth", "reth", "immdt", "seth", "cc_state", "neth", "peth", "aeth",
                                "erth", "eeth", "icrc")] == [
        C.BTH_LEN, C.METH_LEN, C.TSETH_LEN, C.RETH_LEN, C.IMMDT_LEN, C.SETH_LEN, C.CC_STATE_LEN, C.NETH_LEN,
        C.PETH_LEN, C.AETH_LEN, C.ERTH_LEN, C.EETH_LEN, C.ICRC_LEN]


def test_the_p4_opcodes_and_reasons_are_mrc_wires():
    text = HEADERS_P4.read_text()
    for name in ("OP_ACK", "OP_EP_REQUEST", "OP_EP_RESPONSE", "OP_SACK", "OP_NACK", "OP_PROBE", "NACK_TRIMMED",
                 "NACK_TRIMMED_LASTHOP", "NACK_PSN_OOR_WINDOW", "NETH_CC_TYPE"):
        m = re.search(rf"const bit<\d+> {name}\s*=\s*(0x[0-9A-Fa-f]+|\d+);", text)
        assert m and int(m.group(1), 0) == getattr(C, name), name
    for name, value in (("UDP_BYTES", C.UDP_LEN), ("BTH_BYTES", C.BTH_LEN), ("NETH_BYTES", C.NETH_LEN),
                        ("ICRC_BYTES", C.ICRC_LEN)):
        assert re.search(rf"const bit<16> {name}\s*=\s*{value};", text), name


def test_the_header_stack_of_each_opcode_is_what_the_codec_reads():
    from mrc_wire import packet as W

    for op in range(256):
        for ts in (0, 1):
            assert sum(L.size(h) for h in L.stack(op, ts)) == W.ext_len(op, ts * C.BTH_TS), (hex(op), ts)


def test_the_codecs_data_opcode_test_is_data_opcodes():
    from mrc_wire import packet as W

    assert [op for op in range(256) if W.is_data_opcode(op)] == list(C.DATA_OPCODES)


def test_a_field_not_given_packs_as_zero():
    """AETH is syndrome:8 then MSN:24 (DESIGN.md section 6): the MSN left out is three zero bytes (the
    mutation run's survivor: a default of 1 passed every test)."""
    assert L.pack("aeth", syndrome=0x1F) == bytes([0x1F, 0, 0, 0])
    assert L.pack("aeth") == bytes(4)
