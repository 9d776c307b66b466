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

import random
from dataclasses import dataclass, field

from mrc_host.endpoint import Endpoint
from mrc_wire import packet as W
from mrc_wire.constants import ACK_BYTES, DSCP_DEFAULTS, ECN_CE, NACK_TRIMMED, NACK_TRIMMED_LASTHOP
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
        self.endpoints: dict[bytes, Endpoint] = {}
        self.fronts: dict[bytes, NicFront] = {}
        self.stats = FabricStats()

    def attach(self, ep: Endpoint, ack_bytes: int = ACK_BYTES) -> NicFront:
        """`ep` on the fabric behind its NIC's receive stage, which SACKs
        every `ack_bytes` of payload (attach before connecting its QPs)."""
        self.endpoints[ep.addr_bytes] = ep
        front = self.fronts[ep.addr_bytes] = NicFront(ep, lambda raw: self.send(ep, raw), ack_bytes)
        return front

    def front(self, ep: Endpoint) -> NicFront:
        return self.fronts[ep.addr_bytes]

    def sender(self, ep: Endpoint):
        return lambda raw: self.send(ep, raw)

    def send(self, src: Endpoint, raw: bytes) -> None:
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
        dst = self.endpoints.get(pkt.dst)
        front = self.fronts.get(pkt.dst)
        if dst is None or front is None:
            return
        if is_data and self.rng.random() < prof.trim:
            self.stats.trimmed += 1
            self.sim.at(self.latency, lambda: src.receive(self._nack(dst, pkt, prof.lasthop)))
            return
        if is_data and pkt.ecn and self.rng.random() < prof.ecn:
            raw = raw[:1] + bytes([raw[1] | ECN_CE << 4]) + raw[2:]
            self.stats.ecn_marked += 1
        self.stats.delivered += 1
        self.sim.at(self.latency, lambda: front.receive(raw))

    @staticmethod
    def _nack(receiver: Endpoint, pkt: W.Mrc, lasthop: bool) -> bytes:
        """The NACK the receiving NIC sends for a trimmed data packet."""
        qp = receiver.qps[pkt.dqpn]
        reason = NACK_TRIMMED_LASTHOP if lasthop else NACK_TRIMMED
        return W.nack_for(pkt.raw, qp.peer_qpn, reason, DSCP_DEFAULTS["control"])
