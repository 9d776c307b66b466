"""Per-EV path health in the NIC's data plane, stage for stage as
p4src/nic/ev_health.p4 (docs/nic.md, "Path health in the pipeline").

Each QP's turn (qp_rotation: its next slot) is this stage's register: a
data packet's slot is the turn's own (the plain rotation) or, for a QP
whose health the data plane keeps, the next usable one.

Per QP, in registers indexed by its QP index, one bit per slot of its
rotation (EV_HEALTH_SLOTS at most): `skip` (skip once: set by a SACK's
congestion mark or a TRIMMED NACK for the slot's EV, cleared when the
rotation passes over it), `bad` (assumed bad: the host's, written whole),
and the planes the peer's port status says are down (`peer_down`, from
its ERTH); NIC-wide, the planes of this NIC's own ports that are down
(`port_down`, the host's). A slot is usable when none of these applies;
the rotation takes the next usable slot from its turn (a ternary
first-one lookup on the usable bits rotated to the turn), passing over
the others. Skips are passed over only while at least `min_active`
slots stay usable (the OCP API's `ev_min_active`); when no slot is
usable the rotation takes its turn's slot as configured (degraded, not
stopped).

Which slots hold an EV is the `ev_slots` table ((QP index, EV) -> slot
bits), kept by the control plane beside slot_ev; which slots are on a
plane comes from the QP's three plane-bit words (bit s of word k: bit k
of slot s's plane), set when the QP is planned (the host's rewrites keep
each slot's plane while the data plane runs health).

What a packet for our sender says of its paths is this stage's too
(`evidence`): a SACK's congestion mark or a TRIMMED NACK skips the EV
once, the peer's port status (ERTH) says which of its planes are down.
A plane the peer's port status says is back is evidence that its paths
work again: its slots that the host had marked assumed bad are usable at
once (`bad` cleared for them, DESIGN.md section 7), without waiting for
the host's write. Which slots are on a plane is known on transmit (the
QP's plane-bit words); the stage keeps the words of each QP's last pick
(`planes`) for its receive side.

Every change the data plane makes is an `EvChange` (the P4's digest):
the controller turns it into mrc_ctl's EV events (control_plane/ev_events.py).
"""

from __future__ import annotations

from typing import Final

from mrc_wire import packet as W
from mrc_wire.constants import (
    EP_PORT_STATUS,
    EV_HEALTH_SLOTS,
    EVR_CONGESTION,
    EVR_PORT_STATUS,
    EVR_ROTATION,
    EVR_TRIMMED,
    EVS_GOOD,
    EVS_SKIP,
    NACK_TRIMMED,
    OP_EP_REQUEST,
    OP_NACK,
    OP_SACK,
    SETH_M_SKIP_ONCE,
)
from mrc_wire.entries import EvChange, QpEv, QpPeer

_ONES: Final = (1 << EV_HEALTH_SLOTS) - 1
_NO_PLANES: Final = (0, 0, 0)  # no pick yet: the words read as every slot on plane 0


def trailing_zeros(x: int) -> int:
    """Zero bits of `x` below its lowest 1 (64 when x is 0): the P4's
    ternary table over the inverted word (trailing_ones.inc)."""
    return (x & -x).bit_length() - 1 if x else EV_HEALTH_SLOTS


def popcount(x: int) -> int:
    """Set bits of a 64-bit word (the P4's SWAR sum: constant shifts and masks)."""
    return x.bit_count()


def plane_slots(words: tuple[int, int, int], planes: int, valid: int) -> int:
    """The slots whose plane is in `planes` (a bit per plane), from the QP's plane-bit words."""
    b0, b1, b2 = words
    out = 0
    for p in range(8):
        if planes >> p & 1:
            out |= (b0 if p & 1 else ~b0) & (b1 if p & 2 else ~b1) & (b2 if p & 4 else ~b2)
    return out & valid


