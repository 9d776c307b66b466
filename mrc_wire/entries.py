"""Table entries as plain data: what the planners produce, the reference
models install and `control_plane.p4_entities.to_p4` encodes.

One small dataclass per entry kind (slots, not frozen: frozen dataclasses
cost 2x to build and a full fabric plans 3 million of them; treat them as
immutable).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from mrc_wire.constants import CONGESTION_DEFAULTS, DSCP_DEFAULTS


# ---- switch (DESIGN.md section 4) ------------------------------------------
@dataclass(slots=True)
class MyUsid:
    locator: int  # 48-bit block:uSID


@dataclass(slots=True)
class UsidRoute:
    locator: int
    port: int


@dataclass(slots=True)
class PortNeighbour:
    port: int
    src_mac: int
    dst_mac: int
    host_facing: bool


@dataclass(slots=True)
class DscpClass:
    dscp: int
    cls: int


@dataclass(slots=True)
class CongestionConfig:
    ecn_threshold: int
    trim_threshold: int
    trim_bytes: int
    dscp_trimmed: int
    dscp_trimmed_lasthop: int

    @classmethod
    def default(cls) -> CongestionConfig:
        """What the switch runs before the controller writes: the P4
        program's default action (p4src/include/defaults.p4)."""
        return cls(CONGESTION_DEFAULTS["ecn_threshold"], CONGESTION_DEFAULTS["trim_threshold"],
                   CONGESTION_DEFAULTS["trim_bytes"], DSCP_DEFAULTS["trimmed"], DSCP_DEFAULTS["trimmed_lasthop"])


@dataclass(slots=True)
class EcnStep:
    """ecn_profile, action ecn_step: data of class `cls` is marked from
    `threshold` packets queued (the step congestion_config gives every
    class without an entry, at a threshold of its own)."""

    cls: int
    threshold: int


@dataclass(slots=True)
class EcnRamp:
    """ecn_profile, action ecn_ramp: WRED marking of class `cls` (DESIGN.md
    section 4): never at `kmin` packets or fewer, with probability
    pmax / RAMP_ONE * (depth - kmin) / (kmax - kmin) above it, always above
    `kmax` (pmax in units of 1 / RAMP_ONE, 0 < pmax <= RAMP_ONE; kmin < kmax)."""

    cls: int
    kmin: int
    kmax: int
    pmax: int


EcnProfile = EcnStep | EcnRamp


# ---- NIC (DESIGN.md section 5) ---------------------------------------------
@dataclass(slots=True)
class NicConfig:
    block: int
    my_row: int
    my_addr: int
    dscp_control: int
    dscp_trimmed: int
    dscp_trimmed_lasthop: int

    @classmethod
    def default(cls) -> NicConfig:
        """What the NIC runs before the controller writes: no identity, the
        default DSCPs (the P4 program's default action, p4src/include/defaults.p4)."""
        return cls(0, 0, 0, DSCP_DEFAULTS["control"], DSCP_DEFAULTS["trimmed"], DSCP_DEFAULTS["trimmed_lasthop"])


@dataclass(slots=True)
class DestRow:
    row: int
    same_row: bool


@dataclass(slots=True)
class PlanePort:
    plane: int
    port: int
    src_addr: int  # this NIC's locator on the plane: block:T0(p,a):DL(p,k)::
    src_mac: int
    dst_mac: int


@dataclass(slots=True)
class QpEv:
    """A QP's rotation: its slots base .. base + mask. With `health`, the
    data plane passes over slots that are not usable (nic_model/ev_health.py),
    keeping `min_active` of them; `plane_bits` says which slot is on which
    plane (bit s of word k: bit k of slot s's plane)."""

    qpn: int  # the destination QP as the host's packets carry it (the peer's)
    qp_index: int
    base: int
    mask: int
    health: bool = False
    min_active: int = 0
    plane_bits: tuple[int, int, int] = (0, 0, 0)


@dataclass(slots=True)
class SlotEv:
    slot: int
    ev: int


@dataclass(slots=True)
class EvStats:
    ev: int


@dataclass(slots=True)
class QpPeer:
    """A local QP: its peer's QP number; with `offload`, the NIC's receiver
    (nic_model/rx_track.py) tracks its PSNs in registers `qp_index` and
    SACKs every `ack_bytes` of payload; with `follow`, a SACK's reverse EV
    follows the data (EV state on: MRC, not the single-path baseline)."""

    qpn: int
    peer_qpn: int
    qp_index: int = 0
    offload: bool = False
    follow: bool = False
    ack_bytes: int = 0
    # The data plane's path health (nic_model/ev_health.py): a TRIMMED NACK
    # and the peer's port status act on the QP's slots (`health`); so does
    # a SACK's congestion mark (`skip_on_mark`: SETH m, skip once; the host
    # may also swap the EV for an idle spare, ecn_move "swap").
    health: bool = False
    skip_on_mark: bool = False


class EvChange(NamedTuple):
    """One path-health change the NIC's data plane made: its digest
    (p4src/nic/ev_health.p4 ev_event_t), what the controller turns into
    mrc_ctl's EV events (control_plane/ev_events.py)."""

    qp_index: int
    reason: int  # EVR_*
    ev: int  # the EV it names (0: the slots or planes say which)
    slots: int  # the QP's slots it changed (bit s: slot s)
    old_state: int  # EVS_*
    new_state: int
    planes_down: int  # port status: planes that went down at the peer
    planes_up: int  # ... and came back


@dataclass(slots=True)
class EvSlots:
    """ev_slots: the slots (bit s: slot s of the QP) that hold `ev`."""

    qp_index: int
    ev: int
    slots: int


@dataclass(slots=True)
class NoticeSession:
    session: int
    port: int
