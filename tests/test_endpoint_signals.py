"""The endpoint's answer to each signal, one at a time (DESIGN.md sections
6-7, docs/nic.md "Endpoint"): A alone, every frame it emits captured from
its transmit hook, the peer's ACKs and NACKs written by hand and delivered
at chosen times. Defaults: rto 200 µs (timer tick rto/4 = 50 µs), reorder
window rto/4 = 50 µs, 8 slots over 2 planes, so PSN i of the first
rotation goes out on home[i % 8], whose plane is i % 2."""

from __future__ import annotations

import pytest

from mrc_host.cc import Aimd
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile, EvState
from mrc_host.settings import HostConfig
from mrc_wire import packet as W
from mrc_wire.constants import (
    NACK_TRIMMED,
    NACK_TRIMMED_LASTHOP,
    OP_EP_REQUEST,
    OP_NACK,
    OP_SACK,
    ev_plane,
)
from sim_core.sim import Sim
from tests.support.nic_front import NicFront

A_ADDR, B_ADDR = "fd00:0:0:1::0:0", "fd00:0:0:1::1:1"
DATA, RETX, CONTROL = 8, 12, 46  # DESIGN.md section 6: DATA_TRIMMABLE, DATA_TRIMMABLE_RETX, CONTROL


class Solo:
    def __init__(self, cc: Aimd | None = None, **kw):
        self.sim = Sim()
        self.frames: list[bytes] = []
        self.nic = NicFront(A_ADDR, self.frames.append)
        self.a = Endpoint(self.sim, A_ADDR, self.nic.model, HostConfig(**kw))
        self.prof = EvProfile.spread(planes=2, spines=4, slots=8)
        self.home = list(self.prof.home)
        self.qp = self.a.connect(1, 2, B_ADDR, self.prof, cc=cc)

    def data(self) -> list[tuple[int, int]]:
        """(PSN, DSCP) of every data frame A emitted, in order."""
        return [(p.psn, p.dscp) for p in map(W.parse, self.frames) if p.is_data]

    def _deliver(self, t: float, op: int, psn: int, ext: bytes) -> None:
        raw = W.build(self.qp.peer_addr, self.a.addr_bytes, CONTROL, 0, 0, op, 1, psn, ext)
        self.sim.call_at(t, self.a.receive, raw)

    def ack(self, t: float, psn: int, ev: int, cum: int, bitmap: int = 0) -> None:
        """The peer's ACK (a SACK with a bitmap) of `psn`, echoing `ev`, at time t."""
        self._deliver(t, OP_SACK, psn, W.sack_ext(ev, cum, psn, bitmap))

    def nack(self, t: float, psn: int, ev: int, reason: int = NACK_TRIMMED) -> None:
        self._deliver(t, OP_NACK, psn, W.nack_ext(ev, reason, psn))


def first(n: int) -> list[tuple[int, int]]:
    return [(psn, DATA) for psn in range(n)]


# ---- retransmissions carry DATA_TRIMMABLE_RETX, on every path that resends ----

def test_a_nack_resend_carries_the_retx_class():
    """PSNs 0-3 go out as DATA_TRIMMABLE; the TRIMMED NACK of PSN 2 resends it once, as DATA_TRIMMABLE_RETX."""
    s = Solo()
    s.a.send_message(1, 4 * 1024)
    s.nack(10, 2, s.home[2])
    s.sim.run(until=10)
    assert s.data() == first(4) + [(2, RETX)]


def test_a_same_path_sack_loss_resend_carries_the_retx_class():
    """PSNs 0 and 8 share home[0]; a SACK of 8 on it with 1-8 received (cum 0) proves 0 lost: one resend, RETX."""
    s = Solo()
    s.a.send_message(1, 9 * 1024)
    s.ack(20, 8, s.home[0], cum=0, bitmap=0xFF)  # bit i: PSN cum + 1 + i
    s.sim.run(until=20)
    assert s.data() == first(9) + [(0, RETX)]


def test_a_copy_on_the_same_path_that_the_cumulative_psn_covers_is_no_loss():
    """PSNs 0 and 8 share home[0]; one coalesced ACK of 8 with cum 9 (0-8 all arrived): nothing is lost,
    nothing resent, home[0] stays GOOD (the same-path check runs after the cumulative PSN is applied)."""
    s = Solo()
    s.a.send_message(1, 9 * 1024)
    s.ack(20, 8, s.home[0], cum=9)
    s.sim.run(until=20)
    assert s.data() == first(9)
    assert (s.a.stats.retx_sack, s.qp.inflight, s.prof.state[s.home[0]]) == (0, {}, EvState.GOOD)


def test_rack_and_suspect_retirement_resends_carry_the_retx_class():
    """PSN 0 at t=0, PSNs 1-8 at t=100 (8 on home[0] again). The SACK of 1 at t=110 puts PSN 0 more than
    the 50 µs window behind a delivered copy: resent (RETX) and home[0] probed. The probe unanswered for
    2 min RTTs (t=130) retires home[0]: PSN 8, still on it, is resent (RETX). Nothing else is resent."""
    s = Solo()
    s.a.send_message(1, 1024)
    s.sim.call_at(100, s.a.send_message, 1, 8 * 1024)
    s.ack(110, 1, s.home[1], cum=0, bitmap=0b1)
    s.sim.run(until=110)
    assert s.data() == first(9) + [(0, RETX)]
    s.sim.run(until=130)
    assert s.data() == first(9) + [(0, RETX), (8, RETX)]


