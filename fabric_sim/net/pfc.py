"""Priority flow control (IEEE 802.1Qbb) for the RoCE baseline: the fabric
lossless by pauses, not by deep buffers.

One lossless priority, the data queue (RoCE's data class), as RoCE is
deployed (data on a PFC priority; CNPs and ACKs on a strict-priority class
without PFC): the high-priority queue is neither paused nor accounted.

- `PfcConfig` (fabric_sim.scenario.pfc_config): the thresholds, as a scenario gives them.
- `PfcEgress`: an egress port with a real FIFO per queue and one departure
  event per packet, so that it can stop. The fast `Egress` of
  fabric_sim.net.links computes each departure when the packet is queued and
  cannot; it stays the egress of every run without PFC.
- `Ingress`: the buffer a switch holds for one (device, in_port) of the
  lossless priority. A packet counts there from its arrival until it has
  left whichever egress it went to. At `xoff` bytes the switch sends XOFF
  upstream: after the link's propagation delay the upstream egress starts
  no new data packet (the one on the wire finishes). `headroom` above
  `xoff` absorbs what is already on its way; at or below `xon` it sends XON.
  A pause lasts until XON (the model refreshes XOFF implicitly, as a
  switch does while over the threshold). An arrival past xoff + headroom is
  dropped ("pfc_headroom"): a headroom too small for the link.
- A lossless queue has no egress drop threshold (its buffer is bounded by
  the ingress limits): the switch model reads its depth capped below its
  drop threshold, so ECN marking (below it) sees the true depth and the
  non-trimmable class is never dropped for congestion.
- The NIC's egress towards its T0 is paused too; the RoCE endpoint's
  scheduler holds its packets while it is, and while its data queue is
  full (`attach`): a NIC's transmit scheduler is pulled by its port, it
  does not tail-drop its own lossless data (the ACKs and NACKs it sends
  take their share of the line ahead of the data). A NIC never pauses its
  T0: the host takes what arrives at once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from fabric_sim.net.links import Delivery, Egress, Receiver
from fabric_sim.scenario.pfc_config import PfcConfig, headroom_bytes
from mrc_wire.constants import plane_port
from mrc_wire.frame import Frame
from mrc_wire.ids import DeviceId
from sim_core.sim import Sim


class Ingress:
    """One (device, in_port) of the lossless priority: bytes held, and the
    pause it asks of the egress that feeds it."""

    __slots__ = ("name", "sim", "xoff", "xon", "limit", "held", "peak", "upstream", "paused", "overflows")

    def __init__(self, name: str, sim: Sim, xoff: int, xon: int, headroom: int, upstream: PfcEgress):
        self.name, self.sim, self.upstream = name, sim, upstream
        self.xoff, self.xon, self.limit = xoff, xon, xoff + headroom
        self.held = self.peak = self.overflows = 0
        self.paused = False  # XOFF sent, no XON since

    def admit(self, size: int) -> bool:
        if self.held + size > self.limit:
            self.overflows += 1
            return False
        self.held += size
        if self.held > self.peak:
            self.peak = self.held
        if not self.paused and self.held >= self.xoff:
            self.paused = True
            up = self.upstream
            self.sim.at(up.prop + up.extra, up.pause)
        return True

    def release(self, size: int) -> None:
        self.held -= size
        if self.paused and self.held <= self.xon:
            self.paused = False
            up = self.upstream
            self.sim.at(up.prop + up.extra, up.resume)


class Arrival:
    """Which ingress the packet being delivered arrived on: set by the
    upstream egress around the far end's synchronous rx, read by the
    egress the switch sends it to."""

    __slots__ = ("ingress",)

    def __init__(self) -> None:
        self.ingress: Ingress | None = None


class PfcEgress(Egress):
    """An Egress (fabric_sim.net.links) whose data queue can be paused. The
    same constructor and attributes; `depth()` counts the data packets
    held, the one on the wire included. A subclass so that the fabric's
    ports are one type (compiled, a call on one is a direct call); it
    overrides every method and keeps none of Egress's queue state."""

    def __init__(self, sim: Sim, name: str, gbps: float, prop_us: float, peer: Receiver,
                 peer_port: int, *, data_cap: int, high_cap: int, rng: Any, owner: DeviceId | None = None,
                 port: int = 0, plane: int = 0, kind: str = ""):
        self.name, self.sim, self.prop, self.rng = name, sim, prop_us, rng
        self.set_rate(gbps)
        self.extra, self.up, self.epoch, self.loss = 0.0, True, 0, 0.0
        self.peer, self.peer_port = peer, peer_port
        # data_cap: only for what the device itself sends (a NIC's port); what a switch forwards is bounded by
        # its ingress limits instead, a lossless queue does not tail-drop
        self.data_cap, self.high_cap = data_cap, high_cap
        self.peak = 0  # the data queue's deepest, packets
        self.data: deque[tuple[Frame, Ingress | None]] = deque()  # (frame, the ingress it holds room in)
        self.high: deque[Frame] = deque()
        self.busy = False  # a frame on the wire
        self.idle_at = 0.0  # when the wire last went idle (cut-through: idle since a frame's first bit came in)
        self.tx_pkts = self.tx_bytes = 0
        # The depth a switch reads, capped below its drop threshold (PfcNet
        # sets it): a lossless queue is never dropped at egress.
        self.depth_cap = 1 << 30
        self.drops: dict[str, int] = {}
        self.owner, self.port, self.plane, self.kind = owner, port, plane, kind
        self.arrival: Arrival = Arrival()  # shared by the fabric's egresses (install)
        self.peer_ingress: Ingress | None = None  # the far end's buffer for this link
        self.paused, self.paused_at, self.paused_us, self.pauses = False, 0.0, 0.0, 0
        self.on_unblock: list[Callable[[], None]] = []  # called when blocked() turns False: resumed, or room

    def when_unblocked(self, fn: Callable[[], None]) -> None:
        """Call `fn` each time this port stops being blocked (resumed, or room in its queue)."""
        self.on_unblock.append(fn)

    def set_rate(self, gbps: float) -> None:
        self.gbps = gbps
        self.us_per_byte = 8.0 / (gbps * 1e3)

    def depth(self) -> int:
        n = len(self.data)
        return n if n < self.depth_cap else self.depth_cap

    def queued(self) -> int:
        """Packets waiting here, the one being serialized included."""
        return len(self.data) + len(self.high)

    def count_drop(self, reason: str) -> None:
        self.drops[reason] = self.drops.get(reason, 0) + 1

    def send(self, frame: Frame, high: bool, head: float = -1.0) -> None:
        """As Egress.send: cut through when idle (and, for data, not paused)
        since `head`, the frame's first bit's arrival."""
        if not self.up:
            self.count_drop("link_down")
            return
        if high:
            if len(self.high) >= self.high_cap:
                self.count_drop("queue_full")
                return
            self.high.append(frame)
        else:
            ing = self.arrival.ingress
            if ing is None:
                if len(self.data) >= self.data_cap:
                    self.count_drop("queue_full")
                    return
            elif not ing.admit(frame.size):
                self.count_drop("pfc_headroom")
                return
            self.data.append((frame, ing))
            if len(self.data) > self.peak:
                self.peak = len(self.data)
        if not self.busy:
            if 0.0 <= head and self.idle_at <= head and (
                    len(self.high) == 1 if high else not self.high and len(self.data) == 1 and not self.paused):
                self.busy = True  # its bits leave as they arrive: the last one now
                self._sent(high, self.epoch)
            else:
                self._start()

    def _start(self) -> None:
        """Put the next frame on the wire: high priority first, data unless paused."""
        if self.high:
            frame = self.high[0]
            high = True
        elif self.data and not self.paused:
            frame = self.data[0][0]
            high = False
        else:
            return
        self.busy = True
        self.sim.at(frame.size * self.us_per_byte, self._sent, high, self.epoch)

    def _sent(self, high: bool, epoch: int) -> None:
        """The frame's last bit has left: free its buffer, send it on."""
        if epoch != self.epoch:  # the link went down meanwhile: set_up emptied the queues and freed the wire
            return
        self.busy = False
        self.idle_at = self.sim.now
        if high:
            frame = self.high.popleft()
        else:
            frame, ing = self.data.popleft()
            if ing is not None:
                ing.release(frame.size)
            elif len(self.data) == self.data_cap - 1 and not self.paused:
                for fn in self.on_unblock:
                    fn()
        self.tx_pkts += 1
        self.tx_bytes += frame.size
        if self.loss and self.rng.random() < self.loss:
            self.count_drop("random_loss")
        else:
            self.sim.schedule(Delivery(self, self.epoch, frame, high), self.sim.now + self.prop + self.extra)
        self._start()

    def arrive(self, d: Delivery) -> None:
        if d.epoch != self.epoch:
            self.count_drop("link_down")
            return
        arr = self.arrival
        arr.ingress = None if d.high else self.peer_ingress
        try:
            self.peer.rx(self.peer_port, d.frame)
        finally:
            arr.ingress = None

    def pause(self) -> None:
        """XOFF arrives: no new data packet starts."""
        if not self.paused:
            self.paused, self.paused_at = True, self.sim.now
            self.pauses += 1

    def resume(self) -> None:
        """XON arrives."""
        if self.paused:
            self.paused = False
            self.paused_us += self.sim.now - self.paused_at
            if not self.busy:
                self._start()
            if len(self.data) < self.data_cap:
                for fn in self.on_unblock:
                    fn()

    def blocked(self) -> bool:
        """The device itself can hand this port no data packet now: it is
        paused, or its data queue is full (a NIC's scheduler waits, it does
        not tail-drop its own lossless data)."""
        return self.paused or len(self.data) >= self.data_cap

    def paused_total(self, now: float) -> float:
        return self.paused_us + (now - self.paused_at if self.paused else 0.0)

    def set_up(self, up: bool) -> None:
        if self.up and not up:
            self.epoch += 1
            for frame, ing in self.data:
                if ing is not None:
                    ing.release(frame.size)
            for _ in range(len(self.data) + len(self.high)):
                self.count_drop("link_down")  # what it held is lost with it, as on a plain egress
            self.data.clear()
            self.high.clear()
            self.busy = False
            self.idle_at = self.sim.now
        self.up = up


