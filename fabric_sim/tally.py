"""Packet totals by which a reader checks a run from results.json alone:

    sent + nacks_from_nics == delivered + sum(dropped by cause) + in_flight

`sent`: packets the endpoints handed their NICs; `nacks_from_nics`: NACKs
the NICs made themselves (for trimmed packets); `delivered`: packets the
NICs handed their endpoints (trim notices included); `in_flight`: packets
still on a wire when the run stopped. Each is counted where it happens,
not derived from the others, so the sum is a check and not a definition."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fabric_sim.links import Egress
from fabric_sim.pfc import PfcEgress
from sim_core.sim import Sim


class Tally:
    def __init__(self) -> None:
        self.sent = 0
        self.delivered = 0

    def transmit(self, fn: Callable[[bytes], None]) -> Callable[[bytes], None]:
        """An endpoint's transmit that counts what it hands the NIC."""
        def tx(raw: bytes) -> None:
            self.sent += 1
            fn(raw)
        return tx

    def receive(self, endpoint: Any) -> None:
        """Count what the NIC hands `endpoint` (its `deliver`, wrapped in place)."""
        inner = endpoint.deliver

        def rx(pkt: Any) -> None:
            self.delivered += 1
            inner(pkt)
        endpoint.deliver = rx

    def totals(self, sim: Sim, drops: dict[str, int], nacks_from_nics: int,
               egresses: Iterable[Any] = ()) -> dict[str, Any]:
        return {"sent": self.sent, "nacks_from_nics": nacks_from_nics, "delivered": self.delivered,
                "dropped": dict(sorted(drops.items())), "in_flight": on_wires(sim, egresses)}


def on_wires(sim: Sim, egresses: Iterable[Any] = ()) -> int:
    """Packets the fabric still holds: on a wire (the pending arrivals an
    egress scheduled) or, under PFC, still queued at a pausable egress."""
    arriving = sum(
        1
        for fn in sim.pending_calls()
        if isinstance(getattr(fn, "__self__", None), (Egress, PfcEgress)) and fn.__name__ in ("arrive", "_arrive")
    )
    return arriving + sum(e.queued() for e in egresses if isinstance(e, PfcEgress))
