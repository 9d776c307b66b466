"""The MRC API on running QPs, on two reference NICs (tests/support:
the NIC model behind each endpoint, a path-level fabric between them):
QPs taken through mrc.h's states (and refused out of order), EV
operations that reach the NIC's tables and move the traffic, EV events on
their CQ with precise drop counts, port admin state, and the EV_PROBE
endpoint operation."""

from __future__ import annotations

import pytest

from mrc_host import verbs
from mrc_host.cc import Aimd
from mrc_host.ctl import MrcCtl
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile, make_ev
from mrc_host.ocp import (
    EBUSY,
    EINVAL,
    ETIMEDOUT,
    NO_EVENTS,
    CcProfileAttr,
    EpOpType,
    EpReq,
    Ev,
    EvOp,
    EvOpEntry,
    EvOpFlags,
    EvProfileAttr,
    EvProfileAttrMask,
    EvState,
    MrcError,
    PortAdminState,
    PortAttr,
    PortAttrMask,
    ProfileState,
    QpAttr,
    QpAttrMask,
    QpState,
)
from sim_core.sim import Sim
from tests.support.app import Recorder
from tests.support.path_fabric import PathFabric, PathProfile

A_ADDR, B_ADDR = "fd00:0:0:1::0:0", "fd00:0:0:1::1:1"
A_BYTES = bytes.fromhex("fd000000000000010000000000000000")
B_BYTES = bytes.fromhex("fd000000000000010000000000010001")
M = EvProfileAttrMask
AIMD = CcProfileAttr(algorithm="aimd", cc_config=Aimd(cwnd=8.0, max_cwnd=8.0))


class Pair:
    """A and B on the path fabric, each with its MRC API; QP 1 (A) to QP 2 (B)."""

    def __init__(self, mask: EvState = NO_EVENTS, open_qps: bool = True):
        self.sim = Sim()
        self.fab = PathFabric(self.sim)
        self.app = Recorder()
        self.a = Endpoint(self.sim, A_ADDR, self.fab.nic(A_ADDR))
        self.b = Endpoint(self.sim, B_ADDR, self.fab.nic(B_ADDR), app=self.app)
        self.api_a = verbs.MrcContext(self.a, MrcCtl(self.a, ports=2))
        self.api_b = verbs.MrcContext(self.b, MrcCtl(self.b, ports=2))
        self.plan_a = EvProfile.spread(planes=2, spines=4, slots=8)
        self.plan_b = EvProfile.spread(planes=2, spines=4, slots=8, salt=4)
        self.cq = self.api_a.ctl.create_ev_event_cq(4)
        if open_qps:
            verbs.explicit_profile(self.api_a.ctl, 1, self.plan_a, mask)  # A's QP: opened by hand (_open)
            self.qa = self._open(self.api_a, 1, 2, B_BYTES)
            verbs.open_qp(self.api_b, 2, 1, A_BYTES, self.plan_b, verbs.cc_profile(self.api_b.ctl, 1, AIMD))

    def _open(self, api: verbs.MrcContext, qpn: int, peer: int, dgid: bytes) -> verbs.MrcQp:
        qp = api.create_qp(qpn)
        cc = verbs.cc_profile(api.ctl, 1, AIMD)
        api.modify_qp(qp, QpAttr(QpState.INIT, ev_profile_id=qpn, cc_profile_id=cc),
                      QpAttrMask.STATE | QpAttrMask.EV_PROFILE_ID | QpAttrMask.CC_PROFILE_ID)
        api.modify_qp(qp, QpAttr(QpState.RTR, dest_qp_num=peer, dgid=dgid),
                      QpAttrMask.STATE | QpAttrMask.DEST_QPN | QpAttrMask.AV | QpAttrMask.RQ_PSN)
        api.modify_qp(qp, QpAttr(QpState.RTS), QpAttrMask.STATE | QpAttrMask.SQ_PSN)
        return qp

    def nic_slots(self) -> list[int]:
        """NIC A's slot_ev entries of QP 1, slot by slot."""
        m = self.fab.front(self.a).model
        q = m.qps[2]  # qp_ev: keyed by the peer's QP number
        return [m.slots[q.base + s] for s in range(q.mask + 1)]

    def send(self, n: int) -> None:
        self.a.send_message(1, bytes(n))
        self.sim.run(until=self.sim.now + 10_000, stop=lambda: self.a.idle())


