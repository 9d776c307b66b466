"""Per-EV path health in the NIC's data plane (docs/nic.md, "Path health
in the pipeline"): what arrives from the fabric (a SACK's congestion
mark, a TRIMMED NACK, the peer's port status) and what the host writes
(slots assumed bad, its own ports down) change which slots the rotation
takes; each change the data plane makes is an EV event (a digest on
BMv2). Expected EVs are worked out here from the rules, on every target.

QP 5 of NIC 0 (ptf_tests/lib/nic_fabric.py): 8 slots over the demo
fabric's 2 planes (slot s on plane s % 2), health on, min_active 2, a
congestion mark skips an EV once."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6

from control_plane import nic_plan as N
from control_plane.ev_events import SlotView, expand
from mrc_wire import dissect
from mrc_wire.constants import (
    EP_PORT_STATUS,
    EVR_CONGESTION,
    EVR_PORT_STATUS,
    EVR_ROTATION,
    EVR_TRIMMED,
    EVS_GOOD,
    EVS_SKIP,
    NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
    OP_EP_REQUEST,
    OP_NACK,
    OP_SACK,
)
from mrc_wire.entries import EvChange
from ptf_tests.lib import headers as H
from ptf_tests.lib.nic_fabric import (
    HEALTH_PEER_QPN,
    HEALTH_QPN,
    ME,
    NIC,
    PEER,
    PORTS,
    PROFILE,
    addr,
    encapsulated,
    host_data,
)
from testbed.model_targets import NicModelTarget

knob = pytest.mark.bmv2_knob("path health's registers (BMv2 Thrift register_write and read)")

HOME = PROFILE.home  # slot s holds HOME[s], on plane s % 2
assert [e & 7 for e in HOME] == [0, 1] * 4
[INDEX] = [p.qp_index for p in NIC.peers if p.qpn == HEALTH_QPN]


def _sent(t, n: int, first_psn: int = 0) -> list[int]:
    """The EVs of `n` data packets of QP 5 from the host, in PSN order (the
    plane ports' frames reach the test in no common order)."""
    out = t.burst([(N.HOST_PORT, bytes(host_data(psn=first_psn + i, qpn=HEALTH_PEER_QPN))) for i in range(n)])
    frames = [dissect.decode(dissect.LINK_ETHERNET, f) for p, f in out if p != N.HOST_PORT]
    return [d["ev"] for d in sorted(frames, key=lambda d: d["bth"]["psn"])]


def _control(opcode: int, ext, on_ev: int) -> bytes:
    """A control packet from the peer to QP 5, off the fabric on `on_ev`."""
    inner = IPv6(bytes(IPv6(src=addr(PEER), dst=addr(ME), tc=46 << 2, hlim=64)
                       / UDP(sport=0, dport=H.ROCE_PORT, chksum=0)
                       / H.BTH(opcode=opcode, dqp=HEALTH_QPN, psn=3) / ext / H.ICRC))
    return bytes(encapsulated(inner, on_ev, PEER, ME, 46, 0))


def _sack(ev: int, m: int) -> bytes:
    return _control(OP_SACK, H.SETH(m=m, entropy=ev, cack_psn=2, sack_offset=2) / H.CCState(), HOME[0])


def _nack(ev: int, reason: int) -> bytes:
    return _control(OP_NACK, H.NETH(nack_reason=reason, entropy=ev, nack_psn=4), HOME[0])


def _ports(down: int) -> bytes:
    return _control(OP_EP_REQUEST, H.ERTH(op=EP_PORT_STATUS, port_status_mask=down), HOME[0])


def _arrive(t, *frames: bytes) -> int:
    """Frames into plane 0's port; how many went on to the host."""
    out = t.burst([(N.plane_port(0), f) for f in frames])
    return sum(1 for p, _ in out if p == N.HOST_PORT)


@knob
def test_the_rotation_takes_every_slot_in_turn(nic_target):
    assert _sent(nic_target, 16) == HOME * 2
    assert nic_target.ev_changes() == []


@knob
def test_a_congestion_mark_skips_the_ev_once(nic_target):
    assert _arrive(nic_target, _sack(HOME[2], m=1)) == 1  # the SACK goes on to the host too
    assert nic_target.health(HEALTH_QPN) == (1 << 2, 0, 0)
    assert _sent(nic_target, 15) == [e for e in HOME if e != HOME[2]] + HOME
    assert nic_target.health(HEALTH_QPN) == (0, 0, 0)
    assert nic_target.ev_changes(expect=2) == [
        EvChange(INDEX, EVR_CONGESTION, HOME[2], 1 << 2, EVS_GOOD, EVS_SKIP, 0, 0),
        EvChange(INDEX, EVR_ROTATION, 0, 1 << 2, EVS_SKIP, EVS_GOOD, 0, 0)]


@knob
def test_a_sack_without_the_mark_changes_nothing(nic_target):
    _arrive(nic_target, _sack(HOME[2], m=0))
    assert _sent(nic_target, 8) == HOME
    assert nic_target.ev_changes() == []


@knob
def test_a_trimmed_nack_skips_the_ev_once_a_last_hop_trim_does_not(nic_target):
    _arrive(nic_target, _nack(HOME[5], NACK_TRIMMED_LASTHOP))
    assert nic_target.health(HEALTH_QPN) == (0, 0, 0)  # the receiver, not the path, was the bottleneck
    _arrive(nic_target, _nack(HOME[5], NACK_TRIMMED))
    assert _sent(nic_target, 7) == [e for e in HOME if e != HOME[5]]
    assert [(c.reason, c.ev, c.slots) for c in nic_target.ev_changes(expect=2)] == [
        (EVR_TRIMMED, HOME[5], 1 << 5), (EVR_ROTATION, 0, 1 << 5)]


@knob
def test_the_peers_port_status_passes_over_its_plane_until_it_is_back(nic_target):
    _arrive(nic_target, _ports(1 << 1))
    assert nic_target.health(HEALTH_QPN) == (0, 0, 1 << 1)
    assert _sent(nic_target, 7) == [HOME[s] for s in (0, 2, 4, 6, 0, 2, 4)]  # plane 1's slots passed over
    _arrive(nic_target, _ports(0))
    assert _sent(nic_target, 8, 7) == HOME[5:] + HOME[:5]  # the turn goes on after slot 4
    assert nic_target.ev_changes(expect=2) == [
        EvChange(INDEX, EVR_PORT_STATUS, 0, 0, 0, 0, 1 << 1, 0),
        EvChange(INDEX, EVR_PORT_STATUS, 0, 0, 0, 0, 0, 1 << 1)]


@knob
def test_a_plane_back_at_the_peer_restores_its_slots_assumed_bad_at_once(nic_target):
    """The peer's port status saying its plane 1 is back is evidence that
    plane's paths work: its slots the host marked assumed bad are usable
    from the next packet, before the host writes its word again
    (DESIGN.md section 7); a slot of another plane stays bad."""
    assert _sent(nic_target, 2) == HOME[:2]  # a pick: the data plane knows which slot is on which plane
    nic_target.set_bad(HEALTH_QPN, 1 << 3 | 1 << 5 | 1 << 4)  # slots 3 and 5 on plane 1, 4 on plane 0
    _arrive(nic_target, _ports(1 << 1))
    _arrive(nic_target, _ports(0))
    assert nic_target.health(HEALTH_QPN) == (0, 1 << 4, 0)
    assert _sent(nic_target, 7, 2) == [HOME[s] for s in (2, 3, 5, 6, 7, 0, 1)]  # 3 and 5 back, 4 passed over
    assert nic_target.ev_changes(expect=2) == [
        EvChange(INDEX, EVR_PORT_STATUS, 0, 0, 0, 0, 1 << 1, 0),
        EvChange(INDEX, EVR_PORT_STATUS, 0, 0, 0, 0, 0, 1 << 1)]


@knob
def test_the_hosts_bad_slots_and_own_ports_are_passed_over_without_an_event(nic_target):
    nic_target.set_bad(HEALTH_QPN, 1 << 2 | 1 << 6)
    nic_target.set_port_down(1 << 1)  # plane 1: slots 1, 3, 5, 7
    assert _sent(nic_target, 4) == [HOME[0], HOME[4]] * 2
    nic_target.set_port_down(0)
    assert _sent(nic_target, 6, 4) == [HOME[s] for s in (5, 7, 0, 1, 3, 4)]  # from turn 5, past slot 4
    assert nic_target.ev_changes() == []  # the host's own changes: it knows them


@knob
def test_skips_are_not_passed_over_below_min_active(nic_target):
    # Slots 0..6 skip once: one usable slot is below the floor of 2, so the
    # rotation takes every slot as configured and consumes no skip.
    _arrive(nic_target, *[_sack(HOME[s], m=1) for s in range(7)])
    assert _sent(nic_target, 8) == HOME
    assert nic_target.health(HEALTH_QPN)[0] == (1 << 7) - 1
    assert len(nic_target.ev_changes(expect=7)) == 7


def test_the_controller_names_each_ev_of_an_event():
    view = SlotView(NIC)
    rotation = EvChange(INDEX, EVR_ROTATION, 0, 1 << 1 | 1 << 4, EVS_SKIP, EVS_GOOD, 0, 0)
    assert [(e.qpn, e.ev, e.old, e.new, e.reason) for e in expand(rotation, view)] == [
        (HEALTH_QPN, HOME[1], "SKIP", "GOOD", "rotation"), (HEALTH_QPN, HOME[4], "SKIP", "GOOD", "rotation")]
    ports = EvChange(INDEX, EVR_PORT_STATUS, 0, 0, 0, 0, 1 << 1, 0)
    assert [(e.ev, e.old, e.new) for e in expand(ports, view)] == [
        (HOME[s], "GOOD", "PLANE_DOWN") for s in (1, 3, 5, 7)]


def _stream(seed: int, count: int) -> list[tuple[int, bytes]]:
    """Random data from the host for QP 5 between random evidence from the
    fabric: marked and unmarked SACKs, TRIMMED and last-hop NACKs on random
    EVs (some not the QP's), port statuses."""
    rng = random.Random(seed)
    evs = [*HOME, 0x7FFF8]  # and one EV the QP does not hold
    out: list[tuple[int, bytes]] = []
    for psn in range(count):
        r = rng.random()
        if r < 0.6:
            out.append((N.HOST_PORT, bytes(host_data(psn=psn, qpn=HEALTH_PEER_QPN))))
        elif r < 0.8:
            out.append((N.plane_port(0), _sack(rng.choice(evs), m=rng.choice([0, 1]))))
        elif r < 0.93:
            out.append((N.plane_port(0), _nack(rng.choice(evs), rng.choice([NACK_TRIMMED, NACK_TRIMMED_LASTHOP]))))
        else:
            out.append((N.plane_port(0), _ports(rng.choice([0, 0, 1, 2]))))
    return out


@knob
def test_random_streams_leave_the_model_and_the_target_equal(nic_target):
    """Frames out, the registers after, and the EV events, as the model's."""
    frames = _stream(seed=7, count=300)
    model = NicModelTarget(NIC, PORTS)
    # One burst per run of frames into one port: BMv2 takes two ports' frames in no set order.
    out: list[tuple[int, bytes]] = []
    for _, run in itertools.groupby(frames, key=lambda pf: pf[0]):
        out += nic_target.burst(list(run))
    assert Counter(out) == Counter(model.burst(frames))
    assert nic_target.health(HEALTH_QPN) == model.health(HEALTH_QPN)
    want = model.ev_changes()
    assert len(want) > 20 and {c.reason for c in want} == {EVR_CONGESTION, EVR_TRIMMED, EVR_ROTATION, EVR_PORT_STATUS}
    assert nic_target.ev_changes(expect=len(want)) == want


@knob
def test_a_rewritten_slot_is_found_by_its_new_ev(nic_target):
    """The controller keeps ev_slots with slot_ev: a mark on the spare now
    in slot 3 skips slot 3; a mark on the EV it replaced skips nothing."""
    [q] = [q for q in NIC.qps if q.qpn == HEALTH_PEER_QPN]
    spare = PROFILE.backups[1][0]
    nic_target.rewrite_slots([(q.base + 3, spare)])
    _arrive(nic_target, _sack(HOME[3], m=1))
    assert nic_target.health(HEALTH_QPN)[0] == 0
    _arrive(nic_target, _sack(spare, m=1))
    assert nic_target.health(HEALTH_QPN)[0] == 1 << 3
    assert _sent(nic_target, 8) == [HOME[s] for s in (0, 1, 2, 4, 5, 6, 7, 0)]  # slot 3 (the spare) skipped once
