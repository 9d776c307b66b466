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
    AETH_LEN,
    BTH_LEN,
    BTH_RTX,
    BTH_TS,
    EETH_LEN,
    ERTH_LEN,
    EXT_LEN,
    ICRC_LEN,
    IPPROTO_UDP,
    IPV6_LEN,
    METH_LEN,
    NETH_CC_TYPE,
    NETH_LEN,
    OP_EP_RESPONSE,
    OP_NACK,
    OP_WRITE_FIRST,
    OP_WRITE_ONLY_IMM,
    PETH_LEN,
    ROCE_PORT,
    SACK_EXT_LEN,
    SACK_OFFSET,
    SETH_CC_TYPE,
    SETH_LEN,
    TSETH_FTYPE,
    TSETH_LEN,
    UDP_LEN,
)

HDR_LEN: Final = IPV6_LEN + UDP_LEN + BTH_LEN  # IPv6 + UDP + BTH: where the MRC headers start
_UDP: Final = IPV6_LEN  # where the UDP header starts
_BTH: Final = IPV6_LEN + UDP_LEN  # where the BTH starts
_ICRC: Final = bytes(ICRC_LEN)  # the trailer, zero (mrc_wire.constants.ICRC_LEN)
_IP: Final = struct.Struct("!IHBB16s16s")
# UDP, then BTH: opcode, byte 1, P_Key, byte 4 | dest QP, flags | PSN
_UDP_BTH: Final = struct.Struct("!HHHHBBHII")
# The layouts of mrc_wire.headers, as struct formats (held equal to
# headers.pack/unpack by tests/wire/test_codec.py):
_DATA: Final = struct.Struct("!HHHHQII")  # METH (rqmsn, msn), TSETH (timestamp, tsr|ftype), RETH (va, r_key, dmalen)
_SACK: Final = struct.Struct("!BBhIHHIBBhQHHI")  # SETH then CC_STATE
# The fields of a SACK that `Mrc.sack` returns, the rest skipped: 6 values
# unpacked where all 14 were (each a boxed int, made and dropped per SACK).
_SACK_READ: Final = struct.Struct("!xBhI4xI2xhQ")  # m|pr, ack_psn_offset, ev, cack_psn, sack_offset, bitmap
_NACK: Final = struct.Struct("!BBBBIHHIBBH")  # NETH
_PROBE: Final = struct.Struct("!BBBBHHHHHH")  # PETH
_AETH: Final = struct.Struct("!I")
_ERTH: Final = struct.Struct("!BBBBIIHH")
_I16: Final = 0x8000


def _int16(v: int) -> int:
    """`v` clamped into a signed 16-bit field (SETH's offsets)."""
    return -_I16 if v < -_I16 else _I16 - 1 if v >= _I16 else v


def data_ext(msg_id: int, offset: int, msg_len: int, ts: int = 0, r_key: int = 0) -> bytes:
    """METH, TSETH and RETH of a data packet. The model gives message
    `msg_id` the buffer at virtual address msg_id << 32, so RETH's va is
    that plus `offset` and any packet can be placed on arrival; dmalen is
    the message's length; METH's msn the message id's low 16 bits; `ts`
    the sender's clock in 128 ns units (TSETH, as the ns-3 reading)."""
    return _DATA.pack(0, msg_id & 0xFFFF, ts & 0xFFFF, TSETH_FTYPE, (msg_id << 32) | offset, r_key, msg_len)


def sack_ext(ev: int, cum: int, ack_psn: int, bitmap: int, *, m: int = 0, pr: int = 0, spdcid: int = 0,
             dpdcid: int = 0, mpr: int = 0, ts: int = 0, ooo: int = 0, rcvd: int = 0,
             ack_psn_offset: int | None = None) -> bytes:
    """SETH and CC_STATE. `cum` is the first PSN not received (cack_psn,
    the last received in order, is one less); `bitmap` bit k says PSN
    cum + 1 + k arrived (so sack_offset is SACK_OFFSET); `ack_psn` the
    arrival this SACK answers (its offset from cack_psn, clamped to 16
    bits), or `ack_psn_offset` given as is (a probe reply's probe id).
    `m` is the congestion mark (SETH_M_*), `ev` the echoed entropy."""
    cack = (cum - 1) & 0xFFFFFF
    if ack_psn_offset is None:
        d = (ack_psn - cack) & 0xFFFFFF
        ack_psn_offset = _int16(d - 0x1000000 if d >= 0x800000 else d)
    return _SACK.pack(0, (m << 5) | (pr << 1), ack_psn_offset, ev, spdcid & 0xFFFF, dpdcid & 0xFFFF, cack,
                      SETH_CC_TYPE << 4, mpr, SACK_OFFSET, bitmap, ts & 0xFFFF, min(ooo, 0x7FFF),
                      min(rcvd, 0xFFFFFF))


