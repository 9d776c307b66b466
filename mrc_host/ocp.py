"""The names of OCP's MRC API (opencomputeproject/OCP-Multipath-Reliable-
Connection: `mrc.h` for QPs, `mrc_ctl.h` for the controller), as Python
types: its enums with their values, its attribute structures as
dataclasses, its errors as `MrcError` with the errno the C API sets. The
calls are in mrc_host/ctl.py (mrc_ctl.h) and mrc_host/verbs.py (mrc.h);
docs/nic.md maps each to what it writes on the NIC."""

from __future__ import annotations

import enum
import errno
import os
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mrc_host.ev import Damping
from mrc_wire.constants import ev_plane


class MrcError(OSError):
    """A call refused as the C API refuses it: -1 with errno set (EINVAL,
    EBUSY, E2BIG, ENOENT, ...). `needed` is the array length a query needs
    when it returns E2BIG for a short array."""

    def __init__(self, code: int, what: str, needed: int | None = None):
        super().__init__(code, f"{errno.errorcode.get(code, code)}: {what}")
        self.needed = needed


def fail(code: int, what: str, needed: int | None = None) -> MrcError:
    return MrcError(code, what, needed)


EINVAL, EBUSY, E2BIG, ENOENT, ENOTSUP, ETIMEDOUT = (errno.EINVAL, errno.EBUSY, errno.E2BIG, errno.ENOENT,
                                                   errno.ENOTSUP, errno.ETIMEDOUT)
assert os.strerror(E2BIG)  # the platform knows them


# ---- mrc_ctl.h: profiles -------------------------------------------------------
class ProfileState(enum.IntEnum):
    """enum mrc_ctl_profile_state."""

    INIT = 0
    OFFLINE = 1
    ONLINE = 2


class EvFmtMode(enum.IntFlag):
    """enum mrc_ctl_ev_fmt_mode: where an EV travels in a packet."""

    STEV = 1 << 0  # spread over the IPv6 flow label and the UDP source port (DESIGN.md section 5)
    SRV6 = 1 << 1
    UDP = 1 << 2


class EvFmtOp(enum.IntEnum):
    MODIFY_FIELDS = 0
    QUERY_FIELDS = 1


class EvFmtAttrMask(enum.IntFlag):
    """enum mrc_ctl_ev_fmt_profile_attr_mask."""

    STATE = 1 << 0
    CUR_STATE = 1 << 1
    MODE = 1 << 2
    OP = 1 << 3
    VENDOR_CFG = 1 << 31


class EvState(enum.IntFlag):
    """enum mrc_ctl_ev_state."""

    GOOD = 1 << 0
    ASSUMED_BAD = 1 << 1
    DENIED = 1 << 2
    UNKNOWN = 1 << 31


class EvMode(enum.IntFlag):
    """enum mrc_ctl_ev_mode."""

    AUTO = 1 << 0  # the NIC picks (one hashed path, as ECMP would)
    EXP = 1 << 1  # an explicit EV array, filled by REPLACE_EV
    GEN = 1 << 2  # EVs generated from the profile's fields


NO_EVENTS = EvState(0)  # an event mask watching no state


class EvOp(enum.IntEnum):
    """enum mrc_ctl_ev_op."""

    REPLACE_EV = 0
    MODIFY_EV_STATE = 1
    QUERY_EV_STATE = 2
    QUERY_EV_ARRAY = 3


class EvFieldsOp(enum.IntEnum):
    MODIFY_FIELDS = 0
    QUERY_FIELDS = 1


class EvProfileAttrMask(enum.IntFlag):
    """enum mrc_ctl_ev_profile_attr_mask."""

    STATE = 1 << 0
    CUR_STATE = 1 << 1
    MODE = 1 << 2
    FMT_ID = 1 << 3
    COUNT = 1 << 4
    MIN_ACTIVE = 1 << 5
    EVENT_MASK = 1 << 6
    EV_OP = 1 << 7
    EV_FIELDS_OP = 1 << 8
    VENDOR_CFG = 1 << 31


class EvOpFlags(enum.IntFlag):
    ALL_COPIES = 1 << 0  # REPLACE_EV: every occurrence


class OptCap(enum.IntFlag):
    """enum mrc_ctl_attr_opt: optional features."""

    EV_PROFILE_MODIFY_ONLINE = 1 << 0
    CC_PROFILE_MODIFY_ONLINE = 1 << 1
    EV_EVENT = 1 << 2
    EV_EXPLICIT_RANGE = 1 << 3
    EV_EVENT_PRECISE_DROP_CNT = 1 << 4
    EP_OP_EV_PROBE = 1 << 5


