"""A fast codec for MRC packets as the host hands them to its NIC:
IPv6 / UDP(4791) / BTH / MRC extension / payload, as bytes (DESIGN.md
section 6, layouts in docs/nic.md). No scapy: the endpoint and the NIC
model run this once per packet in the timed fabric.

`Mrc` parses by offset and reads only what is asked for, so one packet
costs a few slices. `build` writes the headers; payload is given as bytes.

A simulated payload is zeros, and the timed fabric does not carry them:
`pad` is a count of zero bytes that follow the bytes carried. They are in
every length (the IPv6 and UDP length fields, serialization, the byte
counters) but in no buffer, so a hop copies headers, not 4 KiB of zeros,
and a fabric's memory is its headers. The models give the same frames as
with the zeros carried (ptf_tests/lib/cache_check.py: compare_elided,
in tests/test_fuzz_models.py and make bench).
"""

from __future__ import annotations

import struct
from typing import Final

from mypy_extensions import mypyc_attr

from mrc_wire.constants import (
    ACK_EXT_LEN,
    BTH_LEN,
    DATA_OPCODES,
    EXT_LEN,
    IPPROTO_UDP,
    IPV6_LEN,
    OP_ACK,
    OP_NACK,
    OP_PROBE,
    OP_SACK,
    ROCE_PORT,
    UDP_LEN,
)

HDR_LEN: Final = IPV6_LEN + UDP_LEN + 12  # IPv6 + UDP + BTH: where the extension starts
_IP: Final = struct.Struct("!IHBB16s16s")
# UDP, then BTH: opcode, flags, pkey, fecn|becn|resv|dqpn, ackreq|resv|psn
_UDP_BTH: Final = struct.Struct("!HHHHBBHII")
_DATA: Final = struct.Struct("!IIII")
_ACK: Final = struct.Struct("!IIIQ")
_NACK: Final = struct.Struct("!II")
_PROBE: Final = struct.Struct("!II")


def data_ext(msg_id: int, offset: int, msg_len: int) -> bytes:
    return _DATA.pack(msg_id, offset, msg_len, 0)


def ack_ext(ev: int, ecn_seen: int, cum_psn: int, ack_psn: int, bitmap: int, port_down: int = 0) -> bytes:
    """ACK/SACK extension. `port_down` (a bitmap of the receiver's planes
    whose NIC port is down) rides in the reserved byte before ack_psn."""
    return _ACK.pack(ev, (ecn_seen << 31) | cum_psn, (port_down << 24) | ack_psn, bitmap)


def nack_ext(ev: int, reason: int, psn: int) -> bytes:
    return _NACK.pack(ev, (reason << 24) | psn)


def probe_ext(ev: int, reply: int, probe_id: int) -> bytes:
    return _PROBE.pack(ev, (reply << 31) | probe_id)


def build(src: bytes, dst: bytes, dscp: int, ecn: int, ev: int, opcode: int, dqpn: int, psn: int, ext: bytes,
          payload: bytes = b"", ackreq: int = 0, hlim: int = 64, pad: int = 0) -> bytes:
    """Inner IPv6 / UDP / BTH / extension / payload. `src` and `dst` are the
    16-byte addresses. The EV goes into the UDP source port (EV[31:16]) and
    the low 16 bits of the flow label (EV[15:0]); the UDP checksum is 0.
    `pad` zero bytes after the payload are counted in the lengths, not built."""
    ulen = UDP_LEN + 12 + len(ext) + len(payload) + pad
    ip = _IP.pack((6 << 28) | (((dscp << 2) | ecn) << 20) | (ev & 0xFFFF), ulen, IPPROTO_UDP, hlim, src, dst)
    udp_bth = _UDP_BTH.pack(ev >> 16, ROCE_PORT, ulen, 0, opcode, 0, 0xFFFF, dqpn & 0xFFFFFF,
                            (ackreq << 31) | (psn & 0xFFFFFF))
    return ip + udp_bth + ext + payload