def probe_reply_ext(ev: int, probe_id: int, cum: int, bitmap: int, **kw: int) -> bytes:
    """A probe's answer: a SACK with pr set, echoing the probed EV, the
    probe id in ack_psn_offset (as the ns-3 reading answers a probe)."""
    pid = probe_id & 0xFFFF
    return sack_ext(ev, cum, 0, bitmap, pr=1, ack_psn_offset=pid - 0x10000 if pid >= _I16 else pid, **kw)


def nack_ext(ev: int, reason: int, psn: int, *, spdcid: int = 0, dpdcid: int = 0, ts: int = 0) -> bytes:
    """NETH: `reason` (NACK_*) for `psn`, echoing the EV it arrived on and
    the sender's TSETH timestamp."""
    return _NACK.pack(0, 0, reason, 0, ev, spdcid & 0xFFFF, dpdcid & 0xFFFF, psn & 0xFFFFFF, NETH_CC_TYPE << 4,
                      0, ts & 0xFFFF)


def probe_ext(probe_id: int, *, spdcid: int = 0, dpdcid: int = 0, ts: int = 0) -> bytes:
    """PETH. The probed EV is the one the probe travels on (its UDP source
    port and flow label): PETH has no field for it."""
    return _PROBE.pack(0, 0, 0, 0, probe_id & 0xFFFF, 0, spdcid & 0xFFFF, dpdcid & 0xFFFF, ts & 0xFFFF,
                       TSETH_FTYPE)


def aeth_ext(syndrome: int, msn: int = 0) -> bytes:
    return _AETH.pack((syndrome << 24) | (msn & 0xFFFFFF))


def erth_ext(op: int, port_status_mask: int = 0, ts: int = 0) -> bytes:
    """ERTH: an endpoint request (EP_PORT_STATUS with the mask of this
    NIC's ports that are down, or EP_EV_PROBE)."""
    return _ERTH.pack(0, op & 3, 0, 0, port_status_mask, 0, ts & 0xFFFF, TSETH_FTYPE)


def eeth_ext(op: int, ts: int = 0) -> bytes:
    """EETH: the answer to an endpoint request of operation `op`."""
    out = bytearray(EETH_LEN)
    out[1] = (op & 3) << 4
    out[28:30] = (ts & 0xFFFF).to_bytes(2, "big")
    return bytes(out)


def is_data_opcode(opcode: int) -> bool:
    """Whether `opcode` is one of DATA_OPCODES, as two compares (compiled:
    native, where a range's `in` is a Python call)."""
    return OP_WRITE_FIRST <= opcode <= OP_WRITE_ONLY_IMM  # DATA_OPCODES' ends


def ext_len(opcode: int, flags: int) -> int:
    """Bytes of MRC headers after the BTH: a data packet's TSETH only when
    the BTH's TS flag says so; 0 for an opcode MRC does not define."""
    n = EXT_LEN.get(opcode, 0)
    if not flags & BTH_TS and is_data_opcode(opcode):
        n -= TSETH_LEN
    return n


def build(src: bytes, dst: bytes, dscp: int, ecn: int, ev: int, opcode: int, dqpn: int, psn: int, ext: bytes,
          payload: bytes = b"", ackreq: int = 0, hlim: int = 64, pad: int = 0, retx: int = 0,
          becn: int = 0) -> bytes:
    """Inner IPv6 / UDP / BTH / MRC headers / payload / ICRC. `src` and
    `dst` are the 16-byte addresses. The EV goes into the UDP source port
    (EV[31:16]) and the low 16 bits of the flow label (EV[15:0]); the UDP
    checksum and the ICRC are 0. A data packet's BTH says its TSETH is
    there (every data packet built here has one). `pad`: zero bytes at the
    end counted in the lengths, not built: a simulated payload's zeros and
    the ICRC (a caller that pads counts ICRC_LEN in it). `becn`: IBTA's
    congestion bit in BTH byte 4 (the RoCE baseline's CNP; MRC leaves it 0)."""
    ulen = UDP_LEN + BTH_LEN + len(ext) + len(payload) + (pad if pad else ICRC_LEN)
    flags = (ackreq << 7) | (retx << 5) | (BTH_TS if is_data_opcode(opcode) else 0)
    ip = _IP.pack((6 << 28) | (((dscp << 2) | ecn) << 20) | (ev & 0xFFFF), ulen, IPPROTO_UDP, hlim, src, dst)
    udp_bth = _UDP_BTH.pack(ev >> 16, ROCE_PORT, ulen, 0, opcode, 0, 0xFFFF, (becn << 30) | (dqpn & 0xFFFFFF),
                            (flags << 24) | (psn & 0xFFFFFF))
    if pad:
        return ip + udp_bth + ext + payload
    return ip + udp_bth + ext + payload + _ICRC


