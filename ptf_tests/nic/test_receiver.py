"""The MRC receiver in the NIC (docs/nic.md, "The receiver in the
pipeline"): data into the fabric port, and out, with no host involved, the
SACKs and NACKs its rules call for, decoded by mrc_wire.dissect and held
to values worked out here from the rules (not from the model); the host
gets each new packet once. On every target: the reference model, BMv2.

QP 1 of NIC 0 (offloaded: the plan's default), its reverse EV on every
plane set first, so each SACK's path is known."""

from __future__ import annotations

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import nic_plan as N
from mrc_wire import dissect
from mrc_wire.constants import ACK_BYTES, NACK_PSN_OOR_WINDOW, OP_NACK, OP_SACK, RX_WINDOW
from ptf_tests.lib import headers as H
from ptf_tests.lib.nic_fabric import ME, PEER, PEER_QPN, PROFILE, QPN, TOPO, carrier, encapsulated, from_fabric

# The reverse EVs are set first: on a remote device that needs a register write it cannot do.
pytestmark = pytest.mark.bmv2_knob("the receiver's reverse EVs (BMv2 Thrift register_write rx_reverse)")

EV = PROFILE.home[3]  # data arrives on plane 1
PLANE = EV & 7
REVERSE = PROFILE.home[1]  # plane 1's reverse EV: every SACK for data on plane 1 leaves on it
assert REVERSE & 7 == PLANE
MTU = 4096


def _start(t) -> None:
    for p in range(TOPO.planes):
        t.set_reverse(QPN, p, REVERSE if p == PLANE else PROFILE.home[p])


def _data(psn: int, *, ackreq: int = 0, size: int = 200, ce: bool = False) -> bytes:
    return bytes(from_fabric(PEER, ME, EV, psn=psn, ackreq=ackreq, payload=bytes(size), outer_ecn=3 if ce else 0))


def _send(t, *frames: bytes) -> tuple[list[dict], list[int]]:
    """(what left on plane ports, decoded; PSNs the host got)."""
    out = t.burst([(N.plane_port(PLANE), f) for f in frames])
    fabric = [dissect.decode(dissect.LINK_ETHERNET, f) for p, f in out if p != N.HOST_PORT]
    host = [dissect.decode(dissect.LINK_ETHERNET, f)["bth"]["psn"] for p, f in out if p == N.HOST_PORT]
    return fabric, host


