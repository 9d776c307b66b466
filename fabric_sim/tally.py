"""Packet totals by which a reader checks a run from results.json alone:

    sent + nacks_from_nics == delivered + sum(dropped by cause) + in_flight

`sent`: packets the endpoints handed their NICs; `nacks_from_nics`: NACKs
the NICs made themselves (for trimmed packets); `delivered`: packets the
NICs handed their endpoints (trim notices included); `in_flight`: packets
still on a wire when the run stopped. Each is counted where it happens,
not derived from the others, so the sum is a check and not a definition."""

from __future__ import annotations

from typing import Any, Callable

from fabric_sim.links import Egress
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
        """Count what the NIC hands `endpoint` (its receive, wrapped in place)."""
        inner = endpoint.receive

        def rx(raw: bytes) -> None:
            self.delivered += 1
            inner(raw)
        endpoint.receive = rx

    def totals(self, sim: Sim, drops: dict[str, int], nacks_from_nics: int) -> dict[str, Any]:
        return {"sent": self.sent, "nacks_from_nics": nacks_from_nics, "delivered": self.delivered,
                "dropped": dict(sorted(drops.items())), "in_flight": on_wires(sim)}


def on_wires(sim: Sim) -> int:
    """Packets on a wire now: the pending events of egresses (an egress
    schedules nothing but arrivals at its far end)."""
    return sum(1 for fn in sim.pending_calls() if isinstance(getattr(fn, "__self__", None), Egress))
