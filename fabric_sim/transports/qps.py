"""Transports: the QPs of every pair, their EV profiles, and the NIC plans
that hold them.

Each transport (kinds.py) gives its QPs' EV profiles with one of these:

- `mrc`: N EVs per QP spread evenly over the planes and, within a plane,
  over a random subset of spines, with backups per plane; EV state on (or
  off: oblivious spraying, an ablation).
- `single_path`: one EV per QP, chosen by hash as ECMP would; no EV state.
  After a fault, routing reconverges `reconvergence_us` later: every QP
  whose path crosses a dead cable is rehashed over the paths still alive.
- `roce`: the same ECMP-hashed path per QP and the same reconvergence, with
  the RoCE endpoint (fabric_sim/transports/roce.py) on every NIC.

A flow of the `flows` workload may pin its MRC QPs to given spines of one
plane (the paper's Fig. 14 forces two flows onto one EV).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from control_plane.topology import Topology
from fabric_sim.net.fabric import Fabric
from fabric_sim.scenario import Pin, Transport, cc_profile
from fabric_sim.transports import transport
from mrc_host.cc import CongestionControl
from mrc_host.ev import Damping, EvProfile, make_ev
from mrc_wire.constants import EV_HEALTH_SLOTS, ev_plane, ev_spine


@dataclass
class QpLink:
    """One QP between two NICs: `a` sends the messages, `b` receives."""

    a: int
    b: int
    qpn_a: int
    qpn_b: int
    prof_a: EvProfile
    prof_b: EvProfile
    k: int  # index among the pair's QPs


def _hash(*parts: int) -> int:
    """splitmix64 over the parts: every input bit moves every output bit
    (CRC32, being affine, sent a pair's QPs all down one path)."""
    h = 0
    for x in parts:
        h = (h ^ x) + 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF
        h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        h = (h ^ (h >> 27)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
        h ^= h >> 31
    return h


def ecmp(seed: int, *parts: int) -> int:
    """The switches' ECMP hash with hash seed `seed` (seed 0: the parts alone,
    the hash every run used before the seed existed)."""
    return _hash(seed, *parts) if seed else _hash(*parts)


def hashed(topo: Topology, a: int, b: int, k: int, ecmp_seed: int = 0) -> EvProfile:
    """One EV, chosen by hash as ECMP would; no EV state (single path, RoCE)."""
    h = ecmp(ecmp_seed, a, b, k)
    ev = make_ev(h % topo.planes, (h >> 3) % topo.t1_per_plane)
    return EvProfile([ev], {}, enabled=False)


def sprayed(t: Transport, topo: Topology, rng: random.Random, pin: Pin | None = None, start: int = 0) -> EvProfile:
    """MRC's EVs of a QP. `start`: the slot the rotation begins at (the rotation is
    rotated so it is slot 0 for the NIC), so the QPs of one NIC begin on
    different planes: with small first windows, QPs all beginning at slot 0
    would send their whole first flight on the first planes only. plan()
    starts a NIC's i-th sending QP at slot NIC + i, which spreads both a
    sender's QPs and the QPs converging on one receiver over the planes."""
    if pin is not None:
        prof = EvProfile([make_ev(pin.plane, s, salt=i) for i, s in enumerate(pin.spines)],
                         {pin.plane: [make_ev(pin.plane, s, salt=(1 << 20) | i) for i, s in enumerate(pin.backups)]})
    else:
        prof = EvProfile.spread(topo.planes, topo.t1_per_plane, t.evs_per_qp, t.backups_per_plane,
                                salt=rng.randrange(topo.t1_per_plane))
        if start % t.evs_per_qp:
            i = start % t.evs_per_qp
            prof = EvProfile(prof.home[i:] + prof.home[:i], prof.backups)
    prof.enabled, prof.min_active = t.ev_state, t.ev_min_active
    prof.ecn_swap = t.ecn_move == "swap"
    prof.damping = Damping(t.damping.max_doublings, t.damping.down_after)
    # The NIC's data plane keeps the slots' health (EV state on, a rotation it covers).
    prof.health = t.ev_state and len(prof.home) <= EV_HEALTH_SLOTS
    return prof


def plan(tr: transport.Transport, topo: Topology, pairs: list[tuple[int, int]], qps_per_pair: int, seed: int,
         pins: dict[tuple[int, int], Pin] | None = None, nic_health: bool = True, ecmp_seed: int = 0,
         ) -> dict[tuple[int, int], list[QpLink]]:
    """Every pair's QPs (their ends create them on their NICs when they
    connect). A pinned pair's sending QPs use the pin (MRC); its receiving
    side is as usual. `nic_health` False: the NICs' data planes keep no
    path health (a back end that cannot carry it). `ecmp_seed`: the
    switches' hash seed (a hashed path's)."""
    rng = random.Random(seed)
    out: dict[tuple[int, int], list[QpLink]] = {}
    qpn = 1
    sending: dict[int, int] = {}  # NIC -> its sending QPs so far
    for a, b in pairs:
        links = []
        for k in range(qps_per_pair):
            pa = tr.profile(topo, a, b, k, rng, (pins or {}).get((a, b)), start=a + sending.get(a, 0),
                            ecmp_seed=ecmp_seed)
            sending[a] = sending.get(a, 0) + 1
            pb = tr.profile(topo, b, a, k, rng, ecmp_seed=ecmp_seed)
            if not nic_health:
                pa.health = pb.health = False
            links.append(QpLink(a, b, qpn, qpn + 1, pa, pb, k))
            qpn += 2
        out[(a, b)] = links
    return out


def nics_of(links: dict[tuple[int, int], list[QpLink]]) -> list[int]:
    """The NICs that hold a QP, in the order the plan first names them."""
    return list(dict.fromkeys(n for pair in links for n in pair))


def install(fab: Fabric, nics: list[int], progress: Callable[[str], None] | None = None) -> None:
    """Install the tables of each NIC of `nics` (its own, not its QPs') in the fabric."""
    for i, nic in enumerate(nics):
        if progress and i % 1024 == 0:
            progress(f"NIC plans: {i:,}/{len(nics):,} installed")
        fab.install_nic(nic)


def initial_cc(t: Transport, nic_gbps: float, mtu: int, rtt: float, flows_per_nic: int) -> CongestionControl:
    """A QP's window, of the transport's profile (fabric_sim/scenario/cc_profile.py)."""
    return cc_profile.build(t.cc, nic_gbps, mtu, rtt, flows_per_nic)


class Clock(Protocol):
    """A back end's clock: the timed fabric's Sim, or BMv2's RealClock."""

    def at(self, delay: float, fn: Callable[..., None], *args: Any) -> None: ...

    def call_at(self, when: float, fn: Callable[..., None], *args: Any) -> None: ...


class Routes(Protocol):
    """What the rerouting asks of a fabric: the timed one or BMv2's."""

    @property
    def topo(self) -> Topology: ...

    def path_alive(self, src: int, dst: int, plane: int, spine: int) -> bool: ...


class Rerouter(Protocol):
    """Who moves a QP to another path (fabric_sim/runner/wiring.py's plan)."""

    def reroute(self, nic: int, qpn: int, ev: int) -> None: ...


class Reconverger:
    """The single-path baseline's routing: after each fault, once the
    reconvergence delay has passed on `clock`, flows on dead paths are
    rehashed."""

    def __init__(self, fab: Routes, by: Rerouter, clock: Clock, links: dict[tuple[int, int], list[QpLink]],
                 delay: float, ecmp_seed: int = 0):
        self.fab, self.by, self.clock, self.links, self.delay = fab, by, clock, links, delay
        self.ecmp_seed = ecmp_seed
        self.rehashed = 0

    def fault(self) -> None:
        self.clock.at(self.delay, self._converge)

    def _converge(self) -> None:
        for (a, b), qps in self.links.items():
            for link in qps:
                for src, dst, qpn, prof in ((a, b, link.qpn_a, link.prof_a), (b, a, link.qpn_b, link.prof_b)):
                    self._rehash(src, dst, qpn, prof, link.k)

    def _rehash(self, src: int, dst: int, qpn: int, prof: EvProfile, k: int) -> None:
        ev = prof.slots[0]
        fab, topo = self.fab, self.fab.topo
        if fab.path_alive(src, dst, ev_plane(ev), ev_spine(ev)):
            return
        alive = [(p, s) for p in range(topo.planes) for s in range(topo.t1_per_plane) if fab.path_alive(src, dst, p, s)]
        if not alive:
            return
        p, s = alive[ecmp(self.ecmp_seed, src, dst, k) % len(alive)]
        self.by.reroute(src, qpn, make_ev(p, s))  # its slot and its ACKs' path
        self.rehashed += 1
