"""The controller's MRC API on one NIC's host, as OCP's `mrc_ctl.h` names
it: EV format profiles and EV profiles with their state machine (INIT,
OFFLINE, ONLINE: which attributes may change in which state, EBUSY,
E2BIG), EV operations (REPLACE_EV, MODIFY_EV_STATE, QUERY_EV_STATE,
QUERY_EV_ARRAY), EV events on an EV event CQ, the EV_PROBE and port
status endpoint operations, port admin state and the device's
capabilities. Names and values: mrc_host/ocp.py.

An EV profile lives here, on the host; the QPs bound to it (mrc_host/
verbs.py) each run an `EvProfile` made from it (its EVs and their
states), and every change reaches the NIC only through the endpoint and
its `mrc_wire.pcie.Nic`: slot rewrites, slots marked bad, ports down. The
same calls therefore work on the reference model, on BMv2 and on any NIC
target. An EV's state here is the OCP state of its host profile's:
SKIP (a data-plane skip once) is GOOD, PLANE_DOWN (a port down here or at
the peer) is ASSUMED_BAD.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from mrc_host import ev as host_ev
from mrc_host.endpoint import Endpoint
from mrc_host.ocp import (
    E2BIG,
    EBUSY,
    EINVAL,
    ENOENT,
    ENOTSUP,
    ETIMEDOUT,
    UNPOPULATED,
    CcProfileAttr,
    CcProfileAttrMask,
    CtlDeviceAttr,
    EpOpType,
    EpReq,
    EpRsp,
    Ev,
    EvAttr,
    EvEvent,
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
    EvOpFlags,
    EvProfileAttr,
    EvProfileAttrMask,
    EvState,
    EvVendorCfg,
    OptCap,
    PortAdminState,
    PortAttr,
    PortAttrMask,
    ProfileState,
    fail,
)
from mrc_wire.constants import EV_HEALTH_SLOTS, NIC_MAX_QPS, NIC_MAX_SLOTS, ev_plane

EV_WIDTH = 32  # an STEV EV: 16 bits of UDP source port, 16 of flow label (DESIGN.md section 5)
MAX_FMT_PROFILES = 16
MAX_FIELDS = 8
CC_ALGORITHMS = ("uet-1.0-nscc", "aimd")
MAX_CC_PROFILES = NIC_MAX_QPS
# The host profile's states as OCP states: a skip once is a GOOD EV's; a
# plane down (here or at the peer) makes its EVs ASSUMED_BAD.
OCP_STATE = {host_ev.EvState.GOOD: EvState.GOOD, host_ev.EvState.SKIP: EvState.GOOD,
             host_ev.EvState.ASSUMED_BAD: EvState.ASSUMED_BAD, host_ev.EvState.PLANE_DOWN: EvState.ASSUMED_BAD,
             host_ev.EvState.DENIED: EvState.DENIED}
EVENT_STATES = EvState.GOOD | EvState.ASSUMED_BAD | EvState.DENIED  # what an event mask may hold (DENIED: ours)


def generate(fields: list[EvField], count: int) -> list[int]:
    """GEN: `count` EVs from `fields`, the last field counting fastest, each
    field's generated value spread over its mask bits (most significant
    first) on top of its init_val, the fields concatenated, the first most
    significant (mrc_ctl.h, "EV expansion")."""
    ranges = [range(f.min_val, f.max_val + 1) for f in fields]
    total = math.prod(len(r) for r in ranges)
    if count > total:
        raise fail(EINVAL, f"ev_count {count}: the fields give {total} distinct EVs")
    out = []
    for n in range(count):
        ev, k = 0, n
        values = []
        for r in reversed(ranges):
            values.append(r[k % len(r)])
            k //= len(r)
        for f, v in zip(fields, reversed(values), strict=True):
            ev = (ev << f.width) | _expand(f, v)
        out.append(ev)
    return out


def _expand(f: EvField, value: int) -> int:
    out = f.init_val
    bits = f.mask.bit_count()
    for pos in reversed(range(f.width)):  # the mask's bits, most significant first
        if f.mask >> pos & 1:
            bits -= 1
            out = (out & ~(1 << pos)) | ((value >> bits & 1) << pos)
    return out


@dataclass
class _FmtProfile:
    state: ProfileState = ProfileState.INIT
    mode: EvFmtMode | None = None
    fields: list[EvFmtField] | None = None


@dataclass
class _EvProfile:
    state: ProfileState = ProfileState.INIT
    mode: EvMode | None = None
    fmt_id: int | None = None
    count: int | None = None
    min_active: int | None = None
    event_mask: EvState | None = None
    fields: list[EvField] | None = None
    # Each EV's value (_UNSET: unpopulated), not Ev tuples: a NIC holds a
    # profile per QP, of up to hundreds of EVs, and the values are the very
    # ints the host's profile keeps (bind), so they cost a pointer each.
    array: list[int] = field(default_factory=list)
    vendor: EvVendorCfg = field(default_factory=EvVendorCfg)
    qps: set[int] = field(default_factory=set)  # the QPs bound to it (verbs.py)
    denied: set[int] = field(default_factory=set)  # EVs the controller denied


_UNSET = -1  # an unpopulated position of an EV profile's array


def _val(e: Ev) -> int | None:
    """`e` as the array holds it; None for no EV it could hold (a port
    not its plane's)."""
    if e.port == 0:
        return _UNSET if e.val == 0 else None
    return e.val if e.port == ev_plane(e.val) + 1 else None


def _ev(v: int) -> Ev:
    return UNPOPULATED if v == _UNSET else Ev.of(v)


def _has(p: _EvProfile, e: Ev) -> bool:
    v = _val(e)
    return v is not None and v in p.array


def _at(p: _EvProfile, e: Ev, every: bool) -> list[int]:
    """The positions of `e` in the profile's array, lowest first: all of
    them, or the first (a scan that stops there: an explicit array filled
    in order costs no more than its length)."""
    v = _val(e)
    if v is None:
        return []
    if every:
        return [i for i, x in enumerate(p.array) if x == v]
    try:
        return [p.array.index(v)]
    except ValueError:
        return []


@dataclass
class _CcProfile:
    state: ProfileState = ProfileState.INIT
    algorithm: str | None = None
    config: object = None
    initial_window: float | None = None
    qps: set[int] = field(default_factory=set)


class EvEventCq:
    """An EV event CQ (mrc_ctl_create_ev_event_cq): at most `cqe` events
    kept; one more is dropped and counted, and the next event delivered
    says how many were (precise drop counts)."""

    def __init__(self, cqe: int):
        if cqe < 1:
            raise fail(EINVAL, f"cqe {cqe}: at least 1")
        self.cqe = cqe
        self.events: deque[EvEvent] = deque()
        self.dropped = 0  # since the last event kept

    def push(self, e: EvEvent) -> None:
        if len(self.events) >= self.cqe:
            self.dropped += 1
            return
        self.events.append(replace(e, drop_count=self.dropped))
        self.dropped = 0

    def poll(self, num_entries: int) -> list[EvEvent]:
        """mrc_ctl_poll_ev_event: up to `num_entries` events, oldest first."""
        n = min(num_entries, len(self.events))
        return [self.events.popleft() for _ in range(n)]


class _Watch:
    """A bound QP's host profile, telling the controller of its EVs' changes."""

    def __init__(self, ctl: MrcCtl, profile_id: int):
        self.ctl, self.profile_id = ctl, profile_id

    def changed(self, ev: int, old: host_ev.EvState | None, new: host_ev.EvState, event: host_ev.EvEvent) -> None:
        self.ctl.ev_changed(self.profile_id, ev, OCP_STATE.get(old) if old is not None else None, OCP_STATE[new],
                            event.value)


class MrcCtl:
    """mrc_ctl.h over one NIC's host: `endpoint` runs the QPs and reaches the NIC."""

    def __init__(self, endpoint: Endpoint, ports: int = 8):
        self.ep = endpoint
        self.ports = ports  # the NIC's plane ports, 1..ports
        self.fmt: dict[int, _FmtProfile] = {}
        self.profiles: dict[int, _EvProfile] = {}
        self.cc: dict[int, _CcProfile] = {}
        self.cqs: list[EvEventCq] = []
        self._admin: dict[int, PortAdminState] = {}

    # ---- device and ports -------------------------------------------------------
    def query_device(self) -> CtlDeviceAttr:
        used = sum(p.count or 0 for p in self.profiles.values() if p.state is not ProfileState.INIT)
        return CtlDeviceAttr(
            1, EvAttr(MAX_FMT_PROFILES, NIC_MAX_QPS, NIC_MAX_SLOTS, max(0, NIC_MAX_SLOTS - used), NIC_MAX_SLOTS, 1,
                      EV_WIDTH, EvFmtMode.STEV, EvMode.EXP | EvMode.GEN, 0),
            MAX_CC_PROFILES, CC_ALGORITHMS, (1 << (self.ports + 1)) - 2,
            OptCap.EV_PROFILE_MODIFY_ONLINE | OptCap.EV_EVENT | OptCap.EV_EVENT_PRECISE_DROP_CNT
            | OptCap.EP_OP_EV_PROBE)

    def _port(self, port_num: int) -> int:
        if not 1 <= port_num <= self.ports:
            raise fail(EINVAL, f"port {port_num}: the device's ports are 1..{self.ports}")
        return port_num - 1

    def query_port(self, port_num: int, attr_mask: PortAttrMask = PortAttrMask.ADMIN_STATE) -> PortAttr:
        self._port(port_num)
        return PortAttr(self._admin.get(port_num, PortAdminState.ENABLED))

    def modify_port(self, port_num: int, attr: PortAttr, attr_mask: PortAttrMask) -> None:
        """Admin state: a disabled port is down (its plane's EVs leave the
        rotation here, and the NIC passes over them), an enabled one up."""
        plane = self._port(port_num)
        if not attr_mask & PortAttrMask.ADMIN_STATE:
            return
        old = self._admin.get(port_num, PortAdminState.ENABLED)
        self._admin[port_num] = attr.port_admin_state
        if old is not attr.port_admin_state:
            (self.ep.port_up if attr.port_admin_state is PortAdminState.ENABLED else self.ep.port_down)(plane)

    # ---- EV format profiles ------------------------------------------------------
    def modify_ev_fmt_profile(self, pid: int, attr: EvFmtProfileAttr, mask: EvFmtAttrMask) -> None:
        p = self.fmt.setdefault(pid, _FmtProfile())
        what = f"EV format profile {pid} ({p.state.name})"
        if mask & EvFmtAttrMask.CUR_STATE:
            raise fail(EINVAL, f"{what}: CUR_STATE is read-only")
        if mask & EvFmtAttrMask.OP and attr.op is EvFmtOp.QUERY_FIELDS:
            raise fail(EINVAL, f"{what}: QUERY_FIELDS is a query")
        if p.state is ProfileState.ONLINE and mask & ~EvFmtAttrMask.STATE & ~EvFmtAttrMask.VENDOR_CFG:
            raise fail(EINVAL, f"{what}: only STATE(OFFLINE) may change while ONLINE")
        if mask & EvFmtAttrMask.MODE:
            if attr.ev_fmt_mode not in (EvFmtMode.STEV, EvFmtMode.SRV6, EvFmtMode.UDP):
                raise fail(EINVAL, f"{what}: ev_fmt_mode {attr.ev_fmt_mode!r} is not one mode")
            if not attr.ev_fmt_mode & self.query_device().ev.ev_fmt_mode_mask:
                raise fail(EINVAL, f"{what}: ev_fmt_mode {attr.ev_fmt_mode.name} is not the device's (STEV)")
        if mask & EvFmtAttrMask.OP:
            width = sum(f.width for f in attr.fmt_fields)
            if len(attr.fmt_fields) > MAX_FIELDS or width > EV_WIDTH or any(f.width < 1 for f in attr.fmt_fields):
                raise fail(E2BIG, f"{what}: {len(attr.fmt_fields)} fields of {width} bits; the device takes "
                                  f"{MAX_FIELDS} fields of {EV_WIDTH} bits at most")
        target = attr.profile_state if mask & EvFmtAttrMask.STATE else p.state
        self._fmt_transition(pid, p, target, mask, attr, what)
        if mask & EvFmtAttrMask.MODE:
            p.mode = attr.ev_fmt_mode
        if mask & EvFmtAttrMask.OP:
            p.fields = list(attr.fmt_fields)
        p.state = target
        if target is ProfileState.INIT:
            self.fmt[pid] = _FmtProfile()

    def _fmt_transition(self, pid: int, p: _FmtProfile, target: ProfileState, mask: EvFmtAttrMask,
                        attr: EvFmtProfileAttr, what: str) -> None:
        if target is p.state:
            return
        if abs(target - p.state) != 1 and not (p.state is ProfileState.OFFLINE and target is ProfileState.INIT):
            raise fail(EINVAL, f"{what}: no transition to {target.name} (INIT -> OFFLINE -> ONLINE -> OFFLINE -> INIT)")
        if target is ProfileState.OFFLINE and p.state is ProfileState.INIT:
            if not mask & EvFmtAttrMask.MODE and p.mode is None:
                raise fail(EINVAL, f"{what}: to OFFLINE needs MODE")
        if target is ProfileState.ONLINE:
            if not mask & EvFmtAttrMask.OP and p.fields is None:
                raise fail(EINVAL, f"{what}: to ONLINE needs MODIFY_FIELDS")
        if p.state is ProfileState.ONLINE:
            busy = [q for q, e in self.profiles.items() if e.fmt_id == pid and e.state is ProfileState.ONLINE]
            if busy:
                raise fail(EBUSY, f"{what}: EV profiles {busy} using it are ONLINE")

    def query_ev_fmt_profile(self, pid: int, mask: EvFmtAttrMask, fmt_field_count: int | None = None
                             ) -> EvFmtProfileAttr:
        p = self.fmt.get(pid, _FmtProfile())
        out = EvFmtProfileAttr(profile_state=p.state, cur_profile_state=p.state,
                               ev_fmt_mode=p.mode or EvFmtMode.STEV)
        if mask & EvFmtAttrMask.OP:
            fields = p.fields or []
            if fmt_field_count is not None and fmt_field_count < len(fields):
                raise fail(E2BIG, f"EV format profile {pid}: {len(fields)} fields, array of {fmt_field_count}",
                           needed=len(fields))
            out.op, out.fmt_fields, out.fmt_field_count = EvFmtOp.QUERY_FIELDS, list(fields), len(fields)
        return out

    # ---- EV profiles ---------------------------------------------------------------
    def modify_ev_profile(self, pid: int, attr: EvProfileAttr, mask: EvProfileAttrMask) -> list[EvOpEntry]:
        """Change profile `pid`: its attributes, then the EV_OP's entries (per
        entry: the first that fails raises, the ones before it are done),
        then its state. The entries done."""
        p = self.profiles.setdefault(pid, _EvProfile())
        what = f"EV profile {pid} ({p.state.name})"
        self._check_modify(p, attr, mask, what)
        target = attr.profile_state if mask & EvProfileAttrMask.STATE else p.state
        if p.state is ProfileState.INIT and target is not ProfileState.INIT:
            self._transition(p, target, attr, mask, what)  # its requirements are the attributes given
        self._set_attributes(p, attr, mask, what)
        done = [self._ev_op(p, attr.ev_op, e, what) for e in attr.entries] if mask & EvProfileAttrMask.EV_OP else []
        if p.state is not ProfileState.INIT and target is not p.state:
            self._transition(p, target, attr, mask, what)
        if p.state is ProfileState.INIT and target is ProfileState.OFFLINE:
            self._populate(p)
        p.state = target
        if target is ProfileState.INIT:
            self.profiles[pid] = _EvProfile()
        return done

    def _set_attributes(self, p: _EvProfile, attr: EvProfileAttr, mask: EvProfileAttrMask, what: str) -> None:
        if mask & EvProfileAttrMask.MODE:
            p.mode = attr.ev_mode
        if mask & EvProfileAttrMask.FMT_ID:
            p.fmt_id = attr.ev_fmt_profile_id
        if mask & EvProfileAttrMask.COUNT:
            p.count = attr.ev_count
        if mask & EvProfileAttrMask.MIN_ACTIVE:
            p.min_active = attr.ev_min_active
        if mask & EvProfileAttrMask.EVENT_MASK:
            p.event_mask = attr.ev_event_mask
        if mask & EvProfileAttrMask.VENDOR_CFG:
            p.vendor = attr.vendor_cfg
        if mask & EvProfileAttrMask.EV_FIELDS_OP and attr.ev_fields_op is EvFieldsOp.MODIFY_FIELDS:
            self._check_fields(p, attr.fields, what)
            p.fields = list(attr.fields)
        if p.state is not ProfileState.INIT and mask & (EvProfileAttrMask.COUNT | EvProfileAttrMask.EV_FIELDS_OP):
            self._regenerate(p)

    def _check_modify(self, p: _EvProfile, attr: EvProfileAttr, mask: EvProfileAttrMask, what: str) -> None:
        """What may change in the profile's state (mrc_ctl.h's table), then
        the arguments' own limits."""
        self._check_state_rules(p, attr, mask, what)
        self._check_arguments(p, attr, mask, what)

    @staticmethod
    def _check_state_rules(p: _EvProfile, attr: EvProfileAttr, mask: EvProfileAttrMask, what: str) -> None:
        if mask & EvProfileAttrMask.EV_OP and mask & EvProfileAttrMask.EV_FIELDS_OP:
            raise fail(EINVAL, f"{what}: EV_OP and EV_FIELDS_OP are mutually exclusive")
        if mask & EvProfileAttrMask.CUR_STATE:
            raise fail(EINVAL, f"{what}: CUR_STATE is read-only")
        ev_op = attr.ev_op if mask & EvProfileAttrMask.EV_OP else None
        fields_op = attr.ev_fields_op if mask & EvProfileAttrMask.EV_FIELDS_OP else None
        if ev_op in (EvOp.QUERY_EV_STATE, EvOp.QUERY_EV_ARRAY) or fields_op is EvFieldsOp.QUERY_FIELDS:
            raise fail(EINVAL, f"{what}: a query belongs to query_ev_profile")
        if p.state is ProfileState.INIT and ev_op is not None:
            raise fail(EINVAL, f"{what}: no EV operation before OFFLINE")
        if p.state is ProfileState.ONLINE:
            # Modifiable ONLINE: STATE(OFFLINE); with EV_PROFILE_MODIFY_ONLINE (ours): EVENT_MASK,
            # REPLACE_EV, MODIFY_FIELDS; MODIFY_EV_STATE always.
            fixed = mask & (EvProfileAttrMask.MODE | EvProfileAttrMask.FMT_ID | EvProfileAttrMask.COUNT
                            | EvProfileAttrMask.MIN_ACTIVE | EvProfileAttrMask.VENDOR_CFG)
            if fixed:
                raise fail(EINVAL, f"{what}: {fixed!r} may not change while ONLINE")

    def _check_arguments(self, p: _EvProfile, attr: EvProfileAttr, mask: EvProfileAttrMask, what: str) -> None:
        if mask & EvProfileAttrMask.MODE and attr.ev_mode not in (EvMode.AUTO, EvMode.EXP, EvMode.GEN):
            raise fail(EINVAL, f"{what}: ev_mode {attr.ev_mode!r} is not one mode")
        if mask & EvProfileAttrMask.MODE and not attr.ev_mode & self.query_device().ev.ev_mode_mask:
            raise fail(EINVAL, f"{what}: ev_mode {attr.ev_mode.name} is not the device's (EXP, GEN)")
        if mask & EvProfileAttrMask.COUNT and not 1 <= attr.ev_count <= NIC_MAX_SLOTS:
            raise fail(E2BIG if attr.ev_count > NIC_MAX_SLOTS else EINVAL,
                       f"{what}: ev_count {attr.ev_count} (1..{NIC_MAX_SLOTS})")
        if mask & EvProfileAttrMask.EVENT_MASK and attr.ev_event_mask & ~EVENT_STATES:
            raise fail(EINVAL, f"{what}: ev_event_mask {attr.ev_event_mask!r}: GOOD, ASSUMED_BAD and DENIED only")
        count = attr.ev_count if mask & EvProfileAttrMask.COUNT else p.count
        if mask & EvProfileAttrMask.MIN_ACTIVE and count is not None and not 0 <= attr.ev_min_active <= count:
            raise fail(EINVAL, f"{what}: ev_min_active {attr.ev_min_active} is more than ev_count {count}")
        if mask & EvProfileAttrMask.VENDOR_CFG:
            self._check_vendor(attr.vendor_cfg, count, what)

    @staticmethod
    def _check_vendor(v: EvVendorCfg, count: int | None, what: str) -> None:
        if v.slots and (v.slots & (v.slots - 1) or (count is not None and v.slots > count)):
            raise fail(EINVAL, f"{what}: vendor slots {v.slots}: a power of two within ev_count")
        if v.health and v.slots > EV_HEALTH_SLOTS:
            raise fail(E2BIG, f"{what}: health in the data plane covers {EV_HEALTH_SLOTS} slots, not {v.slots}")

    def _check_fields(self, p: _EvProfile, fields: list[EvField], what: str) -> None:
        fmt = self.fmt.get(p.fmt_id) if p.fmt_id is not None else None
        fmt_fields = fmt.fields if fmt is not None and fmt.fields is not None else None
        if fmt_fields is not None and (len(fields) > len(fmt_fields)
                                       or sum(f.width for f in fields) > sum(f.width for f in fmt_fields)):
            raise fail(E2BIG, f"{what}: {len(fields)} fields of {sum(f.width for f in fields)} bits exceed the "
                              f"format's {len(fmt_fields)} of {sum(f.width for f in fmt_fields)}")
        for i, f in enumerate(fields):
            if f.init_val >> f.width or f.mask >> f.width:
                raise fail(EINVAL, f"{what}: fields[{i}]: init_val or mask wider than its {f.width} bits")
            if f.max_val >> f.mask.bit_count() or f.min_val > f.max_val:
                raise fail(EINVAL, f"{what}: fields[{i}]: min_val {f.min_val}, max_val {f.max_val} within its "
                                   f"{f.mask.bit_count()} mask bits")

    def _transition(self, p: _EvProfile, target: ProfileState, attr: EvProfileAttr, mask: EvProfileAttrMask,
                    what: str) -> None:
        if abs(target - p.state) != 1 and not (p.state is ProfileState.OFFLINE and target is ProfileState.INIT):
            raise fail(EINVAL, f"{what}: no transition to {target.name} (INIT -> OFFLINE -> ONLINE -> OFFLINE -> INIT)")
        if p.state is ProfileState.INIT:  # to OFFLINE: MODE, FMT_ID, COUNT, MODIFY_FIELDS
            need = EvProfileAttrMask.MODE | EvProfileAttrMask.FMT_ID | EvProfileAttrMask.COUNT
            missing = need & ~mask
            fields = mask & EvProfileAttrMask.EV_FIELDS_OP and attr.ev_fields_op is EvFieldsOp.MODIFY_FIELDS
            if missing or not fields:
                raise fail(EINVAL, f"{what}: to OFFLINE needs MODE, FMT_ID, COUNT and MODIFY_FIELDS")
            fmt = self.fmt.get(attr.ev_fmt_profile_id)
            if fmt is None or fmt.state is not ProfileState.ONLINE:
                raise fail(EINVAL, f"{what}: EV format profile {attr.ev_fmt_profile_id} is not ONLINE")
        elif target is ProfileState.ONLINE:  # MIN_ACTIVE, EVENT_MASK, REPLACE_EV (explicit)
            if (p.min_active is None and not mask & EvProfileAttrMask.MIN_ACTIVE) or \
                    (p.event_mask is None and not mask & EvProfileAttrMask.EVENT_MASK):
                raise fail(EINVAL, f"{what}: to ONLINE needs MIN_ACTIVE and EVENT_MASK")
            if _UNSET in p.array:
                raise fail(EINVAL, f"{what}: {p.array.count(_UNSET)} EVs of the explicit array are "
                                   "unpopulated (REPLACE_EV them first)")
        elif p.qps:  # ONLINE -> OFFLINE, OFFLINE -> INIT
            raise fail(EBUSY, f"{what}: QPs {sorted(p.qps)} are bound to it")

    def _populate(self, p: _EvProfile) -> None:
        """INIT -> OFFLINE: the explicit array unpopulated, or the EVs generated."""
        assert p.count is not None
        p.array = [_UNSET] * p.count if p.mode is EvMode.EXP else generate(p.fields or [], p.count)

    def _regenerate(self, p: _EvProfile) -> None:
        """COUNT or the fields changed after INIT: a generated array anew
        (online: each old EV replaced in the bound QPs); an explicit one
        keeps what fits and is unpopulated past it."""
        assert p.count is not None
        if p.mode is EvMode.GEN:
            new = generate(p.fields or [], p.count)
            for old, v in zip(p.array, new, strict=False):
                if old != v:
                    self._replace_everywhere(p, old, v, True)
            p.array = new
        else:
            p.array = (p.array + [_UNSET] * p.count)[:p.count]

    # ---- EV operations ---------------------------------------------------------------
    def _ev_op(self, p: _EvProfile, op: EvOp, e: EvOpEntry, what: str) -> EvOpEntry:
        if op is EvOp.REPLACE_EV:
            return self._replace(p, e, what)
        if op is EvOp.MODIFY_EV_STATE:
            return self._modify_state(p, e, what)
        raise fail(EINVAL, f"{what}: {op.name} is a query")

    def _replace(self, p: _EvProfile, e: EvOpEntry, what: str) -> EvOpEntry:
        every = bool(e.flags) and EvOpFlags.ALL_COPIES in e.flags  # flags are mostly 0: no Flag arithmetic
        at = _at(p, e.ev, every)
        if not at:
            raise fail(ENOENT, f"{what}: REPLACE_EV: EV {e.ev.val:#x} (port {e.ev.port}) is not in the profile")
        if e.ev_new.port != ev_plane(e.ev_new.val) + 1:
            raise fail(EINVAL, f"{what}: REPLACE_EV: EV {e.ev_new.val:#x} is on plane {ev_plane(e.ev_new.val)}, "
                               f"port {ev_plane(e.ev_new.val) + 1}, not port {e.ev_new.port}")
        for i in at:
            p.array[i] = e.ev_new.val
        if e.ev.port:  # a populated EV (an unpopulated one is (0, 0))
            self._replace_everywhere(p, e.ev.val, e.ev_new.val, every)
        if e.state is not EvState.UNKNOWN:
            self._modify_state(p, EvOpEntry(e.ev_new, state=e.state), what)
        return e

    def _modify_state(self, p: _EvProfile, e: EvOpEntry, what: str) -> EvOpEntry:
        if e.ev == UNPOPULATED or not _has(p, e.ev):
            raise fail(ENOENT, f"{what}: EV {e.ev.val:#x} (port {e.ev.port}) is not in the profile")
        ev = e.ev.val
        if e.state is EvState.DENIED:
            p.denied.add(ev)
            self._each_qp(p, lambda prof: prof.deny(ev))
        elif e.state is EvState.GOOD:
            p.denied.discard(ev)
            self._each_qp(p, lambda prof: prof.restore(ev))
        elif e.state is EvState.ASSUMED_BAD:
            self._each_qp(p, lambda prof: prof.assume_bad(ev))
        else:
            raise fail(EINVAL, f"{what}: MODIFY_EV_STATE to {e.state!r}: GOOD, ASSUMED_BAD or DENIED")
        return e

    def _replace_everywhere(self, p: _EvProfile, old: int, new: int, every: bool) -> None:
        def change(prof: host_ev.EvProfile) -> None:
            prof.replace(old, new, every)

        self._each_qp(p, change)

    def _each_qp(self, p: _EvProfile, change: Callable[[host_ev.EvProfile], object]) -> None:
        """Apply `change` to the host profile of every QP bound to `p`, and
        write what it decided into the NIC."""
        for qpn in sorted(p.qps):
            qp = self.ep.qps.get(qpn)
            if qp is not None:
                change(qp.profile)
                self.ep.push_slots(qpn)

    def query_ev_profile(self, pid: int, mask: EvProfileAttrMask, attr: EvProfileAttr | None = None
                         ) -> EvProfileAttr:
        """The profile's attributes; with EV_OP, QUERY_EV_STATE fills each
        entry's state, QUERY_EV_ARRAY the array (E2BIG, with the count
        needed, for a short `entry_count`)."""
        p = self.profiles.get(pid, _EvProfile())
        a = attr or EvProfileAttr()
        if mask & EvProfileAttrMask.EV_OP and mask & EvProfileAttrMask.EV_FIELDS_OP:
            raise fail(EINVAL, f"EV profile {pid}: EV_OP and EV_FIELDS_OP are mutually exclusive")
        out = replace(a, profile_state=p.state, cur_profile_state=p.state, ev_mode=p.mode or EvMode.EXP,
                      ev_fmt_profile_id=p.fmt_id or 0, ev_count=p.count or 0,
                      ev_min_active=p.min_active if p.min_active is not None else 1,
                      ev_event_mask=p.event_mask or EvState(0), vendor_cfg=p.vendor)
        if mask & EvProfileAttrMask.EV_OP:
            if a.ev_op is EvOp.QUERY_EV_ARRAY:
                if a.entry_count and a.entry_count < len(p.array):
                    raise fail(E2BIG, f"EV profile {pid}: {len(p.array)} EVs, array of {a.entry_count}",
                               needed=len(p.array))
                out.entries = [EvOpEntry(x, state=self._state(p, x)) for x in map(_ev, p.array)]
                out.entry_count = len(p.array)
            elif a.ev_op is EvOp.QUERY_EV_STATE:
                for e in a.entries:
                    if not _has(p, e.ev):
                        raise fail(ENOENT, f"EV profile {pid}: EV {e.ev.val:#x} is not in the profile")
                out.entries = [EvOpEntry(e.ev, state=self._state(p, e.ev)) for e in a.entries]
            else:
                raise fail(EINVAL, f"EV profile {pid}: {a.ev_op.name} is a modification")
        if mask & EvProfileAttrMask.EV_FIELDS_OP:
            fields = p.fields or []
            if a.field_count and a.field_count < len(fields):
                raise fail(E2BIG, f"EV profile {pid}: {len(fields)} fields, array of {a.field_count}",
                           needed=len(fields))
            out.fields, out.field_count = list(fields), len(fields)
        return out

    def _state(self, p: _EvProfile, e: Ev) -> EvState:
        """An EV's OCP state: UNKNOWN unpopulated or before any QP runs it;
        DENIED if denied; ASSUMED_BAD if a bound QP has it so; else GOOD."""
        if e == UNPOPULATED:
            return EvState.UNKNOWN
        if e.val in p.denied:
            return EvState.DENIED
        states = [OCP_STATE[q.profile.state[e.val]] for qpn in p.qps
                  if (q := self.ep.qps.get(qpn)) is not None and e.val in q.profile.state]
        if not states:
            return EvState.UNKNOWN
        return EvState.ASSUMED_BAD if EvState.ASSUMED_BAD in states else states[0]

    # ---- what verbs.py binds --------------------------------------------------------
    def bind(self, pid: int, qpn: int) -> host_ev.EvProfile:
        """QP `qpn` takes profile `pid` (ONLINE): the host profile it runs."""
        p = self.profiles.get(pid)
        if p is None or p.state is not ProfileState.ONLINE:
            raise fail(EINVAL, f"EV profile {pid} is not ONLINE")
        evs = list(p.array)
        n = p.vendor.slots or 1 << (len(evs).bit_length() - 1)
        home, spares = evs[:n], evs[n:]
        backups: dict[int, list[int]] = {}
        for e in spares:
            backups.setdefault(ev_plane(e), []).append(e)
        prof = host_ev.EvProfile(home, backups, restore_after=p.vendor.restore_after, damping=p.vendor.damping,
                                 min_active=p.min_active if p.min_active is not None else 1,
                                 enabled=p.vendor.ev_state, ecn_swap=p.vendor.ecn_swap,
                                 health=p.vendor.health and len(home) <= EV_HEALTH_SLOTS)
        for ev in sorted(p.denied):
            prof.deny(ev)
        if p.event_mask:
            prof.watcher = _Watch(self, pid)
        p.qps.add(qpn)
        return prof

    def unbind(self, pid: int, qpn: int) -> None:
        p = self.profiles.get(pid)
        if p is not None:
            p.qps.discard(qpn)

    def ev_changed(self, pid: int, ev: int, old: EvState | None, new: EvState, reason: str) -> None:
        """A bound QP's EV changed state: an event, if the profile watches the new state."""
        p = self.profiles.get(pid)
        if p is None or old is new or not (p.event_mask or 0) & new:
            return
        e = EvEvent(pid, Ev.of(ev), 0, new, reason)
        for cq in self.cqs:
            cq.push(e)

    # ---- EV events ----------------------------------------------------------------------
    def create_ev_event_cq(self, cqe: int) -> EvEventCq:
        cq = EvEventCq(cqe)
        self.cqs.append(cq)
        return cq

    def poll_ev_event(self, cq: EvEventCq, num_entries: int) -> list[EvEvent]:
        return cq.poll(num_entries)

    # ---- CC profiles ----------------------------------------------------------------------
    def modify_cc_profile(self, pid: int, attr: CcProfileAttr, mask: CcProfileAttrMask) -> None:
        p = self.cc.setdefault(pid, _CcProfile())
        what = f"CC profile {pid} ({p.state.name})"
        target = attr.profile_state if mask & CcProfileAttrMask.STATE else p.state
        if mask & CcProfileAttrMask.ALGORITHM and attr.algorithm not in (*CC_ALGORITHMS, None):
            raise fail(EINVAL, f"{what}: algorithm {attr.algorithm!r}: the device's are {', '.join(CC_ALGORITHMS)}")
        if p.state is ProfileState.ONLINE and mask & (CcProfileAttrMask.ALGORITHM | CcProfileAttrMask.CONFIG):
            raise fail(EINVAL, f"{what}: the profile may not change while ONLINE")
        if target is not p.state:
            if abs(target - p.state) != 1 and not (p.state is ProfileState.OFFLINE and target is ProfileState.INIT):
                raise fail(EINVAL, f"{what}: no transition to {target.name}")
            if target is ProfileState.OFFLINE and p.state is ProfileState.INIT \
                    and not mask & CcProfileAttrMask.ALGORITHM and p.algorithm is None:
                raise fail(EINVAL, f"{what}: to OFFLINE needs ALGORITHM")
            if target is ProfileState.ONLINE and not mask & CcProfileAttrMask.CONFIG and p.config is None:
                raise fail(EINVAL, f"{what}: to ONLINE needs CONFIG")
            if p.state is ProfileState.ONLINE and p.qps:
                raise fail(EBUSY, f"{what}: QPs {sorted(p.qps)} use it")
        if mask & CcProfileAttrMask.ALGORITHM:
            p.algorithm = attr.algorithm
        if mask & CcProfileAttrMask.CONFIG:
            p.config, p.initial_window = attr.cc_config, attr.initial_window
        p.state = target

    def cc_profile(self, pid: int, qpn: int) -> _CcProfile:
        p = self.cc.get(pid)
        if p is None or p.state is not ProfileState.ONLINE:
            raise fail(EINVAL, f"CC profile {pid} is not ONLINE")
        p.qps.add(qpn)
        return p

    # ---- endpoint operations -------------------------------------------------------------
    def ep_batch_send_wait(self, req_tc: int, op_type: EpOpType, reqs: list[EpReq], rsp_timeout: int
                           ) -> list[EpRsp]:
        """Send same-type endpoint operations and wait up to `rsp_timeout` ns
        for their responses, in arrival order: EV_PROBE probes `req_ev` to
        the NIC at `dgid` (over a QP of ours to it, which its NIC answers);
        PORT_STATUS_UPDATE tells it our ports. ETIMEDOUT if not all came."""
        if op_type not in (EpOpType.EV_PROBE, EpOpType.PORT_STATUS_UPDATE):
            raise fail(ENOTSUP, f"endpoint operation {op_type!r}")
        if len({r.req_id for r in reqs}) != len(reqs):
            raise fail(EINVAL, "request ids must be unique")
        pending: dict[int, tuple[int, float]] = {}  # handle -> (req_id, sent at)
        for r in reqs:
            qpn = self.ep.qp_to_address(r.dgid)
            if qpn is None:
                raise fail(EINVAL, f"request {r.req_id}: no QP of this host to {r.dgid.hex()}")
            handle = self.ep.probe_ev(qpn, r.req_ev.val) if op_type is EpOpType.EV_PROBE \
                else self.ep.announce(qpn)
            pending[handle] = (r.req_id, self.ep.sim.now)
        got: list[EpRsp] = []

        def done() -> bool:
            for handle, (req_id, sent) in list(pending.items()):
                at = self.ep.answered(handle)
                if at is not None:
                    got.append(EpRsp(req_id, 0, int((at - sent) * 1000)))
                    del pending[handle]
            return not pending

        self.ep.sim.run(until=self.ep.sim.now + rsp_timeout / 1000, stop=done)
        done()
        if pending:
            raise fail(ETIMEDOUT, f"{len(pending)} of {len(reqs)} responses did not come in {rsp_timeout} ns")
        return got
