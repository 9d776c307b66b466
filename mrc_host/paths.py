"""Path state of the MRC endpoint, held by mrc_host.endpoint.Endpoint as
`paths`: probes (of retired EVs, of suspect EVs and of the reverse set),
the reverse EV set that carries control packets, and NIC port state here
(`ports_down`) and at the peer (each QP's `peer_down`).

It owns the probe settings and the port state; the endpoint's QP table is
read, never changed; what it does to a QP (send a control packet, apply an
EV event, push slot rewrites, declare a copy lost, send more, keep the
timer running) it asks of the endpoint through the callbacks it is built with."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from mrc_host.ev import EvEvent
from mrc_host.qp import UNSENT, Inflight, QueuePair
from mrc_host.qp_paths import NEVER, Probe, ProbeKind
from mrc_host.stats import Stats
from mrc_wire import packet as W
from mrc_wire.constants import EP_PORT_STATUS, OP_EP_REQUEST, OP_EP_RESPONSE, OP_PROBE, ev_plane
from sim_core.sim import Sim

SendControl = Callable[[QueuePair, int, int, int, bytes], None]  # (QP, EV, opcode, PSN, extension)
Event = Callable[[QueuePair, int, EvEvent], None]  # apply an EV event (and push the slot rewrites)
PushSlots = Callable[[QueuePair], None]  # hand the profile's new slot rewrites to the NIC
Lost = Callable[[QueuePair, Inflight, EvEvent | None], None]  # queue for resending
Pump = Callable[[QueuePair], None]  # send what the window allows
ArmTimer = Callable[[], None]  # keep the endpoint's tick running
SetReverse = Callable[[QueuePair, int, int], None]  # (QP, plane, EV): a new reverse EV, here and in the NIC
ANNOUNCE_TRIES = 8  # port status requests sent to a peer that does not answer


class PathState:
    """Probes, reverse EVs and port state of one endpoint's QPs."""

    sim: Sim
    stats: Stats
    qps: Mapping[int, QueuePair]  # the endpoint's QPs, for a port's change
    probe_interval: float  # a QP's reverse-set probes: one at most this often; a plane unconfirmed this long is stale
    probe_timeout: float  # a path or reverse probe unanswered this long is lost
    ignore_peer_ports: bool  # the peer's port bitmap is not acted on (the port_bitmap ablation)
    rng: random.Random  # picks the reverse set's probe EVs
    ports_down: int  # bitmap of this NIC's planes whose port is down
    probe_ids: int  # the last probe id sent (PETH's 16 bits)
    announced: dict[int, tuple[float, int]]  # QP -> (when, tries) its peer was sent our port status, till answered
    answers: dict[int, float]  # the controller's probe ids -> when answered; QP -> when its port status was (-QP - 1)

    def __init__(self, sim: Sim, stats: Stats, qps: Mapping[int, QueuePair], *, probe_interval: float,
                 probe_timeout: float, ignore_peer_ports: bool, rng: random.Random, send_control: SendControl,
                 event: Event, push_slots: PushSlots, lost: Lost, pump: Pump, arm_timer: ArmTimer,
                 set_reverse: SetReverse):
        self.sim, self.stats, self.qps = sim, stats, qps
        self.probe_interval, self.probe_timeout = probe_interval, probe_timeout
        self.ignore_peer_ports, self.rng = ignore_peer_ports, rng
        self.ports_down = 0
        self.probe_ids = 0
        self.announced = {}
        self.answers = {}
        self._send_control, self._event, self._push_slots = send_control, event, push_slots
        self._lost, self._pump, self._arm_timer = lost, pump, arm_timer
        self._set_reverse = set_reverse

    def probe(self, qp: QueuePair, now: float) -> None:
        """The tick's probes: expire the unanswered, probe the EVs that want
        it, and keep the reverse set fresh while only data comes in."""
        paths = qp.paths
        for p in paths.expire(now, self.probe_timeout):
            if p.kind is ProbeKind.PATH:
                self._event(qp, p.ev, EvEvent.PROBE_LOST)
        waiting = paths.awaiting()
        # A retired EV is probed every probe interval, answered or not (as BFD
        # sends its control packets): a path that comes back answers the
        # first probe after it, not one sent once the last timed out.
        probed = paths.path_probe_at
        for ev in qp.profile.probing():
            if now - probed.get(ev, NEVER) >= self.probe_interval and not self.plane_down(qp, ev_plane(ev)):
                self.send_probe(qp, ev, ProbeKind.PATH)
                paths.probed_path(ev, now)
        # Reverse set: while data comes in but none goes out, at most one
        # probe per interval per QP (one per stale plane sent 8 a QP on 8
        # planes); with EV state on, arriving data keeps its planes confirmed.
        if now - qp.rx.active_at < self.probe_interval and now - qp.tx_active_at >= self.probe_interval \
                and now - paths.reverse_probe_at >= self.probe_interval:
            self._probe_reverse(qp, now, waiting)
        sent = self.announced.get(qp.qpn)
        if sent is not None and now - sent[0] >= self.probe_timeout:
            if sent[1] < ANNOUNCE_TRIES:
                self._announce(qp, sent[1] + 1)  # unanswered: the request or its answer was lost
            else:
                del self.announced[qp.qpn]  # a peer that never answers: its traffic will tell

    def _probe_reverse(self, qp: QueuePair, now: float, waiting: set[int]) -> None:
        """Probe a random EV of the stale plane (port up at both ends,
        unconfirmed for a probe interval) heard from least recently: the
        later of its last confirmation and its last probe is the oldest
        (ties in plane order). A plane whose probes go unanswered waits its
        turn like the others. A reply makes the EV that plane's reverse EV
        (on_probe)."""
        paths, interval = qp.paths, self.probe_interval
        fresh, probed = paths.fresh, paths.probed
        stale = [p for p in paths.reverse if not self.plane_down(qp, p) and now - fresh.get(p, NEVER) >= interval]
        for p in sorted(stale, key=lambda p: (max(fresh.get(p, NEVER), probed.get(p, NEVER)), p)):
            cands = [e for e in qp.profile.on_plane(p) if e not in waiting]
            if cands:
                self.send_probe(qp, cands[self.rng.randrange(len(cands))], ProbeKind.REVERSE)
                paths.probed_reverse(p, now)
                return

    def plane_down(self, qp: QueuePair, plane: int) -> bool:
        """Whether the port of `plane` is down here or at the QP's peer."""
        return bool((self.ports_down | qp.paths.peer_down) >> plane & 1)

    def send_probe(self, qp: QueuePair, ev: int, kind: ProbeKind) -> int:
        """Probe `ev` (what for: `kind`); the probe's id."""
        self.probe_ids = (self.probe_ids + 1) & 0xFFFF
        qp.paths.sent(self.probe_ids, Probe(ev, self.sim.now, kind))
        self.stats.probes += 1
        self._send_control(qp, ev, OP_PROBE, 0, W.probe_ext(self.probe_ids, spdcid=qp.qpn, dpdcid=qp.peer_qpn))
        self._arm_timer()
        return self.probe_ids

    def port_down(self, plane: int) -> None:
        """This NIC's port of `plane` went down: every QP retires the plane's
        EVs at once, resends what was in flight on it and tells its peer
        (an endpoint request, MRC's port status update)."""
        self.ports_down |= 1 << plane
        for qp in self.qps.values():
            self._plane_lost(qp, plane)
            self._announce(qp)

    def port_up(self, plane: int) -> None:
        self.ports_down &= ~(1 << plane)
        for qp in self.qps.values():
            self._plane_back(qp, plane)
            self._announce(qp)

    def _announce(self, qp: QueuePair, tries: int = 1) -> None:
        """Send the peer of `qp` this NIC's port status (ERTH), again on the
        tick until an answer (EETH) comes, ANNOUNCE_TRIES times at most."""
        self.announced[qp.qpn] = (self.sim.now, tries)
        self._send_control(qp, self.control_ev(qp, None), OP_EP_REQUEST, 0,
                           W.erth_ext(EP_PORT_STATUS, self.ports_down))
        self._arm_timer()

    def announcing(self) -> bool:
        """Whether a port status waits for its answer (the tick must run)."""
        return bool(self.announced)

    def on_endpoint_request(self, qp: QueuePair, pkt: W.Mrc) -> None:
        """The peer's endpoint request: its port status (acted on), then
        answered, whatever the operation."""
        op, mask = pkt.endpoint_op()
        if op == EP_PORT_STATUS:
            self.peer_ports(qp, mask)
        self._send_control(qp, self.control_ev(qp, None), OP_EP_RESPONSE, 0, W.eeth_ext(op))

    def on_endpoint_response(self, qp: QueuePair, pkt: W.Mrc) -> None:
        if self.announced.pop(qp.qpn, None) is not None:
            self.answers[-qp.qpn - 1] = self.sim.now

    def announce(self, qp: QueuePair) -> int:
        """The controller's port status update to the QP's peer: a handle for `answers`."""
        self.answers.pop(-qp.qpn - 1, None)
        self._announce(qp)
        return -qp.qpn - 1

    def _plane_back(self, qp: QueuePair, plane: int) -> None:
        """The plane is usable again once neither end's port is down."""
        if not self.plane_down(qp, plane) and qp.profile.enabled:
            qp.profile.plane_up(plane)
            self._push_slots(qp)

    def _plane_lost(self, qp: QueuePair, plane: int) -> None:
        if not qp.profile.enabled:
            return  # EV state off (oblivious spraying, single path): no reaction
        qp.profile.plane_down(plane)
        self._push_slots(qp)
        for inf in qp.sendq:
            if inf.ev != UNSENT and ev_plane(inf.ev) == plane and qp.outstanding(inf):
                self._lost(qp, inf, None)
        self._pump(qp)

    def control_ev(self, qp: QueuePair, plane: int | None) -> int:
        """The reverse EV for a control packet answering traffic on `plane`:
        that plane's, unless it is down or unconfirmed for 4 probe intervals
        while another plane's is fresh; then the freshest (None: freshest)."""
        reverse, fresh = qp.paths.reverse, qp.paths.fresh
        now = self.sim.now
        if plane is None or self.plane_down(qp, plane) or plane not in reverse or \
                now - fresh.get(plane, NEVER) > 4 * self.probe_interval:
            up = [p for p in reverse if not self.plane_down(qp, p)]
            best = max(up, key=lambda p: fresh.get(p, NEVER), default=plane)
            # best is None only when no plane is up and none was asked for
            if plane is None or plane not in up or \
                    (best is not None and fresh.get(best, NEVER) > fresh.get(plane, NEVER)):
                plane = best
        return reverse.get(plane, 0) if plane is not None else 0

    def peer_ports(self, qp: QueuePair, peer_down: int) -> None:
        """The peer's port status says which of its NIC ports are down: stop
        (or resume) sending on those planes."""
        if self.ignore_peer_ports:
            return
        changed = qp.paths.peer_ports(peer_down)
        for p in range(8):
            if changed >> p & 1:
                if peer_down >> p & 1:
                    self._plane_lost(qp, p)
                else:
                    self._plane_back(qp, p)

    def on_probe_reply(self, qp: QueuePair, pkt: W.Mrc) -> None:
        """A probe's answer: an RTT sample; a path EV's good probe, or a
        new reverse EV."""
        _, probe_id = pkt.probe_reply()
        sent = qp.paths.answered(probe_id)
        if sent is None:
            return
        qp.rtt_sample(self.sim.now - sent.sent_at)
        if sent.kind is ProbeKind.PATH:
            for _ in qp.paths.earlier(sent):  # lost, in the order they were sent: before this one's answer
                self._event(qp, sent.ev, EvEvent.PROBE_LOST)
            self._event(qp, sent.ev, EvEvent.PROBE_OK)
        elif sent.kind is ProbeKind.ENDPOINT:
            self.answers[probe_id] = self.sim.now
        else:
            self._set_reverse(qp, ev_plane(sent.ev), sent.ev)
