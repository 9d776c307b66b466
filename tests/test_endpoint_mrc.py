"""The endpoint as MRC specifies it, on the path fabric:
24-bit PSNs, loss found from SACKs before any timeout, timeouts backing
off to a reported error, reverse EVs, NIC port state, the EV floor."""

from __future__ import annotations

import random

from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvEvent, EvProfile, EvState
from mrc_host.settings import HostConfig
from mrc_wire.constants import ev_plane
from sim_core.sim import Sim
from tests.support.app import Recorder
from tests.support.path_fabric import PathFabric, PathProfile

A_ADDR, B_ADDR = "fd00:0:0:1::0:0", "fd00:0:0:1::1:1"


class Pair:
    def __init__(self, start_psn: int = 0, default: PathProfile | None = None, seed: int = 0, **kw):
        self.sim = Sim()
        self.fab = PathFabric(self.sim, seed=seed, default=default)
        self.app_a, self.app_b = Recorder(lambda: self.sim.now), Recorder()
        self.sent_dscp: list[int] = []  # DSCP of every packet A posts
        cfg = HostConfig(**kw)
        self.a = Endpoint(self.sim, A_ADDR, self.fab.nic(A_ADDR, self._from_a, cfg.dscp), cfg, self.app_a)
        self.b = Endpoint(self.sim, B_ADDR, self.fab.nic(B_ADDR, dscp=cfg.dscp), cfg, self.app_b)
        self.pa = EvProfile.spread(planes=2, spines=4, slots=8)
        # salt 4: B's EVs name other values than A's (the path fabric keys paths by EV)
        self.pb = EvProfile.spread(planes=2, spines=4, slots=8, salt=4)
        assert not set(self.pb.home) & set(self.pa.home)
        self.qa = self.a.connect(1, 2, B_ADDR, self.pa, start_psn=start_psn)
        self.qb = self.b.connect(2, 1, A_ADDR, self.pb, start_psn=start_psn)

    def _from_a(self, raw: bytes) -> None:
        self.sent_dscp.append(raw[1] >> 6 | (raw[0] & 0xF) << 2)
        self.fab.send(self.a.addr_bytes, raw)

    @property
    def got(self) -> list[bytes | None]:
        return self.app_b.data

    def run(self, until: float = 1e6) -> None:
        self.sim.run(until=until, stop=lambda: self.a.idle() and bool(self.got))


