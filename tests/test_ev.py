"""EV format and the per-QP EV profile state machine. The NIC walks the
slots (one turn per data packet it sends, `turn`); the profile acts only
through slot rewrites (and, with path health in the NIC, slots marked bad)."""

import pytest

from mrc_host.ev import Damping, EvEvent, EvProfile, EvState, ev_plane, ev_spine, make_ev


def test_ev_format_plane_spine_salt():
    ev = make_ev(plane=5, spine=200, salt=3)
    assert (ev_plane(ev), ev_spine(ev), ev >> 11) == (5, 200, 3)
    with pytest.raises(ValueError):
        make_ev(8, 0)


def test_slots_must_be_a_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        EvProfile([make_ev(0, s) for s in range(6)], {0: []})


def test_spread_interleaves_planes_and_keeps_backups_apart():
    p = EvProfile.spread(planes=4, spines=8, slots=16)
    assert [ev_plane(e) for e in p.home[:8]] == [0, 1, 2, 3, 0, 1, 2, 3]
    backups = {e for pool in p.backups.values() for e in pool}
    assert not backups & set(p.home)
    assert all(ev_plane(b) == plane for plane, pool in p.backups.items() for b in pool)


def test_lasthop_nack_and_ack_leave_state():
    p = EvProfile.spread(planes=2, spines=2, slots=4)
    ev = p.home[0]
    p.event(ev, EvEvent.NACK_TRIMMED_LASTHOP)
    p.event(ev, EvEvent.ACK)
    assert p.state[ev] is EvState.GOOD and p.log == []


def test_loss_retires_to_same_plane_backup_and_probes_restore():
    p = EvProfile.spread(planes=2, spines=4, slots=8)
    p.damping = Damping(max_doublings=0)  # without damping: a lost probe only starts the count again
    ev = p.home[2]
    p.event(ev, EvEvent.LOSS)
    assert p.state[ev] is EvState.ASSUMED_BAD and ev not in p.slots
    assert ev_plane(p.slots[2]) == ev_plane(ev) and p.probing() == [ev]
    p.event(ev, EvEvent.PROBE_OK)
    p.event(ev, EvEvent.PROBE_LOST)  # a lost probe starts the count again
    for _ in range(2):
        p.event(ev, EvEvent.PROBE_OK)
    assert p.state[ev] is EvState.ASSUMED_BAD
    p.event(ev, EvEvent.PROBE_OK)
    assert p.state[ev] is EvState.GOOD and p.slots[2] == ev
    assert p.slot_writes[-1] == (2, ev)


def test_denied_by_operator_until_allowed():
    p = EvProfile.spread(planes=2, spines=4, slots=8)
    ev = p.home[5]
    p.deny(ev)
    assert ev not in p.slots and ev not in p.probing()  # the NIC sends on what the slots hold
    for _ in range(16):
        p.turn()
    assert ev not in p.slots
    p.allow(ev)
    assert p.slots[5] == ev and p.state[ev] is EvState.GOOD


def test_no_spare_left_doubles_up_a_good_ev_of_the_plane():
    """The NIC sends on whatever a slot holds: with no spare, a lost EV's
    slot takes another GOOD EV of its plane (with path health in the NIC it
    is marked bad instead: tests/test_ev_health_host.py)."""
    p = EvProfile.spread(planes=1, spines=2, slots=2, backups_per_plane=0)
    bad = p.home[0]
    p.event(bad, EvEvent.LOSS)
    assert p.slots == [p.home[1], p.home[1]] and p.slot_writes == [(0, p.home[1])]


def test_a_skip_is_a_slot_rewrite_for_one_rotation():
    p = EvProfile.spread(planes=2, spines=4, slots=8)
    ev = p.home[4]  # plane 0, spine 2; plane 0's spares are on spines 0 and 1
    p.event(ev, EvEvent.ECN)
    spare = p.backups[0][0]  # the first GOOD spare of the plane, on another spine
    assert (ev_plane(ev), ev_spine(ev), ev_spine(spare)) == (0, 2, 0)
    assert p.state[ev] is EvState.SKIP and p.slots[4] == spare and p.slot_writes == [(4, spare)]
    for _ in range(8):
        p.turn()  # the NIC's rotation passes over its slot once...
    assert p.state[ev] is EvState.SKIP and p.slots[4] == spare
    p.turn()  # ...then the EV is back in its slot
    assert p.state[ev] is EvState.GOOD and p.slots[4] == ev and p.slot_writes[-1] == (4, ev)


