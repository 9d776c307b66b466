"""Profile `aimd`: the model's first window (mrc_host/cc.py)."""

from mrc_host.cc import Aimd


def test_additive_increase_without_congestion():
    cc = Aimd(cwnd=10.0)
    for _ in range(10):
        cc.on_ack(0.0, 0, 10.0, False, 0)
    assert 10.9 < cc.cwnd < 11.1


def test_ecn_cuts_once_per_rtt():
    cc = Aimd(cwnd=20.0)
    cc.on_ack(1000.0, 0, 30.0, True, 0)
    assert cc.cwnd == 14.0
    cc.on_ack(1010.0, 0, 30.0, True, 0)  # same RTT: no second cut
    assert cc.cwnd == 14.0
    cc.on_ack(1040.0, 0, 30.0, True, 0)
    assert abs(cc.cwnd - 9.8) < 1e-9


def test_delay_over_target_cuts_in_proportion():
    cc = Aimd(cwnd=32.0, target_delay=40.0)
    cc.on_ack(1000.0, 0, 60.0, False, 0)
    assert abs(cc.cwnd - 32.0 * 40.0 / 60.0) < 1e-9
    cc = Aimd(cwnd=32.0, target_delay=40.0)
    cc.on_ack(1000.0, 0, 400.0, False, 0)  # never below half at once
    assert cc.cwnd == 16.0


def test_window_never_below_minimum():
    """Cuts of 0.7x stop at the floor: 3 -> 2.1 -> 1.5 (not 1.47), and stay there; the default floor
    is one packet (1.2 -> 1.0, not 0.84)."""
    cc = Aimd(cwnd=3.0, min_cwnd=1.5)
    for t in range(10):
        cc.on_ack(1000.0 * t, 0, None, True, 0)
    assert cc.cwnd == 1.5
    cc = Aimd(cwnd=1.2)
    cc.on_ack(0.0, 0, None, True, 0)
    assert cc.cwnd == 1.0
