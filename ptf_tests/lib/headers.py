"""MRC 1.0 transport headers as scapy layers (DESIGN.md section 6),
written field by field from the two public readings of the specification
(the ns-3 model in HanGuTalker/uet-simulator, anichol67/MRC-Client), not
from mrc_wire: the PTF suites build their expected packets with these.

    IPv6 / UDP(dport 4791) / BTH / METH / TSETH / RETH [/ ImmDt]   RDMA write family (0xC6..0xCB)
    IPv6 / UDP / BTH / SETH / CCState                               SACK (0xDC), probe answer (pr=1)
    IPv6 / UDP / BTH / NETH                                         NACK (0xDD)
    IPv6 / UDP / BTH / PETH                                         probe (0xDE)
    IPv6 / UDP / BTH / AETH                                         ACK (0xD1)
    IPv6 / UDP / BTH / ERTH, EETH                                   endpoint request, response (0xD8, 0xD9)
and every packet ends in a 4-byte ICRC (zero in this project).
"""

from __future__ import annotations

from scapy.fields import (
    BitField,
    ByteField,
    IntField,
    LongField,
    ShortField,
    SignedShortField,
    StrFixedLenField,
    XByteField,
)
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.packet import Packet, bind_layers

from mrc_wire.constants import (
    DATA_OPCODES,
    NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
    OP_ACK,
    OP_EP_REQUEST,
    OP_EP_RESPONSE,
    OP_NACK,
    OP_PROBE,
    OP_SACK,
    OP_WRITE_FIRST,
    OP_WRITE_LAST,
    OP_WRITE_LAST_IMM,
    OP_WRITE_MIDDLE,
    OP_WRITE_ONLY,
    OP_WRITE_ONLY_IMM,
    ROCE_PORT,
    SACK_BITS,
)

# The layers, and mrc_wire's constants re-exported (the one source) for the suites.
__all__ = [
    "AETH", "BTH", "CCState", "DATA_OPCODES", "EETH", "ERTH", "EXTENSIONS", "ICRC", "METH", "NACK_TRIMMED",
    "NACK_TRIMMED_LASTHOP", "NETH", "OP_ACK", "OP_EP_REQUEST", "OP_EP_RESPONSE", "OP_NACK", "OP_PROBE", "OP_SACK",
    "OP_WRITE_FIRST", "OP_WRITE_LAST", "OP_WRITE_LAST_IMM", "OP_WRITE_MIDDLE", "OP_WRITE_ONLY", "OP_WRITE_ONLY_IMM",
    "PETH", "RETH", "ROCE_PORT", "SACK_BITS", "SETH", "TSETH", "ImmDt", "Mrc", "data_headers", "parse",
]

ICRC = bytes(4)


class BTH(Packet):
    """Base Transport Header, 12 bytes: byte 1 as IBTA, byte 8 A (0x80),
    RTX (0x20), TS (0x10: a TSETH follows a data packet's METH)."""

    name = "BTH"
    fields_desc = [
        XByteField("opcode", OP_WRITE_ONLY),
        BitField("se", 0, 1),
        BitField("m", 0, 1),
        BitField("padcnt", 0, 2),
        BitField("tver", 0, 4),
        ShortField("pkey", 0xFFFF),
        BitField("fecn", 0, 1),
        BitField("becn", 0, 1),
        BitField("resv6", 0, 6),
        BitField("dqp", 0, 24),
        BitField("a", 0, 1),
        BitField("resv1", 0, 1),
        BitField("rtx", 0, 1),
        BitField("ts", 0, 1),
        BitField("resv4", 0, 4),
        BitField("psn", 0, 24),
    ]


class METH(Packet):
    name = "METH"
    fields_desc = [ShortField("rqmsn", 0), ShortField("msn", 0)]


class TSETH(Packet):
    name = "TSETH"
    fields_desc = [ShortField("tx_timestamp", 0), BitField("tsr", 0, 1), BitField("resv", 0, 11),
                   BitField("ftype", 1, 4)]


class RETH(Packet):
    name = "RETH"
    fields_desc = [LongField("va", 0), IntField("r_key", 0), IntField("dmalen", 0)]


class ImmDt(Packet):
    name = "ImmDt"
    fields_desc = [IntField("imm", 0)]


class SETH(Packet):
    """SACK: cack_psn the last PSN received in order, the bitmap's bit k
    PSN cack_psn + sack_offset + k; m the congestion mark."""

    name = "SETH"
    fields_desc = [
        BitField("type", 0, 4), BitField("next", 0, 5), BitField("m", 0, 2), BitField("resv3", 0, 3),
        BitField("pr", 0, 1), BitField("resv1", 0, 1),
        SignedShortField("ack_psn_offset", 0),
        IntField("entropy", 0),
        ShortField("spdcid", 0), ShortField("dpdcid", 0),
        ByteField("resv8", 0), BitField("cack_psn", 0, 24),
        BitField("cc_type", 0, 4), BitField("cc_fl", 0, 4), ByteField("mpr", 0),
        SignedShortField("sack_offset", 0),
        LongField("sack_bitmap", 0),
    ]


class CCState(Packet):
    name = "CC_STATE"
    fields_desc = [ShortField("tx_timestamp", 0), BitField("resv", 0, 1), BitField("ooo_count", 0, 15),
                   BitField("r_c", 0, 1), BitField("rcv_cwnd_pen", 0, 7), BitField("rcvd_bytes", 0, 24)]


class NETH(Packet):
    name = "NETH"
    fields_desc = [
        BitField("type", 0, 4), BitField("next", 0, 5), BitField("resv7", 0, 7),
        ByteField("nack_reason", 0), ByteField("vendor_info", 0),
        IntField("entropy", 0),
        ShortField("spdcid", 0), ShortField("dpdcid", 0),
        ByteField("resv8", 0), BitField("nack_psn", 0, 24),
        BitField("cc_type", 2, 4), BitField("cc_fl", 0, 4), ByteField("resv8b", 0),
        ShortField("tx_timestamp", 0),
    ]


