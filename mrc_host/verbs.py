"""An application's MRC API on one NIC's host, as OCP's `mrc.h` names it:
the device's attributes, and QPs created and taken through their states
with mrc_modify_qp (RESET -> INIT with the EV and CC profiles a controller
made, mrc_host/ctl.py; -> RTR with the peer's QP and address; -> RTS with
the send PSN, ACK timeout and retries). At RTS the QP starts: the endpoint
creates it on its NIC (mrc_wire.pcie: its slots, its receiver, its path
health) and runs it. This is the one QP set-up path: the timed fabric,
the BMv2 fabric and `mrcctl` all take it."""

from __future__ import annotations

from dataclasses import dataclass, field

from mrc_host.cc import Aimd, CongestionControl
from mrc_host.ctl import MrcCtl
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.nscc import Nscc, NsccConfig
from mrc_host.ocp import (
    EINVAL,
    NO_EVENTS,
    UNPOPULATED,
    CcProfileAttr,
    CcProfileAttrMask,
    DeviceCap,
    Ev,
    EvField,
    EvFieldsOp,
    EvFmtAttrMask,
    EvFmtField,
    EvFmtMode,
    EvFmtOp,
    EvFmtProfileAttr,
    EvMode,
    EvOp,
    EvOpEntry,
    EvProfileAttr,
    EvProfileAttrMask,
    EvState,
    EvVendorCfg,
    MrcDeviceAttr,
    MrcProtocolVersion,
    ProfileState,
    QpAttr,
    QpAttrMask,
    QpState,
    fail,
)
from mrc_host.qp import QueuePair
from mrc_wire.constants import RX_WINDOW

# What each transition needs (mrc.h's table, with the verbs attributes it names).
REQUIRED = {
    QpState.INIT: QpAttrMask.STATE | QpAttrMask.EV_PROFILE_ID | QpAttrMask.CC_PROFILE_ID,
    QpState.RTR: QpAttrMask.STATE | QpAttrMask.DEST_QPN | QpAttrMask.AV | QpAttrMask.RQ_PSN,
    QpState.RTS: QpAttrMask.STATE | QpAttrMask.SQ_PSN,
}


@dataclass
class MrcQp:
    """struct mrc_qp: the QP's number, its state, what its transitions set."""

    qp_num: int
    state: QpState = QpState.RESET
    attr: QpAttr = field(default_factory=QpAttr)
    running: QueuePair | None = None  # the endpoint's QP, from RTS on


