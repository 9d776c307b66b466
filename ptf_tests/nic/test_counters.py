"""NIC counters (docs/nic.md), read on the target: nic_events, nack_reasons,
the per-EV and per-plane packet and byte counters; and the transmit drops
that only a missing table entry reaches: no_ev, unknown_row, no_plane."""

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import nic_plan as N
from ptf_tests.lib import headers as H
from ptf_tests.lib.fabric import TOPO
from ptf_tests.lib.nic_fabric import (
    HOST_RX_QPN,
    ME,
    NIC,
    PEER,
    PEER_QPN,
    PROFILE,
    QPN,
    from_fabric,
    host_control,
    host_data,
    split,
)

EVENTS = ("tx", "rx", "nack")
REVERSE = PROFILE.home[1]


def _ev(frame: bytes) -> int:
    """EV of a frame the NIC sent (DESIGN.md 5: UDP source port, low flow label)."""
    inner = IPv6(bytes(Ether(frame)[IPv6].payload))
    return (inner[UDP].sport << 16) | (inner.fl & 0xFFFF)


def _events(t) -> dict[str, int]:
    return {e: t.event_count(e) for e in EVENTS}


def _delta(before: dict[str, int], t) -> dict[str, int]:
    return {e: t.event_count(e) - before[e] for e in EVENTS}


def test_sprayed_data_counts_per_ev_and_plane_packets_and_bytes(nic_target):
    frames = [(N.HOST_PORT, bytes(host_data(PEER, psn=i, payload=bytes(100 + 50 * i)))) for i in range(4)]
    evs0 = {ev: (nic_target.ev_count(ev), nic_target.ev_bytes(ev)) for ev in PROFILE.home}
    planes0 = {p: (nic_target.plane_count(p), nic_target.plane_bytes(p)) for p in range(TOPO.planes)}
    ev0 = _events(nic_target)
    out, done = split(nic_target.burst(frames))
    assert len(out) == 4 and len(done) == 4  # each with its completion to the host
    want_ev: dict[int, list[int]] = {ev: [0, 0] for ev in PROFILE.home}
    want_plane = {p: [0, 0] for p in range(TOPO.planes)}
    # Counted in ingress (docs/nic.md): the bytes of the host's frame, which
    # leaves 40 bytes (the outer header) longer.
    for _, frame in out:
        ev = _ev(frame)
        want_ev[ev][0] += 1
        want_ev[ev][1] += len(frame) - 40
        want_plane[ev & 7][0] += 1
        want_plane[ev & 7][1] += len(frame) - 40
    assert sorted(len(f) for _, f in out) == sorted(len(f) + 40 for _, f in frames)
    got_ev = {ev: [nic_target.ev_count(ev) - evs0[ev][0], nic_target.ev_bytes(ev) - evs0[ev][1]] for ev in PROFILE.home}
    got_plane = {p: [nic_target.plane_count(p) - planes0[p][0], nic_target.plane_bytes(p) - planes0[p][1]]
                 for p in range(TOPO.planes)}
    assert (got_ev, got_plane) == (want_ev, want_plane)
    assert _delta(ev0, nic_target) == {"tx": 4, "rx": 0, "nack": 0}


def test_decapsulated_counts_one_rx_event(nic_target):
    # Decapsulation alone: data of the QP planned with offload=False (its
    # receiver is its host's), so no SACK goes out; test_receive has the SACK.
    ev0 = _events(nic_target)
    data = bytes(from_fabric(PEER, ME, REVERSE, qpn=HOST_RX_QPN))
    out = nic_target.burst([(N.plane_port(REVERSE & 7), data)])
    assert [p for p, _ in out] == [N.HOST_PORT]
    assert _delta(ev0, nic_target) == {"tx": 0, "rx": 1, "nack": 0}
    # Each one counts (a counter set to 1 instead of counted up fails here).
    out = nic_target.burst([(N.plane_port(REVERSE & 7), data)] * 2)
    assert [p for p, _ in out] == [N.HOST_PORT] * 2
    assert _delta(ev0, nic_target) == {"tx": 0, "rx": 3, "nack": 0}


