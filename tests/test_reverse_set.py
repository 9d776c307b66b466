"""A QP's reverse EV set (docs/nic.md, "Reverse EV set"): arriving data
confirms its path for the plane's ACKs (in the host's set and in its NIC's
rx_reverse registers, where the NIC's SACKs take it); at most one
reverse-set probe per probe interval, of the stale plane heard from least
recently; the starting set trusted from the connection. A alone on its
NIC (tests/support/nic_front.py), every frame its NIC emits captured;
rto 200 µs (ticks every 50 µs), probe interval 100 µs."""

from __future__ import annotations

from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_wire import packet as W
from mrc_wire.constants import OP_PROBE, OP_SACK, OP_WRITE_ONLY, ev_plane
from sim_core.sim import Sim
from tests.support.nic_front import NicFront

A_ADDR, B_ADDR = "fd00:0:0:1::0:0", "fd00:0:0:1::1:1"
DATA, CONTROL = 8, 46


class Receiver:
    """A on `planes` planes, its frames captured with their send times."""

    def __init__(self, planes: int = 2, ev_state: bool = True):
        self.sim = Sim()
        self.sent: list[tuple[float, W.Mrc]] = []
        self.nic = NicFront(A_ADDR, self._emit)
        self.a = Endpoint(self.sim, A_ADDR, self.nic.model)
        self.prof = EvProfile.spread(planes=planes, spines=4, slots=4 * planes)
        self.prof.enabled = ev_state
        self.home = list(self.prof.home)
        self.qp = self.a.connect(1, 2, B_ADDR, self.prof)

    def _emit(self, raw: bytes) -> None:
        pkt = W.parse(raw)
        assert pkt is not None
        self.sent.append((self.sim.now, pkt))

    def data(self, t: float, psn: int, ev: int) -> None:
        """B's data packet `psn` on `ev`, asking for an ACK, arriving at t."""
        raw = W.build(self.qp.peer_addr, self.a.addr_bytes, DATA, 2, ev, OP_WRITE_ONLY, 1, psn,
                      W.data_ext(psn + 1, 0, 64), bytes(64), ackreq=1)
        self.sim.call_at(t, self.nic.receive, raw)

    def control(self, t: float, op: int, psn: int, ext: bytes) -> None:
        raw = W.build(self.qp.peer_addr, self.a.addr_bytes, CONTROL, 0, 0, op, 1, psn, ext)
        self.sim.call_at(t, self.nic.receive, raw)

    def stream(self, packets: int, planes: tuple[int, ...] = (0,)) -> None:
        """A data packet every 20 µs from t=0, on the home EVs of `planes` in
        turn: the other planes get no data."""
        evs = [e for e in self.home if ev_plane(e) in planes]
        for i in range(packets):
            self.data(20.0 * i, i, evs[i % len(evs)])

    def probes(self) -> list[tuple[float, int]]:
        """(time, plane) of each probe A sent (not replies)."""
        return [(t, ev_plane(p.ev)) for t, p in self.sent if p.opcode == OP_PROBE]

    def acks(self) -> list[tuple[float, int]]:
        """(time, EV it travelled on) of each SACK A's NIC sent (not probe answers)."""
        return [(t, p.ev) for t, p in self.sent if p.opcode == OP_SACK and not p.probe_response]


def test_arriving_data_makes_its_ev_the_planes_reverse_ev_after_its_own_ack():
    """B's data on its own EVs (of planes 1, 1, 0) at t=10, 20, 30: the ACK of the first goes on plane 1's
    starting reverse EV (home[1]); the arrival then makes its EV plane 1's reverse EV, confirmed at 10,
    so the second's ACK travels on the first's path, and the third's on plane 0's starting EV."""
    s = Receiver()
    b = EvProfile.spread(planes=2, spines=4, slots=8, salt=4).home  # B's EVs: other values than A's
    s.data(10, 0, b[1])
    s.data(20, 1, b[3])
    s.data(30, 2, b[0])
    s.sim.run(until=40)
    assert s.acks() == [(10.0, s.home[1]), (20.0, b[1]), (30.0, s.home[0])]
    assert s.qp.paths.reverse == {0: b[0], 1: b[3]} and s.qp.paths.fresh == {0: 30.0, 1: 20.0}


