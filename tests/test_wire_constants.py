"""mrc_wire's constants against the programs: names and sizes from the
committed P4Info, P4 defaults from the compiled BMv2 JSON (what the device
runs before the controller writes), and the counter indices that exist
only as constants in the P4 source."""

import json
import re

import finsy as fy
import pytest

from control_plane.counters import NIC_DROP_ENUM, drop_reasons
from mrc_wire import constants as C
from testbed import toolchain


@pytest.fixture(scope="module")
def nic():
    return fy.P4Schema(toolchain.artifacts("nic")[0])


def _default(program: str, table: str) -> tuple[str, list[int]]:
    """(action name, parameter values) of a table's default in the BMv2 JSON."""
    blob = json.loads(toolchain.artifacts(program)[1].read_text())
    [pipe_table] = [t for p in blob["pipelines"] for t in p["tables"] if t["name"].rsplit(".", 1)[-1] == table]
    entry = pipe_table["default_entry"]
    [action] = [a["name"] for a in blob["actions"] if a["id"] == entry["action_id"]]
    return action.rsplit(".", 1)[-1], [int(v, 16) for v in entry["action_data"]]


def test_nic_sizes_fit_the_plan_limits(nic):
    assert nic.tables["qp_ev"].size == C.NIC_MAX_QPS
    assert nic.tables["qp_peer"].size == C.NIC_MAX_QPS
    assert nic.registers["qp_rotation"].size == C.NIC_MAX_QPS
    assert nic.tables["slot_ev"].size == C.NIC_MAX_SLOTS
    # The slot index is 16 bits: every slot the plan may use is addressable.
    [slot] = nic.tables["slot_ev"].match_fields
    assert 2 ** slot.bitwidth == C.NIC_MAX_SLOTS


def test_nic_counters_hold_every_reason_event_and_plane(nic):
    assert nic.counters["nic_drops"].size > max(drop_reasons(nic, NIC_DROP_ENUM).values())
    assert nic.counters["nic_events"].size >= len(C.NIC_EVENTS)
    assert nic.counters["nack_reasons"].size > max(C.NACK_TRIMMED, C.NACK_TRIMMED_LASTHOP)
    [plane] = nic.tables["plane_port"].match_fields
    assert nic.counters["plane_tx"].size == 2 ** plane.bitwidth == C.ev_plane(0xFFFFFFFF) + 1


def test_nic_config_default_holds_the_dscp_defaults():
    action, params = _default("nic", "nic_config")
    assert action == "set_nic"
    assert params[-3:] == [C.DSCP_DEFAULTS["control"], C.DSCP_DEFAULTS["trimmed"], C.DSCP_DEFAULTS["trimmed_lasthop"]]


def test_switch_congestion_default_holds_the_congestion_and_dscp_defaults():
    action, params = _default("switch", "congestion_config")
    assert action == "set_congestion"
    cd, dd = C.CONGESTION_DEFAULTS, C.DSCP_DEFAULTS
    assert params == [cd["ecn_threshold"], cd["trim_threshold"], cd["trim_bytes"], dd["trimmed"], dd["trimmed_lasthop"]]


def test_switch_port_counters_cover_every_port():
    schema = fy.P4Schema(toolchain.artifacts("switch")[0])
    for name in ("port_rx", "port_tx", "port_drop", "port_tx_high", *C.SWITCH_EVENTS):
        assert schema.counters[name].size == C.MAX_PORTS, name


TYPES = toolchain.REPO / "p4src" / "switch" / "types.p4"
NIC_TYPES = toolchain.REPO / "p4src" / "nic" / "types.p4"


def _consts(prefix: str, path=TYPES, width: str = r"\d+") -> dict[str, int]:
    pat = re.compile(rf"const bit<{width}> {prefix}_(\w+)\s*=\s*(\d+);")
    return {name.lower(): int(v) for name, v in pat.findall(path.read_text())}


def test_switch_drop_reasons_in_the_p4info_match_mrc_wire():
    """The model's reason names are the P4 enum's, in the committed P4Info."""
    p4info, _ = toolchain.artifacts("switch")
    assert drop_reasons(p4info) == {name: i for i, name in enumerate(C.SWITCH_DROPS)}


def test_switch_event_counters_and_classes_match_mrc_wire():
    """Each congestion event the model counts is a per-port counter of that
    name in the P4Info."""
    schema = fy.P4Schema(toolchain.artifacts("switch")[0])
    for event in C.SWITCH_EVENTS:
        assert schema.counters[event].size == C.MAX_PORTS
    assert _consts("CLASS", width="2") == {"normal": C.CLASS_NORMAL, "trimmable": C.CLASS_TRIMMABLE,
                                           "priority": C.CLASS_PRIORITY}


def test_nic_drop_reasons_in_the_p4info_match_mrc_wire(nic):
    """The model's reason names are the P4 enum's, in the committed P4Info;
    the value is the nic_drops index."""
    assert drop_reasons(nic, NIC_DROP_ENUM) == {name: i for i, name in enumerate(C.NIC_DROPS)}


