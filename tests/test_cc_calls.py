"""What the endpoint tells its congestion control (mrc_host/cc.py's
interface), signal by signal: A alone (tests/test_endpoint_signals.py's
Solo: MTU 1024, RTO 200 µs, 8 slots), a recording window in place of the
profile, the peer's packets written by hand."""

from __future__ import annotations

from mrc_host.ev import EvState
from mrc_host.nscc import Nscc, NsccConfig, defaults
from mrc_wire import packet as W
from mrc_wire.constants import OP_SACK, SETH_M_SKIP_ONCE
from tests.test_endpoint_signals import Solo


class Recorder:
    def __init__(self, window: int = 100):
        self.calls: list[tuple] = []
        self.w = window

    def on_ack(self, now, acked, rtt, ecn, inflight):
        self.calls.append(("ack", now, acked, rtt, ecn, inflight))

    def on_nack(self, now, nacked, rtt, inflight):
        self.calls.append(("nack", now, nacked, rtt, inflight))

    def on_timeout(self, now, lost):
        self.calls.append(("timeout", now, lost))

    def window(self):
        return self.w


def ecn_ack(s: Solo, t: float, psn: int, ev: int, cum: int) -> None:
    s._deliver(t, OP_SACK, psn, W.sack_ext(ev, cum, psn, 0, m=SETH_M_SKIP_ONCE))


def test_an_ack_reports_the_bytes_it_acknowledges_its_rtt_and_what_is_left_in_flight():
    """4 packets sent at 0; the ACK of PSN 1 with cumulative PSN 2 at t=10 acknowledges 2 x 1024 bytes,
    RTT 10, 2 x 1024 still in flight; a CE echo of PSN 2 at 12 (cum 3): 1024 bytes, RTT 12, ECN."""
    rec = Recorder()
    s = Solo(rec)
    s.a.send_message(1, 4 * 1024)
    s.ack(10, 1, s.home[1], cum=2)
    ecn_ack(s, 12, 2, s.home[2], cum=3)
    s.sim.run(until=12)
    assert rec.calls == [("ack", 10, 2048, 10, False, 2048), ("ack", 12, 1024, 12, True, 1024)]


def test_a_nack_reports_the_trimmed_bytes_and_a_timeout_the_lost_packet():
    """A trim of PSN 0 at t=10: 1024 bytes, RTT 10, 4 x 1024 in flight (the cut copy is resent, still
    outstanding). PSNs 1-3 are never acknowledged: the 50 µs timer finds them past the 200 µs RTO at 200."""
    rec = Recorder()
    s = Solo(rec)
    s.a.send_message(1, 4 * 1024)
    s.nack(10, 0, s.home[0])
    s.sim.run(until=200)
    assert rec.calls[0] == ("nack", 10, 1024, 10, 4096)
    assert rec.calls[1:] == [("timeout", 200, 1024)] * 3


def test_the_window_caps_what_is_in_flight():
    s = Solo(Recorder(window=3))
    s.a.send_message(1, 8 * 1024)
    assert len(s.data()) == 3


def test_with_nscc_ecn_at_low_delay_skips_the_ev_and_leaves_the_window():
    """NSCC at 100 Gb/s, base RTT 10 µs: a CE echo with an RTT of 10 (no queueing) leaves the window as it
    was and the EV skips a rotation (the endpoint's ECN event)."""
    cc = Nscc(NsccConfig(**defaults(10.0, 100.0, 1024)), 100.0, 1024, cwnd=8 * 1024)
    s = Solo(cc)
    s.a.send_message(1, 4 * 1024)
    ecn_ack(s, 10, 0, s.home[0], cum=1)
    s.sim.run(until=10)
    assert cc.cwnd == 8 * 1024 and cc.counts["ecn_low_delay"] == 1
    assert s.prof.state[s.home[0]] is EvState.SKIP