def _sack(cack: int, ack_off: int, bitmap: int = 0, *, m: int = 0, ooo: int = 0, rcvd: int = 0) -> dict:
    """The SETH and CC_STATE fields the rules give (the rest fixed by docs/nic.md)."""
    return {"seth": {"htype": 0, "nxt": 0, "m": m, "pr": 0, "ack_psn_offset": ack_off, "entropy": EV,
                     "spdcid": QPN, "dpdcid": PEER_QPN, "cack_psn": cack & 0xFFFFFF, "cc_type": 0, "cc_fl": 0,
                     "mpr": RX_WINDOW // 128, "sack_offset": 2, "sack_bitmap": bitmap},
            "cc_state": {"tx_timestamp": 0x2A5, "ooo_count": ooo, "r_c": 0, "rcv_cwnd_pen": 0, "rcvd_bytes": rcvd}}


def _fields(sack: dict) -> dict:
    return {"seth": sack["seth"], "cc_state": sack["cc_state"]}


def test_a_sack_per_ack_bytes_of_in_order_payload(nic_target):
    _start(nic_target)
    n = ACK_BYTES // MTU  # 4 packets of 4 KiB
    fabric, host = _send(nic_target, *[_data(psn, size=MTU) for psn in range(n)])
    assert host == list(range(n))
    [sack] = fabric
    assert sack["bth"]["opcode"] == OP_SACK and sack["bth"]["dqp"] == PEER_QPN and sack["bth"]["psn"] == n - 1
    assert _fields(sack) == _sack(n - 1, 0, rcvd=n * MTU // 256)
    # On plane 1's reverse EV, in the control class: the EV the data came on
    # (it became the reverse EV when its first packet got through).
    assert sack["ev"] == EV and sack["outer"]["dscp"] == 46


def test_the_sack_leaves_on_the_reverse_ev_as_its_frame_says(nic_target):
    _start(nic_target)
    out = nic_target.burst([(N.plane_port(PLANE), _data(0, ackreq=1))])
    [(port, frame)] = [(p, f) for p, f in out if p != N.HOST_PORT]
    outer = Ether(frame)[IPv6]
    assert port == N.plane_port(REVERSE & 7) and outer.dst == carrier(REVERSE & 7, ME, PEER, (REVERSE >> 3) & 0xFF)
    sent = IPv6(bytes(Ether(_data(0))[IPv6].payload))
    inner = IPv6(bytes(outer.payload))
    assert (inner.src, inner.dst, inner.tc, inner.hlim) == (sent.dst, sent.src, 46 << 2, 64)  # back to the sender
    assert len(frame) == 14 + 40 + 40 + 8 + 12 + 28 + 8 + 4  # cut to the SACK's headers


def test_the_ack_request_bit_is_answered_at_once(nic_target):
    _start(nic_target)
    fabric, host = _send(nic_target, _data(0, ackreq=1))
    assert host == [0] and [_fields(s) for s in fabric] == [_sack(0, 0, rcvd=0)]


def test_a_duplicate_is_dropped_and_answered(nic_target):
    _start(nic_target)
    fabric, host = _send(nic_target, _data(0), _data(0))
    assert host == [0]  # the host gets each new packet once
    assert [_fields(s) for s in fabric] == [_sack(0, 0, rcvd=0)]


def test_a_duplicate_inside_the_window_is_dropped_and_answered(nic_target):
    _start(nic_target)
    # PSN 2 held out of order, then again: its bit is set, so a duplicate
    # (not behind cum: only its bit tells), answered with the bitmap showing it.
    fabric, host = _send(nic_target, _data(0), _data(2), _data(2))
    assert host == [0, 2]
    assert [_fields(s) for s in fabric] == [_sack(0, 2, 0b1, ooo=1, rcvd=400 >> 8)]


def test_ce_is_echoed_at_once_as_the_skip_once_mark(nic_target):
    _start(nic_target)
    fabric, host = _send(nic_target, _data(0, ce=True))
    assert host == [0] and [_fields(s) for s in fabric] == [_sack(0, 0, m=1)]


def test_a_hole_opening_past_the_bitmap_and_closing(nic_target):
    _start(nic_target)
    # PSN 0 in order (held), 70 opens a hole past the 64-bit bitmap (at once),
    # 1 closes the first hole (at once): cum 2, PSN 70 still held.
    fabric, host = _send(nic_target, _data(0), _data(70), _data(1))
    assert host == [0, 70, 1]
    assert [_fields(s) for s in fabric] == [_sack(0, 70, ooo=1, rcvd=400 >> 8), _sack(1, 0, ooo=1, rcvd=600 >> 8)]


def test_reordering_past_the_bitmap_shows_in_the_next_sacks_bitmap(nic_target):
    _start(nic_target)
    # 2 and 3 held out of order, then the ack-request bit on 5: bitmap bit k
    # is PSN cack + 2 + k, so 2, 3 and 5 are bits 0, 1 and 3 (cack 0).
    fabric, _ = _send(nic_target, _data(0), _data(2), _data(3), _data(5, ackreq=1))
    assert [_fields(s) for s in fabric] == [_sack(0, 5, 0b1011, ooo=3, rcvd=800 >> 8)]


def test_the_cumulative_psn_moves_two_words_a_packet_and_catches_up(nic_target):
    _start(nic_target)
    # 1..130 held (PSN 0 missing), then 0 fills the hole: two advance steps
    # take cum over words 0 and 1 to 128; 128-130 stay held (cack 127,
    # bitmap from 129: bits 0 and 1). The next packet's steps catch up.
    frames = [_data(psn) for psn in range(1, 131)]
    _send(nic_target, *frames)
    fabric, _ = _send(nic_target, _data(0))
    assert [_fields(s) for s in fabric] == [_sack(127, -127, 0b11, ooo=3, rcvd=131 * 200 >> 8)]
    fabric, _ = _send(nic_target, _data(132, ackreq=1))
    assert [_fields(s) for s in fabric] == [_sack(130, 2, 0b1, ooo=1, rcvd=132 * 200 >> 8)]


def test_beyond_the_window_is_a_nack_and_nothing_for_the_host(nic_target):
    _start(nic_target)
    fabric, host = _send(nic_target, _data(RX_WINDOW - 1, ackreq=1), _data(RX_WINDOW))
    assert host == [RX_WINDOW - 1]
    nack = fabric[-1]
    assert nack["bth"]["opcode"] == OP_NACK and nack["ev"] == EV  # plane 1's reverse EV since PSN 1023
    assert (nack["neth"]["nack_reason"], nack["neth"]["nack_psn"], nack["neth"]["entropy"]) == (
        NACK_PSN_OOR_WINDOW, RX_WINDOW, EV)


def test_a_probe_is_answered_by_the_nic_with_the_qps_state(nic_target):
    _start(nic_target)
    _send(nic_target, _data(0), _data(3))
    inner = IPv6(bytes(Ether(_data(0))[IPv6].payload))
    ext = H.PETH(probe_id=0x9001)
    pkt = (IPv6(src=inner.src, dst=inner.dst, tc=46 << 2, fl=EV & 0xFFFF, hlim=64)
           / UDP(sport=EV >> 16, dport=H.ROCE_PORT, chksum=0) / H.BTH(opcode=H.OP_PROBE, dqp=QPN, psn=0)
           / ext / H.ICRC)
    frame = bytes(encapsulated(IPv6(bytes(pkt)), EV, PEER, ME, 46, 0))
    fabric, host = _send(nic_target, frame)
    assert host == []
    [answer] = fabric
    assert answer["seth"]["pr"] == 1 and answer["seth"]["ack_psn_offset"] & 0xFFFF == 0x9001
    assert (answer["seth"]["entropy"], answer["seth"]["cack_psn"], answer["seth"]["sack_bitmap"]) == (EV, 0, 0b10)
    assert answer["ev"] == EV and answer["cc_state"]["ooo_count"] == 1  # the data on EV made it plane 1's reverse EV