class PortAdminState(enum.IntEnum):
    DISABLED = 0
    ENABLED = 1


class PortAttrMask(enum.IntFlag):
    ADMIN_STATE = 1 << 0


class EpOpType(enum.IntEnum):
    """enum mrc_ctl_ep_op_type."""

    EV_PROBE = 0
    PORT_STATUS_UPDATE = 1


class CcProfileAttrMask(enum.IntFlag):
    STATE = 1 << 0
    CUR_STATE = 1 << 1
    ALGORITHM = 1 << 2
    CONFIG = 1 << 3
    VENDOR_CFG = 1 << 31


class Ev(NamedTuple):
    """struct mrc_ctl_ev: an EV's value (STEV: 32 bits) and its port
    (1-based; 0 with value 0: unpopulated). Here a port is a plane + 1.
    A tuple: a host makes one per EV of every profile it sets up."""

    val: int
    port: int

    @classmethod
    def of(cls, val: int) -> Ev:
        """The EV `val` on the port of its plane."""
        return cls(val, ev_plane(val) + 1)


UNPOPULATED = Ev(0, 0)  # MRC_CTL_EV_UNPOPULATED


@dataclass(frozen=True)
class EvFmtField:
    width: int  # bits


@dataclass
class EvFmtProfileAttr:
    """struct mrc_ctl_ev_fmt_profile_attr."""

    profile_state: ProfileState = ProfileState.INIT
    cur_profile_state: ProfileState = ProfileState.INIT
    ev_fmt_mode: EvFmtMode = EvFmtMode.STEV
    op: EvFmtOp = EvFmtOp.QUERY_FIELDS
    fmt_fields: list[EvFmtField] = field(default_factory=list)
    fmt_field_count: int = 0  # a query's array length (in), the fields' count (out)


@dataclass(frozen=True)
class EvField:
    """struct mrc_ctl_ev_field."""

    width: int
    init_val: int = 0
    min_val: int = 0
    max_val: int = 0
    mask: int = 0


@dataclass
class EvOpEntry:
    """struct mrc_ctl_ev_op_entry."""

    ev: Ev = UNPOPULATED
    ev_new: Ev = UNPOPULATED
    state: EvState = EvState.UNKNOWN
    flags: EvOpFlags = EvOpFlags(0)


@dataclass(frozen=True)
class EvVendorCfg:
    """The profile's vendor_cfg here: what OCP leaves to the vendor. `slots`:
    how many of the EV array form the rotation (a power of two; the rest
    are spares a retired EV's slots are refilled from; 0: the largest power
    of two the array holds); `health`: the NIC's data plane keeps the
    slots' health (at most 64 slots); `ecn_swap`: a congestion mark moves
    an EV's slots to an idle spare for good (else it is skipped once);
    `ev_state`: False, events change nothing (oblivious spraying);
    `restore_after`: good probes in a row that restore an EV; `damping`:
    how a flapping EV is kept out and a link that came back let in
    (mrc_host/ev.py, Damping)."""

    slots: int = 0
    health: bool = False
    ecn_swap: bool = False
    ev_state: bool = True
    restore_after: int = 3
    damping: Damping = field(default_factory=Damping)


@dataclass
class EvProfileAttr:
    """struct mrc_ctl_ev_profile_attr."""

    profile_state: ProfileState = ProfileState.INIT
    cur_profile_state: ProfileState = ProfileState.INIT
    ev_mode: EvMode = EvMode.EXP
    ev_fmt_profile_id: int = 0
    ev_count: int = 0
    ev_min_active: int = 1
    ev_event_mask: EvState = EvState(0)
    ev_op: EvOp = EvOp.QUERY_EV_ARRAY
    entries: list[EvOpEntry] = field(default_factory=list)
    entry_count: int = 0  # a query's array length (in), the entries' count (out)
    ev_fields_op: EvFieldsOp = EvFieldsOp.QUERY_FIELDS
    fields: list[EvField] = field(default_factory=list)
    field_count: int = 0
    vendor_cfg: EvVendorCfg = field(default_factory=EvVendorCfg)


@dataclass
class CcProfileAttr:
    """struct mrc_ctl_cc_profile_attr: `algorithm` names one of the
    device's (cc.algorithms); `cc_config` its configuration (mrc_host.nscc's
    NsccConfig for uet-1.0-nscc; mrc_host.cc's Aimd for aimd); the vendor's
    `initial_window`: bytes a QP may send before its first ACK."""

    profile_state: ProfileState = ProfileState.INIT
    cur_profile_state: ProfileState = ProfileState.INIT
    algorithm: str | None = None
    cc_config: Any = None
    initial_window: float | None = None


