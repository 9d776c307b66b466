"""uSID forwarding on the demo T0 (t0-p0-r0: downlinks 0-1, uplinks 2-3).
One short test per behaviour, each on the model and on BMv2."""

from ptf_tests.lib.fabric import DOWNLINKS, UPLINKS, carrier, forwarded, frame, sid_dl, sid_t0, sid_t1


def test_transit_forwarding_without_shift(target):
    # DA starts with a T1 uSID: not ours, routed as is to that uplink.
    dst = carrier(sid_t1(1), sid_t0(1), sid_dl(0))
    pkt = frame(dst, in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[1]), UPLINKS[1])
    target.verify_no_other_packets()


def test_shift_then_uplink(target):
    pkt = frame(carrier(sid_t0(0), sid_t1(0), sid_t0(1), sid_dl(1)), in_port=DOWNLINKS[1])
    target.send(DOWNLINKS[1], pkt)
    exp = forwarded(pkt, UPLINKS[0], carrier(sid_t1(0), sid_t0(1), sid_dl(1)))
    target.verify_packet(exp, UPLINKS[0])
    target.verify_no_other_packets()


def test_shift_then_downlink(target):
    pkt = frame(carrier(sid_t0(0), sid_dl(1)), in_port=UPLINKS[1])
    target.send(UPLINKS[1], pkt)
    target.verify_packet(forwarded(pkt, DOWNLINKS[1], carrier(sid_dl(1))), DOWNLINKS[1])
    target.verify_no_other_packets()


def test_six_usid_carrier_shifts_once(target):
    sids = [sid_t0(0), sid_t1(1), sid_t0(1), sid_t1(0), sid_t0(0), sid_dl(0)]
    pkt = frame(carrier(*sids), in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[1], carrier(*sids[1:])), UPLINKS[1])
    target.verify_no_other_packets()


def test_argument_zero_is_for_me_and_dropped(target):
    before = target.drop_count("for_me")
    target.send(UPLINKS[0], frame(carrier(sid_t0(0)), in_port=UPLINKS[0]))
    target.verify_no_other_packets()
    assert target.drop_count("for_me") == before + 1


def test_unknown_locator_has_no_route(target):
    # After the shift the active uSID is a T1 this plane does not have.
    before = target.drop_count("no_route")
    target.send(DOWNLINKS[0], frame(carrier(sid_t0(0), sid_t1(7)), in_port=DOWNLINKS[0]))
    target.verify_no_other_packets()
    assert target.drop_count("no_route") == before + 1


def test_route_to_a_port_without_neighbour_entry_dropped(target):
    # The route to T1 0 exists; its port's neighbour entry (the MACs) does not.
    target.delete_neighbour(UPLINKS[0])
    before = target.drop_count("no_neighbour")
    rx0, _, drop0 = target.port_counts(DOWNLINKS[0])
    target.send(DOWNLINKS[0], frame(carrier(sid_t1(0)), in_port=DOWNLINKS[0]))
    target.verify_no_other_packets()
    rx1, _, drop1 = target.port_counts(DOWNLINKS[0])
    assert (target.drop_count("no_neighbour") - before, rx1 - rx0, drop1 - drop0) == (1, 1, 1)


def test_hop_limit_1_dropped(target):
    before = target.drop_count("hop_limit")
    target.send(DOWNLINKS[0], frame(carrier(sid_t1(0)), hlim=1, in_port=DOWNLINKS[0]))
    target.verify_no_other_packets()
    assert target.drop_count("hop_limit") == before + 1


def test_hop_limit_2_and_255_decremented(target):
    for hlim in (2, 255):
        pkt = frame(carrier(sid_t1(0), sid_t0(1)), hlim=hlim, in_port=DOWNLINKS[0])
        target.send(DOWNLINKS[0], pkt)
        exp = forwarded(pkt, UPLINKS[0])
        assert exp["IPv6"].hlim == hlim - 1
        target.verify_packet(exp, UPLINKS[0])
    target.verify_no_other_packets()


def test_flow_label_and_traffic_class_kept(target):
    pkt = frame(carrier(sid_t0(0), sid_dl(0)), tc=(10 << 2) | 2, fl=0xABCDE, in_port=UPLINKS[0])
    target.send(UPLINKS[0], pkt)
    exp = forwarded(pkt, DOWNLINKS[0], carrier(sid_dl(0)))
    assert (exp["IPv6"].tc, exp["IPv6"].fl) == ((10 << 2) | 2, 0xABCDE)
    target.verify_packet(exp, DOWNLINKS[0])
    target.verify_no_other_packets()