def test_nic_events_and_constants_match_mrc_wire():
    assert _consts("NEV", NIC_TYPES) == {name: i for i, name in enumerate(C.NIC_EVENTS)}
    text = NIC_TYPES.read_text()
    assert re.search(rf"NOTICE_SESSION = {C.NOTICE_SESSION};", text)
    assert re.search(r"NACK_BYTES = \(bit<32>\)\(ETH_BYTES \+ IPV6_BYTES \+ IPV6_BYTES \+ UDP_BYTES \+ BTH_BYTES \+ "
                     r"NETH_BYTES \+\s+ICRC_BYTES\);", text) and C.NACK_BYTES == 138
    assert re.search(r"TX_DONE_BYTES = \(bit<32>\)\(ETH_BYTES \+ IPV6_BYTES \+ UDP_BYTES \+ BTH_BYTES \+ METH_BYTES \+ "
                     r"TSETH_BYTES \+\s+RETH_BYTES \+ IMMDT_BYTES\);", text) and C.TX_DONE_BYTES == 102
    sizes = (toolchain.REPO / "p4src" / "include" / "headers.p4").read_text()
    for name, value in (("ETH", C.ETH_LEN), ("IPV6", C.IPV6_LEN), ("UDP", C.UDP_LEN), ("BTH", C.BTH_LEN),
                        ("METH", C.METH_LEN), ("TSETH", C.TSETH_LEN), ("RETH", C.RETH_LEN), ("IMMDT", C.IMMDT_LEN),
                        ("NETH", C.NETH_LEN), ("SETH", C.SETH_LEN), ("CC_STATE", C.CC_STATE_LEN), ("ICRC", C.ICRC_LEN)):
        assert re.search(rf"const bit<16> {name}_BYTES\s*= {value};", sizes), name
    assert re.search(rf"HOST_PORT = PORT_CONST\({C.HOST_PORT}\)", text)


def test_the_receivers_sizes_match_mrc_wire():
    """The NIC receiver's ring (p4src/nic/size.p4) is the model's (nic_model/rx_track.py)."""
    text = (toolchain.REPO / "p4src" / "nic" / "size.p4").read_text()
    got = {k: int(v) for k, v in re.findall(r"#define (RX_\w+)\s+(\d+)", text)}
    assert got["RX_WORDS"] == C.RX_WORDS == 1 << got["RX_WORD_BITS"] and C.RX_WINDOW == C.RX_WORDS * 64
    assert got["RX_WORD_REGISTER_SIZE"] == C.NIC_MAX_QPS * C.RX_WORDS
    assert got["RX_REVERSE_REGISTER_SIZE"] == C.NIC_MAX_QPS * 8
    types = NIC_TYPES.read_text()
    assert re.search(r"const bit<8> SETH_MPR = RX_WORDS / 2;", types) and C.RX_WINDOW >> 7 == C.RX_WORDS // 2
    assert re.search(rf"const bit<16> SACK_OFFSET = {C.SACK_OFFSET};", types)


def test_the_trailing_ones_entries_are_generated_and_right():
    """p4src/nic/trailing_ones.inc is nic_model.rx_track's output, and each
    entry's pattern matches exactly the words whose trailing ones it names."""
    from nic_model import rx_track

    text = (toolchain.REPO / "p4src" / "nic" / "trailing_ones.inc").read_text()
    assert text == rx_track.p4_entries(), "run: python -m nic_model.rx_track > p4src/nic/trailing_ones.inc"
    entries = [(int(v, 16), int(m, 16), int(t)) for v, m, t in
               re.findall(r"0x([0-9A-F]+) &&& 0x([0-9A-F]+) : ONES\((\d+)\);", text)]
    assert [t for _, _, t in entries] == list(range(65))
    for word in [0, 1, 2, 3, 0xFF, 0xFFFF_FFFF, 0x7FFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0x5555, 0xABCDEF]:
        hits = [t for v, m, t in entries if word & m == v]
        assert hits == [rx_track.trailing_ones(word)], hex(word)


def test_the_reorder_bucket_entries_are_generated_and_match_the_models_histogram():
    """p4src/nic/reorder_buckets.inc is nic_model.rx_track's output, and each
    24-bit distance matches one entry, the bucket the model counts it in
    (its bit length), for any window (the ladder it replaces stopped at 10)."""
    import random

    from nic_model import rx_track

    text = (toolchain.REPO / "p4src" / "nic" / "reorder_buckets.inc").read_text()
    assert text == rx_track.p4_reorder_entries(), \
        "run: python -m nic_model.rx_track reorder > p4src/nic/reorder_buckets.inc"
    entries = [(int(v, 16), int(m, 16), int(b)) for v, m, b in
               re.findall(r"0x([0-9A-F]+) &&& 0x([0-9A-F]+) : BUCKET\((\d+)\);", text)]
    assert [b for _, _, b in entries] == list(range(25))
    rng = random.Random(3)
    for d in [0, 1, 2, 3, 1023, 1024, 2047, 2048, 2**23, 2**24 - 1] + [rng.getrandbits(24) for _ in range(500)]:
        assert [b for v, m, b in entries if d & m == v] == [d.bit_length()], d
