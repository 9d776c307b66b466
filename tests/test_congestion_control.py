"""The endpoint's window response (NSCC in spirit)."""

from nic_model.endpoint import CcState


def test_additive_increase_without_congestion():
    cc = CcState(cwnd=10.0)
    for _ in range(10):
        cc.on_ack(now=0.0, rtt=10.0, congested=False)
    assert 10.9 < cc.cwnd < 11.1


def test_ecn_cuts_once_per_rtt():
    cc = CcState(cwnd=20.0)
    cc.on_ack(now=1000.0, rtt=30.0, congested=True)
    assert cc.cwnd == 14.0
    cc.on_ack(now=1010.0, rtt=30.0, congested=True)  # same RTT: no second cut
    assert cc.cwnd == 14.0
    cc.on_ack(now=1040.0, rtt=30.0, congested=True)
    assert abs(cc.cwnd - 9.8) < 1e-9


def test_delay_over_target_cuts_in_proportion():
    cc = CcState(cwnd=32.0, target_delay=40.0)
    cc.on_ack(now=1000.0, rtt=60.0, congested=False)
    assert abs(cc.cwnd - 32.0 * 40.0 / 60.0) < 1e-9
    cc = CcState(cwnd=32.0, target_delay=40.0)
    cc.on_ack(now=1000.0, rtt=400.0, congested=False)  # never below half at once
    assert cc.cwnd == 16.0


def test_window_never_below_minimum():
    """Cuts of 0.7x stop at the floor: 3 -> 2.1 -> 1.5 (not 1.47), and stay there; the default floor
    is one packet (1.2 -> 1.0, not 0.84)."""
    cc = CcState(cwnd=3.0, min_cwnd=1.5)
    for t in range(10):
        cc.on_ack(now=1000.0 * t, rtt=None, congested=True)
    assert cc.cwnd == 1.5
    cc = CcState(cwnd=1.2)
    cc.on_ack(now=0.0, rtt=None, congested=True)
    assert cc.cwnd == 1.0
