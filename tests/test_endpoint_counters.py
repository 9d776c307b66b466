"""The receiver's counters that reports are built from: each fresh data
packet lands in exactly one bucket of the reorder histogram (a survivor
of the mutation run: `+= 1` made `= 1` went unnoticed)."""

from tests.test_endpoint import Pair, payload


def test_every_fresh_data_packet_is_counted_once_in_the_reorder_histogram():
    p = Pair()
    p.a.send_message(1, payload(8 * 1024 + 1))  # 9 packets of at most 1,024 B
    p.a.send_message(1, payload(3000, seed=2))  # 3 more
    p.run()
    rx = p.b.stats
    assert len(p.got) == 2 and rx.duplicates == 0
    assert sum(rx.reorder) == 12 and rx.rx_bytes == 8 * 1024 + 1 + 3000
