"""The transports a scenario compares, as objects (the protocol:
transport.py): MRC, the single-path baseline on the same endpoint, and the
RoCE baseline. `of` is the one place that reads a transport's kind."""

from __future__ import annotations

import random
from dataclasses import dataclass

from control_plane.topology import Topology
from fabric_sim.scenario import EndpointCfg, Pin
from fabric_sim.scenario import Transport as TransportCfg
from fabric_sim.transports import qps
from fabric_sim.transports.roce import RoceEndpoint
from fabric_sim.transports.transport import Site, Transport
from mrc_host.endpoint import Endpoint
from mrc_host.ev import EvProfile
from mrc_host.host import Host
from mrc_host.settings import HostConfig


@dataclass(frozen=True)
class Mrc:
    """MRC: each QP sprayed over many EVs across the planes, their states
    tracked (or not: oblivious spraying, an ablation)."""

    cfg: TransportCfg
    marks_last_hop = False
    scheduled = True
    reroutes = False
    plots_ev_states = True
    bmv2_refusal = None
    offloads_receiver = True
    verbs = True

    @property
    def nic_echoes_ce(self) -> bool:
        return "ecn_echo" not in self.cfg.ablate

    def rto(self, cfg: EndpointCfg, base_rtt: float) -> float:
        return cfg.rto_us or 10 * base_rtt

    def profile(self, topo: Topology, a: int, b: int, k: int, rng: random.Random, pin: Pin | None = None,
                start: int = 0, ecmp_seed: int = 0) -> EvProfile:
        return qps.sprayed(self.cfg, topo, rng, pin, start)

    def endpoint(self, site: Site) -> Host:
        return _mrc_endpoint(site, frozenset(self.cfg.ablate))


@dataclass(frozen=True)
class SinglePath:
    """The single-path baseline: the MRC endpoint on one ECMP-hashed EV per
    QP, with no EV state; routing moves it off a dead path."""

    cfg: TransportCfg
    marks_last_hop = False
    scheduled = True
    reroutes = True
    plots_ev_states = False
    bmv2_refusal = None
    offloads_receiver = True
    verbs = True
    nic_echoes_ce = True

    def rto(self, cfg: EndpointCfg, base_rtt: float) -> float:
        return cfg.rto_us or 10 * base_rtt

    def profile(self, topo: Topology, a: int, b: int, k: int, rng: random.Random, pin: Pin | None = None,
                start: int = 0, ecmp_seed: int = 0) -> EvProfile:
        return qps.hashed(topo, a, b, k, ecmp_seed)

    def endpoint(self, site: Site) -> Host:
        return _mrc_endpoint(site, frozenset())



@dataclass(frozen=True)
class Roce:
    """The RoCE baseline (roce.py): one ECMP-hashed path per QP, DCQCN's
    rate (its switches mark ECN at the last hop too), lossless by PFC."""

    cfg: TransportCfg
    marks_last_hop = True
    scheduled = False  # DCQCN paces each QP, and PFC holds the NIC's packets
    reroutes = True
    plots_ev_states = False
    # BMv2's switches neither pause (PFC) nor mark ECN at the last hop (DCQCN).
    bmv2_refusal = "the RoCE baseline runs on the timed fabric only"
    offloads_receiver = False  # RC's go-back-N receiver is its host's (roce.py)
    verbs = False  # RC QPs: the RoCE host's own connect
    nic_echoes_ce = True

    def rto(self, cfg: EndpointCfg, base_rtt: float) -> float:
        """The QPs' local ACK timeout (the transport's `rc`), not tied to the RTT: real time."""
        return cfg.rto_us or self.cfg.rc.rto_us

    def profile(self, topo: Topology, a: int, b: int, k: int, rng: random.Random, pin: Pin | None = None,
                start: int = 0, ecmp_seed: int = 0) -> EvProfile:
        return qps.hashed(topo, a, b, k, ecmp_seed)

    def endpoint(self, site: Site) -> Host:
        return RoceEndpoint(site.clock, site.addr, site.nic, line_gbps=site.line_gbps, mtu=site.cfg.mtu,
                            rto=site.timers.rto, retry_limit=self.cfg.rc.retry_cnt, dscp=site.dscp, app=site.app,
                            dcqcn=self.cfg.dcqcn)


def _mrc_endpoint(site: Site, ablate: frozenset[str]) -> Endpoint:
    t = site.timers
    cfg = HostConfig(mtu=site.cfg.mtu, rto=t.rto, retry_limit=site.cfg.retry_limit, probe_interval=t.probe_interval,
                     reorder_window=t.reorder_window, dscp=site.dscp, keep_payload=False, elide=site.elide,
                     seed=site.seed, ack_bytes=site.cfg.ack_bytes, ablate=ablate)
    return Endpoint(site.clock, site.addr, site.nic, cfg, site.app)


def of(cfg: TransportCfg) -> Transport:
    """The transport a scenario's `transports[i]` describes."""
    kinds: dict[str, type[Mrc] | type[SinglePath] | type[Roce]] = {"mrc": Mrc, "single_path": SinglePath,
                                                                    "roce": Roce}
    return kinds[cfg.kind](cfg)
