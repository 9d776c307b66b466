"""Endpoint details (and the reorder histogram, now its NIC's receiver's:
NicModel.rx.reorder) that mutants of the mutation run (bench/mutation.py)
changed without a test noticing: the reorder histogram's counts, SACK
bits after a long jump, the reverse EV set refreshed by ACKs, opcodes of
a message's packets, the resend count of a copy."""

from mrc_host.cc import Aimd
from mrc_wire import packet as W
from mrc_wire.constants import OP_WRITE_FIRST, OP_WRITE_LAST, OP_WRITE_MIDDLE, OP_WRITE_ONLY
from tests.test_endpoint import Pair, payload
from tests.test_endpoint_signals import Solo


def test_every_fresh_data_packet_is_counted_once_in_the_reorder_histogram():
    p = Pair()
    p.a.send_message(1, payload(8 * 1024 + 1))  # 9 packets of at most 1,024 B
    p.a.send_message(1, payload(3000, seed=2))  # 3 more
    p.run()
    rx = p.fab.front(p.b).rx  # B's NIC's receive registers
    assert len(p.got) == 2 and rx.duplicates == 0
    assert sum(rx.reorder) == 12 and p.b.stats.rx_bytes == 8 * 1024 + 1 + 3000


def test_a_sack_after_a_jump_of_64_psns_or_more_takes_out_every_bit_it_reports():
    # The cumulative point moves 70 PSNs past the last SACK: none of the old
    # bitmap survives the shift, so every bit of the new one is news, bit 0
    # (PSN cum + 1) included (a survivor of the mutation run cleared it).
    s = Solo(cc=Aimd(cwnd=128, max_cwnd=256))
    s.a.send_message(1, 100 * 1024)
    assert len(s.qp.inflight) == 100
    s.ack(10, 73, s.home[73 % 8], cum=70, bitmap=0b101)  # 73 acked, 71 too by the bitmap; 70 and 72 not
    s.sim.run(until=11)
    assert {70, 72} <= set(s.qp.inflight) and not {71, 73} & set(s.qp.inflight)
    assert min(s.qp.inflight) == 70 and len(s.qp.inflight) == 100 - 70 - 2


def test_an_ack_makes_the_ev_it_echoes_the_reverse_ev_of_its_plane():
    # Our packet got through on that EV: the peer's control packets may use
    # it back (a survivor of the mutation run never updated the set).
    s = Solo()
    s.a.send_message(1, 4 * 1024)
    assert s.qp.paths.reverse == {0: s.home[0], 1: s.home[1]}  # one home EV per plane to start
    s.ack(10, 2, s.home[2], cum=3)
    s.sim.run(until=11)
    assert s.qp.paths.reverse == {0: s.home[2], 1: s.home[1]} and s.qp.paths.fresh == {0: 10, 1: 0.0}


def test_opcodes_mark_a_messages_only_first_middle_and_last_packets():
    s = Solo(cc=Aimd(cwnd=16, max_cwnd=32))
    s.a.send_message(1, 1000)  # one packet
    s.a.send_message(1, 3 * 1024)  # three
    ops = [p.opcode for p in map(W.parse, s.frames) if p.is_data]
    assert ops == [OP_WRITE_ONLY, OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST]


def test_a_resent_copy_counts_the_copies_sent_before_it():
    s = Solo()
    s.a.send_message(1, 4 * 1024)
    s.nack(10, 2, s.home[2])
    s.sim.run(until=11)
    first_resend = s.qp.inflight[2]
    s.nack(20, 2, first_resend.ev)
    s.sim.run(until=21)
    assert (first_resend.retx, s.qp.inflight[2].retx, s.qp.inflight[1].retx) == (1, 2, 0)
