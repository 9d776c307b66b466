"""The cause a failed Fig. 19 claim gives (mrc_paper/appendix.py)
says only what its measurements show: a stall and healthy EVs retired by
timeouts when there were some, and otherwise that neither happened."""

from mrc_paper.appendix import cause, timeouts_retire_healthy


def test_a_stall_with_healthy_evs_retired_by_timeouts_names_both():
    assert cause(40.0, 3, 5, 268) == (
        "goodput stalls for up to 40 µs after a cut; 3 retirements hit EVs whose paths still work "
        "(5 resends by timeout against 268 by SACK): the sender's timeouts retire healthy paths")
    assert timeouts_retire_healthy(3, 5)


def test_a_stall_without_healthy_retirements_does_not_blame_timeouts():
    assert cause(40.0, 0, 1, 268) == (
        "goodput stalls for up to 40 µs after a cut; no EV on a working path is retired "
        "(1 resends by timeout, 268 by SACK)")
    assert not timeouts_retire_healthy(0, 1)


def test_healthy_evs_retired_without_a_timeout_are_not_blamed_on_timeouts():
    assert cause(0.0, 1, 0, 151) == (
        "1 retirements hit EVs whose paths still work, with no resend by timeout (151 by SACK); "
        "the rate on the links left falls short of their share (not traced further)")


def test_neither_a_stall_nor_a_healthy_retirement_says_the_rate_falls_short_untraced():
    assert cause(0.0, 0, 0, 151) == (
        "no EV on a working path is retired (0 resends by timeout, 151 by SACK); "
        "the rate on the links left falls short of their share (not traced further)")
    assert not timeouts_retire_healthy(1, 0)
