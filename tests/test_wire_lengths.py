"""The length fields mrc_wire.packet.build writes, read back by scapy: the
IPv6 payload length and the UDP length both cover UDP, BTH, the MRC
headers, the payload and the ICRC (a mutation-run survivor subtracted the
extension)."""

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6

from mrc_wire import packet as W
from mrc_wire.constants import OP_SACK, OP_WRITE_FIRST

SRC, DST = bytes(15) + b"\1", bytes(15) + b"\2"


def test_ipv6_and_udp_lengths_cover_extension_and_payload():
    for op, ext, payload in ((OP_WRITE_FIRST, W.data_ext(7, 0, 5000), bytes(1000)),
                             (OP_SACK, W.sack_ext(0x1234, 10, 12, 0b11), b"")):
        raw = W.build(SRC, DST, 8, 2, 0x12345, op, 9, 3, ext, payload)
        pkt = IPv6(raw)
        want = 8 + 12 + len(ext) + len(payload) + 4
        assert (pkt.plen, pkt[UDP].len, len(raw)) == (want, want, 40 + want), op
