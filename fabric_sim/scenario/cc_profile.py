"""A transport's congestion-control profile (`transports[].cc` in a
scenario file), named as the OCP MRC API names it: `profile:
uet-1.0-nscc` (the default) with `struct mrc_ctl_cc_nscc_cfg`'s fields,
times in µs (`_us`), sizes in bytes; or `profile: aimd`, the model's
earlier window. A field left out takes NSCC's default for this fabric
(mrc_host.nscc.defaults: UEC's constants scaled to its base RTT and NIC
rate). docs/simulator.md has the table."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import Field, StrictBool, ValidationInfo, field_validator

from control_plane.config import Int, Model, Num
from fabric_sim.scenario.kinds import facts
from mrc_host.cc import Aimd, CongestionControl
from mrc_host.nscc import NsccConfig, defaults
from mrc_host.ocp import CcProfileAttr
from mrc_host.verbs import congestion_control

NSCC: Final = "uet-1.0-nscc"
AIMD: Final = "aimd"
# scenario key -> NsccConfig field (the OCP names, times in µs)
FIELDS = {
    "base_rtt_us": "base_rtt", "target_delay_us": "target_delay", "max_cwnd": "max_cwnd", "eta": "eta", "fi": "fi",
    "fi_scale": "fi_scale", "gamma": "gamma", "max_md_jump": "max_md_jump", "qa_threshold_us": "qa_threshold",
    "qa_gate": "qa_gate", "adjust_bytes_threshold": "adjust_bytes_threshold",
    "adjust_period_threshold_us": "adjust_period_threshold", "disable_qa": "disable_qa",
}


class CcProfile(Model):
    """`transports[].cc`: a field left out takes NSCC's default for this
    fabric (mrc_host.nscc.defaults)."""

    profile: Literal["uet-1.0-nscc", "aimd"] = NSCC
    base_rtt_us: Annotated[float, Num(0.001, 1e6,
                                      "starting base RTT; lower samples lower it; default: the fabric's")] | None = None
    target_delay_us: Annotated[float, Num(0.001, 1e6, "queueing delay that splits the quadrants; "
                                                      "default: 0.75 base RTT")] | None = None
    max_cwnd: Annotated[int, Int(64, 2**32, "window ceiling, bytes; default: 1.5 BDP")] | None = None
    eta: Annotated[float, Num(0, 2**32, "bytes added once per adjust period")] | None = None
    fi: Annotated[float, Num(0, 2**32, "fair increase per RTT, bytes")] | None = None
    fi_scale: Annotated[float, Num(0, 100, "fast increase per byte acknowledged")] | None = None
    gamma: Annotated[float, Num(0, 1, "multiplicative decrease gain")] | None = None
    max_md_jump: Annotated[float, Num(0, 1, "largest share one decrease removes")] | None = None
    qa_threshold_us: Annotated[float, Num(0.001, 1e9,
                                          "delay that calls for quick adapt; default: 4 target delays")] | None = None
    qa_gate: Annotated[int, Int(0, 16,
                                "quick adapt only if the period delivered under max_cwnd / 2^gate")] | None = None
    adjust_bytes_threshold: Annotated[int, Int(1, 2**32, "apply increases every this many bytes...")] | None = None
    adjust_period_threshold_us: Annotated[float, Num(0.001, 1e9, "...or this often; default: base RTT")] | None = None
    disable_qa: StrictBool | None = Field(None, description="no quick adapt")

    @field_validator(*FIELDS)
    @classmethod
    def _nscc_only(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and info.data.get("profile") == AIMD:
            raise ValueError("an NSCC field; profile aimd has none")
        return value

    @property
    def overrides(self) -> tuple[tuple[str, Any], ...]:
        """(NsccConfig field, value) of every field the file gave."""
        return tuple((f, getattr(self, k)) for k, f in FIELDS.items() if getattr(self, k) is not None)


def check_kind(raw: Any, kind: str | None) -> Any:
    """RoCE's rate is DCQCN's: a `cc` block on it is refused."""
    if isinstance(raw, dict) and raw and not facts(kind).windowed:
        raise ValueError("RoCE's rate is DCQCN's; cc is for kinds mrc and single_path")
    return raw


def nscc_config(p: CcProfile, base_rtt: float, line_gbps: float, mtu: int) -> NsccConfig:
    d = defaults(base_rtt, line_gbps, mtu)
    given = dict(p.overrides)
    if "target_delay" in given and "qa_threshold" not in given:
        d["qa_threshold"] = 4 * given["target_delay"]  # htsim: 4 target delays, whichever target is set
    return NsccConfig(**{**d, **given})


def attr(p: CcProfile, line_gbps: float, mtu: int, base_rtt: float, flows_per_nic: int) -> CcProfileAttr:
    """The OCP CC profile of a QP (mrc_ctl.h's mrc_ctl_cc_profile_attr): its
    window starts at a bandwidth-delay product of the NIC shared by the
    NIC's flows (so the NIC's first flight is one BDP, however many QPs it
    has); NSCC may grow it to max_cwnd, AIMD to twice its start."""
    bdp = line_gbps * 1e3 * base_rtt / 8  # bytes
    share = max(2 * mtu, bdp / max(1, flows_per_nic))
    if p.profile == AIMD:
        w = share / mtu
        return CcProfileAttr(algorithm=AIMD, cc_config=Aimd(cwnd=w, max_cwnd=max(4.0, 2 * w),
                                                            target_delay=2 * base_rtt))
    return CcProfileAttr(algorithm=NSCC, cc_config=nscc_config(p, base_rtt, line_gbps, mtu), initial_window=share)


def build(p: CcProfile, line_gbps: float, mtu: int, base_rtt: float, flows_per_nic: int) -> CongestionControl:
    """One QP's congestion control of profile `p` (attr), as the host's API makes it."""
    return congestion_control(attr(p, line_gbps, mtu, base_rtt, flows_per_nic), line_gbps, mtu)