@pytest.mark.bmv2_knob("the receiver's reverse EVs (BMv2 Thrift register_write rx_reverse)")
def test_offloaded_data_counts_sack_and_host_copy_and_its_second_copy_a_duplicate(nic_target):
    """QP 1's receiver is the NIC's: its data (asking for an ACK) becomes a SACK and its copy goes to the
    host; a second copy is a duplicate, SACKed at once and not handed to the host. One frame-event each
    (sack), the copy and the duplicate counted beside (host_copy, duplicate), none as rx."""
    counted = ("rx", "sack", "duplicate", "host_copy")
    nic_target.set_reverse(QPN, REVERSE & 7, REVERSE)
    before = {e: nic_target.event_count(e) for e in counted}
    port = N.plane_port(REVERSE & 7)
    out = nic_target.burst([(port, bytes(from_fabric(PEER, ME, REVERSE, qpn=QPN)))] * 2)
    assert sorted(p for p, _ in out) == sorted([N.HOST_PORT, port, port])
    assert {e: nic_target.event_count(e) - before[e] for e in counted} == {"rx": 0, "sack": 2, "duplicate": 1,
                                                                           "host_copy": 1}


def _stub(dscp: int) -> bytes:
    return bytes(from_fabric(PEER, ME, REVERSE, outer_dscp=dscp, payload=bytes(1000)))[:256]


def test_each_nack_counts_its_reason_and_one_nack_event(nic_target):
    ev0, r0 = _events(nic_target), {r: nic_target.nack_count(r) for r in (H.NACK_TRIMMED, H.NACK_TRIMMED_LASTHOP)}
    port = N.plane_port(REVERSE & 7)
    out = nic_target.burst([(port, _stub(TOPO.dscp["trimmed"])), (port, _stub(TOPO.dscp["trimmed"])),
                            (port, _stub(TOPO.dscp["trimmed_lasthop"]))])
    assert sorted(p for p, _ in out) == sorted([port] * 3 + [N.HOST_PORT] * 3)  # a NACK and a notice each
    got = {r: nic_target.nack_count(r) - r0[r] for r in r0}
    assert got == {H.NACK_TRIMMED: 2, H.NACK_TRIMMED_LASTHOP: 1}
    assert _delta(ev0, nic_target) == {"tx": 0, "rx": 0, "nack": 3}


def _dropped(nic_target, frame, reason: str) -> None:
    before, ev0 = nic_target.drop_count(reason), _events(nic_target)
    planes0 = [nic_target.plane_count(p) for p in range(TOPO.planes)]
    assert nic_target.burst([(N.HOST_PORT, bytes(frame))]) == []
    assert nic_target.drop_count(reason) == before + 1
    assert [nic_target.plane_count(p) for p in range(TOPO.planes)] == planes0  # nothing counted as sent
    assert _delta(ev0, nic_target) == {"tx": 0, "rx": 0, "nack": 0}


def test_data_of_a_qp_without_slots_dropped_no_ev(nic_target):
    [qp] = [q for q in NIC.qps if q.qpn == PEER_QPN]  # QpEv: keyed by the peer's QP
    nic_target.delete_slots(qp.qpn)
    _dropped(nic_target, host_data(PEER), "no_ev")


def test_data_to_a_row_without_template_dropped_unknown_row(nic_target):
    far = TOPO.nics + 10 * TOPO.hosts_per_t0  # a row the topology does not have
    assert far // TOPO.hosts_per_t0 not in {r.row for r in NIC.rows}
    _dropped(nic_target, host_data(far), "unknown_row")


def test_control_on_an_ev_of_a_plane_without_port_dropped_no_plane(nic_target):
    ev = (REVERSE & ~7) | 7  # plane 7: the demo NIC has ports on planes 0-1 only
    assert 7 not in {p.plane for p in NIC.planes}
    _dropped(nic_target, host_control(H.OP_SACK, H.SETH(entropy=REVERSE, cack_psn=7) / H.CCState(), ev), "no_plane")


def test_port_tx_counts_frames_as_they_leave(bmv2_nic):
    """nic_port_tx (the BMv2 top's egress counter, no model twin): packets
    by egress port, and bytes as BMv2 counts them: the packet_length the
    frame entered the pipeline with, whatever this pass cut or removed
    (the NACK leaves 138 bytes long, the notice 216, each counted 256)."""
    t = bmv2_nic
    t.reset()
    ports = [N.HOST_PORT, N.plane_port(REVERSE & 7)]
    before = {p: t.session.counter("nic_port_tx", p) for p in ports}
    out = t.burst([(N.plane_port(REVERSE & 7), _stub(TOPO.dscp["trimmed"]))])
    sent = {p: (sum(1 for q, _ in out if q == p), sum(len(f) for q, f in out if q == p)) for p in ports}
    got = {p: tuple(a - b for a, b in zip(t.session.counter("nic_port_tx", p), before[p], strict=True)) for p in ports}
    assert sent == {N.HOST_PORT: (1, 256 - 40), N.plane_port(REVERSE & 7): (1, 14 + 40 + 40 + 8 + 12 + 20 + 4)}
    assert got == {N.HOST_PORT: (1, 256), N.plane_port(REVERSE & 7): (1, 256)}
