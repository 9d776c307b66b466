"""An MRC endpoint's settings: what a host transport is built with, besides
its clock, its address and its NIC. Defaults in one place."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mrc_wire.constants import ACK_BYTES, DSCP_DEFAULTS


@dataclass(frozen=True)
class HostConfig:
    mtu: int = 1024
    rto: float = 200.0  # µs
    rto_max: float | None = None  # None: 64 x rto
    retry_limit: int = 8  # timeouts of one PSN before the QP enters its error state
    probe_interval: float = 100.0  # µs
    reorder_window: float | None = None  # None: rto / 4
    dscp: Mapping[str, int] = field(default_factory=dict)  # the topology file's classes over DSCP_DEFAULTS
    keep_payload: bool = True  # hand each message's bytes over (False: simulated payloads, counted)
    elide: bool = False  # a simulated payload's zeros are counted, not built (mrc_wire.packet)
    seed: int = 0
    ack_bytes: int = ACK_BYTES  # the QPs' receivers (the NIC's) SACK every this much payload
    # Mechanisms switched off to show a check depends on them (fabric_sim.scenario.ABLATIONS):
    # port_bitmap (paths.py: the peer's port status ignored), ev_retire (a loss never retires an EV;
    # the copies are still resent); ecn_echo is the NIC's.
    ablate: frozenset[str] = frozenset()

    def classes(self) -> dict[str, int]:
        """Every DSCP class, the topology's over the defaults."""
        return {**DSCP_DEFAULTS, **self.dscp}