class Mrc:
    """A parsed MRC packet (`raw`, then `pad` zero bytes not carried).
    Raises ValueError if it is not IPv6 / UDP 4791 / BTH with the MRC
    headers its opcode needs."""

    __slots__ = ("raw", "pad", "tc", "fl", "sport", "opcode", "dqpn", "flags", "ackreq", "psn", "ext")

    def __init__(self, raw: bytes, pad: int = 0):
        # Byte by byte, not struct: compiled, each read is native, with no
        # tuple of boxed integers (a packet is parsed at every NIC).
        if len(raw) < HDR_LEN or raw[0] >> 4 != 6 or raw[6] != IPPROTO_UDP:
            raise ValueError("not IPv6 / UDP / BTH")
        dport = (raw[_UDP + 2] << 8) | raw[_UDP + 3]
        if dport != ROCE_PORT:
            raise ValueError(f"UDP port {dport} is not RoCE")
        opcode, flags = raw[_BTH], raw[_BTH + 8]
        ext = ext_len(opcode, flags)
        if len(raw) < HDR_LEN + ext:
            raise ValueError(f"opcode {opcode:#x}: MRC headers truncated")
        self.raw = raw
        self.pad = pad
        self.tc = ((raw[0] & 0xF) << 4) | (raw[1] >> 4)
        self.fl = ((raw[1] & 0xF) << 16) | (raw[2] << 8) | raw[3]
        self.sport = (raw[_UDP] << 8) | raw[_UDP + 1]
        self.opcode = opcode
        self.dqpn = (raw[_BTH + 5] << 16) | (raw[_BTH + 6] << 8) | raw[_BTH + 7]
        self.flags = flags
        self.ackreq = flags >> 7
        self.psn = (raw[_BTH + 9] << 16) | (raw[_BTH + 10] << 8) | raw[_BTH + 11]
        self.ext = ext

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
        return is_data_opcode(self.opcode)

    @property
    def retx(self) -> int:
        """The BTH's retransmission flag."""
        return (self.flags & BTH_RTX) >> 5

    @property
    def payload(self) -> bytes:
        """The payload, its zeros not carried included (built on demand),
        the ICRC not."""
        at, n = HDR_LEN + self.ext, len(self.raw)
        end = n + self.pad - ICRC_LEN
        if end <= n:
            return self.raw[at:end]
        return self.raw[at:] + bytes(end - n)

    @property
    def payload_len(self) -> int:
        return max(0, len(self.raw) + self.pad - HDR_LEN - self.ext - ICRC_LEN)

    # ---- MRC headers ------------------------------------------------------
    def data(self) -> tuple[int, int, int]:
        """(msg_id, offset, msg_len) of a data packet, from its RETH
        (data_ext: va = msg_id << 32 | offset, dmalen = msg_len)."""
        r, at = self.raw, HDR_LEN + METH_LEN + (TSETH_LEN if self.flags & BTH_TS else 0)
        # Byte by byte, as __init__: compiled, native reads with no slice made.
        return ((r[at] << 24) | (r[at + 1] << 16) | (r[at + 2] << 8) | r[at + 3],
                (r[at + 4] << 24) | (r[at + 5] << 16) | (r[at + 6] << 8) | r[at + 7],
                (r[at + 12] << 24) | (r[at + 13] << 16) | (r[at + 14] << 8) | r[at + 15])

    def tx_timestamp(self) -> int:
        """A data packet's TSETH timestamp (0 without one)."""
        if not self.flags & BTH_TS:
            return 0
        at = HDR_LEN + METH_LEN
        return (self.raw[at] << 8) | self.raw[at + 1]

    def sack(self) -> tuple[int, int, int, int, int]:
        """(echoed EV, congestion mark m, cum, ack_psn, bitmap) of a SACK:
        cum the first PSN not received (cack_psn + 1), bitmap bit k PSN
        cum + 1 + k, whatever sack_offset the sender chose."""
        b1, ack_off, ev, cack, sack_off, bitmap = _SACK_READ.unpack_from(self.raw, HDR_LEN)
        cack &= 0xFFFFFF
        shift = sack_off - SACK_OFFSET
        if shift > 0:
            bitmap <<= shift
        elif shift < 0:
            bitmap >>= -shift
        return ev, (b1 >> 5) & 3, (cack + 1) & 0xFFFFFF, (cack + ack_off) & 0xFFFFFF, bitmap

    @property
    def sack_mark(self) -> int:
        """A SACK's congestion mark (SETH m), without parsing the rest."""
        return (self.raw[HDR_LEN + 1] >> 5) & 3

    @property
    def probe_response(self) -> bool:
        """A SACK answering a probe (SETH pr)."""
        return bool(self.raw[HDR_LEN + 1] & 2)

    def probe_reply(self) -> tuple[int, int]:
        """(probed EV, probe id) of a probe's answer."""
        ack_off, ev = struct.unpack_from("!hI", self.raw, HDR_LEN + 2)
        return ev, ack_off & 0xFFFF

    def cc_state(self) -> tuple[int, int]:
        """(ooo_count, rcvd_bytes) of a SACK's CC_STATE."""
        w0, w1 = struct.unpack_from("!II", self.raw, HDR_LEN + SACK_EXT_LEN - 8)
        return w0 & 0x7FFF, w1 & 0xFFFFFF

    def nack(self) -> tuple[int, int, int]:
        """(echoed EV, nack_reason, nack_psn) of a NACK."""
        _, _, reason, _, ev, _, _, psn, _, _, _ = _NACK.unpack_from(self.raw, HDR_LEN)
        return ev, reason, psn & 0xFFFFFF

    def probe_id(self) -> int:
        """A probe's id (PETH); the probed EV is the packet's own."""
        return int.from_bytes(self.raw[HDR_LEN + 4:HDR_LEN + 6], "big")

    def aeth(self) -> tuple[int, int]:
        """(syndrome, msn) of an ACK's AETH."""
        w = _AETH.unpack_from(self.raw, HDR_LEN)[0]
        return w >> 24, w & 0xFFFFFF

    @property
    def becn(self) -> int:
        """IBTA's BECN bit (BTH byte 4): the RoCE baseline's congestion echo."""
        return (self.raw[HDR_LEN - BTH_LEN + 4] >> 6) & 1

    def endpoint_op(self) -> tuple[int, int]:
        """(op, port_status_mask) of an endpoint request (ERTH); (op, 0) of
        a response (EETH)."""
        b1 = self.raw[HDR_LEN + 1]
        if self.opcode == OP_EP_RESPONSE:
            return (b1 >> 4) & 3, 0
        return b1 & 3, int.from_bytes(self.raw[HDR_LEN + 4:HDR_LEN + 8], "big")


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
    then for port 4791 the BTH and the MRC headers of its opcode and
    flags) is cut short by the end of the packet: P4's PacketTooShort,
    counted as malformed."""
    need = IPV6_LEN + UDP_LEN
    if ip[6] != IPPROTO_UDP:
        return False
    if len(ip) < need:
        return True
    if (ip[42] << 8 | ip[43]) != ROCE_PORT:  # byte by byte: compiled, no slice made
        return False
    need += BTH_LEN
    if len(ip) < need:
        return True
    return len(ip) < need + ext_len(ip[IPV6_LEN + UDP_LEN], ip[IPV6_LEN + UDP_LEN + 8])


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


assert _DATA.size == METH_LEN + TSETH_LEN + 16 and _SACK.size == SACK_EXT_LEN and _NACK.size == NETH_LEN
assert _SACK_READ.size == SETH_LEN  # what it reads ends with SETH
assert _PROBE.size == PETH_LEN and _AETH.size == AETH_LEN and _ERTH.size == ERTH_LEN
_NACK_LEN: Final = UDP_LEN + BTH_LEN + NETH_LEN + ICRC_LEN  # a NACK's UDP length


def nack_for(inner: bytes, peer_qpn: int, reason: int, dscp_control: int) -> bytes:
    """The NACK a receiving NIC sends for a trimmed data packet, from its
    inner headers as they arrived (DESIGN.md section 5): back to the
    sender, on the same EV (UDP source port and flow label kept), the BTH
    copied with opcode NACK, the sender's QP and its flags cleared; NETH
    echoing the EV, the PSN and the TSETH timestamp; then the ICRC."""
    fl = int.from_bytes(inner[1:4], "big") & 0xFFFFF
    ip = ((6 << 28) | ((dscp_control << 2) << 20) | fl).to_bytes(4, "big") + _NACK_LEN.to_bytes(2, "big")
    ip += bytes([IPPROTO_UDP, 64]) + inner[24:40] + inner[8:24]
    udp = inner[40:42] + ROCE_PORT.to_bytes(2, "big") + _NACK_LEN.to_bytes(2, "big") + b"\0\0"
    bth = bytearray(inner[48:60])
    bth[0] = OP_NACK
    bth[5:8] = (peer_qpn & 0xFFFFFF).to_bytes(3, "big")
    bth[8] = 0
    flags = inner[56]
    ts = int.from_bytes(inner[64:66], "big") if flags & BTH_TS else 0
    local_qpn = int.from_bytes(inner[53:56], "big")
    neth = nack_ext(ev_of(inner), reason, int.from_bytes(inner[57:60], "big"), spdcid=local_qpn, dpdcid=peer_qpn,
                    ts=ts)
    return ip + udp + bytes(bth) + neth + _ICRC
