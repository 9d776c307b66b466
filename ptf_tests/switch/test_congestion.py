"""ECN marking and trimming against the run-time thresholds (demo: ECN at
depth 64, trimming at 128, trim_bytes 256). Depth is set per egress port."""

from dataclasses import replace

import pytest
from scapy.layers.inet6 import IPv6

from ptf_tests.lib.fabric import DOWNLINKS, T0, TOPO, UPLINKS, carrier, forwarded, frame, sid_dl, sid_t0, sid_t1

# Every test places a packet at a queue depth through BMv2's Thrift runtime.
pytestmark = pytest.mark.bmv2_knob("a set queue depth (BMv2 Thrift register_write port_qdepth)")

ECN_AT = TOPO.congestion.ecn_threshold
TRIM_AT = TOPO.congestion.trim_threshold
TRIM_BYTES = TOPO.congestion.trim_bytes
D = TOPO.dscp
ECT0, CE = 2, 3


def tc(dscp: int, ecn: int = 0) -> int:
    return (dscp << 2) | ecn


def trimmed(pkt, out_port, dst, dscp) -> bytes:
    """The forwarded frame with the trimmed DSCP, cut to trim_bytes and its
    IPv6 payload length set to what is left."""
    exp = forwarded(pkt, out_port, dst, tc=tc(dscp, pkt[IPv6].tc & 3))
    exp[IPv6].plen = TRIM_BYTES - 14 - 40
    return bytes(exp)[:TRIM_BYTES]


def test_ecn_marked_at_threshold(target):
    target.set_qdepth(UPLINKS[0], ECN_AT)
    before = target.event_count("ecn_marked")
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_trimmable"], ECT0), in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0], tc=tc(D["data_trimmable"], CE)), UPLINKS[0])
    target.verify_no_other_packets()
    assert target.event_count("ecn_marked") == before + 1


def test_ecn_not_marked_below_threshold(target):
    target.set_qdepth(UPLINKS[0], ECN_AT - 1)
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_trimmable"], ECT0), in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0]), UPLINKS[0])
    target.verify_no_other_packets()


def test_ecn_never_on_host_port(target):
    target.set_qdepth(DOWNLINKS[1], TRIM_AT - 1)
    pkt = frame(carrier(sid_t0(0), sid_dl(1)), tc=tc(D["data_trimmable"], ECT0), in_port=UPLINKS[0])
    target.send(UPLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, DOWNLINKS[1], carrier(sid_dl(1))), DOWNLINKS[1])
    target.verify_no_other_packets()


def test_not_ect_never_marked(target):
    target.set_qdepth(UPLINKS[0], ECN_AT)
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_trimmable"], 0), in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0]), UPLINKS[0])
    target.verify_no_other_packets()


def test_trimmed_to_trim_bytes_with_trimmed_dscp(target):
    target.set_qdepth(UPLINKS[1], TRIM_AT)
    before = target.event_count("trimmed")
    dst = carrier(sid_t0(0), sid_t1(1), sid_t0(1), sid_dl(0))
    pkt = frame(dst, tc=tc(D["data_trimmable"]), size=1000, in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    exp = trimmed(pkt, UPLINKS[1], carrier(sid_t1(1), sid_t0(1), sid_dl(0)), D["trimmed"])
    assert len(exp) == TRIM_BYTES
    target.verify_packet(exp, UPLINKS[1])
    target.verify_no_other_packets()
    assert target.event_count("trimmed") == before + 1


def test_retransmission_class_is_trimmable(target):
    target.set_qdepth(UPLINKS[0], TRIM_AT + 50)
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_trimmable_retx"]), size=600, in_port=DOWNLINKS[1])
    target.send(DOWNLINKS[1], pkt)
    target.verify_packet(trimmed(pkt, UPLINKS[0], None, D["trimmed"]), UPLINKS[0])
    target.verify_no_other_packets()


def test_trimmed_on_host_port_is_lasthop(target):
    target.set_qdepth(DOWNLINKS[0], TRIM_AT)
    pkt = frame(carrier(sid_t0(0), sid_dl(0)), tc=tc(D["data_trimmable"]), size=800, in_port=UPLINKS[0])
    target.send(UPLINKS[0], pkt)
    target.verify_packet(trimmed(pkt, DOWNLINKS[0], carrier(sid_dl(0)), D["trimmed_lasthop"]), DOWNLINKS[0])
    target.verify_no_other_packets()


def test_short_trimmable_packet_marked_not_cut(target):
    target.set_qdepth(UPLINKS[0], TRIM_AT)
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_trimmable"]), size=120, in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0], tc=tc(D["trimmed"])), UPLINKS[0])
    target.verify_no_other_packets()


def test_trim_length_boundary_one_below_at_and_one_above_trim_bytes(target):
    # Frames of trim_bytes - 1 and trim_bytes are marked, not cut; one byte
    # more is cut to exactly trim_bytes (a cut at trim_bytes + 64 fails here).
    for size in (TRIM_BYTES - 1, TRIM_BYTES, TRIM_BYTES + 1):
        target.set_qdepth(UPLINKS[0], TRIM_AT)
        pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_trimmable"]), size=size, in_port=DOWNLINKS[0])
        assert len(pkt) == size
        target.send(DOWNLINKS[0], pkt)
        if size <= TRIM_BYTES:
            exp = bytes(forwarded(pkt, UPLINKS[0], tc=tc(D["trimmed"])))
        else:
            exp = trimmed(pkt, UPLINKS[0], None, D["trimmed"])
        assert len(exp) == min(size, TRIM_BYTES)
        target.verify_packet(exp, UPLINKS[0])
        target.verify_no_other_packets()


def test_non_trimmable_over_limit_dropped(target):
    target.set_qdepth(UPLINKS[0], TRIM_AT)
    before = target.drop_count("congestion")
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_no_trim"]), size=1000, in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_no_other_packets()
    assert target.drop_count("congestion") == before + 1


def test_non_trimmable_below_limit_forwarded(target):
    target.set_qdepth(UPLINKS[0], TRIM_AT - 1)
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_no_trim"]), size=1000, in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0]), UPLINKS[0])
    target.verify_no_other_packets()


def test_control_never_trimmed(target):
    target.set_qdepth(UPLINKS[0], 10 * TRIM_AT)
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["control"]), size=1000, in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0]), UPLINKS[0])
    target.verify_no_other_packets()


def test_thresholds_set_at_run_time(target):
    target.set_congestion(replace(T0.congestion, ecn_threshold=5, trim_threshold=10, trim_bytes=200))
    target.set_qdepth(UPLINKS[0], 10)
    pkt = frame(carrier(sid_t1(0)), tc=tc(D["data_trimmable"], ECT0), size=700, in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    exp = forwarded(pkt, UPLINKS[0], tc=tc(D["trimmed"], CE))
    exp[IPv6].plen = 200 - 54
    target.verify_packet(bytes(exp)[:200], UPLINKS[0])
    target.verify_no_other_packets()

