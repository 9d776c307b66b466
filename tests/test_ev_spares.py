"""Which spare takes a retired EV's slot: one on a healthy spine, before a
spare that shares the spine of the retired EV or of another EV assumed
bad (a spare on the same broken path is no spare)."""

from mrc_host.ev import EvEvent, EvProfile, EvState, make_ev


def _profile(health: bool) -> EvProfile:
    home = [make_ev(0, 0), make_ev(1, 0), make_ev(0, 1), make_ev(1, 1)]
    backups = {0: [make_ev(0, 0, salt=1), make_ev(0, 1, salt=2), make_ev(0, 3, salt=3)], 1: []}
    p = EvProfile(home, backups)
    p.health = health
    return p


def test_a_retired_ev_gets_the_spare_on_a_healthy_spine_not_the_first_in_the_pool():
    for health in (True, False):
        p = _profile(health)
        p.event(make_ev(0, 0), EvEvent.LOSS)
        assert p.state[make_ev(0, 0)] is EvState.ASSUMED_BAD
        # The pool's first spare (spine 0) shares the dead spine; spine 1's
        # is on a rotation EV's spine that is healthy: it is the one taken.
        assert p.slots == [make_ev(0, 1, salt=2), make_ev(1, 0), make_ev(0, 1), make_ev(1, 1)], health


def test_a_spare_on_the_spine_of_another_bad_ev_is_passed_over():
    p = _profile(health=False)
    p.event(make_ev(0, 0), EvEvent.LOSS)  # slot 0 takes spine 1's spare (as above)
    p.event(make_ev(0, 1), EvEvent.LOSS)  # spines 0 and 1 now suspect: spine 0's spare, though GOOD, is no spare
    assert p.slots == [make_ev(0, 1, salt=2), make_ev(1, 0), make_ev(0, 3, salt=3), make_ev(1, 1)]
