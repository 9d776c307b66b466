"""Packet totals by which a reader checks a run from results.json alone:

    sent + nacks_from_nics + sacks_from_nics
        == delivered + kept_by_nics + sum(dropped by cause) + in_flight

`sent`: packets the endpoints handed their NICs; `nacks_from_nics`: NACKs
the NICs made themselves (for trimmed packets, and beyond the receive
window); `sacks_from_nics`: the SACKs and probe answers of the NICs'
receivers (nic_model/rx_track.py); `delivered`: packets the NICs handed
their endpoints (trim notices included); `kept_by_nics`: what the NICs'
receivers took in without handing it on (duplicates, packets beyond the
window, probes they answered); `in_flight`: packets still on a wire when
the run stopped. Each is counted where it happens,
not derived from the others, so the sum is a check and not a definition."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fabric_sim.net.links import Delivery
from fabric_sim.net.pfc import PfcEgress
from sim_core.sim import Sim


def totals(fab: Any, sim: Sim, drops: dict[str, int], nacks_from_nics: int) -> dict[str, Any]:
    """The run's totals from the NICs' counters (`NicNode.from_host`,
    `to_host`, the receivers'), its drops, and what the fabric still holds."""
    ev = [n.model.events for n in fab.nics]
    return {"sent": sum(n.from_host for n in fab.nics), "nacks_from_nics": nacks_from_nics,
            "sacks_from_nics": sum(e["sack"] + e["probe_answer"] for e in ev),
            "delivered": sum(n.to_host for n in fab.nics),
            "kept_by_nics": sum(e["duplicate"] + e["beyond_window"] + e["probe_answer"] for e in ev),
            "dropped": dict(sorted(drops.items())), "in_flight": on_wires(sim, fab.egresses())}


def on_wires(sim: Sim, egresses: Iterable[Any] = ()) -> int:
    """Packets the fabric still holds: on a wire (the pending arrivals an
    egress scheduled) or, under PFC, still queued at a pausable egress."""
    arriving = sum(1 for ev in sim.pending_events() if isinstance(ev, Delivery))
    return arriving + sum(e.queued() for e in egresses if isinstance(e, PfcEgress))
