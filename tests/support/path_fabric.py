"""A path-level fabric between MRC endpoints, for small model tests of
the endpoint's logic. It has no rates or queues: the timed fabric of every
switch and NIC is `fabric_sim`.

Each EV names a path; a PathProfile says what that path does to packets:
lose them (`broken` or at random), trim data, mark ECN. A trimmed data
packet is turned into a NACK to the sender, as the receiving NIC's pipeline
does (DESIGN.md section 5), with reason TRIMMED or TRIMMED_LASTHOP.
Every endpoint attached has its NIC's receive stage in front of it
(tests/support/nic_front.py): packets reach it through that, and the
NIC's SACKs, probe answers and window NACKs travel back over the fabric.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mrc_host.endpoint import Endpoint
from mrc_wire import packet as W
from mrc_wire.constants import DSCP_DEFAULTS, ECN_CE, NACK_TRIMMED, NACK_TRIMMED_LASTHOP
from nic_model.nic_pipeline import NicModel
from sim_core.sim import Sim
from tests.support.nic_front import NicFront


@dataclass
class PathProfile:
    broken: bool = False
    loss: float = 0.0
    trim: float = 0.0
    lasthop: bool = False  # trims happen at the last hop (receiver bottleneck)
    ecn: float = 0.0


@dataclass
class FabricStats:
    delivered: int = 0
    lost: int = 0
    trimmed: int = 0
    ecn_marked: int = 0
    by_ev: dict[int, int] = field(default_factory=dict)  # every packet, by the EV it travels on
    data_by_ev: dict[int, int] = field(default_factory=dict)


class PathFabric:
    def __init__(self, sim: Sim, seed: int = 0, latency: float = 10.0, default: PathProfile | None = None):
        self.sim = sim
        self.rng = random.Random(seed)
        self.latency = latency
        self.default = default or PathProfile()
        self.paths: dict[int, PathProfile] = {}
        self.fronts: dict[bytes, NicFront] = {}
        self.stats = FabricStats()

    def nic(self, addr: str | bytes, out: Callable[[bytes], None] | None = None,
            dscp: Mapping[str, int] | None = None) -> NicModel:
        """The NIC model of the fabric at `addr`, for an endpoint to be built on;
        what it sends goes to `out` (a test's tap, which calls `send` for
        what it lets through) or straight onto the fabric. `dscp`: its
        classes, as its host's."""
        a = addr if isinstance(addr, bytes) else ipaddress.IPv6Address(addr).packed
        front = self.fronts[a] = NicFront(a, out or (lambda raw: self.send(a, raw)), dscp=dscp)
        return front.model

    def front(self, ep: Endpoint) -> NicFront:
        return self.fronts[ep.addr_bytes]

    def send(self, src: bytes, raw: bytes) -> None:
        """An inner packet the NIC at `src` sent."""
        pkt = W.parse(raw)
        if pkt is None:
            return
        ev = pkt.ev
        self.stats.by_ev[ev] = self.stats.by_ev.get(ev, 0) + 1
        prof = self.paths.get(ev, self.default)
        is_data = pkt.is_data
        if is_data:
            self.stats.data_by_ev[ev] = self.stats.data_by_ev.get(ev, 0) + 1
        if prof.broken or self.rng.random() < prof.loss:
            self.stats.lost += 1
            return
        front, back = self.fronts.get(pkt.dst), self.fronts.get(src)
        if front is None or back is None:
            return
        if is_data and self.rng.random() < prof.trim:
            self.stats.trimmed += 1
            nack = self._nack(front, pkt, prof.lasthop)
            self.sim.at(self.latency, lambda: back.receive(nack))
            return
        if is_data and pkt.ecn and self.rng.random() < prof.ecn:
            raw = raw[:1] + bytes([raw[1] | ECN_CE << 4]) + raw[2:]
            self.stats.ecn_marked += 1
        self.stats.delivered += 1
        self.sim.at(self.latency, lambda: front.receive(raw))

    @staticmethod
    def _nack(receiver: NicFront, pkt: W.Mrc, lasthop: bool) -> bytes:
        """The NACK the receiving NIC sends for a trimmed data packet."""
        peer = receiver.model.peers[pkt.dqpn].peer_qpn
        reason = NACK_TRIMMED_LASTHOP if lasthop else NACK_TRIMMED
        return W.nack_for(pkt.raw, peer, reason, DSCP_DEFAULTS["control"])
