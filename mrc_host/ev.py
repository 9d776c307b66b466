"""Entropy values (EVs) and their sender-side state (DESIGN.md sections 5, 7).

EV format (32 bits): EV[2:0] plane, EV[10:3] spine, EV[31:11] tells apart
EVs that share a path. The concepts follow the OCP MRC controller API
(`mrc_ctl.h`): an EV profile per QP (its EVs, spread evenly over the
planes, in a power-of-two slot table), per-EV state, EV events, probes.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

from mrc_wire.constants import ev_plane, ev_spine


class EvState(enum.Enum):
    GOOD = "GOOD"
    SKIP = "SKIP"  # skipped for one rotation after ECN or a TRIMMED NACK
    ASSUMED_BAD = "ASSUMED_BAD"  # lost a packet: replaced, probed, restored
    DENIED = "DENIED"  # set by the operator
    PLANE_DOWN = "PLANE_DOWN"  # its plane's NIC port is down (here or at the peer)


class EvEvent(enum.Enum):
    ACK = "ack"
    ECN = "ecn"
    NACK_TRIMMED = "nack_trimmed"
    NACK_TRIMMED_LASTHOP = "nack_trimmed_lasthop"
    LOSS = "loss"
    PROBE_OK = "probe_ok"
    PROBE_LOST = "probe_lost"
    PLANE_DOWN = "plane_down"
    PLANE_UP = "plane_up"
    ADMIN = "admin"  # the operator's (mrc_ctl's MODIFY_EV_STATE)


_NO_SPINES: Final[frozenset[int]] = frozenset()  # no EV assumed bad: no suspect spine


class Watcher(Protocol):
    """Told of every state change of a profile's EVs (mrc_host/ctl.py: the
    controller's EV events)."""

    def changed(self, ev: int, old: EvState | None, new: EvState, event: EvEvent) -> None: ...


def make_ev(plane: int, spine: int, salt: int = 0) -> int:
    if not 0 <= plane < 8 or not 0 <= spine < 256 or not 0 <= salt < 2**21:
        raise ValueError(f"EV fields out of range: plane {plane}, spine {spine}, salt {salt}")
    return (salt << 11) | (spine << 3) | plane


# Good probes in a row needed to restore an EV. A module constant: a compiled class's
# attribute default read on the class is a descriptor, not the number.
RESTORE_AFTER: Final = 3
# Damping's defaults (Damping says why).
MAX_DOUBLINGS: Final = 5
DOWN_AFTER: Final = 3


@dataclass(frozen=True)
class Damping:
    """How a profile tells a lossy EV from a path that came back (DESIGN.md
    section 7), as route and interface damping does (RFC 2439; BFD's
    detection rule, RFC 5880 section 6.8.4):

    - A strike for each failure of an EV within its probation, the time
      it was last out (a path that cannot stay up as long as it was down
      is flapping), and for each probe lost after the EV's path answered
      since it was retired (it came back and failed again). Each strike
      doubles the good probes in a row its restoration needs (restore_after
      x 2^strikes), at most `max_doublings` times; each probation spent up
      forgives one. No constant sets the probation: it is the EV's own
      last outage.
    - A link that went down and came back is restored at once: after
      `down_after` probes lost in a row with none answered since the EV was
      retired (BFD declares a session down after its detect multiplier,
      3 by default, of packets missed), the first answered probe restores
      it, unless it has strikes (a damped EV is not let back early).
    - A port status update restores the EVs of a plane at once
      (plane_up).

    `max_doublings` 5: a flapping EV needs at most 96 good probes in a row
    (a path losing 20% passes that once in 2 x 10^9 tries); 0 switches
    damping off. `down_after` 0 switches the link-down fast path off."""

    max_doublings: int = MAX_DOUBLINGS
    down_after: int = DOWN_AFTER


def _bits_of(evs: list[int]) -> dict[int, int]:
    """EV -> the positions holding it in `evs`, a bit per position."""
    out: dict[int, int] = {}
    for i, ev in enumerate(evs):
        out[ev] = out.get(ev, 0) | 1 << i
    return out


