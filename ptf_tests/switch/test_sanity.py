"""Addresses a router must not forward (RFC 4291) and payload lengths that
run past the frame: each dropped and counted under its reason, on both
targets; a frame with Ethernet padding after the payload still goes."""

import pytest
from scapy.layers.inet6 import IPv6

from ptf_tests.lib.fabric import DOWNLINKS, UPLINKS, carrier, forwarded, frame, sid_t1

BAD = ["::", "::1", "fe80::1", "febf:ffff::1", "ff02::1", "ff0e::1234"]
GOOD_NEAR = ["fec0::1", "fe7f::1", "::2"]  # next to a bad class, but not in it


def _send(target, pkt) -> None:
    target.send(DOWNLINKS[0], pkt)


@pytest.mark.parametrize("src", BAD)
def test_bad_source_dropped_and_counted(target, src):
    before = target.drop_count("bad_source")
    pkt = frame(carrier(sid_t1(0)), in_port=DOWNLINKS[0])
    pkt[IPv6].src = src
    _send(target, pkt)
    target.verify_no_other_packets()
    assert target.drop_count("bad_source") == before + 1


@pytest.mark.parametrize("dst", BAD)
def test_bad_destination_dropped_and_counted(target, dst):
    before = target.drop_count("bad_destination")
    _send(target, frame(dst, in_port=DOWNLINKS[0]))
    target.verify_no_other_packets()
    assert target.drop_count("bad_destination") == before + 1


def test_bad_source_wins_over_bad_destination(target):
    before = (target.drop_count("bad_source"), target.drop_count("bad_destination"))
    pkt = frame("ff02::1", in_port=DOWNLINKS[0])
    pkt[IPv6].src = "fe80::1"
    _send(target, pkt)
    target.verify_no_other_packets()
    assert (target.drop_count("bad_source"), target.drop_count("bad_destination")) == (before[0] + 1, before[1])


@pytest.mark.parametrize("src", GOOD_NEAR)
def test_sources_next_to_a_bad_class_are_forwarded(target, src):
    pkt = frame(carrier(sid_t1(0)), in_port=DOWNLINKS[0])
    pkt[IPv6].src = src
    _send(target, pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0]), UPLINKS[0])
    target.verify_no_other_packets()


def test_payload_length_past_the_frame_dropped_and_counted(target):
    before = target.drop_count("bad_length")
    pkt = frame(carrier(sid_t1(0)), in_port=DOWNLINKS[0])
    whole = bytes(pkt)
    raw = bytearray(whole)
    raw[18:20] = (len(whole) - 54 + 1).to_bytes(2, "big")  # one byte more than there is
    _send(target, bytes(raw))
    target.verify_no_other_packets()
    assert target.drop_count("bad_length") == before + 1


def test_padding_after_the_payload_is_forwarded(target):
    pkt = frame(carrier(sid_t1(0)), in_port=DOWNLINKS[0])
    raw = bytearray(bytes(pkt))
    raw[18:20] = (len(raw) - 54 - 10).to_bytes(2, "big")  # 10 bytes of padding
    _send(target, bytes(raw))
    exp = bytearray(bytes(forwarded(pkt, UPLINKS[0])))
    exp[18:20] = raw[18:20]
    target.verify_packet(bytes(exp), UPLINKS[0])
    target.verify_no_other_packets()
