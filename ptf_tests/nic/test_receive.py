"""NIC receive: decapsulation, CE copy, trimmed data to NACK, bad input;
the receiver the NIC runs for an offloaded QP (its SACK, exact)."""

import pytest
from scapy.layers.inet import TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from control_plane import nic_plan as N
from ptf_tests.lib import headers as H
from ptf_tests.lib.nic_fabric import (
    HOST_MAC,
    HOST_RX_QPN,
    ME,
    NIC_MAC,
    PEER,
    PEER_QPN,
    PROFILE,
    QPN,
    SAME_ROW_PEER,
    D,
    carrier,
    completion,
    encapsulated,
    from_fabric,
    host_data,
    split,
)

EV = PROFILE.home[3]  # plane 1
PLANE_PORT = N.plane_port(EV & 7)
CE = 3


def _to_host(frame: Ether, ecn: int | None = None) -> Ether:
    inner = IPv6(bytes(frame[IPv6].payload))
    if ecn is not None:
        inner.tc = (inner.tc & ~3) | ecn
    return Ether(bytes(frame)[:14] + bytes(inner))


# Decapsulation alone: data of the QP whose receiver is its host's (planned
# with offload=False), so the NIC answers nothing; the offloaded QP's SACK
# has its own tests below.
def test_decapsulated_to_host(nic_target):
    pkt = from_fabric(PEER, ME, EV, qpn=HOST_RX_QPN)
    nic_target.send(PLANE_PORT, pkt)
    nic_target.verify_packet(_to_host(pkt), N.HOST_PORT)
    nic_target.verify_no_other_packets()


def test_outer_ce_copied_to_ect_inner(nic_target):
    pkt = from_fabric(PEER, ME, EV, outer_ecn=CE, inner_ecn=2, qpn=HOST_RX_QPN)  # decapsulation alone
    nic_target.send(PLANE_PORT, pkt)
    nic_target.verify_packet(_to_host(pkt, ecn=CE), N.HOST_PORT)
    nic_target.verify_no_other_packets()


def test_outer_ce_not_copied_to_not_ect_inner(nic_target):
    pkt = from_fabric(PEER, ME, EV, outer_ecn=CE, inner_ecn=0, qpn=HOST_RX_QPN)  # decapsulation alone
    nic_target.send(PLANE_PORT, pkt)
    nic_target.verify_packet(_to_host(pkt), N.HOST_PORT)
    nic_target.verify_no_other_packets()


REVERSE = PROFILE.home[1]  # plane 1: the reverse EV the host wrote for data on EV's plane
# docs/nic.md "Choices": SETH's cc_type 0, the bitmap from cack_psn + 2; mpr: the 1,024-PSN window in
# units of 128 (mrc_wire/constants.py; docs/nic.md's "mpr 0" predates the receiver in the NIC)
SETH_CC_TYPE, SACK_OFFSET, MPR = 0, 2, 1024 // 128


def _expected_sack(data: Ether, cum: int, bitmap: int, m: int, ooo: int, rcvd: int) -> bytes:
    """The NIC's SACK for `data`, of the offloaded QP (docs/nic.md, "MRC 1.0 on the wire" and its
    "Choices"; the coalescing and window rules of nic_model/rx_track.py's docstring, the window's mpr of
    mrc_wire/constants.py RX_WINDOW): back to the sender on the QP's reverse EV of the data's plane, BTH
    opcode SACK to the sender's QP, its PSN cack_psn (cum - 1); SETH echoing the data's EV,
    ack_psn_offset the data's PSN from cack_psn, the bitmap of PSNs cum + 1 .. cum + 64, m the congestion
    mark; CC_STATE echoing TSETH's timestamp, the PSNs held out of order and the payload received in
    256-byte units."""
    m_ = H.Mrc(bytes(data[IPv6].payload))
    inner, cack = m_.ip, (cum - 1) & 0xFFFFFF
    d = (m_.bth.psn - cack) & 0xFFFFFF  # 24-bit PSN arithmetic, as a signed offset
    bth = H.BTH(opcode=H.OP_SACK, dqp=PEER_QPN, psn=cack)
    seth = H.SETH(m=m, ack_psn_offset=d - (1 << 24) if d >> 23 else d,
                  entropy=m_.ev, spdcid=QPN, dpdcid=PEER_QPN, cack_psn=cack, cc_type=SETH_CC_TYPE, mpr=MPR,
                  sack_offset=SACK_OFFSET, sack_bitmap=bitmap)
    cc = H.CCState(tx_timestamp=m_.hdrs["TSETH"].tx_timestamp, ooo_count=ooo, rcvd_bytes=rcvd)
    n = 8 + 12 + len(bytes(seth)) + len(bytes(cc)) + 4
    sack = (IPv6(src=inner.dst, dst=inner.src, tc=D["control"] << 2, fl=0, hlim=64, plen=n)
            / UDP(sport=0, dport=H.ROCE_PORT, len=n, chksum=0) / bth / seth / cc / H.ICRC)
    return bytes(encapsulated(IPv6(bytes(sack)), REVERSE, ME, PEER, D["control"], 0))


