"""What a run asks of a transport (MRC, single path, RoCE: kinds.py), and
what a back end (the timed fabric, BMv2) gives the endpoint it builds on a
NIC's host (`Site`). The run decides nothing by a transport's name: each
choice below is the transport's."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from control_plane.topology import Topology
from fabric_sim.scenario import EndpointCfg, Pin
from fabric_sim.scenario import Transport as TransportCfg
from mrc_host.ev import EvProfile
from mrc_host.host import App, Host
from mrc_wire.pcie import Nic
from sim_core.sim import Sim


@dataclass(frozen=True)
class Timers:
    """An endpoint's timers, µs (the back end's: RTTs differ by a thousand)."""

    rto: float
    probe_interval: float
    reorder_window: float


@dataclass(frozen=True)
class Site:
    """A NIC's host as a back end offers it to the endpoint that runs there:
    the clock, the NIC's address and the NIC itself (its PCIe side,
    mrc_wire.pcie.Nic), its line rate, the endpoint's settings, and the
    application it reports to."""

    clock: Sim  # the timed fabric's Sim, or BMv2's wall clock with the same calls
    addr: bytes
    nic: Nic
    line_gbps: float  # all the NIC's planes
    cfg: EndpointCfg  # mtu, retry limit, ACK coalescing
    timers: Timers
    dscp: Mapping[str, int]
    seed: int
    elide: bool  # the timed fabric carries a payload's zeros as a count (mrc_wire.packet); BMv2 whole frames
    app: App  # the run's driver and ledger


class Transport(Protocol):
    """One transport of a scenario (`transports[i]`), as the run uses it."""

    @property
    def cfg(self) -> TransportCfg: ...  # the scenario's transports[i]

    @property
    def marks_last_hop(self) -> bool: ...  # the switches mark ECN toward hosts too (DCQCN's network)

    @property
    def scheduled(self) -> bool: ...  # its data waits in the NIC's QP scheduler (a window's); else it paces itself

    @property
    def reroutes(self) -> bool: ...  # one path per QP: routing rehashes it off a dead path after a fault

    @property
    def plots_ev_states(self) -> bool: ...  # its EVs change state: ev_states.png shows them

    @property
    def bmv2_refusal(self) -> str | None: ...  # why it cannot run on the BMv2 fabric; None: it can

    @property
    def offloads_receiver(self) -> bool: ...  # the NIC tracks its PSNs and SACKs (MRC's); else its host does

    @property
    def verbs(self) -> bool: ...  # its QPs are MRC's, opened through the host's MRC API (mrc_host/verbs.py)

    @property
    def nic_echoes_ce(self) -> bool: ...  # the NIC's SACKs echo CE (False: the ecn_echo ablation)

    def rto(self, cfg: EndpointCfg, base_rtt: float) -> float:
        """The retransmission timeout on the timed fabric, µs."""
        ...

    def profile(self, topo: Topology, a: int, b: int, k: int, rng: random.Random, pin: Pin | None = None,
                start: int = 0, ecmp_seed: int = 0) -> EvProfile:
        """The EVs of the k-th QP from NIC a to NIC b (fabric_sim.transports.qps.plan);
        a hashed path's with the switches' hash seed `ecmp_seed`."""
        ...

    def endpoint(self, site: Site) -> Host:
        """The endpoint this transport runs on a NIC's host."""
        ...
