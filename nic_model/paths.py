"""Path state of the MRC endpoint (a mixin of nic_model.endpoint.Endpoint):
probes (of retired EVs and of the reverse set), RTT samples, the reverse EV
set that carries control packets, and NIC port state here and at the peer."""

from __future__ import annotations

from mrc_wire import packet as W
from mrc_wire.constants import OP_PROBE, ev_plane
from nic_model.ev import EvEvent
from nic_model.qp import QueuePair


class PathState:
    """Methods of Endpoint; they use its state (sim, stats, qps, ...)."""

    def _probe(self, qp: QueuePair, now: float) -> None:
        for pid, (ev, t, kind) in list(qp.probe_sent.items()):
            if kind != "suspect" and now - t >= self.rto:  # suspects have their own deadline
                del qp.probe_sent[pid]
                if kind == "path":
                    self._event(qp, ev, EvEvent.PROBE_LOST)
        waiting = {ev for ev, _, _ in qp.probe_sent.values()}
        for ev in qp.profile.probing():
            if ev not in waiting and not self._plane_down(qp, ev_plane(ev)):
                self._send_probe(qp, ev, "path")
        # Reverse set: while data comes in but none goes out, probe one plane
        # per interval with a random EV; a reply makes it that plane's reverse EV.
        if now - qp.rx_active_at < self.probe_interval and now - qp.tx_active_at >= self.probe_interval:
            for p in qp.reverse:
                if self._plane_down(qp, p) or now - qp.reverse_fresh.get(p, -1e18) < self.probe_interval:
                    continue
                cands = [e for e in qp.profile.on_plane(p) if e not in waiting]
                if cands:
                    self._send_probe(qp, cands[self.rng.randrange(len(cands))], "reverse")

    def _plane_down(self, qp: QueuePair, plane: int) -> bool:
        return bool((self.ports_down | qp.peer_down) >> plane & 1)

    def _send_probe(self, qp: QueuePair, ev: int, kind: str) -> int:
        self._probe_ids = (self._probe_ids + 1) & 0xFFFFFF
        qp.probe_sent[self._probe_ids] = (ev, self.sim.now, kind)
        self.stats.probes += 1
        self.transmit(W.build(self.addr_bytes, qp.peer_addr, self.dscp_control, 0, ev, OP_PROBE, qp.peer_qpn, 0,
                              W.probe_ext(ev, 0, self._probe_ids)))
        self._arm_timer()
        return self._probe_ids

    def _rtt_sample(self, qp: QueuePair, rtt: float) -> None:
        qp.min_rtt = rtt if qp.min_rtt is None else min(qp.min_rtt, rtt)
        qp.srtt = rtt if qp.srtt is None else 0.875 * qp.srtt + 0.125 * rtt

    def port_down(self, plane: int) -> None:
        """This NIC's port of `plane` went down: every QP retires the plane's
        EVs at once and resends what was in flight on it."""
        self.ports_down |= 1 << plane
        for qp in self.qps.values():
            self._plane_lost(qp, plane)

    def port_up(self, plane: int) -> None:
        self.ports_down &= ~(1 << plane)
        for qp in self.qps.values():
            self._plane_back(qp, plane)

    def _plane_back(self, qp: QueuePair, plane: int) -> None:
        """The plane is usable again once neither end's port is down."""
        if not self._plane_down(qp, plane) and qp.profile.enabled:
            qp.profile.plane_up(plane)
            self._push_slots(qp)

    def _plane_lost(self, qp: QueuePair, plane: int) -> None:
        if not qp.profile.enabled:
            return  # EV state off (oblivious spraying, single path): no reaction
        qp.profile.plane_down(plane)
        self._push_slots(qp)
        for inf in qp.sendq:
            if ev_plane(inf.ev) == plane and qp.outstanding(inf):
                self._lost(qp, inf, None)
        self._pump(qp)

    def _control_ev(self, qp: QueuePair, plane: int | None) -> int:
        """The reverse EV for a control packet answering traffic on `plane`:
        that plane's, unless it is down or unconfirmed for 4 probe intervals
        while another plane's is fresh; then the freshest (None: freshest)."""
        fresh = qp.reverse_fresh
        now = self.sim.now
        if plane is None or self._plane_down(qp, plane) or plane not in qp.reverse or \
                now - fresh.get(plane, -1e18) > 4 * self.probe_interval:
            up = [p for p in qp.reverse if not self._plane_down(qp, p)]
            best = max(up, key=lambda p: fresh.get(p, -1e18), default=plane)
            # best is None only when no plane is up and none was asked for
            if plane is None or plane not in up or \
                    (best is not None and fresh.get(best, -1e18) > fresh.get(plane, -1e18)):
                plane = best
        return qp.reverse.get(plane, 0) if plane is not None else 0

    def _peer_ports(self, qp: QueuePair, peer_down: int) -> None:
        """The peer's SACK says which of its NIC ports are down: stop (or
        resume) sending on those planes."""
        if "port_bitmap" in self.ablate:
            return
        changed, qp.peer_down = peer_down ^ qp.peer_down, peer_down
        for p in range(8):
            if changed >> p & 1:
                if peer_down >> p & 1:
                    self._plane_lost(qp, p)
                else:
                    self._plane_back(qp, p)

    def _on_probe(self, qp: QueuePair, pkt: W.Mrc) -> None:
        ev, reply, probe_id = pkt.probe()
        if not reply:  # answer over our freshest reverse EV, echoing the probed EV
            self.transmit(W.build(self.addr_bytes, qp.peer_addr, self.dscp_control, 0,
                                  self._control_ev(qp, None), OP_PROBE, qp.peer_qpn, 0,
                                  W.probe_ext(ev, 1, probe_id)))
            return
        sent = qp.probe_sent.pop(probe_id, None)
        if sent is None:
            return
        ev, t, kind = sent
        self._rtt_sample(qp, self.sim.now - t)
        if kind == "path":
            self._event(qp, ev, EvEvent.PROBE_OK)
        else:
            qp.reverse[ev_plane(ev)] = ev
            qp.reverse_fresh[ev_plane(ev)] = self.sim.now