def test_without_ev_state_arriving_data_leaves_the_reverse_set_alone():
    """EV state off (oblivious spraying; the single-path baseline, whose routing sets its control path):
    the reverse set stays as probes and ACKs make it."""
    s = Receiver(ev_state=False)
    b = EvProfile.spread(planes=2, spines=4, slots=8, salt=4).home
    s.data(10, 0, b[1])
    s.data(20, 1, b[3])
    s.sim.run(until=40)
    assert s.acks() == [(10.0, s.home[1]), (20.0, s.home[1])]
    assert s.qp.paths.reverse == {0: s.home[0], 1: s.home[1]} and s.qp.paths.fresh == {0: 0.0, 1: 0.0}


def test_a_pure_receiver_probes_one_stale_plane_per_interval():
    """4 planes, data on plane 0 only until t=380 and none going out: plane 0 stays confirmed by its
    data, planes 1-3 (trusted since the connection at t=0) go stale. One probe per probe interval for
    the QP, not one per stale plane, the plane heard from least recently first: planes 1, 2, 3 at
    t=100, 200, 300 (ties in plane order), then plane 1 again at 400; the ticks between probe nothing."""
    s = Receiver(planes=4)
    s.stream(20)
    s.sim.run(until=450)
    assert s.probes() == [(100.0, 1), (200.0, 2), (300.0, 3), (400.0, 1)]


def test_a_reply_confirms_its_plane_and_an_unanswered_plane_waits_its_turn():
    """4 planes, data on planes 0 and 1 only: the probe of plane 2 at t=100 is answered at 110, which
    makes its EV plane 2's reverse EV, confirmed at 110; at 200 plane 2 is fresh (90 µs), so plane 3 is
    probed, and goes unanswered. At 300 both are stale: plane 2, heard from at 110, goes before plane 3,
    probed at 200 (a plane whose probes go unanswered does not take every turn)."""
    s = Receiver(planes=4)
    s.stream(16, planes=(0, 1))
    s.sim.run(until=100)
    [(_, p2)] = [(t, p) for t, p in s.sent if p.opcode == OP_PROBE]
    ev, pid = p2.ev, p2.probe_id()
    assert ev_plane(ev) == 2 and p2.dscp == CONTROL
    s.control(110, OP_SACK, 0, W.probe_reply_ext(ev, pid, 0, 0))
    s.sim.run(until=200)
    assert s.qp.paths.reverse[2] == ev and s.qp.paths.fresh[2] == 110.0
    s.sim.run(until=350)
    assert s.probes() == [(100.0, 2), (200.0, 3), (300.0, 2)]


def test_the_starting_reverse_set_is_trusted_from_the_connection():
    """Connected at t=0: both planes' home EVs count as confirmed then. Plane 0 confirmed again at 10 (an
    ACK for A's data); data on plane 1 at 20 is ACKed on plane 1's reverse EV (home[1], confirmed 20 µs
    ago, well within 4 probe intervals), not moved to plane 0 as a plane never confirmed would be."""
    s = Receiver()
    assert s.qp.paths.fresh == {0: 0.0, 1: 0.0}
    s.a.send_message(1, 1024)
    s.control(10, OP_SACK, 0, W.sack_ext(s.home[0], 1, 0, 0))
    s.data(20, 0, s.home[3])
    s.sim.run(until=30)
    assert s.acks() == [(20.0, s.home[1])]


def test_a_probe_is_answered_by_the_nic_on_the_reverse_ev_of_its_plane():
    """B's data on b[1] (plane 1, PSN 0) at 10, then B's probe (id 5) on b[3], plane 1, at 20: A's NIC
    answers (changed: the host did), a SACK with pr=1 echoing the probed EV and the probe id, with the
    QP's receive state (cum 1), on plane 1's reverse EV, which the data moved to b[1]; A's host sends
    nothing and never sees the probe."""
    s = Receiver()
    b = EvProfile.spread(planes=2, spines=4, slots=8, salt=4).home
    s.data(10, 0, b[1])
    probe = W.build(s.qp.peer_addr, s.a.addr_bytes, CONTROL, 0, b[3], OP_PROBE, 1, 0, W.probe_ext(5))
    s.sim.call_at(20, s.nic.receive, probe)
    s.sim.run(until=30)
    [(t, answer)] = [(t, p) for t, p in s.sent if p.opcode == OP_SACK and p.probe_response]
    assert (t, answer.ev, answer.dqpn, answer.probe_reply(), answer.sack()[2]) == (20.0, b[1], 2, (b[3], 5), 1)
    assert s.nic.probe_answers == 1 and not s.probes()
