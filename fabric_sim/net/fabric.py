"""A timed fabric built from a topology file: every switch is the switch
reference model with its planned tables, every NIC the NIC reference model
with its planned tables and an MRC endpoint on its host port, and every
cable two Egress objects (fabric_sim.net.links). Frames are header fields
from end to end (mrc_wire.frame), made by the sending NIC and changed by
each switch, never serialized; a simulated payload's zeros are counted but
not carried (`pad`, mrc_wire.packet). The host-to-NIC hop is PCIe, not
simulated: a NIC node is its host's `mrc_wire.pcie.Nic` (the NIC model
behind the NIC's QP scheduler), and hands its host what the NIC model
parsed."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence

from control_plane import nic_plan, switch_plan
from control_plane.topology import Topology
from fabric_sim.net.links import Egress, LiveDepth, Receiver
from fabric_sim.net.qp_scheduler import QpScheduler
from fabric_sim.scenario import Links
from mrc_wire import ids
from mrc_wire import packet as W
from mrc_wire.constants import DATA_FRAME_BYTES, HOST_PORT, SACK_FRAME_BYTES
from mrc_wire.frame import Frame
from mrc_wire.ids import DeviceId
from mrc_wire.pcie import Host, QpCreate
from nic_model.nic_pipeline import NicModel, Output
from sim_core.sim import Sim
from switch_model.pipeline import SwitchModel

LinkConfig = Links  # the scenario's `links:` (fabric_sim/scenario/__init__.py), one class


def base_rtt(c: LinkConfig, mtu: int) -> float:
    """µs: a full-size data packet across both tiers and its ACK back, on
    empty queues."""
    data = DATA_FRAME_BYTES + mtu
    ack = SACK_FRAME_BYTES
    per_byte = 2 * 8.0 / (c.nic_gbps * 1e3) + 2 * 8.0 / (c.fabric_gbps * 1e3)
    return 8 * c.prop_us + (data + ack) * per_byte


class SwitchNode(Receiver):
    """A switch of the timed fabric: the switch model's pipeline between its
    ports. With `cut_through` (the topology's `switching`), a frame whose
    ingress and egress run at one speed is offered to the egress with the
    time its first bit arrived, so an idle egress sends it on as it
    arrives (fabric_sim.net.links, Egress.send)."""

    __slots__ = ("dev", "model", "egress", "by_port", "unrouted", "cut_through")

    def __init__(self, dev: DeviceId, state: switch_plan.SwitchState, mark_last_hop: bool,
                 cut_through: bool = False, seed: int = 0):
        """`seed`: the run's; with the switch's name it seeds its WRED marking draws."""
        self.dev, self.unrouted, self.cut_through = dev, 0, cut_through
        self.egress: dict[int, Egress] = {}
        # The same ports as a list indexed by port number: the hop's lookup
        # is an index, not a hash probe (None: no cable there).
        self.by_port: list[Egress | None] = []
        self.model = SwitchModel(str(dev), LiveDepth(self.egress), mark_last_hop=mark_last_hop,
                                 rng=random.Random(f"{seed}/{dev}"))
        self.model.install(state.entries())

    def attach_port(self, port: int, eg: Egress) -> None:
        """Cable `eg` to egress port `port`."""
        self.egress[port] = eg
        if port >= len(self.by_port):
            self.by_port.extend([None] * (port + 1 - len(self.by_port)))
        self.by_port[port] = eg

    def rx(self, in_port: int, frame: Frame) -> None:
        out = self.model.forward(in_port, frame)
        if out is not None:
            port = out.port
            eg = self.by_port[port] if port < len(self.by_port) else None
            if eg is None:
                self.unrouted += 1  # a port with no cable
            elif self.cut_through:
                eg.send(out.wire, out.high_priority, self._head(in_port, frame, eg))
            else:
                eg.send(out.wire, out.high_priority)

    def _head(self, in_port: int, frame: Frame, eg: Egress) -> float:
        """When `frame`'s first bit arrived on `in_port`, if that port runs at
        the speed of `eg` (cut-through is possible); -1 if not. A cable's two
        directions run at one rate, so the ingress's rate is that of this
        switch's own egress on the same port."""
        bp = self.by_port
        ing = bp[in_port] if in_port < len(bp) else None
        if ing is None or ing.gbps != eg.gbps:
            return -1.0
        return eg.sim.now - frame.size * ing.us_per_byte


class NicNode(Receiver):
    """A NIC of the timed fabric: the NIC model (its tables, registers and
    pipeline) behind the NIC's QP scheduler, with a port per plane. It is
    its host's `mrc_wire.pcie.Nic`: what the host posts waits in the
    scheduler (if the transport uses one) and goes through the pipeline
    to the ports; the host's writes go to the model; what the pipeline
    hands the host (`rx`) goes to the host attached."""

    __slots__ = ("n", "model", "egress", "host", "scheduler", "ev_loss", "rng", "from_host", "to_host")

    def __init__(self, n: int, model: NicModel, rng: random.Random | None = None):
        self.n, self.model = n, model
        self.egress: dict[int, Egress] = {}
        self.host: Host | None = None  # the MRC or the RoCE endpoint, as the NIC sees it
        self.scheduler: QpScheduler | None = None  # the NIC's QP scheduler, for a transport whose data waits there
        # Packets the host handed this NIC, and this NIC handed its host:
        # counted where they happen (fabric_sim/net/tally.py sums them).
        self.from_host = self.to_host = 0
        # (peer QP, EV) -> share of what this NIC sends there that it drops:
        # the paper's per-EV error injection (an `ev_loss` event)
        self.ev_loss: dict[tuple[int, int], float] = {}
        self.rng = rng or random.Random(n)  # draws the per-EV error injection's losses

    def rx(self, in_port: int, frame: Frame) -> None:
        for o in self.model.receive(frame):
            if o.port == HOST_PORT:
                if self.host is not None and o.pkt is not None:
                    self.to_host += 1
                    self.host.deliver(o.pkt)
            else:
                self._out(o)

    def schedule(self, sim: Sim, depth: int, control_dscp: int) -> None:
        """Data from the host waits in a QP scheduler (fabric_sim.net.qp_scheduler)
        while this NIC's backlog is `depth` packets per live port."""
        self.scheduler = QpScheduler(sim, self, self.egress, depth, control_dscp)

    # ---- the host's side (mrc_wire.pcie.Nic) ----------------------------
    def attach(self, host: Host) -> None:
        self.host = host
        self.model.attach(host)

    def post(self, raw: bytes, pad: int = 0) -> None:
        """A packet from the host: `raw`, then `pad` zero bytes of payload
        not carried (mrc_wire.packet); through the QP scheduler, if any."""
        sched = self.scheduler
        if sched is not None:
            sched.transmit(raw, pad)
        else:
            self.tx(raw, pad)

    def tx(self, raw: bytes, pad: int = 0) -> None:
        """A packet into the pipeline (the scheduler releases it, or it did not wait)."""
        self.from_host += 1
        for o in self.model.transmit(raw, pad):
            self._out(o)

    def held(self, peer_qpn: int, psn: int) -> None:
        """The scheduler holds data `psn` to QP `peer_qpn`: the host is told (its local QP)."""
        host, qpn = self.host, self.model.local_qpn(peer_qpn)
        if host is not None and qpn is not None:
            host.on_held(qpn, psn)

    def create_qp(self, qp: QpCreate) -> None:
        self.model.create_qp(qp)

    def destroy_qp(self, qpn: int) -> None:
        self.model.destroy_qp(qpn)

    def write_slots(self, qpn: int, writes: Sequence[tuple[int, int]]) -> None:
        self.model.write_slots(qpn, writes)

    def set_bad(self, qpn: int, slots: int) -> None:
        self.model.set_bad(qpn, slots)

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        self.model.set_reverse(qpn, plane, ev)

    def set_port_down(self, planes: int) -> None:
        self.model.set_port_down(planes)

    def skipping(self, qpn: int) -> int:
        return self.model.skipping(qpn)

    def port_changed(self, plane: int, up: bool) -> None:
        """This NIC's port of `plane` went down or came back: its host is told."""
        if self.host is not None:
            self.host.on_port(plane, up)

    # ---- the wire ---------------------------------------------------------
    def attach_port(self, port: int, eg: Egress) -> None:
        """Cable `eg` to port `port` (a plane's)."""
        self.egress[port] = eg

    def _out(self, o: Output) -> None:
        eg = self.egress.get(o.port)
        w = o.wire
        if eg is not None and w is not None:
            if self.ev_loss:
                key = (W.dqpn_of(w.inner), W.ev_of(w.inner))
                rate = self.ev_loss.get(key)
                if rate and self.rng.random() < rate:
                    eg.count_drop("ev_loss")
                    return
            eg.send(w, o.high_priority)

    def drop_on_ev(self, peer_qpn: int, ev: int, rate: float) -> None:
        """Drop this share of what this NIC sends to QP `peer_qpn` on EV `ev`."""
        self.ev_loss[(peer_qpn, ev)] = rate


class Fabric:
    def __init__(self, topo: Topology, links: LinkConfig, sim: Sim, seed: int = 0, *, mark_last_hop: bool = False,
                 egress: type[Egress] = Egress, progress: Callable[[str], None] | None = None, ecn_echo: bool = True):
        """`mark_last_hop`: the switches mark ECN toward hosts too (the RoCE
        baseline's network; switch_model.pipeline.SwitchModel). `egress`:
        the link class (fabric_sim.net.pfc.PfcEgress under PFC: pausable, slower).
        `progress`: set-up progress lines (large fabrics take minutes).
        `ecn_echo` False: the NICs' receivers do not echo CE (an ablation)."""
        self.topo, self.cfg, self.sim = topo, links, sim
        self.egress_cls = egress
        self.progress = progress or (lambda line: None)
        self.seed, self.rng = seed, random.Random(seed)
        self.mark_last_hop = mark_last_hop
        self.ecn_echo = ecn_echo
        self.switches: dict[DeviceId, SwitchNode] = {}
        self.nics: list[NicNode] = []
        # frozenset of the two device ids -> (egress a->b, egress b->a)
        self.cables: dict[frozenset[DeviceId], tuple[Egress, Egress]] = {}
        self._build()

    # ---- construction -----------------------------------------------------
    def _build(self) -> None:
        t = self.topo
        planner = switch_plan.Planner(t)
        for p in range(t.planes):
            for r in range(t.t0_per_plane):
                self._switch(ids.t0(p, r), planner.t0_state(p, r))
            for j in range(t.t1_per_plane):
                self._switch(ids.t1(p, j), planner.t1_state(p, j))
            self.progress(f"building the fabric: switches of plane {p + 1}/{t.planes}")
        for n in range(t.nics):
            # No controller reads the NICs' path-health digests here: counted, not kept.
            model = NicModel(str(ids.nic(n)), ecn_echo=self.ecn_echo, digests=False)
            self.nics.append(NicNode(n, model, self.rng))
        for i, (a, pa, b, pb, plane) in enumerate(t.cables()):
            if i % 4096 == 0:
                self.progress(f"building the fabric: {i:,} cables")
            na = self.nics[a.index] if a.kind == "nic" else self.switches[a]
            nic = a.kind == "nic"
            self._cable(a, na, pa, b, self.switches[b], pb, plane,
                        self.cfg.nic_gbps if nic else self.cfg.fabric_gbps, "nic" if nic else "fabric")

    def _switch(self, dev: DeviceId, state: switch_plan.SwitchState) -> None:
        self.switches[dev] = SwitchNode(dev, state, self.mark_last_hop, self.topo.switching == "cut_through",
                                        self.seed)

    def _cable(self, a: DeviceId, na: SwitchNode | NicNode, pa: int, b: DeviceId, nb: SwitchNode | NicNode, pb: int,
               plane: int, gbps: float, kind: str) -> None:
        c = self.cfg

        def egress(src: DeviceId, node: SwitchNode | NicNode, port: int, dst: DeviceId, peer: SwitchNode | NicNode,
                   peer_port: int) -> Egress:
            eg = self.egress_cls(self.sim, f"{src}->{dst}", gbps, c.prop_us, peer, peer_port,
                                 data_cap=c.data_queue, high_cap=c.high_queue, rng=self.rng, owner=src, port=port,
                                 plane=plane, kind=kind)
            node.attach_port(port, eg)
            return eg

        self.cables[frozenset((a, b))] = (egress(a, na, pa, b, nb, pb), egress(b, nb, pb, a, na, pa))

    def install_nic(self, n: int) -> None:
        """Plan NIC n's own tables (control_plane.nic_plan: its identity,
        rows and plane ports) and install them; its QPs are its host's to
        create (mrc_wire.pcie.Nic.create_qp)."""
        self.nics[n].model.install(nic_plan.nic_state(self.topo, n).entries())

    # ---- what events (fabric_sim.scenario.events) and reports use -----------
    def cable_ends(self) -> list[frozenset[DeviceId]]:
        return list(self.cables)

    def set_cable(self, a: DeviceId, b: DeviceId, up: bool) -> None:
        """Cut or mend the cable between a and b. A NIC learns at once that
        its own port went down (the link drops) and tells its endpoint; what
        happens past a NIC port only the transport can find out."""
        for e in self.cables[frozenset((a, b))]:
            e.set_up(up)
        for d, other in ((a, b), (b, a)):
            if d.kind == "nic":
                self.nics[d.index].port_changed(other.plane, up)

    def set_link_loss(self, a: str, b: str, rate: float) -> None:
        for e in self.link(a, b):
            e.set_loss(rate)

    def set_link_rate(self, a: str, b: str, gbps: float) -> None:
        for e in self.link(a, b):
            e.set_rate(gbps)

    def set_link_latency(self, a: str, b: str, us: float) -> None:
        for e in self.link(a, b):
            e.set_latency(us)

    def set_rx_loss(self, n: int, rate: float) -> None:
        for e in self.into_nic(n):
            e.set_loss(rate)

    def link(self, a: str, b: str) -> tuple[Egress, Egress]:
        """The two directions of the cable between devices `a` and `b`."""
        da, db = self.topo.device(a), self.topo.device(b)
        pair = self.cables.get(frozenset((da, db)))
        if pair is None:
            raise ValueError(f"no cable between {a} and {b}")
        return pair

    def into_nic(self, n: int) -> list[Egress]:
        """The T0-to-NIC direction of every cable of NIC n."""
        nic, row = ids.nic(n), n // self.topo.hosts_per_t0
        return [e for p in range(self.topo.planes) for e in self.cables[frozenset((nic, ids.t0(p, row)))]
                if e.owner != nic]

    def egresses(self) -> Iterator[Egress]:
        for a, b in self.cables.values():
            yield a
            yield b

    def base_rtt(self, mtu: int) -> float:
        return base_rtt(self.cfg, mtu)

    def path_alive(self, src: int, dst: int, plane: int, spine: int) -> bool:
        """Whether both directions of every cable of one path are up."""
        return all(
            e.up for a, b in self.topo.path_cables(src, dst, plane, spine) for e in self.cables[frozenset((a, b))]
        )
