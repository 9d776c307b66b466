"""Loss recovery of the MRC endpoint, held by mrc_host.endpoint.Endpoint as
`recovery`: what finds a lost packet before the retransmission timeout, and
the timeout itself. Order of action and reasoning: docs/nic.md, "Endpoint".

It owns the timeout and reorder settings; what it does to a QP (resend,
declare lost, apply an EV event, send more, fail) it asks of the endpoint
through the callbacks it is built with, and a suspect EV's probe of the
endpoint's PathState (`probe`)."""

from __future__ import annotations

from collections.abc import Callable

from mrc_host.ev import EvEvent, EvState
from mrc_host.qp import Inflight, QueuePair
from mrc_host.qp_paths import ProbeKind
from mrc_host.stats import Stats
from mrc_wire.segment import Segment
from sim_core.sim import Sim

SendSegment = Callable[[QueuePair, Segment, bool], None]  # (QP, segment, is a resend)
Lost = Callable[[QueuePair, Inflight, EvEvent | None], None]  # queue for resending; blame the EV with the event
Fail = Callable[[QueuePair, str], None]  # the QP gives up, with the reason
Event = Callable[[QueuePair, int, EvEvent], None]  # apply an EV event (and push the slot rewrites)
Pump = Callable[[QueuePair], None]  # send what the window allows
Probe = Callable[[QueuePair, int, ProbeKind], int]  # (QP, EV, what for) -> probe id


