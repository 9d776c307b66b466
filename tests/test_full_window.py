"""A sender whose window is full and whose ack request was lost (docs/nic.md,
"ACKs"): the receiver holds back what it got in order (under 16 KiB) and
the sender may send nothing that asks again. The tail probe, which fires on
a full window too, resends the request after two smoothed RTTs; without it
the sender waited for the retransmission timeout."""

from __future__ import annotations

from mrc_host.cc import Aimd
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.settings import HostConfig
from mrc_wire import packet as W
from sim_core.sim import Sim
from tests.support.app import Recorder
from tests.support.path_fabric import PathFabric

A_ADDR, B_ADDR = "fd00:0:0:1::0:0", "fd00:0:0:1::1:1"
MTU = 4096


class LostRequest:
    """A sends to B over the path fabric (10 µs each way) with a window of 4
    packets that stays so; the first copy of PSN `lose` is lost."""

    def __init__(self, lose: int):
        self.sim = Sim()
        self.fab = PathFabric(self.sim)
        self.app = Recorder(lambda: self.sim.now)
        self.done = self.app.at  # when each message was delivered
        self.lost: list[tuple[float, int, bool]] = []  # (time, PSN, ack request) of the copy lost
        self.lose = lose
        self.a = Endpoint(self.sim, A_ADDR, self.fab.nic(A_ADDR, self._from_a), HostConfig(mtu=MTU))
        self.b = Endpoint(self.sim, B_ADDR, self.fab.nic(B_ADDR), HostConfig(mtu=MTU), self.app)
        self.qp = self.a.connect(1, 2, B_ADDR, EvProfile.spread(planes=2, spines=4, slots=8),
                                 cc=Aimd(cwnd=4.0, max_cwnd=4.0))
        self.b.connect(2, 1, A_ADDR, EvProfile.spread(planes=2, spines=4, slots=8))

    def _from_a(self, raw: bytes) -> None:
        pkt = W.parse(raw)
        assert pkt is not None
        if pkt.is_data and pkt.psn == self.lose and not self.lost:
            self.lost.append((self.sim.now, pkt.psn, bool(pkt.ackreq)))
            return
        self.fab.send(self.a.addr_bytes, raw)


def run_lost_request() -> LostRequest:
    """A one-packet message at t=0 (its ACK at 20 µs gives an RTT of 20 µs),
    then at t=25 a message of 12 packets (PSNs 1-12): PSNs 1-4 fill the
    window, PSN 4 asks for an ACK and is lost; B holds PSNs 1-3 (12 KiB)."""
    s = LostRequest(lose=4)
    s.a.send_message(1, 64)

    def post() -> None:
        s.a.send_message(1, 12 * MTU)

    s.sim.call_at(25.0, post)
    s.sim.run(until=25.0)
    s.sim.run(until=10_000, stop=s.a.idle)
    return s


def test_a_lost_ack_request_on_a_full_window_is_resent_by_the_tail_probe_not_the_timeout():
    """The tick at t=100 (every rto/4 = 50 µs from t=0) is the first after two smoothed RTTs (40 µs)
    of silence since PSN 4 went out at 25: the tail probe resends PSN 4, B ACKs at once (a resend asks),
    and the window moves on: its ACK (cum 5) at 120 lets out PSNs 5-8, whose request's ACK at 140
    lets out 9-12, delivered at 150 µs. Before, the sender sat until the retransmission timeout (200 µs
    after 25: the tick at 250) and the message was delivered at 300 µs."""
    s = run_lost_request()
    assert s.lost == [(25.0, 4, True)], "the copy lost is the window-filling ack request"
    assert s.qp.srtt == 20.0
    assert s.done == [10.0, 150.0]
    assert (s.a.stats.tail_probes, s.a.stats.timeouts, s.a.stats.retransmits) == (1, 0, 1)
