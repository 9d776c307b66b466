"""PFC's thresholds as a scenario gives them (`transports[i].pfc`), apart
from the pausable egress (fabric_sim.net.pfc), which the simulator's compiled
build compiles and a pydantic model cannot be."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictBool, ValidationInfo, field_validator

from control_plane.config import Model, Num
from fabric_sim.scenario.kinds import facts
from mrc_wire.constants import DATA_FRAME_BYTES

# bytes: a full data frame at the default MTU (as fabric.base_rtt counts it), for the headroom
FRAME = 4096 + DATA_FRAME_BYTES


class PfcConfig(Model):
    """Thresholds per ingress (device, port) of the lossless priority, KiB.
    Defaults: SONiC's lossless profile for NVIDIA Spectrum switches
    (pg_profile_lookup.ini) sends XOFF once 19,456 bytes are held; XON two
    4 KiB frames lower, so it does not flap per packet. Headroom None:
    2 x propagation x rate + 2 frames for each link, the formula of
    802.1Qbb guides and SONiC's buffer manager (what the wire holds both
    ways, plus the frame being sent at each end)."""

    enabled: StrictBool = Field(True, description="default: on for kind roce, off otherwise")
    xoff_kb: Annotated[float, Num(0.001, 1e6, "ingress KiB at which XOFF is sent")] = 19.0
    xon_kb: Annotated[float, Num(0, 1e6, "ingress KiB at or below which XON is sent")] = 11.0
    headroom_kb: Annotated[float, Num(0, 1e6,
                                      "buffer above XOFF; default: 2 x propagation x rate + 2 frames")] | None = None

    @field_validator("xon_kb")
    @classmethod
    def _below_xoff(cls, xon: float, info: ValidationInfo) -> float:
        xoff = info.data.get("xoff_kb")
        if xoff is not None and xon > xoff:
            raise ValueError(f"{xon:g} is above xoff_kb {xoff:g}")
        return xon


def resolve(raw: Any, kind: str | None) -> Any:
    """`transports[i].pfc` as written, for its kind: None where PFC is off
    (the default but for roce); refused on another kind's lossy class."""
    r = raw if isinstance(raw, dict) else {} if raw is None else raw
    if not isinstance(r, dict):
        return r  # the model says what is wrong with it
    enabled = r.get("enabled", facts(kind).lossless)
    if enabled is True and not facts(kind).lossless:
        raise ValueError(f"PFC is for kind roce (its lossless class), not {kind}")
    return r if enabled is True else None if enabled is False else r  # not a bool: the model says so


def headroom_bytes(cfg: PfcConfig, gbps: float, prop_us: float) -> int:
    if cfg.headroom_kb is not None:
        return int(cfg.headroom_kb * 1024)
    return int(2 * prop_us * gbps * 1e3 / 8 + 2 * FRAME)