def ev_state(ctl: MrcCtl, ev: int) -> EvState:
    q = ctl.query_ev_profile(1, M.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_STATE, entries=[EvOpEntry(Ev.of(ev))]))
    return q.entries[0].state


# ---- mrc.h: a QP's states ---------------------------------------------------------------------------
def test_a_qp_at_rts_is_created_on_its_nic_and_carries_data():
    p = Pair()
    assert p.qa.state is QpState.RTS and p.nic_slots() == p.plan_a.home
    p.send(16 * 1024)
    assert [len(d) for d in p.app.data] == [16 * 1024]


def test_a_qp_moves_one_state_at_a_time_with_what_each_needs():
    p = Pair(open_qps=False)
    verbs.explicit_profile(p.api_a.ctl, 1, p.plan_a)
    cc = verbs.cc_profile(p.api_a.ctl, 1, AIMD)
    qp = p.api_a.create_qp(1)
    with pytest.raises(MrcError, match="no transition to RTR") as e:
        p.api_a.modify_qp(qp, QpAttr(QpState.RTR), QpAttrMask.STATE | QpAttrMask.DEST_QPN | QpAttrMask.AV)
    assert e.value.errno == EINVAL
    with pytest.raises(MrcError, match="to INIT needs"):
        p.api_a.modify_qp(qp, QpAttr(QpState.INIT, ev_profile_id=1), QpAttrMask.STATE | QpAttrMask.EV_PROFILE_ID)
    with pytest.raises(MrcError, match="EV profile 9 is not ONLINE"):
        p.api_a.modify_qp(qp, QpAttr(QpState.INIT, ev_profile_id=9, cc_profile_id=cc),
                          QpAttrMask.STATE | QpAttrMask.EV_PROFILE_ID | QpAttrMask.CC_PROFILE_ID)
    assert qp.state is QpState.RESET and p.fab.front(p.a).model.qps == {}  # nothing reached the NIC


def test_a_profile_a_qp_runs_on_is_busy_until_the_qp_is_destroyed():
    p = Pair()
    ctl = p.api_a.ctl
    with pytest.raises(MrcError) as e:
        ctl.modify_ev_profile(1, EvProfileAttr(ProfileState.OFFLINE), M.STATE)
    assert e.value.errno == EBUSY and "QPs [1] are bound" in str(e.value)
    p.api_a.destroy_qp(p.qa)
    ctl.modify_ev_profile(1, EvProfileAttr(ProfileState.OFFLINE), M.STATE)
    assert p.fab.front(p.a).model.qps == {}  # gone from the NIC too


# ---- EV operations reach the NIC and move the traffic -----------------------------------------------
def test_a_denied_ev_leaves_the_nics_slots_and_carries_no_more_data_until_allowed():
    p = Pair(mask=EvState.GOOD | EvState.DENIED)
    bad = p.plan_a.home[2]
    p.api_a.ctl.modify_ev_profile(1, EvProfileAttr(ev_op=EvOp.MODIFY_EV_STATE,
                                                   entries=[EvOpEntry(Ev.of(bad), state=EvState.DENIED)]), M.EV_OP)
    assert bad not in p.nic_slots() and ev_state(p.api_a.ctl, bad) is EvState.DENIED
    before = p.fab.stats.data_by_ev.get(bad, 0)
    p.send(32 * 1024)
    assert p.fab.stats.data_by_ev.get(bad, 0) == before and len(p.app.data) == 1
    p.api_a.ctl.modify_ev_profile(1, EvProfileAttr(ev_op=EvOp.MODIFY_EV_STATE,
                                                   entries=[EvOpEntry(Ev.of(bad), state=EvState.GOOD)]), M.EV_OP)
    assert p.nic_slots()[2] == bad and ev_state(p.api_a.ctl, bad) is EvState.GOOD
    events = p.api_a.ctl.poll_ev_event(p.cq, 8)
    assert [(e.ev.val, e.state, e.reason) for e in events] == [(bad, EvState.DENIED, "admin"),
                                                               (bad, EvState.GOOD, "admin")]