class PETH(Packet):
    name = "PETH"
    fields_desc = [
        BitField("type", 0, 4), BitField("next", 0, 5), BitField("resv7", 0, 7), ByteField("resv8", 0),
        ByteField("vendor_info", 0), ShortField("probe_id", 0), ShortField("resv16", 0),
        ShortField("spdcid", 0), ShortField("dpdcid", 0), ShortField("tx_timestamp", 0),
        BitField("tsr", 0, 1), BitField("resv11", 0, 11), BitField("ftype", 1, 4),
    ]


class AETH(Packet):
    name = "AETH"
    fields_desc = [XByteField("syndrome", 0), BitField("msn", 0, 24)]


class ERTH(Packet):
    name = "ERTH"
    fields_desc = [
        BitField("type", 0, 4), BitField("next", 0, 5), BitField("resv5", 0, 5), BitField("op", 0, 2),
        ByteField("resv8", 0), ByteField("vendor_info", 0), IntField("port_status_mask", 0), IntField("resv32", 0),
        ShortField("tx_timestamp", 0), BitField("tsr", 0, 1), BitField("resv11", 0, 11), BitField("ftype", 1, 4),
    ]


class EETH(Packet):
    name = "EETH"
    fields_desc = [
        BitField("type", 0, 4), BitField("next", 0, 5), BitField("resv1", 0, 1), BitField("op", 0, 2),
        BitField("resv1b", 0, 1), BitField("resv19", 0, 19), StrFixedLenField("resv24", bytes(24), 24),
        ShortField("tx_timestamp", 0), ShortField("resv16", 0), IntField("resv32", 0),
    ]


bind_layers(UDP, BTH, dport=ROCE_PORT)
for _op in DATA_OPCODES:
    bind_layers(BTH, METH, opcode=_op)
bind_layers(METH, TSETH)
bind_layers(TSETH, RETH)
bind_layers(BTH, AETH, opcode=OP_ACK)
bind_layers(BTH, SETH, opcode=OP_SACK)
bind_layers(SETH, CCState)
bind_layers(BTH, NETH, opcode=OP_NACK)
bind_layers(BTH, PETH, opcode=OP_PROBE)
bind_layers(BTH, ERTH, opcode=OP_EP_REQUEST)
bind_layers(BTH, EETH, opcode=OP_EP_RESPONSE)


def data_headers(msg_id: int, offset: int, msg_len: int, ts: int = 0, r_key: int = 0) -> Packet:
    """METH / TSETH / RETH of a data packet as the project fills them: msn
    the message id's low 16 bits, va = msg_id << 32 | offset, dmalen the
    message length (docs/nic.md)."""
    return METH(msn=msg_id & 0xFFFF) / TSETH(tx_timestamp=ts) / RETH(va=(msg_id << 32) | offset, r_key=r_key,
                                                                      dmalen=msg_len)


# The headers after the BTH, per opcode: (layer classes), for parsing by offset.
EXTENSIONS: dict[int, tuple[type[Packet], ...]] = {
    **{op: (METH, TSETH, RETH) for op in DATA_OPCODES},
    OP_WRITE_LAST_IMM: (METH, TSETH, RETH, ImmDt),
    OP_WRITE_ONLY_IMM: (METH, TSETH, RETH, ImmDt),
    OP_ACK: (AETH,),
    OP_SACK: (SETH, CCState),
    OP_NACK: (NETH,),
    OP_PROBE: (PETH,),
    OP_EP_REQUEST: (ERTH,),
    OP_EP_RESPONSE: (EETH,),
}


class Mrc:
    """An MRC packet (IPv6 / UDP / BTH / MRC headers / payload / ICRC)
    parsed from bytes by offset, not through scapy's global layer bindings:
    other libraries (scapy.contrib.roce, loaded by ptf) bind port 4791 too.
    `hdrs` maps each header's class name (METH, SETH, ...) to the parsed layer."""

    __slots__ = ("ip", "sport", "dport", "bth", "hdrs", "payload")

    def __init__(self, raw: bytes):
        if len(raw) < 40 + 8 + 12 or raw[0] >> 4 != 6 or raw[6] != 17:
            raise ValueError("not IPv6 / UDP / BTH")
        self.ip = IPv6(raw[:40])
        self.sport = int.from_bytes(raw[40:42], "big")
        self.dport = int.from_bytes(raw[42:44], "big")
        if self.dport != ROCE_PORT:
            raise ValueError(f"UDP port {self.dport} is not RoCE")
        self.bth = BTH(raw[48:60])
        at = 60
        self.hdrs: dict[str, Packet] = {}
        for cls in EXTENSIONS.get(self.bth.opcode, ()):
            if cls is TSETH and not self.bth.ts:
                continue
            size = len(cls())
            if len(raw) < at + size:
                raise ValueError(f"{cls.__name__} truncated")
            self.hdrs[cls.__name__] = cls(raw[at:at + size])
            at += size
        self.payload = raw[at:]

    @property
    def ev(self) -> int:
        """The EV of this packet: UDP source port and low flow label."""
        fl: int = self.ip.fl
        return (self.sport << 16) | (fl & 0xFFFF)

    @property
    def dscp(self) -> int:
        tc: int = self.ip.tc
        return tc >> 2

    @property
    def ecn(self) -> int:
        tc: int = self.ip.tc
        return tc & 3


def parse(raw: bytes) -> Mrc | None:
    try:
        return Mrc(raw)
    except ValueError:
        return None
