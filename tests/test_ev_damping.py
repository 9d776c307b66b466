"""EV restoration with damping (DESIGN.md section 7; mrc_host/ev.py,
Damping): a lossy EV that fails again soon after each restoration stays out
longer each time, and then out; a path whose link went down and came back
is restored by the first probe it answers. Each check fails with its
mechanism switched off (damping: max_doublings 0; the fast path:
down_after 0)."""

from __future__ import annotations

import random

import pytest

from mrc_host.ev import Damping, EvEvent, EvProfile, EvState

PROBE_US = 10.0  # one probe per interval, as the endpoint sends them to a retired EV
RUN = 5000  # probe intervals


def _profile(damping: Damping) -> tuple[EvProfile, int]:
    p = EvProfile.spread(planes=2, spines=8, slots=8)
    p.damping = damping
    return p, p.home[3]


def _restorations(p: EvProfile, ev: int) -> list[int]:
    """The probe intervals at which `ev` was restored, from its log."""
    return [i for i, (e, _, st) in zip(p.times, p.log, strict=True) if e == ev and st is EvState.GOOD]


def _lossy(damping: Damping, seed: int, loss: float = 0.2, per_interval: int = 8) -> list[int]:
    """An EV that drops `loss` of what is sent on it, probes included, for
    RUN probe intervals: retired at its first loss, probed once an interval
    while out, carrying `per_interval` data packets an interval while in."""
    rng = random.Random(seed)
    p, ev = _profile(damping)
    t = [0.0]
    p.trace(lambda: t[0] / PROBE_US)
    p.event(ev, EvEvent.LOSS, 0.0)
    for i in range(1, RUN):
        t[0] = i * PROBE_US
        if p.state[ev] is EvState.ASSUMED_BAD:
            p.event(ev, EvEvent.PROBE_LOST if rng.random() < loss else EvEvent.PROBE_OK, t[0])
        elif any(rng.random() < loss for _ in range(per_interval)):
            p.event(ev, EvEvent.LOSS, t[0])
    return [int(x) for x in _restorations(p, ev)]


@pytest.mark.parametrize("seed", range(20))
def test_a_20_percent_lossy_ev_stays_out(seed):
    """With damping it comes back a few times early on, each time needing
    twice the good probes, then stays out: none of its returns in the last
    four fifths of the run. Without, it comes back every few probes."""
    back = _lossy(Damping(), seed)
    assert len(back) <= 4 and all(i < RUN // 5 for i in back), back
    undamped = _lossy(Damping(max_doublings=0), seed)
    assert len(undamped) > 100 and max(undamped) > RUN * 0.9


def test_without_damping_the_lossy_ev_keeps_coming_back():
    """The check above fails with damping switched off: the same EV comes
    back hundreds of times, to the end of the run."""
    back = _lossy(Damping(max_doublings=0), seed=0)
    assert not (len(back) <= 4 and all(i < RUN // 5 for i in back))


def _link_back(damping: Damping, down_for: int = 40) -> int:
    """A path whose link is down for `down_for` probe intervals after its EV
    was retired, then up: the probe intervals from its return to its
    restoration (its probes answered from then on)."""
    p, ev = _profile(damping)
    p.event(ev, EvEvent.LOSS, 0.0)
    for i in range(1, down_for + 1):
        p.event(ev, EvEvent.PROBE_LOST, i * PROBE_US)
    for k in range(1, 100):
        p.event(ev, EvEvent.PROBE_OK, (down_for + k) * PROBE_US)
        if p.state[ev] is EvState.GOOD:
            return k
    raise AssertionError("never restored")


def test_a_link_that_comes_back_is_used_at_its_first_answered_probe():
    assert _link_back(Damping()) == 1  # the first probe after its return: within one probe interval
    assert _link_back(Damping(down_after=0)) == 3  # without the fast path: 3 good probes in a row


def test_a_link_down_for_fewer_probes_than_bfd_detects_is_no_link_down():
    """Two probes lost are not yet a link that went down (BFD's detect multiplier is 3)."""
    assert _link_back(Damping(), down_for=2) == 3
    assert _link_back(Damping(), down_for=3) == 1


def _struck() -> tuple[EvProfile, int]:
    """An EV retired, restored by 3 good probes (out for 3 intervals), and
    lost again 1 interval later: within its probation, one strike."""
    p, ev = _profile(Damping())
    p.event(ev, EvEvent.LOSS, 0.0)
    for i in range(1, 4):
        p.event(ev, EvEvent.PROBE_OK, i * PROBE_US)
    assert p.state[ev] is EvState.GOOD and p.probation[ev] == 3 * PROBE_US
    p.event(ev, EvEvent.LOSS, 4 * PROBE_US)
    assert p.strikes[ev] == 1
    return p, ev


def test_a_failure_within_its_probation_doubles_the_probes_needed_and_probation_spent_up_forgives():
    p, ev = _struck()
    for i in range(5, 10):
        p.event(ev, EvEvent.PROBE_OK, i * PROBE_US)
        assert p.state[ev] is EvState.ASSUMED_BAD  # 5 good probes are not the 6 it needs now
    p.event(ev, EvEvent.PROBE_OK, 10 * PROBE_US)
    assert p.state[ev] is EvState.GOOD and p.probation[ev] == 6 * PROBE_US
    p.event(ev, EvEvent.LOSS, 10 * PROBE_US + 2 * 6 * PROBE_US)  # up two probations: forgiven
    assert p.strikes[ev] == 0


def test_a_damped_ev_gets_no_fast_path():
    """An EV with strikes is not let back by one answered probe after a silence."""
    p, ev = _struck()
    for i in range(5, 10):
        p.event(ev, EvEvent.PROBE_LOST, i * PROBE_US)
    p.event(ev, EvEvent.PROBE_OK, 10 * PROBE_US)
    assert p.state[ev] is EvState.ASSUMED_BAD


def test_a_port_status_update_restores_at_once_whatever_the_strikes():
    p, ev = _struck()
    plane = ev & 7
    p.plane_down(plane)
    p.plane_up(plane)
    assert p.state[ev] is EvState.GOOD and ev in p.slots
