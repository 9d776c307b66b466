"""The exactly-once ledger (fabric_sim/net/ledger.py) and the driver's own
count of parts delivered twice: each catches what it claims to, so a
fault test's `exactly_once` cannot pass with either deleted."""

from __future__ import annotations

import pytest

from fabric_sim.net.ledger import Ledger
from fabric_sim.runner.driver import Driver
from fabric_sim.runner.run import run
from fabric_sim.scenario.workload import Message
from fabric_sim.transports.qps import QpLink
from nic_model.rx_track import DUPLICATE, NEW, RxTrack
from tests.sim.helpers import make


def test_ledger_counts_bytes_placed_twice_never_placed_and_never_posted():
    led = Ledger()
    led.post(7, 1, 3000)
    led.post(7, 2, 1000)
    led.place(7, 1, 0, 1024)
    led.place(7, 1, 1024, 1024)
    led.place(7, 1, 1000, 100)  # 24 B inside the first range, 76 B inside the second
    led.place(7, 1, 2048, 952)
    led.place(9, 1, 0, 10)  # a QP that was never posted to
    v = led.check()
    assert (v.posted, v.placed, v.duplicate, v.missing, v.stray) == (4000, 3110, 100, 1000, 10)
    assert not v.exactly_once and len(v.problems) == 3


def test_ledger_passes_a_message_placed_once_out_of_order():
    led = Ledger()
    led.post(3, 5, 2500)
    for off in (2048, 0, 1024):
        led.place(3, 5, off, min(1024, 2500 - off))
    v = led.check()
    assert v.exactly_once and v.placed == v.posted == 2500


def test_ledger_refuses_a_message_posted_twice_and_counts_bytes_past_its_end():
    led = Ledger()
    led.post(1, 1, 100)
    with pytest.raises(ValueError, match="posted twice"):
        led.post(1, 1, 100)
    led.place(1, 1, 0, 150)
    v = led.check()
    assert (v.duplicate, v.missing, v.stray) == (0, 0, 50)


class _Ep:
    def __init__(self):
        self.ids = 0

    def send_message(self, qpn, size):
        self.ids += 1
        return self.ids


def test_driver_counts_a_part_delivered_twice_and_completes_the_message_once():
    m = Message(id=0, src=0, dst=1, size=4096, start=0.0)
    link = QpLink(0, 1, 1, 2, None, None, 0)
    drv = Driver([m], {(0, 1): [link]}, lambda n: _Ep(), lambda: 5.0)
    drv.post(m)
    assert drv.ledger.posted == {(2, 1): 4096}
    drv.delivered(2, 1, None)
    drv.delivered(2, 1, None)
    assert (drv.done, drv.twice, m.done_at) == (1, 1, 5.0)


def test_a_receiver_that_forgets_duplicates_is_caught_by_the_ledger(monkeypatch):
    # Heavy loss (ACKs too) makes the senders resend copies that had
    # arrived. With duplicate detection broken such a copy is placed again
    # and counts towards its message's length: the message "completes"
    # short of bytes it never got. The driver sees nothing; the ledger does.
    mark = RxTrack._mark  # the NIC's receiver (nic_model/rx_track.py)

    def forgetful(self, q, psn, d):
        kind = mark(self, q, psn, d)
        return NEW if kind == DUPLICATE else kind

    monkeypatch.setattr(RxTrack, "_mark", forgetful)
    sc = make({"pattern": "permutation", "message_bytes": 200_000}, [{"name": "mrc", "kind": "mrc"}],
              events=[{"at_us": 0, "nic_rx_loss": {"rate": 0.2}}])
    r = run(sc, sc.transports[0])
    assert r.complete and r.events["delivered_twice"] == 0
    assert r.ledger.duplicate > 0 and r.ledger.missing > 0 and not r.ledger.exactly_once
