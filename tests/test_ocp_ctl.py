"""The controller's MRC API (mrc_host/ctl.py) as OCP's mrc_ctl.h specifies
it, rule by rule: each transition a profile's state machine forbids and
each attribute its state does not allow is refused with mrc_ctl.h's errno
(EINVAL, EBUSY, E2BIG, ENOENT), and nothing changes; the allowed ones do."""

from __future__ import annotations

import pytest

from mrc_host.ctl import MrcCtl, generate
from mrc_host.endpoint import Endpoint
from mrc_host.ocp import (
    E2BIG,
    EBUSY,
    EINVAL,
    ENOENT,
    NO_EVENTS,
    UNPOPULATED,
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
    EvOpFlags,
    EvProfileAttr,
    EvProfileAttrMask,
    EvState,
    MrcError,
    OptCap,
    ProfileState,
)
from mrc_wire.constants import NIC_MAX_SLOTS
from sim_core.sim import Sim
from tests.support.spy_nic import SpyNic

M = EvProfileAttrMask
F = EvFmtAttrMask
FIELDS = [EvFmtField(21), EvFmtField(8), EvFmtField(3)]
EV_FIELDS = [EvField(21), EvField(8, mask=0xFF, max_val=3), EvField(3, mask=0b111, max_val=1)]  # 4 spines, 2 planes


def ctl() -> MrcCtl:
    return MrcCtl(Endpoint(Sim(), "fd00::1", SpyNic()), ports=2)


def refused(code: int, call, *args) -> MrcError:
    with pytest.raises(MrcError) as e:
        call(*args)
    assert e.value.errno == code, e.value
    return e.value


def fmt_online(c: MrcCtl, pid: int = 1) -> None:
    c.modify_ev_fmt_profile(pid, EvFmtProfileAttr(ProfileState.OFFLINE, ev_fmt_mode=EvFmtMode.STEV), F.STATE | F.MODE)
    c.modify_ev_fmt_profile(pid, EvFmtProfileAttr(ProfileState.ONLINE, op=EvFmtOp.MODIFY_FIELDS, fmt_fields=FIELDS),
                            F.STATE | F.OP)


def offline(mode: EvMode = EvMode.EXP, count: int = 4, **kw) -> EvProfileAttr:
    return EvProfileAttr(ProfileState.OFFLINE, ev_mode=mode, ev_fmt_profile_id=1, ev_count=count,
                         ev_fields_op=EvFieldsOp.MODIFY_FIELDS, fields=EV_FIELDS, **kw)


TO_OFFLINE = M.STATE | M.MODE | M.FMT_ID | M.COUNT | M.EV_FIELDS_OP
EVS = [Ev.of(v) for v in (0x08, 0x09, 0x10, 0x11)]


def online_exp(c: MrcCtl, pid: int = 7, mask_events: EvState = NO_EVENTS) -> None:
    fmt_online(c)
    c.modify_ev_profile(pid, offline(), TO_OFFLINE)
    c.modify_ev_profile(pid, EvProfileAttr(ProfileState.ONLINE, ev_min_active=1, ev_event_mask=mask_events,
                                           ev_op=EvOp.REPLACE_EV, entries=[EvOpEntry(UNPOPULATED, e) for e in EVS]),
                        M.STATE | M.MIN_ACTIVE | M.EVENT_MASK | M.EV_OP)


# ---- EV format profile: INIT -> OFFLINE -> ONLINE -> OFFLINE -> INIT ----------------------------------
def test_a_format_profile_goes_round_its_states():
    c = ctl()
    fmt_online(c)
    assert c.query_ev_fmt_profile(1, F.STATE | F.OP).fmt_fields == FIELDS
    c.modify_ev_fmt_profile(1, EvFmtProfileAttr(ProfileState.OFFLINE), F.STATE)
    c.modify_ev_fmt_profile(1, EvFmtProfileAttr(ProfileState.INIT), F.STATE)
    assert c.query_ev_fmt_profile(1, F.STATE).cur_profile_state is ProfileState.INIT


@pytest.mark.parametrize("state, mask, why", [
    (ProfileState.ONLINE, F.STATE, "no transition to ONLINE"),  # INIT -> ONLINE skips OFFLINE
    (ProfileState.OFFLINE, F.STATE, "to OFFLINE needs MODE"),
])
def test_a_format_profile_leaves_init_only_to_offline_with_its_mode(state, mask, why):
    e = refused(EINVAL, ctl().modify_ev_fmt_profile, 1, EvFmtProfileAttr(state), mask)
    assert why in str(e)


def test_a_format_profile_goes_online_only_with_its_fields():
    c = ctl()
    c.modify_ev_fmt_profile(1, EvFmtProfileAttr(ProfileState.OFFLINE, ev_fmt_mode=EvFmtMode.STEV), F.STATE | F.MODE)
    assert "to ONLINE needs MODIFY_FIELDS" in str(refused(EINVAL, c.modify_ev_fmt_profile, 1,
                                                           EvFmtProfileAttr(ProfileState.ONLINE), F.STATE))