def test_a_timeout_resend_carries_the_retx_class():
    """No answer: PSN 0 times out at t = rto = 200 and is resent once (RETX); the next timeout is 2 rto later."""
    s = Solo()
    s.a.send_message(1, 1024)
    s.sim.run(until=199)
    assert s.data() == first(1)
    s.sim.run(until=599)
    assert s.data() == first(1) + [(0, RETX)]


def test_a_tail_probe_resend_carries_the_retx_class():
    """PSN 0 ACKed at t=20 (srtt 20); PSN 1 unanswered: at the tick when both it and the last ACK are
    2 srtt old (t=100) the newest copy is resent once as a tail probe, RETX."""
    s = Solo()
    s.a.send_message(1, 2 * 1024)
    s.ack(20, 0, s.home[0], cum=1)
    s.sim.run(until=99)
    assert s.data() == first(2)
    s.sim.run(until=100)
    assert s.data() == first(2) + [(1, RETX)]
    assert s.a.stats.tail_probes == 1


def test_a_port_down_resend_carries_the_retx_class():
    """Plane 1's port goes down with PSNs 0-3 in flight: PSNs 1 and 3 (plane 1) are resent at once on plane 0, RETX."""
    s = Solo()
    s.a.send_message(1, 4 * 1024)
    s.a.port_down(1)
    assert s.data() == first(4) + [(1, RETX), (3, RETX)]
    later = [p for p in map(W.parse, s.frames[4:]) if p is not None]
    assert [ev_plane(p.ev) for p in later if p.is_data] == [0, 0]
    assert [(p.opcode, ev_plane(p.ev)) for p in later if not p.is_data] == [(OP_EP_REQUEST, 0)]  # tells the peer


# ---- a NACK cuts the window (docs/nic.md: "multiplicative decrease on ECN, trims ...") ----

def test_a_trimmed_nack_cuts_the_window_to_0_7_once_per_rtt():
    """A TRIMMED NACK cuts cwnd 10 -> 7; a second one 39 µs later (no RTT sample on a NACK: the 40 µs
    target delay stands for the RTT) does not; a third one 40 µs after the cut does: 7 -> 4.9."""
    s = Solo(Aimd(cwnd=10.0, target_delay=40.0))
    s.a.send_message(1, 4 * 1024)
    s.nack(10, 0, s.home[0])
    s.nack(49, 1, s.home[1])
    s.nack(50, 2, s.home[2])
    s.sim.run(until=10)
    assert s.qp.cc.cwnd == pytest.approx(7.0, rel=1e-12)
    s.sim.run(until=49)
    assert s.qp.cc.cwnd == pytest.approx(7.0, rel=1e-12)
    s.sim.run(until=50)
    assert s.qp.cc.cwnd == pytest.approx(4.9, rel=1e-12)


def test_a_nack_never_cuts_below_min_cwnd():
    """cwnd 1.2 cut by 0.7 would be 0.84: it stops at min_cwnd, 1 packet."""
    s = Solo(Aimd(cwnd=1.2, min_cwnd=1.0))
    s.a.send_message(1, 1024)
    s.nack(10, 0, s.home[0])
    s.sim.run(until=10)
    assert s.qp.cc.cwnd == 1.0


def test_a_lasthop_nack_cuts_the_window_but_leaves_the_ev_alone():
    """TRIMMED_LASTHOP does not demote the EV (DESIGN.md section 7), but it is a trim, and the docs cut the
    window on trims without exception: cwnd 10 -> 7, the EV stays GOOD with nothing logged."""
    s = Solo(Aimd(cwnd=10.0))
    s.a.send_message(1, 4 * 1024)
    s.nack(10, 1, s.home[1], reason=NACK_TRIMMED_LASTHOP)
    s.sim.run(until=10)
    assert s.qp.cc.cwnd == pytest.approx(7.0, rel=1e-12)
    assert s.prof.log == []
    assert s.data() == first(4) + [(1, RETX)]


# ---- RTT samples come only from the copy the ACK echoes ----

def test_an_ack_echoing_another_ev_takes_no_rtt_sample():
    """PSNs 0-2 sent at t=0 on home[0..2]. ACK of 0 echoing home[0] at t=20: srtt = min_rtt = 20. ACK of 1
    echoing home[2] (not its EV) at t=24: no sample, both stay 20. ACK of 2 echoing home[2] at t=28:
    sample 28, srtt = 7/8 * 20 + 1/8 * 28 = 21, min_rtt 20."""
    s = Solo()
    s.a.send_message(1, 3 * 1024)
    s.ack(20, 0, s.home[0], cum=1)
    s.ack(24, 1, s.home[2], cum=2)
    s.ack(28, 2, s.home[2], cum=3)
    s.sim.run(until=20)
    assert (s.qp.srtt, s.qp.min_rtt) == (20.0, 20.0)
    s.sim.run(until=24)
    assert (s.qp.srtt, s.qp.min_rtt) == (20.0, 20.0)
    s.sim.run(until=28)
    assert (s.qp.srtt, s.qp.min_rtt) == (21.0, 20.0)


def test_a_late_ack_of_the_first_copy_after_a_resend_is_spurious_not_an_rtt_sample():
    """PSN 0 times out at t=200 and is resent on home[1]; at t=210 the ACK of the first copy (echoing
    home[0]) arrives: no RTT sample, one spurious resend, the reorder window doubles 50 -> 100."""
    s = Solo()
    s.a.send_message(1, 1024)
    s.ack(210, 0, s.home[0], cum=1)
    s.sim.run(until=210)
    assert [W.parse(f).ev for f in s.frames if W.parse(f).is_data] == [s.home[0], s.home[1]]
    assert (s.qp.srtt, s.qp.min_rtt) == (None, None)
    assert s.a.stats.spurious == 1 and s.qp.reo_wnd == 100.0
