"""NIC transmit: exact encapsulation and spraying, and each data packet's
transmit completion to the host (the EV it took) (model and BMv2)."""

from collections import Counter

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import addressing as A
from control_plane import nic_plan as N
from mrc_host.ev import EvEvent, EvProfile, ev_plane
from ptf_tests.lib import headers as H
from ptf_tests.lib.fabric import TOPO
from ptf_tests.lib.nic_fabric import (
    ME,
    PEER,
    PROFILE,
    SAME_ROW_PEER,
    D,
    completion,
    encapsulated,
    host_control,
    host_data,
    split,
)

ROTATION_RESET = "the QP's rotation back at slot 0 (BMv2 Thrift register_reset qp_rotation)"


@pytest.mark.bmv2_knob(ROTATION_RESET)
def test_exact_encapsulation_cross_spine(nic_target):
    pkt = host_data(PEER)
    nic_target.send(N.HOST_PORT, pkt)
    ev = PROFILE.home[0]  # first packet of the QP: slot 0
    exp = encapsulated(pkt[IPv6], ev, ME, PEER, D["data_trimmable"], 2)
    nic_target.verify_packet(exp, N.plane_port(ev & 7))
    nic_target.verify_packet(completion(pkt, ev), N.HOST_PORT)
    nic_target.verify_no_other_packets()


@pytest.mark.bmv2_knob(ROTATION_RESET)
def test_each_data_packet_comes_back_as_its_completion_naming_the_ev_it_took(nic_target):
    """Its headers only, the EV in its UDP source port and flow label: what
    the host learns each packet's EV from (mrc_wire.pcie.Host.on_sent).
    Control packets have none: their EV is the host's own."""
    pkts = [host_data(PEER, psn=i, payload=bytes(300)) for i in range(3)]
    for pkt in pkts:
        nic_target.send(N.HOST_PORT, pkt)
    for pkt, ev in zip(pkts, PROFILE.home, strict=False):
        done = completion(pkt, ev)
        assert len(done) == 102 < len(bytes(pkt))
        nic_target.verify_packet(done, N.HOST_PORT)
        nic_target.verify_packet(encapsulated(pkt[IPv6], ev, ME, PEER, D["data_trimmable"], 2), N.plane_port(ev & 7))
    ack, path = host_control(H.OP_ACK, H.AETH(syndrome=0x1F), PROFILE.home[1]), PROFILE.home[1]
    nic_target.send(N.HOST_PORT, ack)
    nic_target.verify_packet(encapsulated(ack[IPv6], path, ME, PEER, D["control"], 0), N.plane_port(path & 7))
    nic_target.verify_no_other_packets()


@pytest.mark.bmv2_knob(ROTATION_RESET)
def test_exact_encapsulation_same_row(nic_target):
    first = host_data(SAME_ROW_PEER)
    second = host_data(SAME_ROW_PEER, psn=6)
    nic_target.send(N.HOST_PORT, first)
    nic_target.send(N.HOST_PORT, second)
    for pkt, ev in ((first, PROFILE.home[0]), (second, PROFILE.home[1])):
        exp = encapsulated(pkt[IPv6], ev, ME, SAME_ROW_PEER, D["data_trimmable"], 2)
        p = ev & 7  # same row: block:T0(p,0):DL(p,1):: , no spine
        assert exp[IPv6].dst == str(A.carrier(TOPO, [A.usid(A.TIER_T0, p, 0), A.usid(A.TIER_DL, p, 1)]))
        nic_target.verify_packet(exp, N.plane_port(ev & 7))
        nic_target.verify_packet(completion(pkt, ev), N.HOST_PORT)
    nic_target.verify_no_other_packets()


def _evs(outputs):
    """(port, EV) of what went to the plane ports; each had its completion, on the same EV."""
    wire, done = split(outputs)
    assert sorted(_ev(f) for f in done) == sorted(_ev(f) for _, f in wire)
    return [(port, _ev(f)) for port, f in wire]


def _ev(f: bytes) -> int:
    """The EV in a frame's innermost IPv6 and UDP headers (a completion has no outer header)."""
    e = Ether(f)
    inner = e[IPv6].payload if e[IPv6].nh == 41 else e[IPv6]
    return (e[UDP].sport << 16) | (inner.fl & 0xFFFF)