def test_an_online_format_profile_changes_only_its_state():
    c = ctl()
    fmt_online(c)
    refused(EINVAL, c.modify_ev_fmt_profile, 1, EvFmtProfileAttr(ev_fmt_mode=EvFmtMode.STEV), F.MODE)
    refused(EINVAL, c.modify_ev_fmt_profile, 1, EvFmtProfileAttr(op=EvFmtOp.MODIFY_FIELDS, fmt_fields=FIELDS), F.OP)
    assert c.query_ev_fmt_profile(1, F.STATE).cur_profile_state is ProfileState.ONLINE


def test_a_format_profile_an_online_ev_profile_uses_is_busy():
    c = ctl()
    online_exp(c)
    e = refused(EBUSY, c.modify_ev_fmt_profile, 1, EvFmtProfileAttr(ProfileState.OFFLINE), F.STATE)
    assert "EV profiles [7] using it are ONLINE" in str(e)


def test_a_format_the_device_cannot_carry_is_refused():
    c = ctl()
    refused(EINVAL, c.modify_ev_fmt_profile, 1, EvFmtProfileAttr(ev_fmt_mode=EvFmtMode.SRV6), F.MODE)
    c.modify_ev_fmt_profile(1, EvFmtProfileAttr(ProfileState.OFFLINE, ev_fmt_mode=EvFmtMode.STEV), F.STATE | F.MODE)
    refused(E2BIG, c.modify_ev_fmt_profile, 1, EvFmtProfileAttr(op=EvFmtOp.MODIFY_FIELDS,
                                                                fmt_fields=[EvFmtField(30), EvFmtField(3)]), F.OP)


def test_a_field_query_with_too_short_an_array_says_how_long_it_must_be():
    c = ctl()
    fmt_online(c)
    assert refused(E2BIG, c.query_ev_fmt_profile, 1, F.OP, 2).needed == 3


# ---- EV profile --------------------------------------------------------------------------------------
@pytest.mark.parametrize("drop", [M.MODE, M.FMT_ID, M.COUNT, M.EV_FIELDS_OP])
def test_an_ev_profile_leaves_init_only_with_mode_format_count_and_fields(drop):
    c = ctl()
    fmt_online(c)
    refused(EINVAL, c.modify_ev_profile, 7, offline(), TO_OFFLINE & ~drop)
    assert c.query_ev_profile(7, M.STATE).cur_profile_state is ProfileState.INIT


def test_an_ev_profile_needs_its_format_profile_online():
    c = ctl()
    assert "EV format profile 1 is not ONLINE" in str(refused(EINVAL, c.modify_ev_profile, 7, offline(), TO_OFFLINE))


def test_an_explicit_profile_goes_online_only_once_every_ev_is_put_in():
    c = ctl()
    fmt_online(c)
    c.modify_ev_profile(7, offline(), TO_OFFLINE)
    q = c.query_ev_profile(7, M.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_ARRAY))
    assert [e.ev for e in q.entries] == [UNPOPULATED] * 4 and {e.state for e in q.entries} == {EvState.UNKNOWN}
    go = EvProfileAttr(ProfileState.ONLINE, ev_min_active=1, ev_event_mask=EvState(0))
    e = refused(EINVAL, c.modify_ev_profile, 7, go, M.STATE | M.MIN_ACTIVE | M.EVENT_MASK)
    assert "4 EVs of the explicit array are unpopulated" in str(e)
    go.ev_op, go.entries = EvOp.REPLACE_EV, [EvOpEntry(UNPOPULATED, e) for e in EVS]
    c.modify_ev_profile(7, go, M.STATE | M.MIN_ACTIVE | M.EVENT_MASK | M.EV_OP)
    q = c.query_ev_profile(7, M.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_ARRAY))
    assert q.cur_profile_state is ProfileState.ONLINE and [e.ev for e in q.entries] == EVS


@pytest.mark.parametrize("drop", [M.MIN_ACTIVE, M.EVENT_MASK])
def test_an_ev_profile_goes_online_only_with_its_floor_and_event_mask(drop):
    c = ctl()
    fmt_online(c)
    c.modify_ev_profile(7, offline(EvMode.GEN), TO_OFFLINE)
    go = EvProfileAttr(ProfileState.ONLINE, ev_min_active=1, ev_event_mask=EvState(0))
    refused(EINVAL, c.modify_ev_profile, 7, go, (M.STATE | M.MIN_ACTIVE | M.EVENT_MASK) & ~drop)


@pytest.mark.parametrize("mask", [M.MODE, M.FMT_ID, M.COUNT, M.MIN_ACTIVE])
def test_an_online_ev_profile_keeps_its_mode_format_count_and_floor(mask):
    c = ctl()
    online_exp(c)
    refused(EINVAL, c.modify_ev_profile, 7, offline(), mask)


def test_an_online_ev_profile_changes_its_event_mask_the_device_modifies_online():
    c = ctl()
    assert c.query_device().opt_attr & OptCap.EV_PROFILE_MODIFY_ONLINE
    online_exp(c)
    c.modify_ev_profile(7, EvProfileAttr(ev_event_mask=EvState.ASSUMED_BAD), M.EVENT_MASK)
    assert c.query_ev_profile(7, M.EVENT_MASK).ev_event_mask == EvState.ASSUMED_BAD


