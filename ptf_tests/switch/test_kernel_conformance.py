"""Conformance with a real peer: the Linux kernel's SRv6 uSID (NEXT-C-SID)
forwarding, set up as the same T0, and our switch must send every frame out
of the same port with the same IPv6 bytes, or drop it where the kernel does.

Carriers are random (fixed seed): 1 to 6 uSIDs, hop limits, traffic
classes, flow labels, payload sizes; some sources and destinations from the
address classes a router must not forward (unspecified, loopback,
link-local, multicast), and some payload lengths that run past the frame. A path never names the same node twice
in a row: after a shift the kernel processes its own uSID again, while the
switch (DESIGN.md section 4, step 2) looks the shifted address up once.
"""

from __future__ import annotations

import ipaddress
import random

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import addressing as A
from mrc_wire.constants import UNROUTABLE_PREFIXES
from ptf_tests.lib.fabric import NEIGHBOUR, T0, T0_PORTS, TOPO, carrier, sid_dl, sid_t0, sid_t1
from ptf_tests.lib.kernel_switch import KernelSwitch, kernel_unavailable
from switch_model.pipeline import unroutable
from testbed.targets import burst, ptf_dataplane

SEED = 9800
COUNT = 400
HOP_LIMITS = [0, 1, 2, 3, 64, 255]
# uSIDs a carrier draws from: ours, routed neighbours, and unknown ones.
POOL = [sid_t0(0), sid_t0(1), sid_t1(0), sid_t1(1), sid_dl(0), sid_dl(1),
        sid_t1(5), sid_t0(0, plane=1), A.usid(A.TIER_DL, 0, 9)]


def bad_address(rng: random.Random) -> str:
    """A random address from a class RFC 4291 forbids forwarding."""
    net = ipaddress.IPv6Network(rng.choice(list(UNROUTABLE_PREFIXES.values())))
    host_bits = 128 - net.prefixlen
    return str(net.network_address + (rng.getrandbits(host_bits) if host_bits else 0))


def carriers(seed: int = SEED, count: int = COUNT) -> list[tuple[int, bytes]]:
    rng = random.Random(seed)
    frames = []
    for i in range(count):
        sids: list[int] = []
        for _ in range(rng.randint(1, 6)):
            choices = [s for s in POOL if not sids or s != sids[-1]]
            sids.append(rng.choice(choices))
        if rng.random() < 0.5:
            sids[0] = sid_t0(0)  # half of them start with our own uSID
            if len(sids) > 1 and sids[1] == sids[0]:
                sids[1] = sid_t1(0)
        port = rng.choice(T0_PORTS)
        nb = NEIGHBOUR[port]
        payload = i.to_bytes(4, "big") + rng.randbytes(rng.randint(0, 1000))
        src = str(A.nic_address(TOPO, rng.randrange(TOPO.nics)))
        dst = carrier(*sids)
        roll = rng.random()
        if roll < 0.1:
            src = bad_address(rng)
        elif roll < 0.2:
            dst = bad_address(rng)
        pkt = (
            Ether(src=A.mac_str(nb.dst_mac), dst=A.mac_str(nb.src_mac))
            / IPv6(src=src, dst=dst,
                   hlim=rng.choice(HOP_LIMITS), tc=rng.randrange(256) & ~3, fl=rng.randrange(1 << 20))
            / UDP(sport=rng.randrange(1 << 16), dport=4791)
            / payload
        )
        raw = bytearray(bytes(pkt))
        if rng.random() < 0.1:  # a payload length that runs past the frame
            raw[18:20] = (len(raw) - 54 + rng.randint(1, 64)).to_bytes(2, "big")
        frames.append((port, bytes(raw)))
    return frames


def by_id(outputs: list[tuple[int, bytes]]) -> dict[int, tuple[int, bytes]]:
    """Our test frames among the outputs (the kernel's ICMPv6 is ignored),
    keyed by the id in their first payload bytes: id -> (port, IPv6 bytes)."""
    got = {}
    for port, frame in outputs:
        eth = Ether(frame)
        if IPv6 not in eth or eth[IPv6].nh != 17:
            continue
        ident = int.from_bytes(frame[14 + 40 + 8 : 14 + 40 + 12], "big")
        assert ident not in got, f"frame {ident} came out twice"
        got[ident] = (port, frame[14:])
    return got


@pytest.fixture(scope="module")
def kernel_outputs() -> dict[int, tuple[int, bytes]]:
    reason = kernel_unavailable()
    if reason:
        pytest.skip(f"kernel switch: {reason}")
    ks = KernelSwitch(TOPO, T0)
    ks.start()
    try:
        dp = ptf_dataplane(ks.outer)
        try:
            return by_id(burst(dp, carriers(), quiet=1.0))
        finally:
            dp.kill()
    finally:
        ks.stop()


def test_kernel_forwards_and_drops_a_fair_share(kernel_outputs):
    # Guards the comparison below against a kernel that forwards nothing.
    assert COUNT * 0.2 < len(kernel_outputs) < COUNT * 0.8


def test_switch_agrees_with_kernel_on_every_frame(target, kernel_outputs):
    frames = carriers()
    ours = by_id(target.burst(frames))
    disagree = []
    for i, (_, frame) in enumerate(frames):
        theirs, mine = kernel_outputs.get(i), ours.get(i)
        if mine != theirs:
            ip = IPv6(frame[14:])
            disagree.append((i, ip.dst, ip.hlim, theirs[0] if theirs else "drop", mine[0] if mine else "drop"))
    assert not disagree, f"{len(disagree)} of {COUNT} differ (id, DA, hlim, kernel port, ours): {disagree[:10]}"


def test_sample_holds_every_sanity_class():
    """Guards the comparison: the random frames do exercise the sanity drops."""
    frames = carriers()
    srcs = sum(unroutable(f[22:38]) for _, f in frames)
    dsts = sum(unroutable(f[38:54]) and not unroutable(f[22:38]) for _, f in frames)
    longs = sum(int.from_bytes(f[18:20], "big") + 54 > len(f) for _, f in frames)
    assert min(srcs, dsts, longs) >= 20, (srcs, dsts, longs)