@pytest.mark.bmv2_knob("the receiver's reverse EVs (BMv2 Thrift register_write rx_reverse)")
def test_offloaded_data_goes_to_the_host_and_is_sacked_on_the_reverse_ev(nic_target):
    """QP 1's receiver is the NIC's: PSN 9 (1,000 bytes, asking for an ACK) arrives with PSNs 0-8
    missing: to the host, and SACKed at once (the ack-request bit) on plane 1's reverse EV: cum 0,
    bit 8 of the bitmap (PSN 9), one PSN held, 1,000 bytes (3 units of 256) received."""
    nic_target.set_reverse(QPN, 1, REVERSE)
    pkt = from_fabric(PEER, ME, EV, payload=bytes(1000))
    nic_target.send(PLANE_PORT, pkt)
    nic_target.verify_packet(_expected_sack(pkt, 0, 1 << 8, 0, 1, 3), N.plane_port(REVERSE & 7))
    nic_target.verify_packet(_to_host(pkt), N.HOST_PORT)
    nic_target.verify_no_other_packets()


@pytest.mark.bmv2_knob("the receiver's reverse EVs (BMv2 Thrift register_write rx_reverse)")
def test_outer_ce_is_echoed_in_the_offloaded_qps_sack(nic_target):
    """CE copied to the inner header of QP 1's data: the NIC's SACK carries SETH m=1 (skip once)."""
    nic_target.set_reverse(QPN, 1, REVERSE)
    pkt = from_fabric(PEER, ME, EV, outer_ecn=CE, inner_ecn=2, payload=bytes(1000))
    nic_target.send(PLANE_PORT, pkt)
    nic_target.verify_packet(_expected_sack(pkt, 0, 1 << 8, 1, 1, 3), N.plane_port(REVERSE & 7))
    nic_target.verify_packet(_to_host(pkt, ecn=CE), N.HOST_PORT)
    nic_target.verify_no_other_packets()


def _expected_nack(trimmed: Ether, reason: int) -> bytes:
    """DESIGN.md section 5, step 2, in MRC 1.0's headers: back to the sender
    on the same EV, the BTH's opcode NACK, its QP the sender's, no flag;
    NETH echoing the EV, the PSN and the TSETH timestamp; the ICRC."""
    m = H.Mrc(bytes(trimmed[IPv6].payload))
    inner = m.ip
    bth = H.BTH(bytes(m.bth))
    bth.opcode, bth.dqp, bth.a, bth.rtx, bth.ts = H.OP_NACK, PEER_QPN, 0, 0, 0
    neth = H.NETH(nack_reason=reason, entropy=m.ev, spdcid=m.bth.dqp & 0xFFFF, dpdcid=PEER_QPN & 0xFFFF,
                  nack_psn=m.bth.psn, tx_timestamp=m.hdrs["TSETH"].tx_timestamp)
    nack = (IPv6(src=inner.dst, dst=inner.src, tc=D["control"] << 2, fl=inner.fl, hlim=64, plen=44)
            / UDP(sport=m.sport, dport=H.ROCE_PORT, len=44, chksum=0) / bth / neth / H.ICRC)
    return bytes(encapsulated(IPv6(bytes(nack)), m.ev, ME, PEER, D["control"], 0))


def _trimmed(dscp: int) -> Ether:
    whole = from_fabric(PEER, ME, EV, outer_dscp=dscp, payload=bytes(1000))
    return Ether(bytes(whole)[:256])  # what a switch leaves of it


