"""MRC transport headers as scapy layers (DESIGN.md section 6; byte
layouts of the MRC extensions are this project's, docs/nic.md).

    IPv6 / UDP(dport 4791) / BTH / MRCData   RDMA write family (0xC6..0xCB)
    IPv6 / UDP / BTH / MRCAck                ACK (0xD1), SACK (0xDC)
    IPv6 / UDP / BTH / MRCNack               NACK (0xDD)
    IPv6 / UDP / BTH / MRCProbe              probe and probe reply (0xDE)
"""

from __future__ import annotations

from scapy.fields import BitField, ByteField, IntField, LongField, ShortField, XByteField
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.packet import Packet, bind_layers

from mrc_wire.constants import (  # noqa: F401 (the one source; re-exported for tests)
    DATA_OPCODES,
    NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
    OP_ACK,
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


class BTH(Packet):
    """InfiniBand Base Transport Header, 12 bytes."""

    name = "BTH"
    fields_desc = [
        XByteField("opcode", OP_WRITE_ONLY),
        BitField("se", 0, 1),
        BitField("migreq", 0, 1),
        BitField("padcnt", 0, 2),
        BitField("tver", 0, 4),
        ShortField("pkey", 0xFFFF),
        BitField("fecn", 0, 1),
        BitField("becn", 0, 1),
        BitField("resv6", 0, 6),
        BitField("dqpn", 0, 24),
        BitField("ackreq", 0, 1),
        BitField("resv7", 0, 7),
        BitField("psn", 0, 24),
    ]


class MRCData(Packet):
    """Data extension, 16 bytes: which message and where this payload goes."""

    name = "MRCData"
    fields_desc = [IntField("msg_id", 0), IntField("offset", 0), IntField("msg_len", 0), IntField("reserved", 0)]


class MRCAck(Packet):
    """ACK/SACK extension, 20 bytes: echoed EV, cumulative PSN (every PSN
    below it received), the PSN that triggered this ACK, and a bitmap of
    PSNs cum_psn+1 .. cum_psn+64 received out of order (bit 0 = cum_psn+1)."""

    name = "MRCAck"
    fields_desc = [
        IntField("ev", 0),
        BitField("ecn_seen", 0, 1),
        BitField("resv", 0, 7),
        BitField("cum_psn", 0, 24),
        ByteField("resv2", 0),
        BitField("ack_psn", 0, 24),
        LongField("bitmap", 0),
    ]


class MRCNack(Packet):
    """NACK extension, 8 bytes: echoed EV, reason, PSN of the lost payload."""

    name = "MRCNack"
    fields_desc = [IntField("ev", 0), ByteField("reason", 0), BitField("psn", 0, 24)]


class MRCProbe(Packet):
    """Probe extension, 8 bytes: the probed EV, a reply flag, a probe id."""

    name = "MRCProbe"
    fields_desc = [IntField("ev", 0), BitField("reply", 0, 1), BitField("resv", 0, 7), BitField("probe_id", 0, 24)]


bind_layers(UDP, BTH, dport=ROCE_PORT)
for _op in DATA_OPCODES:
    bind_layers(BTH, MRCData, opcode=_op)
bind_layers(BTH, MRCAck, opcode=OP_ACK)
bind_layers(BTH, MRCAck, opcode=OP_SACK)
bind_layers(BTH, MRCNack, opcode=OP_NACK)
bind_layers(BTH, MRCProbe, opcode=OP_PROBE)


EXTENSIONS = {
    **{op: MRCData for op in DATA_OPCODES},
    OP_ACK: MRCAck,
    OP_SACK: MRCAck,
    OP_NACK: MRCNack,
    OP_PROBE: MRCProbe,
}


class Mrc:
    """An MRC packet (IPv6 / UDP / BTH / extension / payload) parsed from
    bytes by offset, not through scapy's global layer bindings: other
    libraries (scapy.contrib.roce, loaded by ptf) bind port 4791 too."""

    __slots__ = ("ip", "sport", "dport", "bth", "ext", "payload")

    def __init__(self, raw: bytes):
        if len(raw) < 40 + 8 + 12 or raw[0] >> 4 != 6 or raw[6] != 17:
            raise ValueError("not IPv6 / UDP / BTH")
        self.ip = IPv6(raw[:40])
        self.sport = int.from_bytes(raw[40:42], "big")
        self.dport = int.from_bytes(raw[42:44], "big")
        if self.dport != ROCE_PORT:
            raise ValueError(f"UDP port {self.dport} is not RoCE")
        self.bth = BTH(raw[48:60])
        cls = EXTENSIONS.get(self.bth.opcode)
        size = len(cls()) if cls else 0
        self.ext = cls(raw[60 : 60 + size]) if cls and len(raw) >= 60 + size else None
        self.payload = raw[60 + size :]

    @property
    def ev(self) -> int:
        """The EV of this packet: UDP source port and low flow label."""
        return (self.sport << 16) | (self.ip.fl & 0xFFFF)

    @property
    def dscp(self) -> int:
        return self.ip.tc >> 2

    @property
    def ecn(self) -> int:
        return self.ip.tc & 3


def parse(raw: bytes) -> Mrc | None:
    try:
        return Mrc(raw)
    except ValueError:
        return None
