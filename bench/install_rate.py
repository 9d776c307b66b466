"""P4Runtime install time of a full-size T0 (8 planes, 512 rows, 256
spines, 256 hosts: 1 my_usid + 256 + 256 routes + 512 neighbours + DSCP
classes + config), batched vs one update per WriteRequest, on one BMv2."""

from __future__ import annotations

import time

from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane import topology
from control_plane.session import Session
from control_plane.topology import Device
from testbed import toolchain
from testbed.bmv2 import Bmv2Switch

FULL = topology.parse({"planes": 8, "t0_per_plane": 512, "t1_per_plane": 256, "hosts_per_t0": 256})


def _install(batch: int) -> tuple[float, int]:
    """Seconds to reconcile a full T0 onto a fresh BMv2, and entries written."""
    state = S.t0_state(FULL, 0, 0)
    desired = [P.to_p4(e) for e in state.entries()]
    p4info, blob = toolchain.artifacts("switch")
    with Bmv2Switch(f"bench-install-{batch}", ports=[], log=False) as sw:
        with Session(Device(state.name, sw.grpc_addr, sw.device_id), p4info, blob) as s:
            t0 = time.perf_counter()
            d = s.reconcile(desired, P.SWITCH_TABLES, P.SWITCH_DEFAULTS, batch_size=batch)
            elapsed = time.perf_counter() - t0
            assert not s.verify(desired, P.SWITCH_TABLES, P.SWITCH_DEFAULTS), "read-back differs"
    return elapsed, len(d.inserts) + len(d.modifies)


def run() -> list[str]:
    out = ["## P4Runtime install, full-size T0 on BMv2"]
    reason = toolchain.bmv2_unavailable()
    if reason or not toolchain.artifacts("switch")[1].exists():
        return out + [f"skipped: {reason or 'switch.json missing'}"]
    batched, n = _install(1000)
    single, _ = _install(1)
    out += [
        f"- entries: {n}",
        f"- batched (1000 updates per Write): {batched:.3f} s, {n / batched:,.0f} entries/s",
        f"- one update per Write: {single:.3f} s, {n / single:,.0f} entries/s",
        f"- batched is {single / batched:.1f}x faster",
    ]
    return out
