"""The MRC endpoint model over the path fabric model (no BMv2): scripted
loss, trim and ECN, and a seeded random run; every message is delivered
exactly once and EV states move as DESIGN.md section 7 says."""

from __future__ import annotations

import random
from collections import Counter

from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6

from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvEvent, EvProfile, EvState, ev_plane
from ptf_tests.lib import headers as H
from sim_core.sim import Sim
from tests.support.app import Recorder
from tests.support.path_fabric import PathFabric, PathProfile

A_ADDR, B_ADDR = "fd00:0:0:1::0:0", "fd00:0:0:1::1:1"


class Pair:
    def __init__(self, seed: int = 0, default: PathProfile | None = None):
        self.sim = Sim()
        self.fab = PathFabric(self.sim, seed=seed, default=default)
        self.app = Recorder()
        self.a = Endpoint(self.sim, A_ADDR, self.fab.nic(A_ADDR))
        self.b = Endpoint(self.sim, B_ADDR, self.fab.nic(B_ADDR), app=self.app)
        self.pa = EvProfile.spread(planes=2, spines=4, slots=8)
        self.a.connect(1, 2, B_ADDR, self.pa)
        self.pb = EvProfile.spread(planes=2, spines=4, slots=8)
        self.b.connect(2, 1, A_ADDR, self.pb)

    @property
    def got(self) -> list[tuple[int, bytes | None]]:
        """(message id, bytes) of each message B delivered."""
        return [(m, d) for _, m, d in self.app.delivered_msgs]

    def run(self, until: float = 1e6) -> None:
        self.sim.run(until=until, stop=lambda: self.a.idle() and not self.pa.probing())


