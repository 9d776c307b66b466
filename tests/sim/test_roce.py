"""The RoCE baseline: go-back-N, DCQCN, QP scaling, timeouts and errors."""

from __future__ import annotations

import itertools

import pytest

from control_plane.config import ConfigError
from fabric_sim.runner.run import run
from fabric_sim.scenario import EndpointCfg, Transport
from fabric_sim.transports import dcqcn, kinds
from fabric_sim.transports.dcqcn import Dcqcn
from fabric_sim.transports.roce import RoceEndpoint
from mrc_host.ev import EvProfile, make_ev
from mrc_wire import ids
from mrc_wire.constants import ev_spine
from sim_core.sim import Sim
from tests.sim.helpers import exactly_once, make

ONE_PLANE = {"planes": 1, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 4}
ROCE = {"name": "roce", "kind": "roce"}


def _one(sc, **kw):
    [t] = sc.transports
    return run(sc, t, **kw)


def _eps(fabs):
    return [n.host for n in fabs[0].nics if n.host is not None]


def test_go_back_n_resends_everything_after_a_loss_and_delivers_once():
    sc = make({"pattern": "flows", "message_bytes": 2_000_000, "flows": [{"src": "nic-0", "dst": "nic-4"}]},
              [ROCE], [{"at_us": 0, "nic_rx_loss": {"rate": 0.005, "nic": "nic-4"}}], topology=ONE_PLANE)
    fabs = []
    r = _one(sc, hooks=[(0.0, fabs.append)])
    assert exactly_once(r) and r.errors == []
    rx = fabs[0].nics[4].host.stats
    tx = fabs[0].nics[0].host.stats
    lost = r.drops["link:random_loss"]
    assert rx.out_of_window > 0 and tx.nacks > 0 and r.retx["timeout"] == 0, r.retx  # NAKs recover, not timeouts
    # Go-back-N: every packet the receiver discarded after a gap is sent again, on top of the lost ones.
    assert tx.retransmits >= rx.out_of_window + lost - rx.acks_sent, (tx.retransmits, rx.out_of_window, lost)
    assert tx.sent == 489 + tx.retransmits  # 2 MB in 4 KiB packets, plus the resends


def test_a_message_striped_over_16_qps_completes_when_every_part_arrives():
    sc = make({"pattern": "flows", "message_bytes": 1_000_000, "qps_per_pair": 16,
               "flows": [{"src": "nic-0", "dst": "nic-4", "messages": 2}]}, [ROCE], topology=ONE_PLANE)
    fabs = []
    r = _one(sc, hooks=[(0.0, fabs.append)])
    assert exactly_once(r)
    rx = fabs[0].nics[4].host
    assert len(rx.qps) == 16 and all(q.rx_bytes == 2 * 62_500 for q in rx.qps.values())
    assert rx.stats.delivered == 32


def test_dcqcn_cuts_by_half_alpha_and_recovers_towards_the_target():
    cc = Dcqcn(400.0)
    cc.cnp(10.0)
    assert cc.rc == pytest.approx(200.0) and cc.rt == 400.0  # alpha starts at 1
    assert cc.alpha == pytest.approx(1.0)
    assert cc.rate(10.0 + dcqcn.TIMER_US) == pytest.approx(300.0)  # fast recovery: half the distance
    assert cc.rate(10.0 + dcqcn.FAST_STEPS * dcqcn.TIMER_US) == pytest.approx(400 - 200 / 2 ** dcqcn.FAST_STEPS)
    cc.cnp(10.0 + dcqcn.FAST_STEPS * dcqcn.TIMER_US)
    assert cc.alpha < 1.0 and cc.rc > (400 - 200 / 2 ** dcqcn.FAST_STEPS) / 2  # alpha decayed: a smaller cut


def test_incast_marks_ecn_at_the_last_hop_and_dcqcn_slows_the_senders():
    flows = [{"src": f"nic-{s}", "dst": "nic-0"} for s in (4, 5, 6, 7)]
    sc = make({"pattern": "flows", "message_bytes": 2_000_000, "flows": flows}, [ROCE],
              topology={**ONE_PLANE, "congestion": {"ecn_threshold": 4}})  # lossless by PFC: ECN below its XOFF
    fabs = []
    r = _one(sc, hooks=[(0.0, fabs.append)])
    assert exactly_once(r) and not r.drops
    last_hop = fabs[0].switches[ids.t0(0, 0)].model  # nic-0's T0: its downlink is the incast's bottleneck
    assert last_hop.events["ecn_marked"] > 0
    senders = [fabs[0].nics[s].host for s in (4, 5, 6, 7)]
    assert all(q.cc.cnps > 0 for e in senders for q in e.qps.values() if q.segs is not None and q.ev_tx)