def _move_bit(bits: dict[int, int], pos: int, old: int, new: int) -> None:
    """Position `pos` of a _bits_of map now holds `new`, not `old`."""
    bit = 1 << pos
    left = bits[old] & ~bit
    if left:
        bits[old] = left
    else:
        del bits[old]
    bits[new] = bits.get(new, 0) | bit


def _bit_indices(bits: int) -> list[int]:
    """The positions of the 1 bits of `bits`, lowest first."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


@dataclass
class EvProfile:
    """A QP's EVs. `home` is the configured rotation (a power of two long);
    `slots` what each slot uses now; `backups` the spare EVs of each plane
    from which a slot whose EV is retired is refilled."""

    home: list[int]
    backups: dict[int, list[int]]
    restore_after: int = RESTORE_AFTER
    # `ev_min_active` of the OCP API: a loss never retires an EV when that
    # would leave fewer distinct GOOD EVs in the rotation.
    min_active: int = 1
    # False: oblivious spraying (RPS/NDP-like) or a single ECMP path: events
    # change nothing, the rotation is used as configured.
    enabled: bool = True
    # ECN on an EV moves its slots to an idle GOOD spare of its plane for
    # good, the marked EV becoming the spare (as the MRC paper's Fig. 14
    # shows a CX-8 do); False: the EV is skipped for one rotation.
    ecn_swap: bool = False
    # When set (a function giving the time), `times[i]` is when log[i] happened.
    clock: Callable[[], float] | None = None
    # False: no `log` (a run's QPs that are not traced: kept, it grew by an
    # entry per state change, 283,000 of them in a 1,024-NIC run); `trace`.
    keep_log: bool = True
    # Health mode: the NIC's data plane keeps the slots' health
    # (nic_model/ev_health.py) and passes over the unusable: it skips
    # an EV once on a congestion mark or a TRIMMED NACK, and passes over
    # slots whose plane is down and slots the host marks bad. The profile
    # then writes a spare into a lost EV's slots, or, with none, marks them
    # bad (`bad_slots`, the host's register word); it never moves a slot to
    # another plane (the data plane's plane bits stay true).
    health: bool = False
    damping: Damping = field(default_factory=Damping)

    slots: list[int] = field(default_factory=list)
    # EV -> the slots holding it, a bit per slot (absent: none), kept by
    # _write, the slots' one writer; `home_bits` the same of `home`. What
    # an ECN swap or a loss moves is found in them, not by a scan of the
    # 64 slots: each entry a scan compares is a boxed int of its own, and
    # at scale every one is a cache miss (an ECN swap cost 5.3 µs at 1,024
    # NICs, 0.9 µs at 256).
    slot_bits: dict[int, int] = field(default_factory=dict)
    home_bits: dict[int, int] = field(default_factory=dict)
    state: dict[int, EvState] = field(default_factory=dict)
    good_probes: Counter[int] = field(default_factory=Counter)
    turns: int = 0  # data packets the NIC sent on the QP (its rotation's turns: `turn`)
    skip_until: dict[int, int] = field(default_factory=dict)
    log: list[tuple[int, EvEvent, EvState]] = field(default_factory=list)
    # (slot, EV) for the data plane, in order, until taken (`take_writes`)
    slot_writes: list[tuple[int, int]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    bad: set[int] = field(default_factory=set)  # EVs ASSUMED_BAD (probed in the background)
    # Damping (`damping`): an EV's strikes, when it was last retired and
    # restored, how long it was last out (its probation), probes lost in a
    # row while out, and the EVs whose path answered since their retirement.
    strikes: Counter[int] = field(default_factory=Counter)
    retired_at: dict[int, float] = field(default_factory=dict)
    restored_at: dict[int, float] = field(default_factory=dict)
    probation: dict[int, float] = field(default_factory=dict)
    probes_lost: Counter[int] = field(default_factory=Counter)
    answered: set[int] = field(default_factory=set)
    bad_slots: int = 0  # health mode: the slots the data plane passes over as assumed bad (bit s: slot s)
    watcher: Watcher | None = None  # told of each state change (the controller's EV events), if any
    _planes: dict[int, list[int]] = field(default_factory=dict)  # on_plane's answers, for _planes_of EVs
    _planes_of: int = -1

    def __post_init__(self) -> None:
        n = len(self.home)
        if n == 0 or n & (n - 1):
            raise ValueError(f"slot count must be a power of two, got {n}")
        self.slots = list(self.home)
        self.home_bits = _bits_of(self.home)
        self.slot_bits = dict(self.home_bits)
        for ev in [*self.home, *(e for pool in self.backups.values() for e in pool)]:
            self.state.setdefault(ev, EvState.GOOD)

    @classmethod
    def spread(cls, planes: int, spines: int, slots: int, backups_per_plane: int = 2, salt: int = 0) -> EvProfile:
        """`slots` EVs spread evenly over the planes and, within a plane, over
        the spines; backups use the spines the rotation leaves free, if any."""
        if slots % planes:
            raise ValueError(f"{slots} slots do not spread evenly over {planes} planes")
        per_plane = slots // planes
        rotation, backups = [], {}
        for p in range(planes):
            used = [(salt + i) % spines for i in range(per_plane)]
            free = [s for s in range(spines) if s not in used] or used
            backups[p] = [make_ev(p, free[i % len(free)], salt=(1 << 20) | i) for i in range(backups_per_plane)]
            rotation.append([make_ev(p, s, salt=(salt + i) // spines) for i, s in enumerate(used)])
        # Interleave planes so consecutive packets use different planes.
        return cls([rotation[p][i] for i in range(per_plane) for p in range(planes)], backups)

    def trace(self, clock: Callable[[], float] | None) -> None:
        """Log every state change, timed by `clock` (None: untimed)."""
        self.keep_log, self.clock = True, clock

    def untraced(self) -> None:
        """Keep no log: nothing reads it."""
        self.keep_log, self.clock = False, None

    def take_writes(self) -> list[tuple[int, int]]:
        """The slot writes made since the last take, in order; forgotten
        here (the endpoint hands them to its NIC)."""
        out, self.slot_writes = self.slot_writes, []
        return out

    def spares(self) -> tuple[int, ...]:
        """The backup EVs of every plane, in plane order."""
        return tuple(e for pool in self.backups.values() for e in pool)

    def turn(self) -> None:
        """The NIC's data plane sent a packet on the plain rotation (it walks
        the slots, one turn per data packet; the profile acts only through
        slot rewrites): an EV skipped by a rewrite for one rotation comes
        back once the rotation has passed (not in health mode, where the
        data plane skips once itself)."""
        if self.skip_until:
            for ev, until in list(self.skip_until.items()):
                if self.turns >= until:
                    del self.skip_until[ev]
                    if self.state[ev] is EvState.SKIP:
                        self.state[ev] = EvState.GOOD
                        self._return_home(ev)
        self.turns += 1

    def _set(self, ev: int, event: EvEvent, st: EvState) -> None:
        # Only _set makes or unmakes ASSUMED_BAD: `bad` is what probing() returns.
        if st is EvState.ASSUMED_BAD:  # not a bound method chosen per call: compiled, a direct one
            self.bad.add(ev)
        else:
            self.bad.discard(ev)
        if self.watcher is not None:
            self.watcher.changed(ev, self.state.get(ev), st, event)
        self.state[ev] = st
        if self.keep_log:
            self.log.append((ev, event, st))
            if self.clock is not None:
                self.times.append(self.clock())

    def event(self, ev: int, event: EvEvent, now: float = 0.0) -> None:
        """Apply an EV event (DESIGN.md section 7) that happened at `now` (µs)."""
        st = self.state.get(ev)
        if st is None or not self.enabled:
            return  # not an EV of this profile, or EV state switched off
        if event is EvEvent.LOSS and st is not EvState.ASSUMED_BAD and self.active() <= self.min_active:
            return  # the floor: keep using it rather than run out of EVs
        if event is EvEvent.ECN and st is EvState.GOOD and self.ecn_swap and self._swap(ev):
            return
        if event in (EvEvent.ECN, EvEvent.NACK_TRIMMED) and st is EvState.GOOD:
            if self.health:
                return  # the data plane skips it once (its EV event says so)
            self._set(ev, event, EvState.SKIP)
            self._vacate(ev)  # the data plane skips it by a rewrite for one rotation
            self.skip_until[ev] = self.turns + len(self.slots)
        elif event is EvEvent.LOSS and st in (EvState.GOOD, EvState.SKIP):
            self._on_probation(ev, now)
            self._set(ev, event, EvState.ASSUMED_BAD)
            self.good_probes[ev] = 0
            self.retired_at[ev], self.probes_lost[ev] = now, 0
            self.answered.discard(ev)
            self._vacate(ev)
        elif event is EvEvent.PROBE_OK and st is EvState.ASSUMED_BAD:
            self.good_probes[ev] += 1
            came_back = self._link_came_back(ev)
            self.answered.add(ev)
            self.probes_lost[ev] = 0
            if came_back or self.good_probes[ev] >= self.restore_after << self.strikes[ev]:
                self._set(ev, event, EvState.GOOD)
                self.restored_at[ev] = now
                self.probation[ev] = now - self.retired_at.get(ev, now)
                self._return_home(ev)
        elif event is EvEvent.PROBE_LOST and st is EvState.ASSUMED_BAD:
            if ev in self.answered and self.good_probes[ev]:
                self._strike(ev)  # its path answered, and fails again
            self.good_probes[ev] = 0
            self.probes_lost[ev] += 1
        # ACK and TRIMMED_LASTHOP leave the state as it is: a last-hop trim
        # says the receiver, not the path, is the bottleneck.

    def _strike(self, ev: int) -> None:
        if self.strikes[ev] < self.damping.max_doublings:
            self.strikes[ev] += 1

    def _on_probation(self, ev: int, now: float) -> None:
        """`ev` fails at `now`: a strike if within its probation after its
        last restoration; otherwise one forgiven per probation spent up."""
        at = self.restored_at.get(ev)
        if at is None:
            return
        up, window = now - at, self.probation.get(ev, 0.0)
        if up < window:
            self._strike(ev)
        elif window > 0 and self.strikes[ev]:
            self.strikes[ev] = max(0, self.strikes[ev] - int(up // window))

    def _link_came_back(self, ev: int) -> bool:
        """An answered probe after `down_after` lost in a row and none
        answered since `ev` was retired: its link went down and is back."""
        n = self.damping.down_after
        return n > 0 and not self.strikes[ev] and ev not in self.answered and self.probes_lost[ev] >= n

    def _swap(self, ev: int) -> bool:
        """ECN in swap mode: the slots using `ev` take an idle GOOD spare of
        its plane, which joins the rotation in its place; `ev`, congested
        but healthy, becomes the spare. False if there is no idle spare off
        the spines of the plane's EVs assumed bad (as `_vacate`: a spare on
        a broken path is no spare)."""
        plane = ev_plane(ev)
        pool = self.backups.get(plane)
        if not pool:
            return False
        suspect = self._suspect_spines(plane) if self.bad else _NO_SPINES
        spare = next((b for b in pool if b != ev and b not in self.slot_bits and self.state[b] is EvState.GOOD
                      and ev_spine(b) not in suspect), None)
        if spare is None:
            return False
        at = self.home_bits.pop(ev, 0)
        if at:  # rewritten in place, not rebuilt: most ECN marks come with a swap
            home = self.home
            for i in _bit_indices(at):
                home[i] = spare
            self.home_bits[spare] = self.home_bits.get(spare, 0) | at
            pool[pool.index(spare)] = ev
        for i in _bit_indices(self.slot_bits.get(ev, 0)):
            self._write(i, spare)
        self._set(spare, EvEvent.ECN, EvState.GOOD)  # logged: the spare took over after ECN
        return True

    def deny(self, ev: int) -> None:
        """The operator denies `ev`: it leaves every slot, and no probe brings it back."""
        self._set(ev, EvEvent.ADMIN, EvState.DENIED)
        self._vacate(ev)

    def allow(self, ev: int) -> None:
        if self.state.get(ev) is EvState.DENIED:
            self._set(ev, EvEvent.ADMIN, EvState.GOOD)
            self._return_home(ev)

    def assume_bad(self, ev: int) -> None:
        """The operator says `ev` is bad: retired as after a loss (no floor:
        the operator knows), probed in the background."""
        if self.state.get(ev) in (EvState.GOOD, EvState.SKIP):
            self._set(ev, EvEvent.ADMIN, EvState.ASSUMED_BAD)
            self.good_probes[ev] = 0
            self._vacate(ev)

    def restore(self, ev: int) -> None:
        """The operator says `ev` is good again: back in its home slots now."""
        if self.state.get(ev) in (EvState.ASSUMED_BAD, EvState.DENIED):
            self._set(ev, EvEvent.ADMIN, EvState.GOOD)
            self._return_home(ev)

    def replace(self, old: int, new: int, all_copies: bool) -> bool:
        """REPLACE_EV: `new` takes `old`'s place in the configured rotation
        (its first home slot, or all of them) or among the spares; written
        to the slots that held `old`. False if `old` is not the profile's."""
        self.state.setdefault(new, EvState.GOOD)
        at = self.home_bits.get(old, 0)
        if at:
            for i in _bit_indices(at if all_copies else at & -at):
                self.rehome(i, new)
            return True
        for pool in self.backups.values():
            if old in pool:
                pool[pool.index(old)] = new
                self._planes_of = -1  # on_plane's answers change
                return True
        return False

    def rehome(self, slot: int, ev: int) -> None:
        """The operator (or the single-path baseline's routing) puts `ev` in
        `slot` of the configured rotation: written to the data plane too."""
        _move_bit(self.home_bits, slot, self.home[slot], ev)
        self.home[slot] = ev
        self.state.setdefault(ev, EvState.GOOD)
        self._write(slot, ev)

    def _write(self, slot: int, ev: int) -> None:
        _move_bit(self.slot_bits, slot, self.slots[slot], ev)
        self.slots[slot] = ev
        self.slot_writes.append((slot, ev))
        self.bad_slots &= ~(1 << slot)  # a new EV in the slot: usable again

    def _mark_bad(self, slot: int) -> None:
        """Health mode: the data plane passes over `slot` (its EV is assumed
        bad and no spare took its place) until the slot is rewritten."""
        self.bad_slots |= 1 << slot

    def _vacate(self, ev: int) -> None:
        """Give every slot now using `ev` a GOOD spare of the same plane,
        preferring one whose spine is not the retired EV's nor that of any
        other EV assumed bad (a spare on the same broken path is no spare)."""
        pool = self.backups.get(ev_plane(ev), [])
        suspect = self._suspect_spines(ev_plane(ev))
        suspect.add(ev_spine(ev))
        pool = [b for b in pool if ev_spine(b) not in suspect] + [b for b in pool if ev_spine(b) in suspect]
        # The slots holding `ev` as it is retired: no write below puts it in
        # another (it is no longer GOOD, and a spare or a double-up is).
        for i in _bit_indices(self.slot_bits.get(ev, 0)):
            spare = next((b for b in pool if self.state[b] is EvState.GOOD and b not in self.slot_bits), None)
            if self.health:
                if spare is None or ev_spine(spare) in suspect:
                    self._mark_bad(i)  # the data plane passes over it
                else:
                    self._write(i, spare)
                continue
            if spare is not None and ev_spine(spare) in suspect:
                spare = self._double_up(ev, suspect) or spare
            if spare is None:
                spare = self._double_up(ev, suspect)  # the NIC cannot pass over a slot
                if spare is None:
                    return
            self._write(i, spare)

    def _suspect_spines(self, plane: int) -> set[int]:
        """The spines of `plane`'s EVs assumed bad: a spare on one is on a broken path."""
        return {ev_spine(e) for e in self.bad if ev_plane(e) == plane}

    def _double_up(self, ev: int, suspect: set[int]) -> int | None:
        """A GOOD rotation EV of the same plane on a healthy spine, the one
        in fewest slots, to fill a second slot (the NIC sends on whatever
        the slot holds)."""
        cands = [e for e in self.slot_bits if ev_plane(e) == ev_plane(ev) and self.state[e] is EvState.GOOD
                 and ev_spine(e) not in suspect]
        return min(cands, key=lambda e: (self.uses(e), e)) if cands else None

    def _return_home(self, ev: int) -> None:
        """Put a restored EV back in its home slots."""
        for i in _bit_indices(self.home_bits.get(ev, 0) & ~self.slot_bits.get(ev, 0)):
            self._write(i, ev)
        if self.bad_slots:  # health mode: slots it kept while bad are usable again
            self.bad_slots &= ~self.slot_bits.get(ev, 0)

    def active(self) -> int:
        """Distinct GOOD EVs in the rotation now."""
        return sum(1 for ev in self.slot_bits if self.state[ev] is EvState.GOOD)

    def uses(self, ev: int) -> int:
        """Slots holding `ev` now."""
        return self.slot_bits.get(ev, 0).bit_count()

    def plane_down(self, plane: int) -> None:
        """A NIC port (here or at the peer) is down: every EV of its plane
        leaves the rotation at once, its slots go to the other planes' GOOD
        EVs in turn. No floor applies: those paths cannot work."""
        evs = [ev for ev in self.state if ev_plane(ev) == plane and self.state[ev] is not EvState.PLANE_DOWN]
        for ev in evs:
            self._set(ev, EvEvent.PLANE_DOWN, EvState.PLANE_DOWN)
        if not self.health:  # in health mode the data plane passes over the plane's slots
            self._spread_dead()

    def plane_up(self, plane: int) -> None:
        """The port is back: its EVs return to GOOD and to their home slots,
        and the plane takes its share of the slots of planes still down."""
        for ev, st in list(self.state.items()):
            if ev_plane(ev) == plane and st is EvState.PLANE_DOWN:
                self._set(ev, EvEvent.PLANE_UP, EvState.GOOD)
                self._return_home(ev)
        if not self.health:
            self._spread_dead()

    def _spread_dead(self) -> None:
        """Every slot whose home EV's plane is down goes to the live planes
        in turn, each its least-used GOOD rotation EV: the live planes share
        the dead ones' slots evenly, a plane just back included."""
        alive: dict[int, list[int]] = {}
        for ev in dict.fromkeys(self.home):
            if self.state[ev] is EvState.GOOD:
                alive.setdefault(ev_plane(ev), []).append(ev)
        if not alive:
            return  # every plane down: nothing to move to
        order = sorted(alive)
        k = 0
        for i, home in enumerate(self.home):
            if self.state[home] is EvState.PLANE_DOWN:
                evs = alive[order[k % len(order)]]
                ev = min(evs, key=self.uses)
                if self.slots[i] != ev:
                    self._write(i, ev)
                k += 1

    def on_plane(self, plane: int) -> list[int]:
        """Every EV of the profile on `plane` (rotation and backups)."""
        if self._planes_of != len(self.state):  # EVs are only ever added: the count says if it is stale
            self._planes, self._planes_of = {}, len(self.state)
            for ev in self.state:
                self._planes.setdefault(ev_plane(ev), []).append(ev)
        return self._planes.get(plane, [])

    def probing(self) -> list[int]:
        """EVs to probe in the background (the endpoint asks every tick)."""
        return list(self.bad)