class EvHealth:
    """The health registers of one NIC and its ev_slots table."""

    __slots__ = ("turns", "skip", "bad", "peer_down", "port_down", "ev_slots", "changes", "keep", "digests",
                 "planes")

    def __init__(self, keep: bool = True) -> None:
        """`keep` False: no controller reads the digests (the timed fabric,
        whose hosts learn their EVs' state from their own packets), so they
        are counted in `digests` and not kept: kept, they grew without end
        (215,825 of them, 21 MiB, 30 µs into a 1,024-NIC run)."""
        self.keep = keep
        self.digests = 0  # changes made, kept or not
        self.turns: list[int] = []  # qp_rotation: each QP's turn (its next slot, 16 bits), by QP index
        self.skip: list[int] = []
        self.bad: list[int] = []
        self.peer_down: list[int] = []
        self.planes: list[tuple[int, int, int]] = []  # ev_plane0..2: each QP's plane-bit words, as last picked
        self.port_down = 0
        # (QP index, EV) -> slot bits, keyed QP index << 32 | EV (an EV is
        # 32 bits): an int key, hashed with no tuple made per lookup.
        self.ev_slots: dict[int, int] = {}
        self.changes: list[EvChange] = []  # the digests, in order (the caller drains them)

    def add_qp(self, qp_index: int) -> None:
        """A QP's turn register (zero, as the P4's at start-up)."""
        while len(self.turns) <= qp_index:
            self.turns.append(0)

    def set_turn(self, qp_index: int, turn: int) -> None:
        """A write of the QP's qp_rotation register."""
        self.add_qp(qp_index)
        self.turns[qp_index] = turn & 0xFFFF

    def ensure(self, qp_index: int) -> None:
        while len(self.skip) <= qp_index:
            self.skip.append(0)
            self.bad.append(0)
            self.peer_down.append(0)
            self.planes.append(_NO_PLANES)

    def _digest(self, qp_index: int, reason: int, ev: int, slots: int, old: int, new: int, down: int,
                up: int) -> None:
        """A change the data plane made: counted, and kept if asked (its
        fields as EvChange's; none is built when not kept)."""
        self.digests += 1
        if self.keep:
            self.changes.append(EvChange(qp_index, reason, ev, slots, old, new, down, up))

    def drain(self) -> list[EvChange]:
        """The changes kept since the last drain, in order."""
        out, self.changes = self.changes, []
        return out

    def reset(self) -> None:
        for regs in (self.turns, self.skip, self.bad, self.peer_down):
            regs[:] = [0] * len(regs)
        self.planes[:] = [_NO_PLANES] * len(self.planes)
        self.port_down = 0

    # ---- transmit: the rotation's pick ----------------------------------
    def pick(self, qp: QpEv) -> int:
        """The slot within the QP of its next data packet; its turn moves on."""
        i = qp.qp_index
        turn = self.turns[i]
        if not qp.health:  # the plain rotation
            self.turns[i] = (turn + 1) & 0xFFFF
            return turn & qp.mask
        self.planes[i] = qp.plane_bits
        slot, self.turns[i] = self._usable(qp, turn)
        return slot

    def _usable(self, qp: QpEv, turn: int) -> tuple[int, int]:
        """(the slot within the QP, the turn after it) for data at `turn`,
        passing over the slots that are not usable."""
        i = qp.qp_index
        skip = self.skip[i]
        hard = self.bad[i]
        down = self.peer_down[i] | self.port_down
        if not (skip | hard | down):  # every slot usable: the turn's own (what the steps below give)
            return turn & qp.mask, (turn + 1) & 0xFFFF
        n = qp.mask + 1
        valid = _ONES >> (EV_HEALTH_SLOTS - n)
        if down:
            hard |= plane_slots(qp.plane_bits, down, valid)
        usable = ~(skip | hard) & valid
        if popcount(usable) < qp.min_active:
            usable = ~hard & valid  # the floor: skips are not passed over
        t = turn & qp.mask
        x = ((usable >> t) | (usable << (n - t) & _ONES)) & valid
        k = trailing_zeros(x) if x else 0
        run = (1 << k) - 1  # the slots passed over: turn .. turn + k - 1, wrapping at n
        passed = ((run << t & _ONES) | run >> (n - t)) & valid
        consumed = skip & passed
        if consumed:
            self.skip[i] = skip & ~consumed
            self._digest(i, EVR_ROTATION, 0, consumed, EVS_SKIP, EVS_GOOD, 0, 0)
        return (t + k) & qp.mask, (turn + k + 1) & 0xFFFF

    # ---- receive: evidence in a packet ------------------------------------
    def evidence(self, qp: QpPeer, m: W.Mrc) -> None:
        """What a packet for our sender says of its paths."""
        op = m.opcode
        if op == OP_SACK and qp.skip_on_mark and m.sack_mark == SETH_M_SKIP_ONCE and not m.probe_response:
            self.mark_skip(qp.qp_index, m.sack()[0], EVR_CONGESTION)
        elif op == OP_NACK:
            ev, reason, _ = m.nack()
            if reason == NACK_TRIMMED:
                self.mark_skip(qp.qp_index, ev, EVR_TRIMMED)
        elif op == OP_EP_REQUEST:
            ep_op, down = m.endpoint_op()
            if ep_op == EP_PORT_STATUS:
                self.port_status(qp.qp_index, down & 0xFF)

    def mark_skip(self, qp_index: int, ev: int, reason: int) -> None:
        """A SACK's congestion mark or a TRIMMED NACK for data on `ev`: its slots skip once."""
        new = self.ev_slots.get(qp_index << 32 | ev, 0) & ~self.skip[qp_index]
        if new:
            self.skip[qp_index] |= new
            self._digest(qp_index, reason, ev, new, EVS_GOOD, EVS_SKIP, 0, 0)

    def port_status(self, qp_index: int, down: int) -> None:
        """The peer's port status (ERTH): the planes of its ports that are
        down. A plane back restores its slots assumed bad at once."""
        old = self.peer_down[qp_index]
        if old != down:
            self.peer_down[qp_index] = down
            up = old & ~down
            if up:
                self.bad[qp_index] &= ~plane_slots(self.planes[qp_index], up, _ONES)
            self._digest(qp_index, EVR_PORT_STATUS, 0, 0, 0, 0, down & ~old, up)

    # ---- the control plane's side ---------------------------------------
    def forget(self, qp_index: int, slots: list[tuple[int, int]]) -> None:
        """A QP destroyed: its registers zero, its ev_slots entries gone ((slot, EV) it held)."""
        self.turns[qp_index] = 0
        if qp_index < len(self.skip):
            self.skip[qp_index] = self.bad[qp_index] = self.peer_down[qp_index] = 0
            self.planes[qp_index] = _NO_PLANES
        for slot, ev in slots:
            key = qp_index << 32 | ev
            left = self.ev_slots.get(key, 0) & ~(1 << slot)
            if left:
                self.ev_slots[key] = left
            else:
                self.ev_slots.pop(key, None)

    def move(self, qp_index: int, slot: int, old: int | None, new: int) -> None:
        """Keep ev_slots equal to slot_ev: slot `slot` of the QP now holds
        EV `new` instead of `old` (None: it held none)."""
        bit = 1 << slot
        if old is not None:
            key = qp_index << 32 | old
            left = self.ev_slots.get(key, 0) & ~bit
            if left:
                self.ev_slots[key] = left
            else:
                self.ev_slots.pop(key, None)
        key = qp_index << 32 | new
        self.ev_slots[key] = self.ev_slots.get(key, 0) | bit