def test_trimmed_data_becomes_exact_nack_on_same_plane(nic_target):
    stub = _trimmed(D["trimmed"])
    nic_target.send(PLANE_PORT, stub)
    nack = _expected_nack(stub, H.NACK_TRIMMED)
    assert len(nack) == 14 + 40 + 40 + 8 + 12 + 20 + 4
    assert IPv6(nack[14:]).dst == carrier(EV & 7, ME, PEER, (EV >> 3) & 0xFF)
    nic_target.verify_packet(nack, PLANE_PORT)
    notice = bytearray(bytes(_to_host(stub)))
    notice[14] = (notice[14] & 0xF0) | (D["trimmed"] >> 2)
    notice[15] = ((D["trimmed"] & 3) << 6) | (notice[15] & 0x3F)
    nic_target.verify_packet(bytes(notice), N.HOST_PORT)
    nic_target.verify_no_other_packets()


def test_lasthop_trim_nack_reason(nic_target):
    stub = _trimmed(D["trimmed_lasthop"])
    nic_target.send(PLANE_PORT, stub)
    nic_target.verify_packet(_expected_nack(stub, H.NACK_TRIMMED_LASTHOP), PLANE_PORT)
    nic_target.verify_packet(_host_notice(stub, D["trimmed_lasthop"]), N.HOST_PORT)
    nic_target.verify_no_other_packets()


def _host_notice(stub: Ether, dscp: int) -> bytes:
    notice = bytearray(bytes(_to_host(stub)))
    notice[14] = (notice[14] & 0xF0) | (dscp >> 2)
    notice[15] = ((dscp & 3) << 6) | (notice[15] & 0x3F)
    return bytes(notice)


def _dropped(nic_target, port: int, frame, reason: str) -> None:
    before = nic_target.drop_count(reason)
    nic_target.send(port, frame)
    nic_target.verify_no_other_packets()
    assert nic_target.drop_count(reason) == before + 1


def test_not_for_this_nic_dropped(nic_target):
    _dropped(nic_target, PLANE_PORT, from_fabric(PEER, SAME_ROW_PEER, EV), "not_for_me")


def test_not_encapsulated_dropped(nic_target):
    pkt = from_fabric(PEER, ME, EV)
    _dropped(nic_target, PLANE_PORT, Ether(bytes(pkt)[:14]) / IPv6(bytes(pkt[IPv6].payload)), "not_encap")


def test_wrong_inner_protocol_dropped(nic_target):
    pkt = from_fabric(PEER, ME, EV)
    outer = IPv6(bytes(pkt[IPv6])[:40])
    inner = IPv6(src=pkt[IPv6].payload.src, dst=pkt[IPv6].payload.dst, nh=6) / TCP() / bytes(20)
    outer.plen = len(bytes(inner))
    _dropped(nic_target, PLANE_PORT, Ether(bytes(pkt)[:14] + bytes(outer)[:40] + bytes(inner)), "bad_inner")


def test_unknown_qp_from_host_dropped(nic_target):
    _dropped(nic_target, N.HOST_PORT, host_data(PEER, qpn=77), "unknown_qp")


def test_non_mrc_from_host_dropped(nic_target):
    frame = (
        Ether(src=HOST_MAC, dst=NIC_MAC) / IPv6(src="fd00:0:0:1::", dst="fd00:0:0:1::1:1") / UDP(dport=53) / bytes(30)
    )
    _dropped(nic_target, N.HOST_PORT, frame, "not_mrc")


def test_truncated_frame_dropped_as_malformed(nic_target):
    cut = bytes(from_fabric(PEER, ME, EV))[:14 + 40 + 20]
    if not nic_target.counts_cut_frames:
        # SWX: PNA gives the parser no frame length and SWX's extract checks
        # none (DPDK 24.11 lib/pipeline: __instr_hdr_extract_many_exec), so the
        # headers read on past the frame's end, into whatever the buffer held:
        # the frame is not counted malformed, and what it becomes depends on
        # those bytes (docs/swx.md).
        before = nic_target.drop_count("malformed")
        nic_target.burst([(PLANE_PORT, cut)])  # settled; what it made is not this rule's to check
        assert nic_target.drop_count("malformed") == before
    else:
        _dropped(nic_target, PLANE_PORT, cut, "malformed")
    # Nothing broke: the next good packet is sent as usual, on the EV the
    # rotation is at (wherever a remote device's rotation stands).
    pkt = host_data(PEER)
    [(port, frame)], [done] = split(nic_target.burst([(N.HOST_PORT, bytes(pkt))]))
    out = Ether(frame)
    ev = (out[UDP].sport << 16) | (out[IPv6].payload.fl & 0xFFFF)
    assert ev in PROFILE.home and port == N.plane_port(ev & 7)
    assert frame == bytes(encapsulated(pkt[IPv6], ev, ME, PEER, D["data_trimmable"], 2))
    assert done == completion(pkt, ev)
