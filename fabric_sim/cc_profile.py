"""A transport's congestion-control profile (`transports[].cc` in a
scenario file), named as the OCP MRC API names it: `profile:
uet-1.0-nscc` (the default) with `struct mrc_ctl_cc_nscc_cfg`'s fields,
times in µs (`_us`), sizes in bytes; or `profile: aimd`, the model's
earlier window. A field left out takes NSCC's default for this fabric
(nic_model.nscc.defaults: UEC's constants scaled to its base RTT and NIC
rate). docs/simulator.md has the table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fabric_sim.fields import ScenarioError, choice, flag, mapping, num
from nic_model.cc import Aimd, CongestionControl
from nic_model.nscc import Nscc, NsccConfig, defaults

NSCC, AIMD = "uet-1.0-nscc", "aimd"
# scenario key -> (NsccConfig field, lowest, highest, integer)
FIELDS = {
    "base_rtt_us": ("base_rtt", 0.001, 1e6, False),
    "target_delay_us": ("target_delay", 0.001, 1e6, False),
    "max_cwnd": ("max_cwnd", 64, 2**32, True),
    "eta": ("eta", 0, 2**32, False),
    "fi": ("fi", 0, 2**32, False),
    "fi_scale": ("fi_scale", 0, 100, False),
    "gamma": ("gamma", 0, 1, False),
    "max_md_jump": ("max_md_jump", 0, 1, False),
    "qa_threshold_us": ("qa_threshold", 0.001, 1e9, False),
    "qa_gate": ("qa_gate", 0, 16, True),
    "adjust_bytes_threshold": ("adjust_bytes_threshold", 1, 2**32, True),
    "adjust_period_threshold_us": ("adjust_period_threshold", 0.001, 1e9, False),
}


@dataclass(frozen=True)
class CcProfile:
    profile: str = NSCC
    overrides: tuple[tuple[str, Any], ...] = ()  # (NsccConfig field, value) given in the file


def parse(raw: Any, path: str, kind: str) -> CcProfile:
    r = mapping(raw, path, {"profile", "disable_qa", *FIELDS})
    if r and kind == "roce":
        raise ScenarioError(path, "RoCE's rate is DCQCN's; cc is for kinds mrc and single_path")
    prof = choice(r, "profile", f"{path}.", (NSCC, AIMD), NSCC)
    given = [k for k in r if k != "profile"]
    if prof == AIMD and given:
        raise ScenarioError(f"{path}.{given[0]}", "an NSCC field; profile aimd has none")
    over = [(f, num(r, k, f"{path}.", ..., lo, hi, i)) for k, (f, lo, hi, i) in FIELDS.items() if k in r]
    if "disable_qa" in r:
        over.append(("disable_qa", flag(r, "disable_qa", f"{path}.", False)))
    return CcProfile(prof, tuple(over))


def nscc_config(p: CcProfile, base_rtt: float, line_gbps: float, mtu: int) -> NsccConfig:
    d = defaults(base_rtt, line_gbps, mtu)
    given = dict(p.overrides)
    if "target_delay" in given and "qa_threshold" not in given:
        d["qa_threshold"] = 4 * given["target_delay"]  # htsim: 4 target delays, whichever target is set
    return NsccConfig(**{**d, **given})


def build(p: CcProfile, line_gbps: float, mtu: int, base_rtt: float, flows_per_nic: int) -> CongestionControl:
    """One QP's window: a bandwidth-delay product of the NIC shared by the
    NIC's flows to start with (so the NIC's first flight is one BDP,
    however many QPs it has); NSCC may grow it to max_cwnd, AIMD to twice
    its start."""
    bdp = line_gbps * 1e3 * base_rtt / 8  # bytes
    share = max(2 * mtu, bdp / max(1, flows_per_nic))
    if p.profile == AIMD:
        w = share / mtu
        return Aimd(cwnd=w, max_cwnd=max(4.0, 2 * w), target_delay=2 * base_rtt)
    return Nscc(nscc_config(p, base_rtt, line_gbps, mtu), line_gbps, mtu, cwnd=share)
