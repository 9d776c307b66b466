"""mrc_wire.frame: the timed fabric's header fields and the bytes they
stand for. scapy (an independent reading of Ethernet and IPv6) reads what
`to_bytes` writes and writes what `parse_frame` reads; a frame the switch
or NIC model makes as fields serializes to what its bytes interface gives."""

from __future__ import annotations

import random
from ipaddress import IPv6Address

import pytest
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_wire.frame import HDRS, Frame, not_ipv6_frame, parse_frame


def _random_frame(rng: random.Random) -> Frame:
    return Frame(rng.randbytes(12) + b"\x86\xdd", rng.randrange(256), rng.randrange(1 << 20), rng.randrange(1 << 16),
                 rng.randrange(256), rng.randrange(256), rng.randbytes(16), rng.randbytes(16),
                 rng.randbytes(rng.randrange(0, 120)), rng.randrange(0, 5000))


def test_scapy_reads_the_fields_to_bytes_writes():
    rng = random.Random(1)
    for _ in range(300):
        f = _random_frame(rng)
        raw = f.to_bytes()
        e = Ether(raw)
        ip = e[IPv6]
        assert (e.dst, e.src, e.type) == (":".join(f"{b:02x}" for b in f.eth[:6]),
                                          ":".join(f"{b:02x}" for b in f.eth[6:12]), 0x86DD)
        assert (ip.version, ip.tc, ip.fl, ip.plen, ip.nh, ip.hlim) == (6, f.tc, f.fl, f.plen, f.nh, f.hlim)
        assert (ip.src, ip.dst) == (str(IPv6Address(f.src)), str(IPv6Address(f.dst)))
        assert raw[HDRS:] == f.inner and len(raw) == f.carried and f.size == f.carried + f.pad


def test_parse_reads_the_fields_scapy_writes():
    rng = random.Random(2)
    for _ in range(300):
        tc, fl, plen, nh, hlim = rng.randrange(256), rng.randrange(1 << 20), rng.randrange(1 << 16), \
            rng.randrange(256), rng.randrange(256)
        rest = rng.randbytes(rng.randrange(0, 80))
        raw = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") /
                    IPv6(tc=tc, fl=fl, plen=plen, nh=nh, hlim=hlim, src="2001:db8::1", dst="fc00:0:1:2::")) + rest
        f = parse_frame(raw, 7)
        assert (f.tc, f.fl, f.plen, f.nh, f.hlim, f.inner, f.pad) == (tc, fl, plen, nh, hlim, rest, 7)
        assert (f.src, f.dst) == (IPv6Address("2001:db8::1").packed, IPv6Address("fc00:0:1:2::").packed)
        assert f.to_bytes() == raw


@pytest.mark.parametrize("raw, why", [
    (bytes(13), "malformed"),  # no whole Ethernet header
    (bytes(12) + b"\x08\x00" + bytes(60), "not_ipv6"),
    (bytes(12) + b"\x86\xdd" + b"\x60" + bytes(38), "malformed"),  # IPv6 header cut short
    (bytes(12) + b"\x86\xdd" + b"\x40" + bytes(39), "malformed"),  # version 4 in an IPv6 frame
])
def test_what_is_not_an_ipv6_frame_is_named_and_not_parsed(raw, why):
    assert not_ipv6_frame(raw) == why
    with pytest.raises(ValueError, match=why):
        parse_frame(raw)


def test_equal_frames_are_equal_as_bytes_and_pad():
    rng = random.Random(3)
    f = _random_frame(rng)
    same = parse_frame(f.to_bytes(), f.pad)
    assert same == f and hash(same) == hash(f)
    assert parse_frame(f.to_bytes(), f.pad + 1) != f