class PfcNet:
    """PFC wired into a fabric built with `PfcEgress`: every switch port's
    ingress buffer, the pause path to its upstream egress, the report."""

    def __init__(self, fab: Any, cfg: PfcConfig):
        self.fab, self.cfg = fab, cfg
        arrival = Arrival()
        self.ingress: list[Ingress] = []
        for eg in fab.egresses():
            if not isinstance(eg, PfcEgress):
                raise TypeError(f"{eg.name}: PFC needs the fabric built with PfcEgress")
            eg.arrival = arrival
        for a, b in fab.cables.values():
            for up in (a, b):
                peer = b if up is a else a  # the far end's egress: its owner is the device up feeds
                if peer.owner.kind == "nic":
                    continue  # the host drains a NIC at once: it never pauses
                ing = Ingress(f"{peer.owner}:{up.peer_port}", fab.sim, int(cfg.xoff_kb * 1024),
                              int(cfg.xon_kb * 1024), headroom_bytes(cfg, up.gbps, up.prop), up)
                up.peer_ingress = ing
                self.ingress.append(ing)
        for sw in fab.switches.values():
            for eg in sw.egress.values():
                eg.depth_cap = max(0, sw.model.congestion.trim_threshold - 1)

    def attach(self, node: Any, endpoint: Any) -> None:
        """A NIC's RoCE endpoint holds its packets while the port of the
        QP's plane is paused or its data queue full, and looks again when it
        resumes or has room."""
        endpoint.pause_on(lambda plane: node.egress[plane_port(plane)].blocked())
        for eg in node.egress.values():
            eg.when_unblocked(endpoint.wake)

    def report(self, now: float) -> dict[str, Any]:
        """Pause frames (XOFF) and paused time per link direction that was
        ever paused, and the totals."""
        links = {e.name: {"pause_frames": e.pauses, "paused_us": round(e.paused_total(now), 3)}
                 for e in self.fab.egresses() if e.pauses}
        return {"pause_frames": sum(v["pause_frames"] for v in links.values()),
                "paused_us": round(sum(v["paused_us"] for v in links.values()), 3),
                "links_paused": len(links),
                "headroom_drops": sum(i.overflows for i in self.ingress),
                "peak_ingress_kb": round(max((i.peak for i in self.ingress), default=0) / 1024, 2),
                "links": dict(sorted(links.items(), key=lambda kv: -kv[1]["paused_us"]))}


def summary_line(name: str, p: dict[str, Any]) -> str:
    """The terminal summary's line for a run's `PfcNet.report`."""
    top = next(iter(p["links"].items()), None)
    most = f" (most: {top[0]}, {top[1]['paused_us']:.1f} µs)" if top else ""
    return (f"PFC {name}: {p['pause_frames']} pause frames on {p['links_paused']} links, "
            f"{p['paused_us']:.1f} µs paused in all{most}")
