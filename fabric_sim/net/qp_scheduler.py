"""The NIC's QP scheduler: data packets the endpoint releases (its windows
allow them) wait here, one queue per QP, and go onto the NIC's ports
round-robin over the QPs while the NIC's data backlog is under `depth`
packets per live port; control packets (ACKs, NACKs, probes) pass at once.

Without it every QP's window went straight into the port's egress queue,
so a NIC with many QPs built a standing queue of its own that NSCC's delay
rules read as network queueing without ECN (fair increase: the windows
grew to max_cwnd and the queue with them). As UEC's reference simulator's
NIC does, a packet leaves the host only when the wire can take it, and its
send time (the RTT sample's start) is when it does: the endpoint's record
of the copy is stamped then (and, while it waits, says it is not sent).
"""

from __future__ import annotations

from collections import deque
from typing import Final, Protocol

from fabric_sim.net.links import Egress
from mrc_wire.constants import IPV6_LEN, UDP_LEN
from sim_core.sim import Sim

_BTH: Final = IPV6_LEN + UDP_LEN


class Scheduled(Protocol):
    """The NIC a scheduler sits in (fabric_sim.net.fabric.NicNode)."""

    def tx(self, raw: bytes, pad: int) -> None:
        """A packet into the NIC's pipeline."""

    def held(self, peer_qpn: int, psn: int) -> None:
        """Data `psn` to QP `peer_qpn` waits here (its host is told)."""


def _dscp(raw: bytes) -> int:
    return ((raw[0] & 0xF) << 2) | (raw[1] >> 6)


def psn_of(raw: bytes) -> int:
    """The PSN of a data packet the endpoint hands the NIC (its BTH's)."""
    return int.from_bytes(raw[_BTH + 9:_BTH + 12], "big")


class QpScheduler:
    """Between what one NIC's host posts and the NIC's pipeline (`nic`);
    `egress` are the NIC's ports (fabric_sim.net.links.Egress)."""

    def __init__(self, sim: Sim, nic: Scheduled, egress: dict[int, Egress], depth: int, control_dscp: int):
        self.sim, self.nic, self.egress, self.depth, self.control = sim, nic, egress, depth, control_dscp
        self.queues: dict[int, deque[tuple[bytes, int]]] = {}  # peer QP number -> packets (and pads) waiting
        self.order: deque[int] = deque()  # QPs with packets waiting, round-robin
        self.wake_at = -1.0
        self.held = 0  # packets that waited (for reports and tests)
        self._ports: list[Egress] = []  # egress's values, in its order

    def transmit(self, raw: bytes, pad: int = 0) -> None:
        """A packet from the endpoint: `raw`, then `pad` zero bytes not carried."""
        if _dscp(raw) == self.control:
            self.nic.tx(raw, pad)
            if self.order:
                self._drain()  # a port may have come back
            return
        if not self.order and self._room() > 0:
            self.nic.tx(raw, pad)  # nothing waits and the wire can take it: on at once
            return
        dqpn = int.from_bytes(raw[_BTH + 5:_BTH + 8], "big")
        q = self.queues.get(dqpn)
        if q is None:
            q = self.queues[dqpn] = deque()
        if not q:
            self.order.append(dqpn)
        q.append((raw, pad))
        self.nic.held(dqpn, psn_of(raw))  # not sent yet: no timer, no loss detection runs on it
        self._drain()

    def _room(self) -> int:
        ports = self._ports
        if len(ports) != len(self.egress):  # cabled after this was built: listed again
            ports = self._ports = list(self.egress.values())
        room = 0
        for e in ports:  # a list, not the dict's values: read on every data packet
            if e.up:
                room += self.depth - e.depth()
        return room

    def _drain(self) -> None:
        room = self._room()
        while room > 0 and self.order:
            dqpn = self.order.popleft()
            q = self.queues[dqpn]
            raw, pad = q.popleft()
            if q:
                self.order.append(dqpn)  # round-robin: one packet per QP per turn
            self.nic.tx(raw, pad)  # its send time and EV: the pipeline's completion (on_sent)
            room -= 1
        if self.order:
            self.held += 1
            self._wake()

    def _wake(self) -> None:
        """Look again when the first queued packet of a live port leaves."""
        now = self.sim.now
        live = [e for e in self.egress.values() if e.up]
        if not live:
            return  # every port down: the next packet the endpoint sends looks again
        nxt = min((t for e in live if (t := e.head_departure()) is not None and t > now), default=now + 0.1)
        if self.wake_at <= now or nxt < self.wake_at:
            self.wake_at = nxt
            self.sim.at(nxt - now, self._woken, nxt)

    def _woken(self, at: float) -> None:
        if at == self.wake_at:
            self.wake_at = -1.0
            self._drain()
