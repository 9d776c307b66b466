"""The host's side of path health in the NIC (EvProfile.health, what the
endpoint writes into its NIC): the data plane skips and passes over planes down, so
the host writes no slot for them; a loss with no spare marks the slot
bad (the ev_bad word) instead of doubling up; a restore clears it."""

from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvEvent, EvProfile, EvState
from sim_core.sim import Sim
from tests.support.spy_nic import SpyNic


def _health(spares: int = 0) -> EvProfile:
    p = EvProfile.spread(planes=2, spines=4, slots=4, backups_per_plane=spares)
    p.health = True
    p.min_active = 1
    return p


def test_a_mark_or_a_trim_changes_nothing_on_the_host():
    p = _health(spares=2)
    p.event(p.home[1], EvEvent.ECN)
    p.event(p.home[2], EvEvent.NACK_TRIMMED)
    assert p.slot_writes == [] and p.bad_slots == 0
    assert {p.state[e] for e in p.home} == {EvState.GOOD}


def test_a_loss_with_no_spare_marks_its_slot_bad_until_the_ev_is_restored():
    p = _health(spares=0)
    ev = p.home[2]
    p.event(ev, EvEvent.LOSS)
    assert p.state[ev] is EvState.ASSUMED_BAD and p.bad_slots == 1 << 2 and p.slot_writes == []
    for _ in range(3):
        p.event(ev, EvEvent.PROBE_OK)
    assert p.state[ev] is EvState.GOOD and p.bad_slots == 0


def test_a_loss_with_a_spare_rewrites_the_slot_and_leaves_it_usable():
    p = _health(spares=1)
    ev = p.home[2]
    p.event(ev, EvEvent.LOSS)
    [(slot, spare)] = p.slot_writes
    assert slot == 2 and spare in p.backups[ev & 7] and p.bad_slots == 0


def test_a_plane_down_moves_no_slot():
    p = _health(spares=1)
    p.plane_down(1)
    assert p.slot_writes == [] and all(p.state[e] is EvState.PLANE_DOWN for e in p.home if e & 7 == 1)
    p.plane_up(1)
    assert p.slot_writes == []


def test_the_endpoint_writes_its_ports_down_and_bad_words_to_the_nic():
    nic = SpyNic()
    ports, bad = nic.ports, nic.bad
    ep = Endpoint(Sim(), "fd00::1", nic)
    p = _health(spares=0)
    ep.connect(7, 8, "fd00::2", p)
    ep.port_down(1)
    ep.port_up(1)
    assert ports == [1 << 1, 0]
    ep._event(ep.qps[7], p.home[3], EvEvent.LOSS)
    assert bad == [(7, 1 << 3)]
