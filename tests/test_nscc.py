"""NSCC's rules one by one (mrc_host/nscc.py, docs/nic.md "Congestion
control"), each with the number the rule gives.

The network of every test: 8 Gb/s NIC (1000 bytes per µs), base RTT 10 µs
(max_cwnd 1.5 x 10 x 1000 = 15000 bytes), MTU 100 bytes (min_cwnd 100),
target delay 5 µs, quick adapt above 20 µs and below 15000 >> 3 = 1875
bytes per period of 10 + 5 = 15 µs, fi 2000, fi_scale 0.5, gamma 0.8,
eta 0, an adjustment every 500 bytes or 10 µs. Every ACK acknowledges
1000 bytes; the window starts at 5000 bytes. An RTT of 10 + d is a delay
of d. alpha = 4 x MTU x (8 x 10) / (100 x 12) / 12 µs.
"""

from __future__ import annotations

import pytest

from mrc_host.nscc import Nscc, NsccConfig, defaults

ALPHA = 4 * 100 * (8 * 10) / (100 * 12) / 12
FAST_DELAY = 1.0 * 10 / 12  # htsim's 1 µs on the 12 µs reference network
ACK = 1000


def nscc(cwnd: float = 5000, **kw) -> Nscc:
    cfg = dict(base_rtt=10.0, target_delay=5.0, max_cwnd=None, eta=0.0, fi=2000.0, fi_scale=0.5, gamma=0.8,
               max_md_jump=0.5, qa_threshold=20.0, qa_gate=3, disable_qa=False, adjust_bytes_threshold=500,
               adjust_period_threshold=10.0)
    return Nscc(NsccConfig(**{**cfg, **kw}), line_gbps=8, mtu=100, cwnd=cwnd)


def ack(cc: Nscc, t: float, delay: float, ecn: bool = False, inflight: float = 0) -> None:
    cc.on_ack(t, ACK, 10.0 + delay, ecn, inflight)


def test_no_ecn_low_delay_proportional_increase():
    """Delay 2 under target 5: inc = alpha x 1000 x (5 - 2), applied as inc / cwnd."""
    cc = nscc()
    ack(cc, 1, 2.0)
    assert cc.cwnd == pytest.approx(5000 + ALPHA * ACK * 3 / 5000, rel=1e-12)


def test_no_ecn_near_zero_delay_fast_increase_after_a_window():
    """Delay 0.5 (under 10/12 µs): proportional increase until more than a window (2000 bytes) has been
    acknowledged so, then each ACK adds 1000 x fi_scale = 500 bytes at once."""
    cc = nscc(cwnd=2000)
    ack(cc, 1, 0.5)
    c1 = 2000 + ALPHA * ACK * 4.5 / 2000
    ack(cc, 2, 0.5)
    c2 = c1 + ALPHA * ACK * 4.5 / c1
    assert cc.cwnd == pytest.approx(c2, rel=1e-12)
    ack(cc, 3, 0.5)  # 3000 bytes in a row > the window
    assert cc.cwnd == pytest.approx(c2 + 500, rel=1e-12)
    ack(cc, 4, 0.5)
    assert cc.cwnd == pytest.approx(c2 + 1000, rel=1e-12)
    ack(cc, 5, 2.0)  # a delay above 10/12 µs ends it: back to proportional
    assert cc.cwnd == pytest.approx(c2 + 1000 + ALPHA * ACK * 3 / (c2 + 1000), rel=1e-12)


def test_no_ecn_high_delay_fair_increase():
    """Delay 6 at or above target 5, no ECN: inc = fi x 1000 = 2e6, cwnd 5000 + 2e6 / 5000 = 5400."""
    cc = nscc()
    ack(cc, 1, 6.0)
    assert cc.cwnd == pytest.approx(5400, rel=1e-12)


def test_ecn_high_delay_multiplicative_decrease_at_most_once_per_base_rtt():
    """ECN with delay 800: the averaged delay (weight 0.0125 a sample) is 10 after one sample, so
    cwnd x max(1 - 0.8 x (10 - 5) / 10, 0.5) = 5000 x 0.6 = 3000. 4 µs later (under a base RTT) no cut
    (average 10 + 0.9875 x 10 = 19.875); 11 µs after the cut it is 29.6265625, the factor
    1 - 0.8 x 24.6265625 / 29.6265625 = 0.335 is held at 1 - max_md_jump = 0.5: 1500."""
    cc = nscc()
    ack(cc, 1, 800.0, ecn=True)
    assert cc.cwnd == pytest.approx(3000, rel=1e-12)
    ack(cc, 5, 800.0, ecn=True)
    assert cc.cwnd == pytest.approx(3000, rel=1e-12)
    ack(cc, 12, 800.0, ecn=True)
    assert cc.cwnd == pytest.approx(1500, rel=1e-12)


def test_ecn_low_delay_leaves_the_window():
    """ECN with delay 2 under target: the path is congested, not the window: 5000 stays 5000."""
    cc = nscc()
    for t in (1, 2, 3):
        ack(cc, t, 2.0, ecn=True)
    assert cc.cwnd == 5000
    assert cc.counts["ecn_low_delay"] == 3