def test_spraying_uses_every_ev_equally_and_planes_equally(nic_target):
    n, e = 64, len(PROFILE.home)
    before = {ev: nic_target.ev_count(ev) for ev in PROFILE.home}
    frames = [(N.HOST_PORT, bytes(host_data(PEER, psn=i))) for i in range(n)]
    out = _evs(nic_target.burst(frames))
    assert len(out) == n
    per_ev = Counter(ev for _, ev in out)
    assert per_ev == {ev: n // e for ev in PROFILE.home}
    per_plane = Counter(port for port, _ in out)
    assert set(per_plane.values()) == {n // 2} and len(per_plane) == 2
    assert all(port == N.plane_port(ev & 7) for port, ev in out)
    assert {ev: nic_target.ev_count(ev) - before[ev] for ev in PROFILE.home} == {ev: n // e for ev in PROFILE.home}


def test_retired_ev_never_used_and_replaced_on_same_plane(nic_target):
    profile = EvProfile(list(PROFILE.home), {p: list(b) for p, b in PROFILE.backups.items()})
    bad = profile.home[2]
    profile.event(bad, EvEvent.LOSS)
    nic_target.rewrite_slots(profile.slot_writes)
    stand_in = profile.slots[2]
    out = _evs(nic_target.burst([(N.HOST_PORT, bytes(host_data(PEER, psn=i))) for i in range(16)]))
    used = Counter(ev for _, ev in out)
    assert bad not in used
    assert used[stand_in] == 2 and ev_plane(stand_in) == ev_plane(bad)
    profile.event(bad, EvEvent.PROBE_OK)
    profile.event(bad, EvEvent.PROBE_OK)
    profile.event(bad, EvEvent.PROBE_OK)
    nic_target.rewrite_slots(profile.slot_writes[-1:])
    out = _evs(nic_target.burst([(N.HOST_PORT, bytes(host_data(PEER, psn=i))) for i in range(8)]))
    assert bad in {ev for _, ev in out} and stand_in not in {ev for _, ev in out}


def test_control_goes_on_the_ev_in_its_inner_headers_not_the_one_it_echoes(nic_target):
    """ACK, SACK and NACK ride the QP's reverse EV that the host wrote in
    the inner headers; the EV they echo (in the extension) may be another
    plane's (docs/nic.md)."""
    echoed, path = PROFILE.home[0], PROFILE.home[1]
    assert ev_plane(echoed) != ev_plane(path)
    for op, ext in ((H.OP_ACK, H.AETH(syndrome=0x1F)),
                    (H.OP_SACK, H.SETH(entropy=echoed, cack_psn=7, sack_offset=2, sack_bitmap=2) / H.CCState()),
                    (H.OP_NACK, H.NETH(entropy=echoed, nack_reason=1, nack_psn=7)),
                    (H.OP_PROBE, H.PETH(probe_id=3)),
                    (H.OP_EP_REQUEST, H.ERTH(port_status_mask=2))):
        pkt = host_control(op, ext, path)
        nic_target.send(N.HOST_PORT, pkt)
        exp = encapsulated(pkt[IPv6], path, ME, PEER, D["control"], 0)
        nic_target.verify_packet(exp, N.plane_port(ev_plane(path)))
    nic_target.verify_no_other_packets()


@pytest.mark.bmv2_knob(ROTATION_RESET)
def test_unknown_opcode_is_sprayed_without_ect(nic_target):
    """Neither data nor control (opcode 0x8A): sprayed like data, but the
    outer header is not ECN-capable (ECT only on data). Found by fuzzing."""
    raw = bytearray(bytes(host_data(PEER)))
    raw[14 + 40 + 8] = 0x8A  # BTH opcode
    pkt = Ether(bytes(raw))
    nic_target.send(N.HOST_PORT, pkt)
    ev = PROFILE.home[0]
    exp = encapsulated(pkt[IPv6], ev, ME, PEER, D["data_trimmable"], 0)
    nic_target.verify_packet(exp, N.plane_port(ev & 7))
    nic_target.verify_no_other_packets()  # not data: no completion