def test_a_plane_back_takes_its_share_of_the_planes_still_down():
    # Planes 0 and 1 die in turn, then 1 returns: its own slots come home
    # and it takes a third of plane 0's (4 live planes share them evenly).
    p = EvProfile.spread(planes=4, spines=8, slots=48 * 4 // 3)  # 64 slots, 16 per plane
    p.plane_down(0)
    p.plane_down(1)
    assert {ev_plane(e) for e in p.slots} == {2, 3}
    p.plane_up(1)
    load = [sum(ev_plane(e) == q for e in p.slots) for q in range(4)]
    assert load[0] == 0 and sorted(load[1:]) == [21, 21, 22], load
    assert all(p.slots[i] == h for i, h in enumerate(p.home) if ev_plane(h) == 1)
    p.plane_up(0)
    assert p.slots == p.home


def test_ecn_swap_moves_the_slot_to_an_idle_spare_for_good():
    a, b = make_ev(0, 0), make_ev(0, 1, salt=1 << 20)
    p = EvProfile([a], {0: [b]}, ecn_swap=True)
    p.event(a, EvEvent.ECN)
    assert p.slots == p.home == [b] and p.backups[0] == [a]
    assert p.state[a] is p.state[b] is EvState.GOOD
    for _ in range(4):
        p.turn()
    assert p.slots == [b]  # no return after a rotation
    assert p.log[-1] == (b, EvEvent.ECN, EvState.GOOD)
    p.event(b, EvEvent.ECN)  # and back, if the new one is marked in its turn
    assert p.slots == [a]


def test_ecn_swap_passes_over_a_spare_on_the_spine_of_an_ev_assumed_bad():
    # Plane 0: a and c in the rotation (spines 0 and 2); spares on spine 2 (where c is lost), 3 and 4.
    a, c = make_ev(0, 0), make_ev(0, 2)
    on_bad, first, second = (make_ev(0, s, salt=1 << 20) for s in (2, 3, 4))
    p = EvProfile([a, c], {0: [on_bad, first, second]}, ecn_swap=True)
    p.event(c, EvEvent.LOSS)  # spine 2 is suspect now; c's slot takes the first spare off it
    assert p.state[c] is EvState.ASSUMED_BAD and p.slots == [a, first]
    p.event(a, EvEvent.ECN)  # idle and GOOD: on_bad and second; on_bad shares the broken spine
    assert p.slots == [second, first] and p.state[a] is EvState.GOOD


def test_ecn_swap_with_only_a_spare_on_a_suspect_spine_skips():
    a, c = make_ev(0, 0), make_ev(0, 2)
    on_bad, first = make_ev(0, 2, salt=1 << 20), make_ev(0, 3, salt=1 << 20)
    p = EvProfile([a, c], {0: [on_bad, first]}, ecn_swap=True)
    p.event(c, EvEvent.LOSS)
    p.event(a, EvEvent.ECN)  # the one idle spare is on c's spine: no swap, a is skipped for a rotation
    assert p.state[a] is EvState.SKIP and on_bad not in p.slots


def test_ecn_swap_without_an_idle_spare_skips_as_usual():
    a = make_ev(0, 0)
    p = EvProfile([a], {0: []}, ecn_swap=True)
    p.event(a, EvEvent.ECN)
    assert p.state[a] is EvState.SKIP and p.slots == [a]


@pytest.mark.parametrize("ecn_swap, health", [(True, False), (False, False), (True, True), (False, True)])
def test_the_slot_bits_of_each_ev_follow_every_slot_write(ecn_swap, health):
    """`slot_bits` and `home_bits` (where the swap, a loss and a return
    home find an EV's slots, and the idle-spare test and the double-up
    look) are the slots' and the home rotation's own positions after every
    kind of move: ECN swaps, losses and probes, denials, planes down and
    back."""
    import random
    from collections import Counter

    p = EvProfile.spread(planes=4, spines=4, slots=16, backups_per_plane=2)
    p.ecn_swap, p.health = ecn_swap, health
    rng = random.Random(5)
    evs = sorted(p.state)
    moves = 0

    def positions(evs: list[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for i, e in enumerate(evs):
            out[e] = out.get(e, 0) + (1 << i)
        return out

    for _ in range(600):
        ev, plane = rng.choice(evs), rng.randrange(4)
        before = list(p.slots)
        move, *args = rng.choice([(p.event, ev, EvEvent.ECN), (p.event, ev, EvEvent.LOSS),
                                  (p.event, ev, EvEvent.PROBE_OK), (p.deny, ev), (p.allow, ev),
                                  (p.plane_down, plane), (p.plane_up, plane)])
        move(*args)
        moves += p.slots != before
        assert p.slot_bits == positions(p.slots) and p.home_bits == positions(p.home)
        assert all(p.uses(e) == n for e, n in Counter(p.slots).items())
    assert moves > 20  # the mix moved slots


def test_an_ecn_swap_moves_every_slot_of_the_ev_not_only_its_home_slots():
    """A loss doubled `a` up into `b`'s slot; `a`'s ECN swap then moves both
    of its slots to the spare, the one outside its home too."""
    a, b, s = make_ev(0, 0), make_ev(0, 1), make_ev(0, 2)
    p = EvProfile([a, b], {0: []}, ecn_swap=True)  # a lost EV's slot doubles up
    p.event(b, EvEvent.LOSS)
    assert p.slots == [a, a]
    p.backups[0].append(s)
    p.state[s] = EvState.GOOD
    p.event(a, EvEvent.ECN)
    assert p.slots == [s, s] and p.home == [s, b] and p.backups[0] == [a]


def test_an_untraced_profile_keeps_no_log_and_a_traced_one_times_each_change():
    p = EvProfile.spread(planes=2, spines=2, slots=4)
    p.untraced()
    p.event(p.home[1], EvEvent.ECN)
    assert p.state[p.home[1]] is EvState.SKIP and p.log == [] and p.times == []
    now = [7.5]
    p.trace(lambda: now[0])
    p.event(p.home[2], EvEvent.NACK_TRIMMED)
    assert p.log == [(p.home[2], EvEvent.NACK_TRIMMED, EvState.SKIP)] and p.times == [7.5]


def test_slot_writes_taken_are_forgotten_and_later_ones_kept():
    p = EvProfile.spread(planes=2, spines=4, slots=4)
    p.event(p.home[1], EvEvent.LOSS)
    first = p.take_writes()
    assert len(first) == 1 and first[0][0] == 1 and p.slot_writes == [] and p.take_writes() == []
    p.event(p.home[2], EvEvent.LOSS)
    assert [s for s, _ in p.take_writes()] == [2]
