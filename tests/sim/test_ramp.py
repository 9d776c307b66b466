"""A NIC with 15 QPs (16-NIC all-to-all) reaches line rate as fast as a
NIC with one (a permutation): NSCC's first window is the NIC's BDP shared
by its QPs, and each QP's rotation starts on its own plane
(fabric_sim/transports/qps.py), so the first flight uses every plane.

Line rate: goodput per NIC of the payload line rate (both directions
carry data and ACKs in all-to-all, metrics.line_goodput), averaged over
one base RTT (1.6 µs bins, 3 to an RTT of 5.4 µs) so a bin's packet
boundaries do not count. The first data arrives after about half an RTT
and a window's ACKs a whole RTT after the start, so at 90% within 3 base
RTTs the ramp takes at most one RTT beyond the first flight's.
"""

from __future__ import annotations

import pytest

from fabric_sim.runner.run import run
from mrc_paper.metrics import line_goodput
from tests.sim.helpers import make

RAMP_RTTS = 3.0
LINE = 0.9


def ramp_rtts(pattern: str, size: int, qps_per_pair: int = 1) -> float:
    sc = make({"pattern": pattern, "message_bytes": size, "qps_per_pair": qps_per_pair}, duration_us=32.4, bins=20,
              links={"nic_gbps": 100, "fabric_gbps": 100, "prop_us": 0.5})
    r = run(sc, sc.transports[0])
    line = line_goodput(r, bidirectional=pattern == "all_to_all") * 16
    k = 3  # bins per base RTT
    mean = [sum(r.timeline.goodput[max(0, i - k + 1):i + 1]) / k / line for i in range(len(r.timeline.goodput))]
    return next((t / r.base_rtt for t, g in zip(r.timeline.t, mean, strict=True) if g >= LINE), float("inf"))


@pytest.mark.parametrize("pattern, size, qps", [("permutation", 4 << 20, 1), ("all_to_all", 256 << 10, 1),
                                                ("permutation", 4 << 20, 32)])
def test_one_fifteen_or_32_qps_per_nic_reach_line_rate_within_3_base_rtts(pattern, size, qps):
    """32 QPs to one peer: first windows of 2 packets (the 66-packet BDP of 4 planes over 32), so QPs whose
    rotations all began at slot 0 would send on 2 of the 4 planes, RTT after RTT, in step."""
    assert ramp_rtts(pattern, size, qps) <= RAMP_RTTS
