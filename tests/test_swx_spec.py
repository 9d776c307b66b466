"""testbed/swx_spec.py: a spec's metadata packed into the 256 bytes SWX
addresses (its operands carry an 8-bit byte offset), on hand-written specs
whose answers are worked out here, and the committed NIC spec held to it."""

from __future__ import annotations

import re

import pytest

from testbed import toolchain
from testbed.swx_spec import MAX_BYTES, PackError, Spec, pack_spec

HEAD = """struct eth_t {
\tbit<48> dst
\tbit<48> src
\tbit<16> type
}

header ethernet instanceof eth_t

struct meta_t {
%s}
metadata instanceof meta_t

"""


def spec(fields: dict[str, int], apply: str, extra: str = "") -> str:
    return HEAD % "".join(f"\tbit<{w}> {f}\n" for f, w in fields.items()) + extra + "apply {\n" + apply + "}\n"


def packed_fields(text: str) -> dict[str, int]:
    return Spec.parse(text).width


def test_fields_never_live_at_once_share_a_slot_and_those_that_are_do_not():
    # a is dead once b is written: they share; c is read with b: its own slot.
    text = spec({"port": 32, "a": 32, "b": 32, "c": 32}, """\trx m.port
\tmov m.a 0x1
\tmov h.ethernet.type m.a
\tmov m.b 0x2
\tmov m.c 0x3
\tadd m.b m.c
\tmov h.ethernet.type m.b
\ttx m.port
""")
    out, p = pack_spec(text)
    assert p.where["a"] == p.where["b"] and p.where["c"] != p.where["b"] and p.where["port"] not in (p.where["b"],
                                                                                                       p.where["c"])
    assert p.after == 12 and p.before == 16
    assert f"add m.{p.where['b']} m.{p.where['c']}" in out


def test_a_narrow_field_in_a_wider_slot_is_masked_after_each_write_that_can_overflow():
    # w (64 bits) dies before n (8 bits) is written: n takes w's slot and
    # wraps at 8 bits after its add; a mov of an immediate that fits needs no mask.
    text = spec({"port": 32, "w": 64, "n": 8}, """\trx m.port
\tmov m.w h.ethernet.dst
\tmov h.ethernet.src m.w
\tmov m.n 0xff
\tadd m.n 0x1
\tmov h.ethernet.type m.n
\ttx m.port
""")
    out, p = pack_spec(text)
    slot = p.where["n"]
    assert slot == p.where["w"] and p.masked == {"n": 8}
    lines = [ln.strip() for ln in out.split("apply {")[1].splitlines()]
    i = lines.index(f"add m.{slot} 0x1")
    assert lines[i + 1] == f"and m.{slot} 0xff"
    assert f"mov m.{slot} 0xff" in lines and lines[lines.index(f"mov m.{slot} 0xff") + 1] != f"and m.{slot} 0xff"


def test_what_the_next_pass_reads_survives_the_recirculation():
    # kept is written in the first pass and read in the second (after
    # recirculate): nothing the first pass writes after it may take its slot.
    text = spec({"pass": 8, "port": 32, "kept": 32, "t": 32}, """\trx m.port
\trecircid m.pass
\tjmpneq SECOND m.pass 0x0
\tmov m.kept h.ethernet.type
\tmov m.t 0x5
\tmov h.ethernet.type m.t
\trecirculate
\tjmp END
SECOND :\tmov h.ethernet.type m.kept
END :\ttx m.port
""")
    _, p = pack_spec(text)
    assert p.where["kept"] != p.where["t"]


def test_a_write_between_recirculate_and_tx_is_refused():
    text = spec({"port": 32, "t": 32}, """\trx m.port
\trecirculate
\tmov m.t 0x1
\ttx m.port
""")
    with pytest.raises(PackError, match="metadata written after recirculate: mov m.t 0x1"):
        pack_spec(text)


def test_a_table_key_of_several_fields_stays_adjacent_and_a_key_keeps_its_width():
    text = spec({"port": 32, "k1": 16, "x": 64, "k2": 32, "k3": 8}, """\trx m.port
\tmov m.x h.ethernet.dst
\tmov h.ethernet.src m.x
\tmov m.k1 0x1
\tmov m.k2 0x2
\tmov m.k3 0x3
\ttable t
\ttable u
\ttx m.port
""", """action a args none {
\treturn
}

table t {
\tkey {
\t\tm.k1 exact
\t\tm.k2 exact
\t}
\tactions {
\t\ta
\t}
\tdefault_action a args none
\tsize 0x10
}

table u {
\tkey {
\t\tm.k3 exact
\t}
\tactions {
\t\ta
\t}
\tdefault_action a args none
\tsize 0x10
}

""")
    out, p = pack_spec(text)
    assert [f for f, _ in p.slots[:2]] == ["k1", "k2"]
    assert "k3" not in p.masked  # not widened into x's dead 64-bit slot
    assert re.search(r"key \{\n\t\tm\.k1 exact\n\t\tm\.k2 exact", out)


def test_a_program_that_needs_more_than_256_bytes_is_refused_with_its_numbers():
    fields = {"port": 32, **{f"f{i}": 64 for i in range(40)}}
    body = "\trx m.port\n" + "".join(f"\tmov m.f{i} h.ethernet.dst\n" for i in range(40))
    body += "".join(f"\tmov h.ethernet.src m.f{i}\n" for i in range(40)) + "\ttx m.port\n"
    with pytest.raises(PackError, match=r"needs 324 bytes packed \(324 declared, at most 324 live at once\); SWX "
                                        r"reaches 256"):
        pack_spec(spec(fields, body))


def test_an_instruction_it_does_not_know_is_refused_by_name():
    with pytest.raises(PackError, match="'ckadd'"):
        pack_spec(spec({"port": 32}, "\trx m.port\n\tckadd h.ethernet.type m.port\n\ttx m.port\n"))


@pytest.mark.parametrize("program", sorted(toolchain.SWX_PROGRAMS))
def test_the_committed_specs_fit_swx(program):
    """Every metadata field within SWX's reach, and no regadd/regwr with an
    immediate index and value (DPDK 24.11 sends those to the first register
    array: target.p4's COUNT_AT)."""
    text = toolchain.swx_artifacts(program)[0].read_text()
    assert sum(packed_fields(text).values()) // 8 <= MAX_BYTES
    assert not re.findall(r"^\s*(?:\w+ :\s*)?reg(?:add|wr) \w+ (?:0x[0-9a-fA-F]+|\d+) (?:0x[0-9a-fA-F]+|\d+)$", text,
                          re.M)
