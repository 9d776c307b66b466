"""The cause a failed Fig. 19 claim gives (mrc_paper/appendix.py)
says only what its measurements show: a stall and healthy EVs retired by
timeouts when there were some, and otherwise that neither happened."""

from types import SimpleNamespace

from control_plane.pipelines import REPO
from fabric_sim.scenario import load
from mrc_host.ev import make_ev
from mrc_paper.appendix import cause, ecn_swaps, restore_lags, timeouts_retire_healthy


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


def test_paths_restored_late_are_named_with_their_lags():
    assert cause(0.0, 0, 0, 151, [51.2, 38.0], rtt=5.0) == (
        "no EV on a working path is retired (0 resends by timeout, 151 by SACK); a path that comes back is used "
        "again only when good probes restore its EVs: 51, 38 µs after it returns, of each phase's "
        "length, so the phases that gain capacity average below their share")
    assert cause(0.0, 0, 0, 151, [12.2, 8.0], rtt=5.0) == (
        "no EV on a working path is retired (0 resends by timeout, 151 by SACK); a path that comes back is used "
        "again 12, 8 µs after it returns (its first answered probe), and the rate on the links left still falls "
        "short of their share (not traced further)")
    assert cause(0.0, 0, 0, 151, [12.2, 8.0], rtt=5.0, swaps=(0, 3086)) == (
        "no EV on a working path is retired (0 resends by timeout, 151 by SACK); a path that comes back is used "
        "again 12, 8 µs after it returns (its first answered probe), and the rate on the links left still falls "
        "short of their share with congestion there was none of before the cuts: 3,086 ECN swaps after the last "
        "return against 0 before the first cut (each puts a spare, of any spine, in a marked EV's slots)")


def test_the_restore_lag_is_from_the_link_coming_back_to_the_first_good_probe_on_its_spine():
    """fig19b's links return at 480 (spine 2), 600 (spine 1) and 720 µs (spine 0)."""
    sc = load(REPO / "scenarios" / "paper" / "fig19b.yaml")
    log = [(385.0, make_ev(0, 2, 7), "loss", "ASSUMED_BAD"),
           (530.9, make_ev(0, 2, 7), "probe_ok", "GOOD"), (531.0, make_ev(0, 2, 8), "probe_ok", "GOOD"),
           (610.0, make_ev(0, 2, 9), "probe_ok", "GOOD"),  # not spine 1's: no lag for 600
           (638.2, make_ev(0, 1, 0), "probe_ok", "GOOD"), (745.6, make_ev(0, 0, 3), "probe_ok", "GOOD")]
    r = SimpleNamespace(scenario=sc, timeline=SimpleNamespace(ev_log={"0->4": log}))
    assert [round(x, 1) for x in restore_lags(r)] == [50.9, 38.2, 25.6]


def test_ecn_swaps_are_counted_before_the_first_event_and_from_the_last_on():
    """fig19b's events run from 120 to 720 µs; an ECN entry that set a spare GOOD is a swap."""
    sc = load(REPO / "scenarios" / "paper" / "fig19b.yaml")
    log = [(100.0, make_ev(0, 1, 1), "ecn", "GOOD"), (300.0, make_ev(0, 2, 1), "ecn", "GOOD"),
           (720.0, make_ev(0, 3, 1), "ecn", "GOOD"), (800.0, make_ev(0, 3, 2), "ecn", "GOOD"),
           (900.0, make_ev(0, 0, 2), "loss", "ASSUMED_BAD")]
    r = SimpleNamespace(scenario=sc, timeline=SimpleNamespace(ev_log={"0->4": log}))
    assert ecn_swaps(r) == (1, 2)