def data(n: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(n)


def test_a_qp_crossing_psn_2_24_delivers_everything():
    p = Pair(start_psn=0xFFFFFC)
    msg = data(8192)
    p.a.send_message(1, msg)
    p.run()
    assert p.got == [msg]
    nic = p.fab.front(p.b)  # B's NIC's receiver
    assert nic.cum(2) == 0x000004  # 8 packets of 1 KiB: 0xFFFFFC .. 0x000003
    assert nic.rx.duplicates == 0 and p.a.idle()


def test_wrapped_qp_resends_a_lost_packet_past_the_wrap():
    p = Pair(start_psn=0xFFFFFE)
    lost = p.pa.home[3]  # PSN 0x000001 travels on slot 3
    p.fab.paths[lost] = PathProfile(broken=True)
    msg = data(64 * 1024, seed=2)
    p.a.send_message(1, msg)
    p.run(until=5000)
    assert p.got == [msg]
    # Every copy on slot 3 before the EV's retirement (t=120) is lost and
    # resent once: first sends of 0x01, 0x09 (t=0), 0x11, 0x19 (t=20), 0x21
    # (t=40), 0x29, 0x31 (t=60), 0x37 (t=80), and 0x19's resend (RACK at
    # t=100, slot 3 again).
    assert p.fab.stats.data_by_ev[lost] == 9
    assert p.a.stats.retx_sack == 9 and p.a.stats.timeouts == 0


def test_dscp_classes_come_from_the_topology_not_constants():
    """A trim notice carries the topology's trimmed DSCP (20 here): counted,
    never placed as data; data leaves with the topology's data DSCP."""
    dscp = {"trimmed": 20, "trimmed_lasthop": 22, "data_trimmable": 4, "data_trimmable_retx": 6, "control": 40}
    p = Pair(dscp=dscp)
    p.fab.paths[p.pa.home[0]] = PathProfile(trim=1.0)
    sent = p.sent_dscp
    msg = data(4096, seed=3)
    p.a.send_message(1, msg)
    p.sim.run(until=1)
    # The NIC's notice: the data packet as it arrived, with the trimmed DSCP.
    raw = bytearray(_data_copy(p))
    raw[0] = (raw[0] & 0xF0) | (20 >> 2)
    raw[1] = ((20 & 3) << 6) | (raw[1] & 0x3F)
    p.fab.front(p.b).receive(bytes(raw))
    assert p.b.stats.trim_notices == 1 and p.fab.front(p.b).cum(2) == 0
    p.run()
    assert p.got == [msg]
    assert 4 in sent and 6 in sent  # data class, then the retransmission class after the NACK
    assert 8 not in sent and 12 not in sent


def _data_copy(p: Pair) -> bytes:
    """The first data packet A sent, as bytes."""
    from mrc_wire import packet as W

    inf = p.a.qps[1].sendq[0]
    seg = inf.seg
    return W.build(p.a.addr_bytes, p.qa.peer_addr, 4, 2, inf.ev, seg.opcode, 2, seg.psn,
                   W.data_ext(seg.msg_id, seg.offset, seg.msg_len), seg.payload)


def test_timeouts_back_off_then_the_qp_errs_and_says_so():
    p = Pair(default=PathProfile(broken=True), rto=10.0, retry_limit=3)
    errors = p.app_a.failures
    p.a.send_message(1, data(1024))
    p.sim.run(until=10_000)
    assert p.got == []
    assert p.qa.error is not None and "3 retransmissions" in p.qa.error
    assert p.a.errors == [(1, p.qa.error)] and errors and errors[0][0] == 1
    # 10 + 20 + 40 + 80 µs of backoff before the fourth timeout gives up.
    assert 150.0 <= errors[0][2] <= 150.0 + 10.0 / 4 + 1e-9
    assert p.a.stats.timeouts == 4 and p.a.idle()


def test_a_broken_reverse_path_never_retires_a_forward_ev():
    p = Pair()
    # Every EV B might answer on, on plane 0, is broken (the reverse path):
    for ev in p.pb.on_plane(0):
        p.fab.paths[ev] = PathProfile(broken=True)
    msg = data(64 * 1024, seed=4)
    p.a.send_message(1, msg)
    p.run(until=20_000)
    assert p.got == [msg]
    assert all(st is EvState.GOOD for st in p.pa.state.values()), p.pa.log
    assert not [e for e in p.pa.log if e[1] is EvEvent.LOSS]


def test_local_port_down_retires_the_plane_at_once_and_resends_its_packets():
    p = Pair()
    p.a.send_message(1, data(32 * 1024, seed=5))
    p.sim.run(until=1)
    on_plane1 = [psn for psn, inf in p.qa.inflight.items() if ev_plane(inf.ev) == 1]
    for ev in p.pa.on_plane(1):
        p.fab.paths[ev] = PathProfile(broken=True)  # the port's packets are gone
    p.a.port_down(1)
    assert all(p.pa.state[ev] is EvState.PLANE_DOWN for ev in p.pa.on_plane(1))
    assert all(ev_plane(ev) == 0 for ev in p.pa.slots)
    assert sorted(p.qa.retx_queue) == [] and all(psn not in p.qa.inflight or p.qa.inflight[psn].ev & 7 == 0
                                                 for psn in on_plane1)
    p.run(until=5000)
    assert len(p.got) == 1 and p.a.stats.timeouts == 0


def test_the_peer_learns_a_port_is_down_from_the_sack_bitmap():
    p = Pair()
    p.b.port_down(0)  # B's plane-0 port: A must stop sending on plane 0
    for ev in p.pa.on_plane(0):
        p.fab.paths[ev] = PathProfile(broken=True)
    p.a.send_message(1, data(32 * 1024, seed=6))
    p.run(until=5000)
    assert len(p.got) == 1
    assert p.qa.paths.peer_down == 1
    assert all(p.pa.state[ev] is EvState.PLANE_DOWN for ev in p.pa.on_plane(0))
    p.b.port_up(0)
    p.a.send_message(1, data(4096, seed=7))
    p.run(until=10_000)
    assert p.qa.paths.peer_down == 0 and all(p.pa.state[ev] is EvState.GOOD for ev in p.pa.on_plane(0))


def test_the_floor_of_active_evs_is_kept():
    prof = EvProfile.spread(planes=2, spines=4, slots=8, backups_per_plane=0)
    prof.min_active = 6
    for ev in list(prof.home):
        prof.event(ev, EvEvent.LOSS)
    assert prof.active() == 6
    assert sum(st is EvState.ASSUMED_BAD for st in prof.state.values()) == 2


def test_probe_replies_measure_rtt():
    p = Pair()
    p.a.send_message(1, data(2048))
    p.run()
    bad = p.pa.home[0]
    p.pa.event(bad, EvEvent.LOSS)
    before = p.qa.srtt
    p.a._arm_timer()
    p.sim.run(until=p.sim.now + 500, stop=lambda: bad in p.qa.paths.awaiting())
    p.qa.srtt = None
    p.sim.run(until=p.sim.now + 100, stop=lambda: p.qa.srtt is not None)
    assert before is not None and p.qa.srtt == 2 * p.fab.latency  # one probe, there and back


