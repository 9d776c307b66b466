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
# MRC 1.0 headers (DESIGN.md section 6; field layouts in mrc_wire/headers.py,
# the one definition, and p4src/include/headers.p4, held equal by a test).
METH_LEN: Final = 4
TSETH_LEN: Final = 4
RETH_LEN: Final = 16
IMMDT_LEN: Final = 4
SETH_LEN: Final = 28
CC_STATE_LEN: Final = 8
NETH_LEN: Final = 20
PETH_LEN: Final = 16
AETH_LEN: Final = 4
ERTH_LEN: Final = 16
EETH_LEN: Final = 36
ICRC_LEN: Final = 4  # every packet's trailer (zero in this model: its links do not corrupt)
# What follows the BTH of a data packet: METH, TSETH (every data packet
# this project sends carries one) and RETH; ImmDt on the two *_IMM opcodes.
DATA_EXT_LEN: Final = METH_LEN + TSETH_LEN + RETH_LEN
SACK_EXT_LEN: Final = SETH_LEN + CC_STATE_LEN
# Ethernet + outer IPv6 + inner IPv6 + UDP + BTH + every data header: the
# smallest frame a trimmed data packet may be cut to.
MIN_TRIM_BYTES: Final = ETH_LEN + 2 * IPV6_LEN + UDP_LEN + BTH_LEN + DATA_EXT_LEN + IMMDT_LEN
# A data frame on the fabric, payload excluded, and a SACK (what the
# timed fabric's base RTT, PFC headroom and the paper's line rate count).
DATA_FRAME_BYTES: Final = ETH_LEN + 2 * IPV6_LEN + UDP_LEN + BTH_LEN + DATA_EXT_LEN + ICRC_LEN
SACK_FRAME_BYTES: Final = ETH_LEN + 2 * IPV6_LEN + UDP_LEN + BTH_LEN + SACK_EXT_LEN + ICRC_LEN
# A NACK built by the receiving NIC: headers, NETH and ICRC.
NACK_BYTES: Final = ETH_LEN + 2 * IPV6_LEN + UDP_LEN + BTH_LEN + NETH_LEN + ICRC_LEN
# A transmit completion (mrc_wire.pcie: the EV a data packet took): the host's
# data packet back to it, cut to its headers, ImmDt's room included
# (p4src/nic/types.p4 TX_DONE_BYTES).
TX_DONE_BYTES: Final = ETH_LEN + IPV6_LEN + UDP_LEN + BTH_LEN + DATA_EXT_LEN + IMMDT_LEN

# BTH byte 8 (flags): A (ack request) where both readings put it; RTX and
# TS where anichol67/MRC-Client puts them (the ns-3 reading has RTX at 0x40
# and no TS bit; docs/nic.md, "Choices").
BTH_A: Final = 0x80
BTH_RTX: Final = 0x20
BTH_TS: Final = 0x10
# SETH m: the congestion mark a SACK carries.
SETH_M_NONE: Final = 0
SETH_M_SKIP_ONCE: Final = 1
SETH_M_ALWAYS_SKIP: Final = 2
# Where the 64-bit SACK bitmap starts, relative to cack_psn: cack_psn is the
# last PSN received in order, cack_psn + 1 the first missing, so the
# bitmap's bit 0 is the first PSN that can have arrived out of order.
SACK_OFFSET: Final = 2
# SETH/NETH cc_type, as both readings fill them.
SETH_CC_TYPE: Final = 0
NETH_CC_TYPE: Final = 2
TSETH_FTYPE: Final = 1  # both readings' default format type
# AETH syndromes (IBTA): an ACK with no credit count, a NAK for a PSN
# sequence error (the RoCE baseline's go-back-N).
AETH_ACK: Final = 0x1F
AETH_NAK_PSN_SEQ: Final = 0x60
# Endpoint operations (ERTH/EETH op).
EP_PORT_STATUS: Final = 0
EP_EV_PROBE: Final = 1

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
OP_EP_REQUEST: Final = 0xD8
OP_EP_RESPONSE: Final = 0xD9
OP_SACK: Final = 0xDC
OP_NACK: Final = 0xDD
OP_PROBE: Final = 0xDE
DATA_OPCODES: Final = range(OP_WRITE_FIRST, OP_WRITE_ONLY_IMM + 1)
IMM_OPCODES: Final = (OP_WRITE_LAST_IMM, OP_WRITE_ONLY_IMM)
# Bytes after the BTH, per opcode (a data packet's with its TSETH).
EXT_LEN: Final[dict[int, int]] = {**{op: DATA_EXT_LEN + (IMMDT_LEN if op in IMM_OPCODES else 0)
                                     for op in DATA_OPCODES},
                                  OP_ACK: AETH_LEN, OP_SACK: SACK_EXT_LEN, OP_NACK: NETH_LEN, OP_PROBE: PETH_LEN,
                                  OP_EP_REQUEST: ERTH_LEN, OP_EP_RESPONSE: EETH_LEN}

