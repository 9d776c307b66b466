"""Wire constants (DESIGN.md sections 4 to 6), each defined once. `Final`:
the compiled build (setup.py's COMPILED) writes their values into the
code that reads them, not a lookup per packet.

Where the P4 programs hold a value too (drop reason indices, table sizes,
the NIC's port numbers), tests/test_wire_constants.py reads it from the P4
source or P4Info and compares.
"""

from __future__ import annotations

from typing import Final

# ---- frame layout ---------------------------------------------------------
ETHERTYPE_IPV6: Final = 0x86DD
IPPROTO_IPV6: Final = 41  # IPv6-in-IPv6 (the NIC's encapsulation)
IPPROTO_UDP: Final = 17
ROCE_PORT: Final = 4791
ETH_LEN: Final = 14
IPV6_LEN: Final = 40
UDP_LEN: Final = 8
BTH_LEN: Final = 12
DATA_EXT_LEN: Final = 16
ACK_EXT_LEN: Final = 20
NACK_EXT_LEN: Final = 8
PROBE_EXT_LEN: Final = 8
# Ethernet + outer IPv6 + inner IPv6 + UDP + BTH + MRC data extension: the
# smallest frame a trimmed data packet may be cut to.
MIN_TRIM_BYTES: Final = ETH_LEN + 2 * IPV6_LEN + UDP_LEN + BTH_LEN + DATA_EXT_LEN
# A NACK built by the receiving NIC, cut to its headers.
NACK_BYTES: Final = ETH_LEN + 2 * IPV6_LEN + UDP_LEN + BTH_LEN + NACK_EXT_LEN

ECN_NOT_ECT: Final = 0
ECT1: Final = 1
ECT0: Final = 2
ECN_CE: Final = 3

# ---- BTH opcodes (DESIGN.md section 6) -------------------------------------
OP_WRITE_FIRST: Final = 0xC6
OP_WRITE_MIDDLE: Final = 0xC7
OP_WRITE_LAST: Final = 0xC8
OP_WRITE_LAST_IMM: Final = 0xC9
OP_WRITE_ONLY: Final = 0xCA
OP_WRITE_ONLY_IMM: Final = 0xCB
OP_ACK: Final = 0xD1
OP_SACK: Final = 0xDC
OP_NACK: Final = 0xDD
OP_PROBE: Final = 0xDE
DATA_OPCODES: Final = range(OP_WRITE_FIRST, OP_WRITE_ONLY_IMM + 1)
EXT_LEN: Final[dict[int, int]] = {**{op: DATA_EXT_LEN for op in DATA_OPCODES}, OP_ACK: ACK_EXT_LEN,
                                  OP_SACK: ACK_EXT_LEN, OP_NACK: NACK_EXT_LEN, OP_PROBE: PROBE_EXT_LEN}

NACK_TRIMMED: Final = 1
NACK_TRIMMED_LASTHOP: Final = 2
# The RoCE baseline's go-back-N NAK (RC's "PSN sequence error", carrying the
# expected PSN); sent by fabric_sim's RoCE endpoint, never by an MRC NIC.
NACK_PSN_SEQUENCE: Final = 3
SACK_BITS: Final = 64
PSN_MOD: Final = 1 << 24

# ---- DSCP classes: defaults; a topology file may change every one ---------
# The P4 programs' defaults are p4src/include/defaults.p4 (DEFAULT_DSCP_*),
# tests/test_p4_sources.py holds them equal to these.
DSCP_DEFAULTS = {
    "control": 46,
    "data_trimmable": 8,
    "data_no_trim": 10,
    "data_trimmable_retx": 12,
    "trimmed": 16,
    "trimmed_lasthop": 18,
}
# The switch's congestion defaults: its default action before the
# controller writes (p4src/include/defaults.p4, DEFAULT_*; the models start
# from entries.CongestionConfig.default()). The control plane plans ECN from
# ECN_THRESHOLD packets instead: below NSCC's target delay (0.75 base RTT,
# about 12 packets of 4 KiB at a 100 Gb/s port), so a marked path whose
# delay is still under target is steered away from without cutting the
# window (UEC's reference simulator marks between 0.2 and 0.8 of a BDP, 3
# to 13 packets). The controller always writes it: the program's default
# applies only before that.
CONGESTION_DEFAULTS = {"ecn_threshold": 64, "trim_threshold": 128, "trim_bytes": 256}
ECN_THRESHOLD: Final = 8

# ---- switch (p4src/switch/types.p4) ----------------------------------------
# Index into the drop_reasons and congestion_events counters.
SWITCH_DROPS: Final = ("not_ipv6", "malformed", "for_me", "no_route", "hop_limit", "no_neighbour", "congestion",
                "bad_source", "bad_destination", "bad_length")
SWITCH_EVENTS: Final = ("trimmed", "ecn_marked")
# Address classes a router must not forward (RFC 4291), as prefixes: the
# switch drops sources (bad_source) and destinations (bad_destination) in
# them (p4src/switch/sanity.p4, checked against this by a test).
UNROUTABLE_PREFIXES = {"unspecified": "::/128", "loopback": "::1/128", "link-local": "fe80::/10",
                       "multicast": "ff00::/8"}
# Traffic classes of the dscp_class table.
CLASS_NORMAL: Final = 0  # not trimmable: dropped over the limit
CLASS_TRIMMABLE: Final = 1  # trimmed over the limit
CLASS_PRIORITY: Final = 2  # control and trimmed stubs: the high-priority queue
# Ports are 9 bits in v1model; BMv2 reserves 511 as its drop port.
MAX_PORTS: Final = 512

# ---- NIC (p4src/nic/types.p4) ----------------------------------------------
# The model's drop reasons: the members of the P4 enum nic_drop_reason_t,
# in value order (a test reads them from the P4Info).
NIC_DROPS: Final = ("malformed", "not_mrc", "unknown_qp", "no_ev", "unknown_row", "no_plane", "not_encap", "bad_inner",
             "not_for_me")
NIC_EVENTS: Final = ("tx", "rx", "nack")
HOST_PORT: Final = 0  # the NIC port facing the host transport
NOTICE_SESSION: Final = 1  # clone session of trimmed-packet notices to the host
# P4 sizes of the NIC program (p4src/nic/size.p4): plans must fit them.
NIC_MAX_QPS: Final = 4096  # qp_rotation register, qp_ev table
NIC_MAX_SLOTS: Final = 65536  # slot_ev table (16-bit slot index)


def plane_port(plane: int) -> int:
    """NIC port of plane p (port 0 faces the host)."""
    return 1 + plane


# ---- EV format (DESIGN.md section 5) ---------------------------------------
# EV[2:0] plane, EV[10:3] spine, EV[31:11] tells apart EVs sharing a path.
def ev_plane(ev: int) -> int:
    return ev & 0x7


def ev_spine(ev: int) -> int:
    return (ev >> 3) & 0xFF
