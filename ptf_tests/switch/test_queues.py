"""Which queue a frame leaves from (DESIGN.md sections 4 and 7): control and
trimmed stubs take the high-priority queue, data the data queue. Read from
the queue really used: BMv2's priority queue in egress (port_tx_high), the
queue the model hands the frame to."""

import pytest

from ptf_tests.lib.fabric import DOWNLINKS, TOPO, UPLINKS, carrier, forwarded, frame, sid_dl, sid_t0, sid_t1

D = TOPO.dscp
knob = pytest.mark.bmv2_knob("a set queue depth (BMv2 Thrift register_write port_qdepth)")


def _counts(target, port):
    return target.high_queue_count(port), target.port_counts(port)[1]


def test_control_takes_the_high_queue(target):
    hi0, tx0 = _counts(target, UPLINKS[0])
    pkt = frame(carrier(sid_t1(0)), tc=D["control"] << 2, in_port=DOWNLINKS[0])
    target.send(DOWNLINKS[0], pkt)
    target.verify_packet(forwarded(pkt, UPLINKS[0]), UPLINKS[0])
    target.verify_no_other_packets()
    hi1, tx1 = _counts(target, UPLINKS[0])
    assert (hi1 - hi0, tx1 - tx0) == (1, 1)


@pytest.mark.parametrize("cls", ["data_trimmable", "data_no_trim", "data_trimmable_retx"])
def test_data_takes_the_data_queue(target, cls):
    hi0, tx0 = _counts(target, UPLINKS[1])
    for _ in range(3):
        pkt = frame(carrier(sid_t1(1)), tc=D[cls] << 2, in_port=DOWNLINKS[1])
        target.send(DOWNLINKS[1], pkt)
        target.verify_packet(forwarded(pkt, UPLINKS[1]), UPLINKS[1])
    target.verify_no_other_packets()
    hi1, tx1 = _counts(target, UPLINKS[1])
    assert (hi1 - hi0, tx1 - tx0) == (0, 3)


@knob
@pytest.mark.parametrize("port_kind", ["uplink", "host port"])
def test_trimmed_stub_takes_the_high_queue(target, port_kind):
    if port_kind == "uplink":
        out, dst, inp = UPLINKS[0], carrier(sid_t1(0), sid_t0(1), sid_dl(0)), DOWNLINKS[0]
    else:
        out, dst, inp = DOWNLINKS[1], carrier(sid_t0(0), sid_dl(1)), UPLINKS[0]
    target.set_qdepth(out, TOPO.congestion.trim_threshold)
    hi0, tx0 = _counts(target, out)
    trimmed0 = target.event_count("trimmed")
    out_frames = target.burst([(inp, bytes(frame(dst, tc=D["data_trimmable"] << 2, size=1000, in_port=inp)))])
    assert [(p, len(f)) for p, f in out_frames] == [(out, TOPO.congestion.trim_bytes)]
    hi1, tx1 = _counts(target, out)
    assert (hi1 - hi0, tx1 - tx0, target.event_count("trimmed") - trimmed0) == (1, 1, 1)