def test_ev_op_and_fields_op_together_are_refused():
    c = ctl()
    online_exp(c)
    refused(EINVAL, c.modify_ev_profile, 7, EvProfileAttr(ev_op=EvOp.MODIFY_EV_STATE), M.EV_OP | M.EV_FIELDS_OP)


def test_no_ev_operation_before_offline_and_no_query_through_modify():
    c = ctl()
    refused(EINVAL, c.modify_ev_profile, 7, EvProfileAttr(ev_op=EvOp.REPLACE_EV), M.EV_OP)
    online_exp(c, pid=8)
    refused(EINVAL, c.modify_ev_profile, 8, EvProfileAttr(ev_op=EvOp.QUERY_EV_STATE), M.EV_OP)


def test_too_many_evs_or_fields_wider_than_the_format_are_e2big():
    c = ctl()
    fmt_online(c)
    refused(E2BIG, c.modify_ev_profile, 7, offline(count=NIC_MAX_SLOTS + 1), TO_OFFLINE)
    wide = offline()
    wide.fields = [EvField(30), EvField(8)]
    refused(E2BIG, c.modify_ev_profile, 7, wide, TO_OFFLINE)


def test_an_ev_not_in_the_profile_is_enoent_and_a_short_array_e2big():
    c = ctl()
    online_exp(c)
    stranger = Ev.of(0x18)
    refused(ENOENT, c.query_ev_profile, 7, M.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_STATE,
                                                                  entries=[EvOpEntry(stranger)]))
    refused(ENOENT, c.modify_ev_profile, 7, EvProfileAttr(ev_op=EvOp.REPLACE_EV,
                                                          entries=[EvOpEntry(stranger, EVS[0])]), M.EV_OP)
    e = refused(E2BIG, c.query_ev_profile, 7, M.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_ARRAY, entry_count=3))
    assert e.needed == 4


def array_of(c: MrcCtl, pid: int = 7) -> list[Ev]:
    got = c.query_ev_profile(pid, M.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_ARRAY))
    return [e.ev for e in got.entries]


def test_replace_ev_takes_the_first_copy_or_with_all_copies_every_one():
    c = ctl()
    fmt_online(c)
    c.modify_ev_profile(7, offline(), TO_OFFLINE)
    a, b = EVS[0], EVS[1]
    c.modify_ev_profile(7, EvProfileAttr(ev_op=EvOp.REPLACE_EV,
                                         entries=[EvOpEntry(UNPOPULATED, x) for x in (a, b, a, a)]), M.EV_OP)
    assert array_of(c) == [a, b, a, a]
    c.modify_ev_profile(7, EvProfileAttr(ev_op=EvOp.REPLACE_EV, entries=[EvOpEntry(a, EVS[2])]), M.EV_OP)
    assert array_of(c) == [EVS[2], b, a, a]
    c.modify_ev_profile(7, EvProfileAttr(ev_op=EvOp.REPLACE_EV,
                                         entries=[EvOpEntry(a, EVS[3], flags=EvOpFlags.ALL_COPIES)]), M.EV_OP)
    assert array_of(c) == [EVS[2], b, EVS[3], EVS[3]]


def test_an_ev_named_on_another_port_than_its_planes_is_not_in_the_profile():
    c = ctl()
    online_exp(c)
    wrong = Ev(EVS[0].val, EVS[0].port + 1)
    refused(ENOENT, c.modify_ev_profile, 7, EvProfileAttr(ev_op=EvOp.REPLACE_EV,
                                                          entries=[EvOpEntry(wrong, EVS[1])]), M.EV_OP)
    refused(ENOENT, c.query_ev_profile, 7, M.EV_OP, EvProfileAttr(ev_op=EvOp.QUERY_EV_STATE,
                                                                  entries=[EvOpEntry(wrong)]))


def test_an_ev_profile_goes_back_round_its_states():
    c = ctl()
    online_exp(c)
    c.modify_ev_profile(7, EvProfileAttr(ProfileState.OFFLINE), M.STATE)
    c.modify_ev_profile(7, EvProfileAttr(ProfileState.INIT), M.STATE)
    assert c.query_ev_profile(7, M.STATE | M.COUNT).ev_count == 0  # INIT: configuration gone


def test_generated_evs_follow_mrc_ctl_expansion():
    """Fields (high to low) salt 0, spine 0..3 over its 8 mask bits, plane 0..1 over 3: the
    last field counts fastest, each value spread over its mask's bits on top of init_val."""
    assert generate(EV_FIELDS, 8) == [(s << 3) | p for s in range(4) for p in range(2)]
    # A mask with a gap: the value's bits land on mask bits 3 and 1, most significant first, over init 0b0100.
    assert generate([EvField(4, init_val=0b0100, mask=0b1010, max_val=3)], 4) == [0b0100, 0b0110, 0b1100, 0b1110]
    refused(EINVAL, generate, EV_FIELDS, 9)  # 4 spines x 2 planes: 8 distinct EVs