def payload(n: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(n)


def test_clean_message_sprayed_evenly_over_every_ev():
    p = Pair()
    data = payload(64 * 1024)
    msg = p.a.send_message(1, data)
    p.run()
    assert p.got == [(msg, data)]
    assert p.a.stats.retransmits == 0
    data_per_ev = Counter(p.fab.stats.data_by_ev)
    assert set(data_per_ev) == set(p.pa.home)
    assert set(data_per_ev.values()) == {64 // 8}
    # Every ACK rides the receiver's reverse set: one EV per plane, and the
    # plane of the data it answers. An ACK per 16 KiB (ACK_BYTES), 16 packets
    # of 1 KiB: PSNs 15, 31, 47 and 63 (the last, with the ack-request bit),
    # odd PSNs, on plane 1 (PSN i on A's home[i % 8], of plane i % 2). Each
    # arrival makes its EV its plane's reverse EV after its own ACK, so each
    # ACK travels on the path of the plane's previous arrival (PSNs 13, 29,
    # 45, 61: A's home[5]), never on the EV it echoes (home[7]).
    acks = Counter(p.fab.stats.by_ev) - data_per_ev
    assert dict(acks) == {p.pa.home[5]: 4}
    assert (ev_plane(p.pa.home[5]), ev_plane(p.pa.home[7])) == (1, 1)
    assert all(st is EvState.GOOD for st in p.pa.state.values())


def test_broken_ev_retired_and_replaced_on_same_plane_then_restored():
    p = Pair()
    bad = p.pa.home[3]
    p.fab.paths[bad] = PathProfile(broken=True)
    data = payload(48 * 1024, seed=2)
    p.a.send_message(1, data)
    p.sim.run(until=5_000, stop=lambda: p.a.idle())
    assert [d for _, d in p.got] == [data]
    # Found from SACKs (later packets delivered), before any timeout. Every
    # 8th PSN rides slot 3: first sends of PSNs 3, 11 (t=0), 19, 27 (t=20),
    # 35 (t=40), 43 (t=60), and the resend of 27 (RACK at t=100 put it on
    # slot 3 again, before the unanswered suspect probe retired the EV at
    # t=120): 7 copies lost, each resent once.
    assert p.fab.stats.data_by_ev[bad] == 7
    assert p.a.stats.retx_sack == 7 and p.a.stats.timeouts == 0
    assert p.pa.state[bad] is EvState.ASSUMED_BAD
    assert bad not in p.pa.slots
    stand_in = p.pa.slots[3]
    assert stand_in != bad and ev_plane(stand_in) == ev_plane(bad)
    nic = p.fab.front(p.a).model  # the rewrite reached A's NIC's slot table
    assert nic.slots[nic.qps[2].base + 3] == stand_in and p.pa.slot_writes == []
    # The path heals: background probes bring the EV back.
    p.fab.paths[bad] = PathProfile()
    p.run(until=20_000)
    assert p.pa.state[bad] is EvState.GOOD
    assert p.pa.slots[3] == bad
    assert (bad, EvEvent.PROBE_OK, EvState.GOOD) in p.pa.log
    assert len(p.got) == 1


def test_trimmed_ev_skipped_and_payload_resent_at_once():
    p = Pair()
    hot = p.pa.home[0]
    p.fab.paths[hot] = PathProfile(trim=1.0)
    data = payload(32 * 1024, seed=3)
    p.a.send_message(1, data)
    p.run()
    assert [d for _, d in p.got] == [data]
    # Trims on hot: PSNs 0 and 8 (the first window, t=0) and PSN 28 (t=40);
    # each NACK makes hot SKIP: its slot holds a spare of its plane until the
    # NIC's rotation has passed over it once (PSN 0's resend at t=10, PSN 21
    # at t=20), and no other copy lands on it.
    assert p.a.stats.nacks == 3 and p.a.stats.retx_nack == 3 and p.a.stats.timeouts == 0
    assert (hot, EvEvent.NACK_TRIMMED, EvState.SKIP) in p.pa.log
    assert p.pa.state[hot] is EvState.SKIP and hot not in p.pa.slots  # the last NACK's skip, still on
    for _ in range(len(p.pa.slots) + 1):
        p.pa.turn()  # one rotation of the NIC later
    assert p.pa.state[hot] is EvState.GOOD and p.pa.slots[0] == hot


def test_lasthop_trim_does_not_demote_the_ev():
    p = Pair()
    ev = p.pa.home[1]
    p.fab.paths[ev] = PathProfile(trim=1.0, lasthop=True)
    p.a.send_message(1, payload(16 * 1024, seed=4))
    p.run()
    # 16 packets, one window at t=0: PSNs 1 and 9 on ev, trimmed; the EV is
    # not skipped, so PSN 9's resend (t=10, slot 1 again) is trimmed too.
    assert len(p.got) == 1 and p.a.stats.nacks == 3
    assert not [entry for entry in p.pa.log if entry[0] == ev]
    assert p.pa.state[ev] is EvState.GOOD


def test_ecn_skips_the_ev_and_shrinks_the_window():
    p = Pair()
    ev = p.pa.home[2]
    p.fab.paths[ev] = PathProfile(ecn=1.0)
    start = p.a.qps[1].cc.cwnd
    p.a.send_message(1, payload(16 * 1024, seed=5))
    p.run()
    assert len(p.got) == 1
    assert (ev, EvEvent.ECN, EvState.SKIP) in p.pa.log
    assert p.fab.stats.ecn_marked == 2  # 16 packets, one window at t=0: PSNs 2 and 10 on ev
    assert p.a.qps[1].cc.cwnd < start


def test_seeded_random_loss_and_trimming_deliver_everything_exactly_once():
    p = Pair(seed=2026, default=PathProfile(loss=0.05, trim=0.10))
    rng = random.Random(7)
    sent = {}
    for i in range(20):
        data = payload(rng.randint(1, 20_000), seed=100 + i)
        sent[p.a.send_message(1, data)] = data
    p.sim.run(until=2e6, stop=lambda: p.a.idle())
    ids = [m for m, _ in p.got]
    assert sorted(ids) == sorted(sent), "a message missing or delivered twice"
    assert all(sent[m] == d for m, d in p.got)
    assert p.fab.stats.lost > 0 and p.fab.stats.trimmed > 0
    assert p.a.stats.retx_sack > 0 and p.a.stats.nacks > 0
    s = p.a.stats  # every resend has one cause (no port goes down here)
    assert s.retransmits == s.retx_sack + s.retx_nack + s.timeouts + s.tail_probes


def test_trim_notice_from_the_nic_is_counted_not_placed():
    p = Pair()
    p.a.send_message(1, payload(4096, seed=9))
    p.sim.run(until=1)  # packets built, nothing delivered yet
    seg = p.a.qps[1].inflight[0].seg
    notice = bytes(IPv6(src=A_ADDR, dst=B_ADDR, tc=16 << 2) / UDP(sport=0, dport=H.ROCE_PORT)
                   / H.BTH(opcode=seg.opcode, dqp=2, psn=seg.psn, ts=1) / H.data_headers(seg.msg_id, 0, 4096)
                   / b"cut")
    nic = p.fab.front(p.b)
    nic.receive(notice)
    assert p.b.stats.trim_notices == 1
    assert nic.cum(2) == 0 and nic.held(2) == 0 and nic.sacks == 0  # the NIC's receiver never saw it
    p.run()
    assert [len(d) for _, d in p.got] == [4096]
