"""Timed events of a scenario applied to the fabric. A NIC learns at once
that its own port went down (the link drops) and tells its endpoint; what
happens past a NIC port only the transport can find out."""

from __future__ import annotations

from collections.abc import Callable

from fabric_sim.net.fabric import Fabric
from fabric_sim.scenario import Event
from mrc_wire import ids
from mrc_wire.constants import ev_plane
from mrc_wire.ids import DeviceId


def _cable(fab: Fabric, a: DeviceId, b: DeviceId, up: bool) -> None:
    for e in fab.links[frozenset((a, b))]:
        e.set_up(up)
    for d, other in ((a, b), (b, a)):
        if d.kind == "nic":  # the NIC sees its port go down or up
            ep = fab.nics[d.index].endpoint
            if ep is not None:
                (ep.port_up if up else ep.port_down)(other.plane)


def apply(fab: Fabric, ev: Event, on_fault: Callable[[], None]) -> None:
    topo = fab.topo
    k, args = ev.kind, ev.args
    if k in ("link_down", "link_up"):
        _cable(fab, topo.device(args[0]), topo.device(args[1]), k == "link_up")
    elif k in ("switch_down", "switch_up"):
        sw = topo.device(args[0])
        for key in [key for key in fab.links if sw in key]:
            a, b = tuple(key)
            _cable(fab, a, b, k == "switch_up")
    elif k in ("plane_down", "plane_up"):
        for key in [key for key in fab.links if any(d.plane == args[0] and d.kind != "nic" for d in key)]:
            a, b = tuple(key)
            _cable(fab, a, b, k == "plane_up")
    elif k in ("nic_port_down", "nic_port_up"):
        nic = topo.device(args[0])
        row = nic.index // topo.hosts_per_t0
        _cable(fab, nic, ids.t0(args[1], row), k == "nic_port_up")
    elif k == "nic_rx_loss":  # what the paper's inline P4 program at every NIC drops
        rate, nic = args
        for n in ([topo.device(nic).index] if nic else range(topo.nics)):
            for e in fab.into_nic(n):
                e.loss = rate
    elif k == "ev_loss":  # the paper's per-EV error injection: the QPs' EVs on that plane, at the sender
        n, plane, rate = topo.device(args[0]).index, args[1], args[2]
        for (a, _), qps in fab.qp_links.items():
            if a == n:
                for q in qps:
                    for home in q.prof_a.home:
                        if ev_plane(home) == plane:
                            fab.nics[n].ev_loss[(q.qpn_b, home)] = rate
    else:
        for e in fab.link(args[0], args[1]):
            if k == "link_loss":
                e.loss = args[2]
            elif k == "link_rate":
                e.set_rate(args[2])
            else:
                e.extra = args[2]
    on_fault()