def test_a_dead_path_times_out_and_the_qp_error_is_reported():
    sc = make({"pattern": "flows", "message_bytes": 100_000, "flows": [{"src": "nic-0", "dst": "nic-4"}]},
              [{**ROCE, "reconvergence_us": 1e9, "rc": {"timeout": 3, "retry_cnt": 3}}],
              [{"at_us": 0, "link_down": ["nic-4", "t0-p0-r1"]}], topology=ONE_PLANE, duration_us=5000)
    r = _one(sc)
    assert not r.complete and r.retx["timeout"] == 4
    assert len(r.errors) == 1 and "after 3 timeouts" in r.errors[0]


class _DeadNic:
    """A NIC whose packets go nowhere: it only notes when each was posted."""

    def __init__(self, sim: Sim):
        self.sim, self.posted = sim, []

    def attach(self, host) -> None:
        pass

    def create_qp(self, qp) -> None:
        pass

    def post(self, raw: bytes, pad: int = 0) -> None:
        self.posted.append(self.sim.now)


@pytest.mark.parametrize("timeout, retry_cnt", [(4, 3), (6, 7)])
def test_the_local_ack_timeout_is_4096_ns_times_2_to_the_timeout_at_every_retry(timeout, retry_cnt):
    """IBTA's requester (verbs' `timeout` and `retry_cnt`, as NCCL sets them):
    a packet never answered is sent again after 4.096 µs x 2^timeout, the
    same timeout each time (no back-off), retry_cnt times; then the QP errs."""
    cfg = Transport(kind="roce", rc={"timeout": timeout, "retry_cnt": retry_cnt})
    rto = 4.096 * 2**timeout
    assert kinds.of(cfg).rto(EndpointCfg(), base_rtt=3.0) == rto
    sim = Sim()
    nic = _DeadNic(sim)
    ep = RoceEndpoint(sim, bytes(16), nic, line_gbps=400, rto=rto, retry_limit=cfg.rc.retry_cnt)
    ep.connect(1, 2, bytes(15) + b"\x01", EvProfile([make_ev(0, 0)], {}, enabled=False))
    ep.send_message(1, 4096)
    sim.run(until=100 * rto)
    gaps = [b - a for a, b in itertools.pairwise(nic.posted)]
    assert len(gaps) == retry_cnt and all(rto <= g <= rto * 1.25 for g in gaps), gaps  # checked every rto / 4
    assert ep.qps[1].error == f"PSN 0 not acknowledged after {retry_cnt} timeouts"


def test_the_rc_timer_is_nccls_by_default_and_roces_alone():
    """NCCL's net_ib.cc: NCCL_IB_TIMEOUT 20 (4.29 s), NCCL_IB_RETRY_CNT 7."""
    rc = Transport(kind="roce").rc
    assert (rc.timeout, rc.retry_cnt, rc.rto_us) == (20, 7, 4.096 * 2**20)
    with pytest.raises(ConfigError, match="the RC timer is RoCE's, not of kind mrc"):
        make({"pattern": "permutation"}, [{"name": "mrc", "kind": "mrc", "rc": {"timeout": 14}}])


def test_routing_reconvergence_moves_a_roce_qp_off_a_dead_spine():
    sc = make({"pattern": "flows", "message_bytes": 400_000, "flows": [{"src": "nic-0", "dst": "nic-4"}]},
              # a timeout of 524 µs: what was sent before routing moved it is resent within the run
              [{**ROCE, "reconvergence_us": 100, "rc": {"timeout": 7}}], [{"at_us": 0, "switch_down": "t1-p0-s0"},
                                                    {"at_us": 0, "switch_down": "t1-p0-s1"}],
              topology={**ONE_PLANE, "t1_per_plane": 3})
    spines = []

    def paths(fab):
        [qa], [qb] = fab.nics[0].host.qps.values(), fab.nics[4].host.qps.values()
        spines.extend(ev_spine(prof.slots[0]) for prof in (qa.profile, qb.profile))

    r = _one(sc, hooks=[(0.0, paths)])
    # One QP: ECMP put its data on dead s1 and its ACKs on live s2, so one
    # direction is rehashed, once (the second fault's reconvergence finds it alive).
    assert spines == [1, 2]
    assert r.complete and r.rehashed == 1 and min(report_fcts(r)) > 100


def report_fcts(r):
    return [m.done_at - m.posted_at for m in r.messages]