class Mrc:
    """A parsed MRC packet (`raw`, then `pad` zero bytes not carried).
    Raises ValueError if it is not IPv6 / UDP 4791 / BTH with the extension
    its opcode needs."""

    __slots__ = ("raw", "pad", "tc", "fl", "sport", "opcode", "dqpn", "ackreq", "psn")

    def __init__(self, raw: bytes, pad: int = 0):
        if len(raw) < HDR_LEN or raw[0] >> 4 != 6 or raw[6] != IPPROTO_UDP:
            raise ValueError("not IPv6 / UDP / BTH")
        vtf = int.from_bytes(raw[0:4], "big")
        sport, dport, _, _, opcode, _, _, dqpn, apsn = _UDP_BTH.unpack_from(raw, IPV6_LEN)
        if dport != ROCE_PORT:
            raise ValueError(f"UDP port {dport} is not RoCE")
        if len(raw) < HDR_LEN + EXT_LEN.get(opcode, 0):
            raise ValueError(f"opcode {opcode:#x}: extension truncated")
        self.raw = raw
        self.pad = pad
        self.tc = (vtf >> 20) & 0xFF
        self.fl = vtf & 0xFFFFF
        self.sport: int = sport
        self.opcode: int = opcode
        self.dqpn = dqpn & 0xFFFFFF
        self.ackreq = apsn >> 31
        self.psn = apsn & 0xFFFFFF

    def marked_ce(self) -> Mrc:
        """This packet with CE in its ECN field (a NIC's RFC 6040 copy of
        the outer CE). Parsed again: a compiled class has no __new__
        without __init__, and a CE copy is rare next to a hop."""
        return Mrc(self.raw[:1] + bytes((self.raw[1] | 0x30,)) + self.raw[2:], self.pad)

    # ---- IPv6 -----------------------------------------------------------
    @property
    def dscp(self) -> int:
        return self.tc >> 2

    @property
    def ecn(self) -> int:
        return self.tc & 3

    @property
    def src(self) -> bytes:
        return self.raw[8:24]

    @property
    def dst(self) -> bytes:
        return self.raw[24:40]

    @property
    def ev(self) -> int:
        """The EV this packet travels on: UDP source port and low flow label."""
        return (self.sport << 16) | (self.fl & 0xFFFF)

    @property
    def is_data(self) -> bool:
        return self.opcode in DATA_OPCODES

    @property
    def payload(self) -> bytes:
        """The payload, its zeros not carried included (built on demand)."""
        carried = self.raw[HDR_LEN + EXT_LEN.get(self.opcode, 0):]
        return carried + bytes(self.pad) if self.pad else carried

    @property
    def payload_len(self) -> int:
        return len(self.raw) - HDR_LEN - EXT_LEN.get(self.opcode, 0) + self.pad

    # ---- extensions -------------------------------------------------------
    def data(self) -> tuple[int, int, int]:
        """(msg_id, offset, msg_len) of a data packet."""
        return _DATA.unpack_from(self.raw, HDR_LEN)[:3]

    def ack(self) -> tuple[int, int, int, int, int, int]:
        """(echoed EV, ecn_seen, cum_psn, ack_psn, bitmap, port_down) of an ACK/SACK."""
        ev, a, b, bitmap = _ACK.unpack_from(self.raw, HDR_LEN)
        return ev, a >> 31, a & 0xFFFFFF, b & 0xFFFFFF, bitmap, b >> 24

    def nack(self) -> tuple[int, int, int]:
        """(echoed EV, reason, psn) of a NACK."""
        ev, a = _NACK.unpack_from(self.raw, HDR_LEN)
        return ev, a >> 24, a & 0xFFFFFF

    def probe(self) -> tuple[int, int, int]:
        """(probed EV, reply, probe_id) of a probe."""
        ev, a = _PROBE.unpack_from(self.raw, HDR_LEN)
        return ev, a >> 31, a & 0xFFFFFF

    @property
    def ext_ev(self) -> int:
        """The EV named in the extension (echoed or probed), or -1."""
        if self.opcode in (OP_ACK, OP_SACK, OP_NACK, OP_PROBE):
            return int.from_bytes(self.raw[HDR_LEN:HDR_LEN + 4], "big")
        return -1


def ev_of(ip: bytes) -> int:
    """The EV an MRC packet carries, from its (inner) IPv6 header on: UDP
    source port and the low 16 bits of the flow label."""
    return (int.from_bytes(ip[IPV6_LEN:IPV6_LEN + 2], "big") << 16) | int.from_bytes(ip[2:4], "big")


def dqpn_of(ip: bytes) -> int:
    """The BTH destination QP, from the (inner) IPv6 header on."""
    at = IPV6_LEN + UDP_LEN + 5
    return int.from_bytes(ip[at:at + 3], "big")


def cut_short(ip: bytes) -> bool:
    """Whether a header a NIC parser extracts after this IPv6 header (UDP,
    then for port 4791 the BTH and its opcode's extension) is cut short by
    the end of the packet: P4's PacketTooShort, counted as malformed."""
    need = IPV6_LEN + UDP_LEN
    if ip[6] != IPPROTO_UDP:
        return False
    if len(ip) < need:
        return True
    if int.from_bytes(ip[42:44], "big") != ROCE_PORT:
        return False
    need += BTH_LEN
    if len(ip) < need:
        return True
    return len(ip) < need + EXT_LEN.get(ip[IPV6_LEN + UDP_LEN], 0)


# The endpoints (interpreted, or compiled in another module) subclass it.
@mypyc_attr(allow_interpreted_subclasses=True)
class PacketHost:
    """What a NIC's host runs (the MRC endpoint, the RoCE endpoint): it
    takes packets its NIC parsed (`deliver`); `receive` parses bytes for it
    (a NIC that hands over bytes: BMv2, the path fabric of the tests)."""

    def deliver(self, pkt: Mrc) -> None:
        raise NotImplementedError

    def receive(self, raw: bytes, pad: int = 0) -> None:
        """A packet from the NIC, as bytes (its IPv6 header on)."""
        pkt = parse(raw, pad)
        if pkt is not None:
            self.deliver(pkt)


def parse(raw: bytes, pad: int = 0) -> Mrc | None:
    try:
        return Mrc(raw, pad)
    except ValueError:
        return None


assert ACK_EXT_LEN == _ACK.size


def nack_for(inner: bytes, peer_qpn: int, reason: int, dscp_control: int) -> bytes:
    """The NACK a receiving NIC sends for a trimmed data packet, from its
    inner headers as they arrived (DESIGN.md section 5): back to the
    sender, on the same EV (UDP source port and flow label kept), the BTH
    copied with opcode NACK and the sender's QP, echoed EV and PSN."""
    fl = int.from_bytes(inner[1:4], "big") & 0xFFFFF
    ulen = UDP_LEN + 12 + 8
    ip = ((6 << 28) | ((dscp_control << 2) << 20) | fl).to_bytes(4, "big") + ulen.to_bytes(2, "big")
    ip += bytes([IPPROTO_UDP, 64]) + inner[24:40] + inner[8:24]
    udp = inner[40:42] + ROCE_PORT.to_bytes(2, "big") + ulen.to_bytes(2, "big") + b"\0\0"
    bth = bytearray(inner[48:60])
    bth[0] = OP_NACK
    bth[5:8] = (peer_qpn & 0xFFFFFF).to_bytes(3, "big")
    ev = ev_of(inner)
    return ip + udp + bytes(bth) + nack_ext(ev, reason, int.from_bytes(inner[57:60], "big"))