def test_replace_ev_rewrites_the_slots_of_a_running_qp():
    p = Pair()
    old, new = p.plan_a.home[3], make_ev(1, 3, salt=9)
    p.api_a.ctl.modify_ev_profile(1, EvProfileAttr(ev_op=EvOp.REPLACE_EV, entries=[
        EvOpEntry(Ev.of(old), Ev.of(new), flags=EvOpFlags.ALL_COPIES)]), M.EV_OP)
    assert p.nic_slots()[3] == new and old not in p.nic_slots()
    q = p.api_a.ctl.query_ev_profile(1, M.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_ARRAY))
    assert Ev.of(new) in [e.ev for e in q.entries] and Ev.of(old) not in [e.ev for e in q.entries]


def test_a_loss_and_the_probes_that_restore_are_assumed_bad_and_good_events():
    p = Pair(mask=EvState.GOOD | EvState.ASSUMED_BAD)
    bad = p.plan_a.home[3]
    p.fab.paths[bad] = PathProfile(broken=True)
    p.send(48 * 1024)
    assert ev_state(p.api_a.ctl, bad) is EvState.ASSUMED_BAD
    p.fab.paths[bad] = PathProfile()
    p.sim.run(until=p.sim.now + 20_000, stop=lambda: not p.a.qps[1].profile.probing())
    assert ev_state(p.api_a.ctl, bad) is EvState.GOOD
    events = [(e.ev.val, e.state) for e in p.api_a.ctl.poll_ev_event(p.cq, 8)]
    assert events == [(bad, EvState.ASSUMED_BAD), (bad, EvState.GOOD)]


def test_a_full_event_cq_drops_and_the_next_event_counts_them():
    p = Pair(mask=EvState.GOOD | EvState.DENIED)
    ctl, evs = p.api_a.ctl, p.plan_a.home
    for ev in evs[:6]:  # 6 changes into a CQ of 4
        ctl.modify_ev_profile(1, EvProfileAttr(ev_op=EvOp.MODIFY_EV_STATE,
                                               entries=[EvOpEntry(Ev.of(ev), state=EvState.DENIED)]), M.EV_OP)
    first = ctl.poll_ev_event(p.cq, 8)
    assert [e.drop_count for e in first] == [0, 0, 0, 0]
    ctl.modify_ev_profile(1, EvProfileAttr(ev_op=EvOp.MODIFY_EV_STATE,
                                           entries=[EvOpEntry(Ev.of(evs[0]), state=EvState.GOOD)]), M.EV_OP)
    [after] = ctl.poll_ev_event(p.cq, 8)
    assert (after.ev.val, after.state, after.drop_count) == (evs[0], EvState.GOOD, 2)


# ---- ports and endpoint operations ---------------------------------------------------------------------
def test_a_disabled_port_is_down_on_the_nic_and_its_planes_evs_are_out():
    p = Pair()
    p.api_a.ctl.modify_port(2, PortAttr(PortAdminState.DISABLED), PortAttrMask.ADMIN_STATE)
    assert p.fab.front(p.a).model.health.port_down == 0b10
    assert p.api_a.ctl.query_port(2).port_admin_state is PortAdminState.DISABLED
    assert {ev_state(p.api_a.ctl, ev) for ev in p.plan_a.home if ev & 7 == 1} == {EvState.ASSUMED_BAD}
    p.api_a.ctl.modify_port(2, PortAttr(PortAdminState.ENABLED), PortAttrMask.ADMIN_STATE)
    assert p.fab.front(p.a).model.health.port_down == 0
    with pytest.raises(MrcError, match="port 3: the device's ports are 1..2"):
        p.api_a.ctl.modify_port(3, PortAttr(PortAdminState.DISABLED), PortAttrMask.ADMIN_STATE)


def test_an_ev_probe_is_answered_by_the_peers_nic_with_its_rtt():
    p = Pair()
    ev = p.plan_a.home[1]
    [rsp] = p.api_a.ctl.ep_batch_send_wait(46, EpOpType.EV_PROBE, [EpReq(7, B_BYTES, Ev.of(ev))], 1_000_000)
    assert rsp.req_id == 7 and rsp.rtt == 20_000  # 10 µs each way on the path fabric, in ns
    p.fab.paths[ev] = PathProfile(broken=True)
    with pytest.raises(MrcError) as e:
        p.api_a.ctl.ep_batch_send_wait(46, EpOpType.EV_PROBE, [EpReq(8, B_BYTES, Ev.of(ev))], 100_000)
    assert e.value.errno == ETIMEDOUT