class MrcContext:
    """struct mrc_context over one NIC's host: `endpoint` runs the QPs,
    `ctl` holds the profiles they take; `line_gbps` and `mtu` size a QP's
    congestion window."""

    def __init__(self, endpoint: Endpoint, ctl: MrcCtl, line_gbps: float = 800.0):
        self.ep, self.ctl, self.line_gbps = endpoint, ctl, line_gbps
        self.qps: dict[int, MrcQp] = {}
        self._bound: dict[int, EvProfile] = {}  # the host profiles bound at INIT, until the QP starts at RTS
        self._next = 1

    def query_device(self) -> MrcDeviceAttr:
        """The receiver's window is the MPR (maximum PSN range) it offers, in units of 128 PSNs."""
        return MrcDeviceAttr(MrcProtocolVersion.V1, 0, 0, RX_WINDOW // 128, RX_WINDOW // 128, 0, DeviceCap.TRIM_NACK)

    def create_qp(self, qp_num: int | None = None) -> MrcQp:
        """A QP in RESET. Its number is the device's choice, or `qp_num`
        (ours: a test bed that numbers QPs across its fabric asks for one)."""
        n = qp_num if qp_num is not None else self._free()
        if n in self.qps or n in self.ep.qps:
            raise fail(EINVAL, f"QP {n} exists")
        if not 0 < n < 1 << 24:
            raise fail(EINVAL, f"QP number {n}: 1..2^24-1")
        qp = self.qps[n] = MrcQp(n)
        return qp

    def _free(self) -> int:
        while self._next in self.qps or self._next in self.ep.qps:
            self._next += 1
        return self._next

    def modify_qp(self, qp: MrcQp, attr: QpAttr, mask: QpAttrMask) -> None:
        """Take `qp` to `attr.qp_state` (one step: RESET -> INIT -> RTR -> RTS,
        or to ERR), with what that step needs (REQUIRED); EINVAL naming what
        is missing or not allowed."""
        what = f"QP {qp.qp_num} ({qp.state.name})"
        if not mask & QpAttrMask.STATE:
            raise fail(EINVAL, f"{what}: no STATE: this model changes a QP's attributes with its state")
        to = attr.qp_state
        if to is QpState.ERR:
            self.destroy_qp(qp)
            qp.state = QpState.ERR
            return
        if to != qp.state + 1 or to not in REQUIRED:
            raise fail(EINVAL, f"{what}: no transition to {to.name} (RESET -> INIT -> RTR -> RTS)")
        missing = REQUIRED[to] & ~mask
        if missing:
            raise fail(EINVAL, f"{what}: to {to.name} needs {missing!r}")
        a = qp.attr
        if to is QpState.INIT:
            self.ctl.cc_profile(attr.cc_profile_id, qp.qp_num)  # ONLINE, or EINVAL
            a.ev_profile_id, a.cc_profile_id = attr.ev_profile_id, attr.cc_profile_id
            self._bound[qp.qp_num] = self.ctl.bind(attr.ev_profile_id, qp.qp_num)
        elif to is QpState.RTR:
            if len(attr.dgid) != 16:
                raise fail(EINVAL, f"{what}: dgid of {len(attr.dgid)} bytes, not 16")
            a.dest_qp_num, a.dgid, a.rq_psn = attr.dest_qp_num, attr.dgid, attr.rq_psn
        else:
            a.sq_psn = attr.sq_psn
            qp.running = self._start(qp, self._bound.pop(qp.qp_num))
        qp.state = to

    def _start(self, qp: MrcQp, profile: EvProfile) -> QueuePair:
        """RTS: the endpoint creates the QP on its NIC and runs it. The
        receiver starts at the peer's send PSN (RTR's rq_psn); the sender at
        sq_psn: one PSN for both ends of a QP here."""
        a = qp.attr
        if a.sq_psn != a.rq_psn:
            raise fail(EINVAL, f"QP {qp.qp_num}: sq_psn {a.sq_psn} and rq_psn {a.rq_psn} differ: both ends start "
                               "at one PSN here")
        return self.ep.connect(qp.qp_num, a.dest_qp_num, a.dgid, profile, start_psn=a.sq_psn,
                               cc=self._cc(a.cc_profile_id, qp.qp_num))

    def _cc(self, pid: int, qpn: int) -> CongestionControl:
        p = self.ctl.cc_profile(pid, qpn)
        return congestion_control(CcProfileAttr(algorithm=p.algorithm, cc_config=p.config,
                                                initial_window=p.initial_window), self.line_gbps, self.ep.mtu)

    def destroy_qp(self, qp: MrcQp) -> None:
        """mrc_destroy_qp: gone from the NIC too; its profiles free it."""
        if qp.running is not None:
            self.ep.disconnect(qp.qp_num)
            qp.running = None
        self.ctl.unbind(qp.attr.ev_profile_id, qp.qp_num)
        self._bound.pop(qp.qp_num, None)
        self.qps.pop(qp.qp_num, None)


def congestion_control(p: CcProfileAttr, line_gbps: float, mtu: int) -> CongestionControl:
    """A QP's congestion control from a CC profile: NSCC with its
    configuration, starting at `initial_window` bytes; or AIMD, a copy of
    the profile's (its window in packets)."""
    if p.algorithm == "aimd":
        base = p.cc_config if isinstance(p.cc_config, Aimd) else Aimd()
        return Aimd(cwnd=base.cwnd, min_cwnd=base.min_cwnd, max_cwnd=base.max_cwnd, target_delay=base.target_delay)
    if not isinstance(p.cc_config, NsccConfig):
        raise fail(EINVAL, f"uet-1.0-nscc needs an NsccConfig, not {type(p.cc_config).__name__}")
    return Nscc(p.cc_config, line_gbps, mtu, cwnd=p.initial_window)


def cc_profile(ctl: MrcCtl, pid: int, p: CcProfileAttr) -> int:
    """CC profile `pid` ONLINE with `p`'s algorithm and configuration (made
    once: an ONLINE profile is left as it is); its id."""
    have = ctl.cc.get(pid)
    if have is None or have.state is not ProfileState.ONLINE:
        ctl.modify_cc_profile(pid, CcProfileAttr(ProfileState.OFFLINE, algorithm=p.algorithm),
                              CcProfileAttrMask.STATE | CcProfileAttrMask.ALGORITHM)
        ctl.modify_cc_profile(pid, CcProfileAttr(ProfileState.ONLINE, cc_config=p.cc_config,
                                                 initial_window=p.initial_window),
                              CcProfileAttrMask.STATE | CcProfileAttrMask.CONFIG)
    return pid


# The EV format of DESIGN.md section 5 as one STEV format profile: EV[31:11]
# tells apart EVs that share a path, EV[10:3] the spine, EV[2:0] the plane.
STEV_FIELDS = [EvFmtField(21), EvFmtField(8), EvFmtField(3)]
STEV_FMT_ID = 1


def stev_format(ctl: MrcCtl) -> int:
    """The host's STEV format profile, ONLINE (made once): its id."""
    fmt = ctl.fmt.get(STEV_FMT_ID)
    if fmt is None or fmt.state is not ProfileState.ONLINE:
        ctl.modify_ev_fmt_profile(STEV_FMT_ID, EvFmtProfileAttr(ProfileState.OFFLINE, ev_fmt_mode=EvFmtMode.STEV),
                                  EvFmtAttrMask.STATE | EvFmtAttrMask.MODE)
        ctl.modify_ev_fmt_profile(STEV_FMT_ID, EvFmtProfileAttr(ProfileState.ONLINE, op=EvFmtOp.MODIFY_FIELDS,
                                                                fmt_fields=STEV_FIELDS),
                                  EvFmtAttrMask.STATE | EvFmtAttrMask.OP)
    return STEV_FMT_ID


def explicit_profile(ctl: MrcCtl, pid: int, plan: EvProfile, event_mask: EvState = NO_EVENTS) -> None:
    """EV profile `pid` ONLINE with `plan`'s EVs as its explicit array (its
    rotation, then its spares) and `plan`'s settings as vendor
    configuration: INIT -> OFFLINE (mode, format, count, fields), every EV
    put in by REPLACE_EV, then ONLINE (min_active, event mask)."""
    evs = [*plan.home, *plan.spares()]
    fmt = stev_format(ctl)
    vendor = EvVendorCfg(slots=len(plan.home), health=plan.health, ecn_swap=plan.ecn_swap, ev_state=plan.enabled,
                         restore_after=plan.restore_after, damping=plan.damping)
    fields = [EvField(21, mask=(1 << 21) - 1, max_val=(1 << 21) - 1), EvField(8, mask=0xFF, max_val=0xFF),
              EvField(3, mask=0b111, max_val=7)]
    ctl.modify_ev_profile(pid, EvProfileAttr(ProfileState.OFFLINE, ev_mode=EvMode.EXP, ev_fmt_profile_id=fmt,
                                             ev_count=len(evs), ev_fields_op=EvFieldsOp.MODIFY_FIELDS, fields=fields,
                                             vendor_cfg=vendor),
                          EvProfileAttrMask.STATE | EvProfileAttrMask.MODE | EvProfileAttrMask.FMT_ID
                          | EvProfileAttrMask.COUNT | EvProfileAttrMask.EV_FIELDS_OP | EvProfileAttrMask.VENDOR_CFG)
    ctl.modify_ev_profile(pid, EvProfileAttr(ProfileState.ONLINE, ev_min_active=plan.min_active,
                                             ev_event_mask=event_mask, ev_op=EvOp.REPLACE_EV,
                                             entries=[EvOpEntry(UNPOPULATED, Ev.of(e)) for e in evs]),
                          EvProfileAttrMask.STATE | EvProfileAttrMask.MIN_ACTIVE | EvProfileAttrMask.EVENT_MASK
                          | EvProfileAttrMask.EV_OP)


def open_qp(api: MrcContext, qpn: int, peer_qpn: int, dgid: bytes, plan: EvProfile, cc_pid: int,
            start_psn: int = 0, event_mask: EvState = NO_EVENTS) -> MrcQp:
    """QP `qpn` to QP `peer_qpn` at `dgid` on an EV profile of its own
    (id `qpn`) made of `plan`, watching `event_mask`, with CC profile
    `cc_pid` (ONLINE): created, then RESET -> INIT -> RTR -> RTS. The one
    QP set-up path."""
    explicit_profile(api.ctl, qpn, plan, event_mask)
    qp = api.create_qp(qpn)
    api.modify_qp(qp, QpAttr(QpState.INIT, ev_profile_id=qpn, cc_profile_id=cc_pid),
                  QpAttrMask.STATE | QpAttrMask.EV_PROFILE_ID | QpAttrMask.CC_PROFILE_ID)
    api.modify_qp(qp, QpAttr(QpState.RTR, dest_qp_num=peer_qpn, dgid=dgid, rq_psn=start_psn),
                  QpAttrMask.STATE | QpAttrMask.DEST_QPN | QpAttrMask.AV | QpAttrMask.RQ_PSN)
    api.modify_qp(qp, QpAttr(QpState.RTS, sq_psn=start_psn), QpAttrMask.STATE | QpAttrMask.SQ_PSN)
    return qp