@dataclass(frozen=True)
class EvEvent:
    """struct mrc_ctl_ev_event: the profile, the EV, the events dropped
    before this one (precise: MRC_CTL_OPT_CAP_EV_EVENT_PRECISE_DROP_CNT) and
    the EV's new state. `reason` (ours) says what made the change."""

    profile_id: int
    ev: Ev
    drop_count: int
    state: EvState
    reason: str = ""


@dataclass(frozen=True)
class PortAttr:
    port_admin_state: PortAdminState


@dataclass(frozen=True)
class EvAttr:
    ev_max_fmt_profiles: int
    ev_max_profiles: int
    ev_max_count: int
    ev_free_count: int
    ev_max_count_profile: int
    ev_count_align: int
    ev_max_width: int
    ev_fmt_mode_mask: EvFmtMode
    ev_mode_mask: EvMode
    ev_op_max_entries: int


@dataclass(frozen=True)
class CtlDeviceAttr:
    """struct mrc_ctl_device_attr."""

    mrc_ctl_protocol_version: int
    ev: EvAttr
    cc_max_profiles: int
    cc_algorithms: tuple[str, ...]
    phy_port_mask: int
    opt_attr: OptCap


@dataclass(frozen=True)
class EpReq:
    """struct mrc_ctl_ep_req: `dgid` the peer NIC's address (16 bytes)."""

    req_id: int
    dgid: bytes
    req_ev: Ev
    ev_fmt_mode: EvFmtMode = EvFmtMode.STEV
    port_status: int = 0  # PORT_STATUS_UPDATE: the ports down (1-based bits)


@dataclass(frozen=True)
class EpRsp:
    """struct mrc_ctl_ep_rsp: `rtt` in ns."""

    req_id: int
    port: int
    rtt: int
    adj_svc_time: int = 0


# ---- mrc.h: QPs -----------------------------------------------------------------
class MrcProtocolVersion(enum.IntFlag):
    V0 = 0
    V1 = 1 << 0


class DeviceCap(enum.IntFlag):
    """enum mrc_device_cap."""

    TRIM_NACK = 1 << 0
    DYNAMIC_MPR = 1 << 1
    SVC_TIME = 1 << 2


class QpAttrMask(enum.IntFlag):
    """enum mrc_qp_attr_mask, and the verbs attributes a transition needs
    (ibv_qp_attr_mask: STATE, DEST_QPN, AV, RQ_PSN, SQ_PSN), after the MRC ones."""

    MAX_WIMM = 1 << 0
    MAX_WIMM_DEST = 1 << 1
    MPR = 1 << 2
    MPR_DEST = 1 << 3
    TIMEOUT = 1 << 4
    EV_PROFILE_ID = 1 << 5
    CC_PROFILE_ID = 1 << 6
    HINT = 1 << 7
    RETRY_CNT = 1 << 8
    CAP = 1 << 9
    STATE = 1 << 16
    DEST_QPN = 1 << 17
    AV = 1 << 18
    RQ_PSN = 1 << 19
    SQ_PSN = 1 << 20
    VENDOR_CFG = 1 << 31


class QpState(enum.IntEnum):
    """enum ibv_qp_state, the states an MRC QP passes."""

    RESET = 0
    INIT = 1
    RTR = 2
    RTS = 3
    ERR = 6


@dataclass(frozen=True)
class MrcDeviceAttr:
    """struct mrc_device_attr."""

    mrc_protocol_version: MrcProtocolVersion
    max_wimm: int
    max_wimm_dest: int
    max_mpr: int  # units of 128 PSNs
    mpr_resolution: int
    max_qp_hint: int
    cap: DeviceCap


@dataclass
class QpAttr:
    """struct mrc_qp_attr with the verbs attributes a transition needs.
    `timeout`: 1.024 µs x 2^timeout (0: the device's); `linear_cnt` and
    `exp_cnt`: retries before the QP's error state."""

    qp_state: QpState = QpState.RESET
    ev_profile_id: int = 0
    cc_profile_id: int = 0
    dest_qp_num: int = 0
    dgid: bytes = bytes(16)
    rq_psn: int = 0
    sq_psn: int = 0
    mpr: int = 0
    mpr_dest: int = 0
    timeout: int = 0
    linear_cnt: int = 0
    exp_cnt: int = 0
