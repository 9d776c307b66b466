"""ECN marking profiles per class (DESIGN.md section 4): a class with a WRED
ramp is marked with probability 0 up to Kmin packets queued, rising
linearly to Pmax at Kmax, and 1 above Kmax; a class with a step from its
threshold. Queued traffic is sent at a set depth and the marked fraction
is held to the profile: exactly at 0 and 1, and within 4 standard
deviations of the binomial in between (N frames: a correct switch fails
such a check about once in 16,000 runs)."""

import math

import pytest
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from mrc_wire.constants import CLASS_NORMAL, CLASS_TRIMMABLE, RAMP_ONE
from mrc_wire.entries import EcnRamp, EcnStep
from ptf_tests.lib.fabric import DOWNLINKS, TOPO, UPLINKS, carrier, frame, sid_dl, sid_t0, sid_t1

pytestmark = pytest.mark.bmv2_knob("a set queue depth (BMv2 Thrift register_write port_qdepth)")

D = TOPO.dscp
ECT0, CE = 2, 3
N = 1000  # frames per depth in the ramp
KMIN, KMAX, PMAX = 10, 30, 0.5
RAMP = EcnRamp(CLASS_NORMAL, KMIN, KMAX, round(PMAX * RAMP_ONE))
SIGMAS = 4


def want(depth: int) -> float:
    """The profile as DESIGN.md section 4 states it."""
    if depth <= KMIN:
        return 0.0
    if depth > KMAX:
        return 1.0
    return PMAX * (depth - KMIN) / (KMAX - KMIN)


def marked_share(target, dscp: int, depth: int, n: int, out_port: int = UPLINKS[0]) -> float:
    """The share of `n` ECT(0) frames of `dscp` sent out of `out_port` with CE set,
    each decided with that port's data queue `depth` deep; every frame must come out there."""
    if out_port in UPLINKS:
        dst, in_port = carrier(sid_t1(UPLINKS.index(out_port))), DOWNLINKS[0]
    else:
        dst, in_port = carrier(sid_t0(0), sid_dl(DOWNLINKS.index(out_port))), UPLINKS[0]
    pkt = bytes(frame(dst, tc=(dscp << 2) | ECT0, size=300, in_port=in_port))
    out = target.at_depth(out_port, depth, [(in_port, pkt)] * n)
    assert [p for p, _ in out] == [out_port] * n, "a frame was lost or sent elsewhere"
    return sum(Ether(f)[IPv6].tc & 3 == CE for _, f in out) / n


@pytest.mark.parametrize("depth", [KMIN, 20, KMAX, KMAX + 1])
def test_a_ramp_marks_its_share(target, depth):
    target.set_ecn_profile(RAMP)
    p = want(depth)
    got = marked_share(target, D["data_no_trim"], depth, N if 0 < p < 1 else 20)
    tol = SIGMAS * math.sqrt(p * (1 - p) / N)
    assert abs(got - p) <= tol, f"depth {depth}: {got:.3f} marked, the profile says {p:.3f} +- {tol:.3f}"


def test_profiles_are_per_class(target):
    """The ramp is the normal class's: trimmable data past its Kmax is marked
    by its own step (the topology's threshold), and a step of its own moves
    that threshold without touching the ramp."""
    target.set_ecn_profile(RAMP)
    step = TOPO.congestion.ecn_threshold
    assert step > KMAX + 1
    assert marked_share(target, D["data_trimmable"], KMAX + 1, 10) == 0.0
    assert marked_share(target, D["data_trimmable"], step, 10) == 1.0
    target.set_ecn_profile(EcnStep(CLASS_TRIMMABLE, 5))
    assert marked_share(target, D["data_trimmable"], 4, 10) == 0.0
    assert marked_share(target, D["data_trimmable"], 5, 10) == 1.0
    assert marked_share(target, D["data_no_trim"], KMAX + 1, 10) == 1.0
    assert marked_share(target, D["data_no_trim"], KMIN, 10) == 0.0


def test_a_ramp_never_marks_on_a_host_port(target):
    target.set_ecn_profile(RAMP)
    assert marked_share(target, D["data_no_trim"], KMAX + 1, 10, out_port=DOWNLINKS[1]) == 0.0
