"""The timed fabric as the target of a scenario's events
(fabric_sim.scenario.events): the fabric's own controls, and the run's QP
plan for the per-EV error injection, which names a NIC's sending QPs."""

from __future__ import annotations

from collections.abc import Callable

from control_plane.topology import Topology
from fabric_sim.net.fabric import Fabric
from fabric_sim.scenario import Event
from fabric_sim.transports.qps import QpLink
from mrc_wire.constants import ev_plane
from mrc_wire.ids import DeviceId


class TimedTarget:
    """What an event acts on in a run on the timed fabric (an Impairments)."""

    def __init__(self, fab: Fabric, plan: dict[tuple[int, int], list[QpLink]]):
        self.fab, self.plan = fab, plan

    @property
    def topo(self) -> Topology:
        return self.fab.topo

    def cable_ends(self) -> list[frozenset[DeviceId]]:
        return self.fab.cable_ends()

    def set_cable(self, a: DeviceId, b: DeviceId, up: bool) -> None:
        self.fab.set_cable(a, b, up)

    def set_link_loss(self, a: str, b: str, rate: float) -> None:
        self.fab.set_link_loss(a, b, rate)

    def set_link_rate(self, a: str, b: str, gbps: float) -> None:
        self.fab.set_link_rate(a, b, gbps)

    def set_link_latency(self, a: str, b: str, us: float) -> None:
        self.fab.set_link_latency(a, b, us)

    def set_rx_loss(self, nic: int, rate: float) -> None:
        self.fab.set_rx_loss(nic, rate)

    def set_ev_loss(self, nic: int, plane: int, rate: float) -> None:
        for (a, _), qps in self.plan.items():
            if a == nic:
                for q in qps:
                    for home in q.prof_a.home:
                        if ev_plane(home) == plane:
                            self.fab.nics[nic].drop_on_ev(q.qpn_b, home, rate)


def fire(ev: Event, target: TimedTarget, on_fault: Callable[[], None]) -> None:
    """An event at its time: applied, then the transport's routing told."""
    ev.apply(target)
    on_fault()
