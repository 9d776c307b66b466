"""Wire constants (DESIGN.md sections 4 to 6), each defined once.

Where the P4 programs hold a value too (drop reason indices, table sizes,
the NIC's port numbers), tests/test_wire_constants.py reads it from the P4
source or P4Info and compares.
"""

from __future__ import annotations

# ---- frame layout ---------------------------------------------------------
ETHERTYPE_IPV6 = 0x86DD
IPPROTO_IPV6 = 41  # IPv6-in-IPv6 (the NIC's encapsulation)
IPPROTO_UDP = 17
ROCE_PORT = 4791
ETH_LEN = 14
IPV6_LEN = 40
UDP_LEN = 8
BTH_LEN = 12
DATA_EXT_LEN = 16
ACK_EXT_LEN = 20
NACK_EXT_LEN = 8
PROBE_EXT_LEN = 8
# Ethernet + outer IPv6 + inner IPv6 + UDP + BTH + MRC data extension: the
# smallest frame a trimmed data packet may be cut to.
MIN_TRIM_BYTES = ETH_LEN + 2 * IPV6_LEN + UDP_LEN + BTH_LEN + DATA_EXT_LEN
# A NACK built by the receiving NIC, cut to its headers.
NACK_BYTES = ETH_LEN + 2 * IPV6_LEN + UDP_LEN + BTH_LEN + NACK_EXT_LEN

ECN_NOT_ECT, ECT1, ECT0, ECN_CE = 0, 1, 2, 3

# ---- BTH opcodes (DESIGN.md section 6) -------------------------------------
OP_WRITE_FIRST = 0xC6
OP_WRITE_MIDDLE = 0xC7
OP_WRITE_LAST = 0xC8
OP_WRITE_LAST_IMM = 0xC9
OP_WRITE_ONLY = 0xCA
OP_WRITE_ONLY_IMM = 0xCB
OP_ACK = 0xD1
OP_SACK = 0xDC
OP_NACK = 0xDD
OP_PROBE = 0xDE
DATA_OPCODES = range(OP_WRITE_FIRST, OP_WRITE_ONLY_IMM + 1)
EXT_LEN = {**{op: DATA_EXT_LEN for op in DATA_OPCODES}, OP_ACK: ACK_EXT_LEN, OP_SACK: ACK_EXT_LEN,
           OP_NACK: NACK_EXT_LEN, OP_PROBE: PROBE_EXT_LEN}

NACK_TRIMMED = 1
NACK_TRIMMED_LASTHOP = 2
# The RoCE baseline's go-back-N NAK (RC's "PSN sequence error", carrying the
# expected PSN); sent by fabric_sim's RoCE endpoint, never by an MRC NIC.
NACK_PSN_SEQUENCE = 3
SACK_BITS = 64
PSN_MOD = 1 << 24

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
ECN_THRESHOLD = 8

# ---- switch (p4src/switch/types.p4) ----------------------------------------
# Index into the drop_reasons and congestion_events counters.
SWITCH_DROPS = ("not_ipv6", "malformed", "for_me", "no_route", "hop_limit", "no_neighbour", "congestion",
                "bad_source", "bad_destination", "bad_length")
SWITCH_EVENTS = ("trimmed", "ecn_marked")
# Address classes a router must not forward (RFC 4291), as prefixes: the
# switch drops sources (bad_source) and destinations (bad_destination) in
# them (p4src/switch/sanity.p4, checked against this by a test).
UNROUTABLE_PREFIXES = {"unspecified": "::/128", "loopback": "::1/128", "link-local": "fe80::/10",
                       "multicast": "ff00::/8"}
# Traffic classes of the dscp_class table.
CLASS_NORMAL = 0  # not trimmable: dropped over the limit
CLASS_TRIMMABLE = 1  # trimmed over the limit
CLASS_PRIORITY = 2  # control and trimmed stubs: the high-priority queue
# Ports are 9 bits in v1model; BMv2 reserves 511 as its drop port.
MAX_PORTS = 512

# ---- NIC (p4src/nic/types.p4) ----------------------------------------------
# The model's drop reasons: the members of the P4 enum nic_drop_reason_t,
# in value order (a test reads them from the P4Info).
NIC_DROPS = ("malformed", "not_mrc", "unknown_qp", "no_ev", "unknown_row", "no_plane", "not_encap", "bad_inner",
             "not_for_me")
NIC_EVENTS = ("tx", "rx", "nack")
HOST_PORT = 0  # the NIC port facing the host transport
NOTICE_SESSION = 1  # clone session of trimmed-packet notices to the host
# P4 sizes of the NIC program (p4src/nic/size.p4): plans must fit them.
NIC_MAX_QPS = 4096  # qp_rotation register, qp_ev table
NIC_MAX_SLOTS = 65536  # slot_ev table (16-bit slot index)


def plane_port(plane: int) -> int:
    """NIC port of plane p (port 0 faces the host)."""
    return 1 + plane


# ---- EV format (DESIGN.md section 5) ---------------------------------------
# EV[2:0] plane, EV[10:3] spine, EV[31:11] tells apart EVs sharing a path.
def ev_plane(ev: int) -> int:
    return ev & 0x7


def ev_spine(ev: int) -> int:
    return (ev >> 3) & 0xFF