# NETH nack_reason.
NACK_TRIMMED: Final = 0x01
NACK_TRIMMED_LASTHOP: Final = 0x02
NACK_NO_BITMAP: Final = 0x06
NACK_NO_PKT_BUFFER: Final = 0x07
NACK_NO_RESOURCE: Final = 0x0A
NACK_PSN_OOR_WINDOW: Final = 0x0B
NACK_UNEXP_EVENT: Final = 0x19
SACK_BITS: Final = 64
# MRC's ACK coalescing, as UEC's receivers: a SACK per this many bytes of
# in-order payload (4 packets at a 4 KiB MTU); the scenario's
# `endpoint.ack_bytes` and a QP as its host creates it (mrc_wire.pcie.QpCreate)
# default to it (0: a SACK per data packet).
ACK_BYTES: Final = 16384
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
# The classes by the name a topology file gives them (congestion.ecn_profiles).
CLASS_NAMES: Final = {"normal": CLASS_NORMAL, "trimmable": CLASS_TRIMMABLE, "priority": CLASS_PRIORITY}
# A WRED ramp's marking probability is a fraction of RAMP_ONE (16 bits: the
# switch draws a 16-bit random number per packet, p4src/switch/congestion.p4).
RAMP_BITS: Final = 16
RAMP_ONE: Final = 1 << RAMP_BITS
# Ports are 9 bits in v1model; BMv2 reserves 511 as its drop port.
MAX_PORTS: Final = 512

# ---- NIC (p4src/nic/types.p4) ----------------------------------------------
# The model's drop reasons: the members of the P4 enum nic_drop_reason_t,
# in value order (a test reads them from the P4Info).
NIC_DROPS: Final = ("malformed", "not_mrc", "unknown_qp", "no_ev", "unknown_row", "no_plane", "not_encap", "bad_inner",
             "not_for_me")
# One of tx, rx, nack, sack, probe_answer per frame the NIC takes in (or
# a drop); duplicate, beyond_window and host_copy say more about some.
NIC_EVENTS: Final = ("tx", "rx", "nack", "sack", "duplicate", "beyond_window", "probe_answer", "host_copy",
                        "tx_done")
HOST_PORT: Final = 0  # the NIC port facing the host transport
NOTICE_SESSION: Final = 1  # clone session of trimmed-packet notices to the host
# P4 sizes of the NIC program (p4src/nic/size.p4): plans must fit them.
NIC_MAX_QPS: Final = 4096  # qp_rotation register, qp_ev table
NIC_MAX_SLOTS: Final = 65536  # slot_ev table (16-bit slot index)
# The receiver in the NIC (p4src/nic/size.p4, nic_model/rx_track.py): a
# circular bitmap of RX_WORDS 64-bit words per QP, so RX_WINDOW PSNs past
# the cumulative point are accepted (SETH mpr advertises it, in units of
# 128); the cumulative point moves over at most RX_ADVANCE_STEPS words a packet.
RX_WORDS: Final = 16
RX_WINDOW: Final = RX_WORDS * 64
RX_ADVANCE_STEPS: Final = 2
# Path health in the NIC (p4src/nic/ev_health.p4, nic_model/ev_health.py):
# a bit per slot of a QP's rotation, so a QP whose data plane keeps its
# EVs' health has at most EV_HEALTH_SLOTS slots. The states and reasons of
# the EV events it reports (its digest; mrc_ctl's EV event).
EV_HEALTH_SLOTS: Final = 64
EVS_GOOD: Final = 0
EVS_SKIP: Final = 1
EVS_ASSUMED_BAD: Final = 2
EVS_PLANE_DOWN: Final = 3
EV_STATE_NAMES: Final = ("GOOD", "SKIP", "ASSUMED_BAD", "PLANE_DOWN")
EVR_CONGESTION: Final = 1  # a SACK's congestion mark (SETH m: skip once)
EVR_TRIMMED: Final = 2  # a TRIMMED NACK
EVR_ROTATION: Final = 3  # the rotation passed over a slot set to skip once
EVR_PORT_STATUS: Final = 4  # the peer's port status (ERTH)
EV_REASON_NAMES: Final = {EVR_CONGESTION: "congestion_mark", EVR_TRIMMED: "nack_trimmed", EVR_ROTATION: "rotation",
                          EVR_PORT_STATUS: "peer_port_status"}


def plane_port(plane: int) -> int:
    """NIC port of plane p (port 0 faces the host)."""
    return 1 + plane


# ---- EV format (DESIGN.md section 5) ---------------------------------------
# EV[2:0] plane, EV[10:3] spine, EV[31:11] tells apart EVs sharing a path.
def ev_plane(ev: int) -> int:
    return ev & 0x7


def ev_spine(ev: int) -> int:
    return (ev >> 3) & 0xFF
