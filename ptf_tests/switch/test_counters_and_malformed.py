"""Per-port and per-reason counters, and malformed frames dropped and
counted without harm to the next good packet."""

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from ptf_tests.lib.fabric import DOWNLINKS, UPLINKS, carrier, forwarded, frame, sid_t1


def _good(target):
    pkt = frame(carrier(sid_t1(0)), in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0]), UPLINKS[0])


def test_port_counters_count_rx_tx_and_drops(target):
    rx0, _, drop0 = target.port_counts(DOWNLINKS[1])
    _, tx0, _ = target.port_counts(UPLINKS[1])
    for _ in range(3):
        pkt = frame(carrier(sid_t1(1)), in_port=DOWNLINKS[1])
        target.send(DOWNLINKS[1], pkt)
        target.verify_packet(forwarded(pkt, UPLINKS[1]), UPLINKS[1])
    target.send(DOWNLINKS[1], frame(carrier(sid_t1(9)), in_port=DOWNLINKS[1]))
    target.verify_no_other_packets()
    rx1, _, drop1 = target.port_counts(DOWNLINKS[1])
    _, tx1, _ = target.port_counts(UPLINKS[1])
    assert (rx1 - rx0, tx1 - tx0, drop1 - drop0) == (4, 3, 1)


def test_byte_counters_count_whole_frames(target):
    # Forwarding keeps the length (MACs, hop limit and DA are rewritten in place).
    rxb0, _ = target.port_bytes(DOWNLINKS[1])
    _, txb0 = target.port_bytes(UPLINKS[1])
    sizes = (200, 333, 1000)
    for size in sizes:
        pkt = frame(carrier(sid_t1(1)), size=size, in_port=DOWNLINKS[1])
        assert len(pkt) == size
        target.send(DOWNLINKS[1], pkt)
        target.verify_packet(forwarded(pkt, UPLINKS[1]), UPLINKS[1])
    target.send(DOWNLINKS[1], frame(carrier(sid_t1(9)), size=150, in_port=DOWNLINKS[1]))  # dropped: no route
    target.verify_no_other_packets()
    rxb1, _ = target.port_bytes(DOWNLINKS[1])
    _, txb1 = target.port_bytes(UPLINKS[1])
    assert (rxb1 - rxb0, txb1 - txb0) == (sum(sizes) + 150, sum(sizes))


def test_not_ipv6_dropped_and_counted(target):
    before = target.drop_count("not_ipv6")
    target.send(DOWNLINKS[0], Ether(dst="02:00:40:00:00:00") / IP(dst="10.0.0.1") / UDP() / bytes(40))
    target.verify_no_other_packets()
    assert target.drop_count("not_ipv6") == before + 1
    _good(target)


def test_truncated_ipv6_header_dropped_and_counted(target):
    before = target.drop_count("malformed")
    whole = bytes(frame(carrier(sid_t1(0)), in_port=DOWNLINKS[0]))
    target.send(DOWNLINKS[0], whole[: 14 + 20])
    target.verify_no_other_packets()
    assert target.drop_count("malformed") == before + 1
    _good(target)


def test_wrong_ip_version_dropped_and_counted(target):
    before = target.drop_count("malformed")
    raw = bytearray(bytes(frame(carrier(sid_t1(0)), in_port=DOWNLINKS[0])))
    raw[14] = 0x40 | (raw[14] & 0x0F)  # version 4 inside an IPv6 EtherType
    target.send(DOWNLINKS[0], bytes(raw))
    target.verify_no_other_packets()
    assert target.drop_count("malformed") == before + 1
    _good(target)