class LossRecovery:
    """Timeouts (exponential back-off up to `rto_max`, `retry_limit` of one
    PSN), tail probes, same-path and RACK loss detection, suspect EVs."""

    sim: Sim
    stats: Stats
    rto: float
    rto_max: float
    retry_limit: int
    reorder_window: float  # a QP's initial reorder window; a suspect's deadline before any RTT sample

    def __init__(self, sim: Sim, stats: Stats, *, rto: float, rto_max: float, retry_limit: int,
                 reorder_window: float, send: SendSegment, lost: Lost, fail: Fail, event: Event, pump: Pump,
                 probe: Probe):
        self.sim, self.stats = sim, stats
        self.rto, self.rto_max, self.retry_limit, self.reorder_window = rto, rto_max, retry_limit, reorder_window
        self._send, self._lost, self._fail, self._event, self._pump, self._probe = send, lost, fail, event, pump, probe

    def start(self, qp: QueuePair) -> None:
        """A new QP: its reorder window starts at this endpoint's."""
        qp.reo_wnd = self.reorder_window

    def tail_probe(self, qp: QueuePair, now: float) -> None:
        """Nothing the window lets out (nothing left to send, or the window
        full) and nothing heard for two smoothed RTTs: resend the newest
        copy (on the next EV, asking for an ACK), so the SACK it draws shows
        which of the copies before it were lost, long before a timeout. On a
        full window this is what recovers a lost ack request, or its lost
        ACK: the receiver holds back what it got in order, and nothing else
        the sender may send would ask again."""
        if qp.retx_queue or not qp.inflight or qp.srtt is None:
            return
        if qp.pending and len(qp.inflight) < qp.cc.window():
            return  # the window is open: what is sent next asks for an ACK
        last = next((c for c in reversed(qp.sendq) if qp.outstanding(c)), None)
        if last is None or qp.tlp_at >= last.sent_at:
            return
        if now - last.sent_at >= 2 * qp.srtt and now - qp.ack_at >= 2 * qp.srtt:
            qp.tlp_at = now
            self.stats.tail_probes += 1
            # The EVs of the copies still unacknowledged are suspect too: a
            # probe each, so a dead path is retired in a few RTTs, not an RTO.
            for ev in {c.ev for c in qp.sendq if qp.outstanding(c)}:
                self.suspect(qp, ev)
            self._send(qp, last.seg, True)

    def timeouts(self, qp: QueuePair, now: float) -> None:
        for inf in qp.sendq:  # nothing below adds to or takes from sendq
            if now - inf.sent_at < self.rto:
                break  # send order: nothing later can have expired
            if not qp.outstanding(inf):
                continue
            if now - inf.sent_at < min(self.rto * 2 ** inf.timeouts, self.rto_max):
                continue
            inf.timeouts += 1
            self.stats.timeouts += 1
            if inf.timeouts > self.retry_limit:
                self._fail(qp, f"PSN {inf.seg.psn} not acknowledged after {self.retry_limit} retransmissions "
                               f"by timeout (last EV {inf.ev:#x})")
                return
            qp.cc.on_timeout(now, inf.seg.length)
            self._lost(qp, inf, EvEvent.LOSS)  # no trim, no later delivery: the path is suspect
        qp.forget_done()

    def spurious(self, qp: QueuePair) -> None:
        """An earlier copy arrived after all: the resend was spurious, so
        reordering across paths is wider than the window. Widen it."""
        self.stats.spurious += 1
        qp.reo_wnd = min(2 * qp.reo_wnd, self.rto / 2)

    def same_path_losses(self, qp: QueuePair, hit: Inflight) -> None:
        """A path is FIFO: copies sent on the same EV before one that was
        delivered, and not acknowledged, are lost. Certain, so the EV is
        blamed (a trimmed copy is NACKed before a later copy's ACK returns)."""
        q = qp.by_ev.get(hit.ev)
        if not q:
            return
        k = 0
        for inf in q:  # nothing below adds to or takes from q
            k += 1
            if inf is hit:
                break
            if qp.outstanding(inf):
                self.stats.retx_sack += 1
                self._lost(qp, inf, EvEvent.LOSS)
        del q[:k]  # those before it, and it

    def detect_losses(self, qp: QueuePair) -> None:
        """RACK-style, across paths: a copy sent more than the reorder window
        before a copy known delivered is lost. The window is at least the
        queueing seen (srtt above the minimum) and doubles on every spurious
        resend, so spraying's reordering across paths is not a loss."""
        wnd = qp.reo_wnd
        if qp.srtt is not None and qp.min_rtt is not None:
            wnd = max(wnd, qp.srtt - qp.min_rtt)
        limit = qp.rack_time - wnd
        q = qp.sendq
        while q:
            inf = q[0]
            if not qp.outstanding(inf):
                q.popleft()
                continue
            if inf.sent_at >= limit:
                break
            q.popleft()
            self.stats.retx_sack += 1
            self._lost(qp, inf, None)
            self.suspect(qp, inf.ev)

    def suspect(self, qp: QueuePair, ev: int) -> None:
        """A copy on `ev` is late past the reorder window: congestion or a
        broken path? Probes travel in the high-priority queue, past any data
        queue, so a reply comes back within a few base RTTs on a congested
        path and never on a broken one; no reply in time retires the EV."""
        if not qp.profile.enabled or qp.profile.state.get(ev) not in (EvState.GOOD, EvState.SKIP):
            return
        if ev in qp.paths.awaiting():
            return
        pid = self._probe(qp, ev, ProbeKind.SUSPECT)
        self.sim.at(2 * (qp.min_rtt or self.reorder_window), self._suspect_deadline, qp, pid)

    def _suspect_deadline(self, qp: QueuePair, pid: int) -> None:
        sent = qp.paths.answered(pid)
        if sent is not None and qp.error is None:
            self.stats.suspects_lost += 1
            self._retire(qp, sent.ev)  # late data and a silent probe: the path is broken
            self._pump(qp)

    def _retire(self, qp: QueuePair, ev: int) -> None:
        """A broken path: ASSUMED_BAD, and every copy still unacknowledged on
        it is resent now (on the EVs that replace it)."""
        self._event(qp, ev, EvEvent.LOSS)
        for inf in qp.by_ev.get(ev, ()):
            if qp.outstanding(inf):
                self.stats.retx_sack += 1
                self._lost(qp, inf, None)
