"""Plan entries to P4Runtime: each dataclass field lands in the P4Info
parameter of the same meaning (docs/switch.md and docs/nic.md tables),
read back from the encoded message by the P4Info's parameter ids."""

import finsy as fy
import pytest

from control_plane import p4_entities as P
from mrc_wire import entries as E
from testbed import toolchain

SRC_MAC, DST_MAC = 0x02000400_0002, 0x02000800_0003
ADDR = 0xFD00_0000_0000_0001_0000_0000_0001_0002


def _wire(program: str, entry) -> tuple[str, dict[str, int], dict[str, int]]:
    """(action, match field -> value, param -> value) of the encoded entry,
    names from the committed P4Info's ids."""
    schema = fy.P4Schema(toolchain.artifacts(program)[0])
    msg = P.to_p4(entry).encode(schema).table_entry
    table = schema.tables[msg.table_id]
    action = schema.actions[msg.action.action.action_id]
    fields = {f.id: f.name for f in table.match_fields}
    params = {p.id: p.name for p in action.params}
    match = {fields[m.field_id]: int.from_bytes(m.exact.value, "big") for m in msg.match}
    values = {params[p.param_id]: int.from_bytes(p.value, "big") for p in msg.action.action.params}
    return action.alias, match, values


def _params(program: str, alias: str) -> set[str]:
    """The parameter names of action `alias` in the committed P4Info."""
    return {p.name for p in fy.P4Schema(toolchain.artifacts(program)[0]).actions[alias].params}


def test_switch_neighbour_macs_are_not_swapped():
    action, match, params = _wire("switch", E.PortNeighbour(3, SRC_MAC, DST_MAC, True))
    assert (action, match) == ("set_neighbour", {"port": 3})
    assert params == {"src_mac": SRC_MAC, "dst_mac": DST_MAC, "host_facing": 1}


def test_nic_plane_port_macs_and_source_address_halves():
    action, match, params = _wire("nic", E.PlanePort(2, 3, ADDR, SRC_MAC, DST_MAC))
    assert (action, match) == ("set_plane", {"plane": 2})
    assert params == {"port": 3, "src_hi": ADDR >> 64, "src_lo": ADDR & (2**64 - 1),
                      "src_mac": SRC_MAC, "dst_mac": DST_MAC}


@pytest.mark.parametrize("entry, action, params", [
    (E.UsidRoute(0xFCBB_BB00_4001, 7), "set_port", {"port": 7}),
    (E.DscpClass(46, 2), "set_class", {"cls": 2}),
    (E.EcnStep(1, 5), "ecn_step", {"threshold": 5}),
    (E.EcnRamp(0, 1, 47, 655), "ecn_ramp", {"kmin": 1, "kmax": 47, "pmax": 655}),
    (E.CongestionConfig(64, 128, 256, 16, 18), "set_congestion",
     {"ecn_threshold": 64, "trim_threshold": 128, "trim_bytes": 256, "dscp_trimmed": 16, "dscp_trimmed_lasthop": 18}),
])
def test_switch_action_parameters(entry, action, params):
    got_action, _, got = _wire("switch", entry)
    assert (got_action, got) == (action, params)


@pytest.mark.parametrize("entry, action, params", [
    (E.NicConfig(0xFCBBBB00, 5, ADDR, 46, 16, 18), "set_nic",
     {"block": 0xFCBBBB00, "my_row": 5, "my_addr_hi": ADDR >> 64, "my_addr_lo": ADDR & (2**64 - 1),
      "dscp_control": 46, "dscp_trimmed": 16, "dscp_trimmed_lasthop": 18}),
    (E.DestRow(9, False), "set_row", {"same_row": 0, "row": 9}),
    (E.QpEv(0x123, 4, 64, 15, True, 2, (0xAA, 0xCC, 0xF0)), "set_qp",
     {"qp_index": 4, "base": 64, "mask": 15, "health": 1, "min_active": 2, "plane_bit0": 0xAA,
      "plane_bit1": 0xCC, "plane_bit2": 0xF0}),
    (E.SlotEv(65, 0x1234_5679), "set_ev", {"ev": 0x1234_5679}),
    (E.QpPeer(0x123, 0x456, 3, True, False, 16384, True, True), "set_peer",
     {"qpn": 0x456, "qp_index": 3, "offload": 1, "follow": 0, "ack_bytes": 16384, "health": 1, "skip_on_mark": 1}),
    (E.EvSlots(3, 0x1234_5679, 0x8001), "set_slots", {"slots": 0x8001}),
])
def test_nic_action_parameters(entry, action, params):
    got_action, _, got = _wire("nic", entry)
    assert (got_action, got) == (action, params)
