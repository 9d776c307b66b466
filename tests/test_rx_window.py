"""The receiver's PSN window: 65,536 PSNs ahead of the cumulative point
(nic_model/qp.py RX_WINDOW), on both sides of its edge and across the
24-bit wrap. The numbers are literal so that a changed window fails here."""

from nic_model.ev import EvProfile, make_ev
from nic_model.qp import QueuePair


def _qp(start: int) -> QueuePair:
    return QueuePair(1, 2, b"\0" * 16, EvProfile([make_ev(0, 0)], {0: []}), start_psn=start)


def test_the_last_psn_inside_the_window_is_accepted_and_the_first_past_it_refused():
    for start in (0, (1 << 24) - 10):  # and across the wrap
        qp = _qp(start)
        last, past = (start + 65_535) % (1 << 24), (start + 65_536) % (1 << 24)
        assert qp.accept(past) is None, start  # beyond the window: dropped and counted, not recorded
        assert qp.accept(last) is True and last in qp.received
        assert qp.accept(last) is False  # a second copy: a duplicate
        assert qp.cum_psn == start


def test_the_window_moves_with_the_cumulative_point():
    qp = _qp(0)
    assert qp.accept(0) is True and qp.cum_psn == 1
    assert qp.accept(65_536) is True  # 65,535 ahead of the new cumulative point
    assert qp.accept(65_537) is None