def test_base_rtt_follows_the_smallest_rtt_and_bounds_the_window():
    """An RTT of 8 under the configured 10: the base RTT becomes 8 and max_cwnd 1.5 x 8 x 1000 = 12000, so
    a window of 14000 drops to 12000; an RTT of 14 is then a delay of 6 (over target: fair increase,
    2e6 / 12000 bytes), not 4 (proportional)."""
    cc = nscc(cwnd=14000)
    cc.on_ack(1, ACK, 8.0, False, 0)
    assert (cc.base_rtt, cc.max_cwnd, cc.cwnd) == (8.0, 12000.0, 12000.0)
    cc.on_ack(2, ACK, 14.0, False, 0)
    assert cc.cwnd == 12000  # fair increase hits max_cwnd
    cc.cwnd = 6000
    cc.on_ack(3, ACK, 14.0, False, 0)
    assert cc.cwnd == pytest.approx(6000 + 2000 * ACK / 6000, rel=1e-12)


def test_quick_adapt_on_a_trim_at_the_end_of_the_period():
    """The first ACK (t=1) opens a quick-adapt period ending at 1 + 15 = 16; 1000 bytes are acknowledged
    in it (t=5). A trim at t=20: the window becomes those 1000 bytes (under 1875), and the NACK takes
    nothing more off."""
    cc = nscc()
    ack(cc, 1, 2.0)
    ack(cc, 5, 2.0)
    cc.on_nack(20, 100, None, 0)
    assert cc.cwnd == 1000


def test_a_nack_takes_its_bytes_off_and_quick_adapt_follows_at_the_period_end():
    """A trim at t=3, inside the period opened at t=1 (ends 16): the window loses the 100 trimmed bytes.
    The trim stays pending: the first ACK after t=16 runs quick adapt, the window becomes the 1000 bytes
    acknowledged since the period began (that ACK's)."""
    cc = nscc()
    ack(cc, 1, 2.0)
    c1 = 5000 + ALPHA * ACK * 3 / 5000
    cc.on_nack(3, 100, None, 0)
    assert cc.cwnd == pytest.approx(c1 - 100, rel=1e-12)
    ack(cc, 17, 2.0)
    assert cc.cwnd == 1000


def test_quick_adapt_on_delay_past_qa_threshold_then_ecn_on_the_old_flight_is_ignored():
    """t=1: ECN, delay 800 (opens the period, ends 16; cut to 3000). t=17: delay 800 > 20 with 1000 bytes
    acknowledged: quick adapt to 1000, with 4000 bytes in flight. t=30: ECN and delay 800 on those bytes
    (1000 of the 4000 acknowledged): ignored, where it would otherwise halve the window to 500."""
    cc = nscc()
    ack(cc, 1, 800.0, ecn=True)
    ack(cc, 17, 800.0, inflight=4000)
    assert cc.cwnd == 1000
    ack(cc, 30, 800.0, ecn=True)
    assert cc.cwnd == 1000
    fresh = nscc()  # the same history without quick adapt: t=30's ECN halves the window
    fresh.cwnd, fresh.last_dec, fresh.avg_delay, fresh.qa_end = 1000, 1, cc.avg_delay, 45
    ack(fresh, 30, 800.0, ecn=True)
    assert fresh.cwnd == 500


def test_quick_adapt_waits_while_the_period_delivered_enough():
    """The same trim as above, but 2000 bytes acknowledged in the period (not under 15000 >> 3 = 1875):
    no quick adapt; the NACK's 100 bytes come off instead."""
    cc = nscc()
    ack(cc, 1, 2.0)
    ack(cc, 5, 2.0)
    ack(cc, 6, 2.0)
    before = cc.cwnd
    cc.on_nack(20, 100, None, 0)
    assert cc.cwnd == pytest.approx(before - 100, rel=1e-12)


def test_a_timeout_takes_the_packets_bytes_off_down_to_one_mtu():
    cc = nscc()
    cc.on_timeout(1, 100)
    assert cc.cwnd == 4900
    cc.cwnd = 150
    cc.on_timeout(2, 100)
    assert cc.cwnd == 100


def test_eta_is_added_once_per_adjust_period():
    """eta 50, period 10 µs: ACKs at 1, 11, 15 and 21 (ECN, low delay: no other change) add it at 11 and
    21 only: 5100."""
    cc = nscc(eta=50.0)
    for t in (1, 11, 15, 21):
        ack(cc, t, 2.0, ecn=True)
    assert cc.cwnd == 5100


def test_window_in_packets_and_start_at_max_cwnd():
    assert nscc(cwnd=5050).window() == 50
    assert nscc(cwnd=None).cwnd == 15000


def test_defaults_scale_uecs_constants_to_the_fabric():
    """htsim's initNsccParams on a 800 Gb/s NIC with a 6 µs base RTT and 4096-byte MTU: a = 800 x 6 /
    (100 x 12) = 4; target 0.75 x 6 = 4.5 µs (trimming on), qa_threshold 18 µs, fi 5 x 4096 x 4,
    eta 0.15 x 4096 x 4, fi_scale 1, adjustments every 8 MTUs or one base RTT; quick adapt under
    max_cwnd >> 4 (htsim: 3; nscc.defaults says why)."""
    d = defaults(6.0, 800.0, 4096)
    assert d["target_delay"] == 4.5 and d["qa_threshold"] == 18.0
    assert d["fi"] == pytest.approx(5 * 4096 * 4) and d["eta"] == pytest.approx(0.15 * 4096 * 4)
    assert d["fi_scale"] == pytest.approx(1.0) and d["gamma"] == 0.8 and d["qa_gate"] == 4
    assert d["adjust_bytes_threshold"] == 8 * 4096 and d["adjust_period_threshold"] == 6.0
