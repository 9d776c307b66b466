"""Path checker: walk packets through the planned tables of the fabric.

For a (source NIC, destination NIC, plane, spine) the walker builds the
carrier of DESIGN.md section 3, then at every switch applies the planned
tables (own uSID shift, /48 lookup) and follows the wire given by the
topology's port numbering, checking the neighbour MACs on each link. A
path passes when it reaches the destination NIC's port on that plane in 1
(same row) or 3 hops.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from control_plane import addressing as A
from control_plane import switch_plan as S
from control_plane.topology import Topology
from mrc_wire.entries import PortNeighbour
from mrc_wire.usid import shift


@dataclass(frozen=True)
class PathResult:
    src: int
    dst: int
    plane: int
    spine: int
    ok: bool
    hops: int
    detail: str


class PathChecker:
    def __init__(self, topo: Topology):
        self.topo = topo
        self.planner = S.Planner(topo)
        self._tables: dict[str, tuple[int, dict[int, int], dict[int, PortNeighbour]]] = {}
        self._routes: dict[int, dict[int, int]] = {}  # shared route lists -> dict

    def _switch(self, name: str) -> tuple[int, dict[int, int], dict[int, PortNeighbour]]:
        if name not in self._tables:
            if len(self._tables) > 20000:
                self._tables.clear()
            st = self.planner.switch_state(name)
            key = id(st.routes)
            if key not in self._routes:
                self._routes[key] = {r.locator: r.port for r in st.routes}
            self._tables[name] = (st.my_usid.locator, self._routes[key], {n.port: n for n in st.neighbours})
        return self._tables[name]

    def _wire(self, name: str, port: int, plane: int) -> tuple[str, int]:
        """The device and port at the other end of `port` of switch `name`."""
        dev, peer_port = self.topo.peer(self.topo.device(name), port)
        return str(dev), peer_port

    def _port_mac(self, device: str, port: int, plane: int) -> int:
        dev = self.topo.device(device)
        if dev.kind == "nic":
            return A.nic_mac(plane, dev.index)
        return self._switch(device)[2][port].src_mac

    def walk(self, src: int, dst: int, plane: int, spine: int) -> PathResult:
        t = self.topo
        H = t.hosts_per_t0
        a, b, k = src // H, dst // H, dst % H
        da = int(A.path_carrier(t, plane, a, b, k, spine))
        device, hops = A.t0_name(plane, a), 0
        expect = 1 if a == b else 3
        while self.topo.device(device).is_switch:
            if hops > 6:
                return PathResult(src, dst, plane, spine, False, hops, "loop")
            mine, routes, neighbours = self._switch(device)
            if da >> 80 == mine:
                if da & ((1 << 80) - 1) == 0:
                    return PathResult(src, dst, plane, spine, False, hops, f"argument zero at {device}")
                da = shift(da)
            port = routes.get(da >> 80)
            if port is None:
                return PathResult(src, dst, plane, spine, False, hops, f"no route at {device}")
            nb = neighbours.get(port)
            peer, peer_port = self._wire(device, port, plane)
            if nb is None or nb.dst_mac != self._port_mac(peer, peer_port, plane):
                return PathResult(src, dst, plane, spine, False, hops, f"wrong neighbour MAC on {device} port {port}")
            device, hops = peer, hops + 1
        ok = device == A.nic_name(dst) and hops == expect
        return PathResult(src, dst, plane, spine, ok, hops, "" if ok else f"reached {device} in {hops} hops")

    def all_paths(self) -> Iterator[tuple[int, int, int, int]]:
        t = self.topo
        for plane in range(t.planes):
            for src in range(t.nics):
                for dst in range(t.nics):
                    for spine in range(t.t1_per_plane):
                        yield src, dst, plane, spine

    def sample(self, count: int, seed: int) -> Iterator[tuple[int, int, int, int]]:
        rng = random.Random(seed)
        t = self.topo
        for _ in range(count):
            yield rng.randrange(t.nics), rng.randrange(t.nics), rng.randrange(t.planes), rng.randrange(t.t1_per_plane)

    def check(self, paths: Iterable[tuple[int, int, int, int]]) -> tuple[int, list[PathResult]]:
        """(paths walked, failures)."""
        n, failed = 0, []
        for p in paths:
            n += 1
            r = self.walk(*p)
            if not r.ok:
                failed.append(r)
        return n, failed
