"""The NIC's receive stage in front of one Endpoint, at the inner-packet
level (no encapsulation), for the model tests of the endpoint: since the
receiver moved into the NIC (nic_model/rx_track.py), what the endpoint
gets is what its NIC lets through, and the SACKs, probe answers and
window NACKs are the NIC's.

For the data and probes of the endpoint's QPs it runs
nic_model.rx_track.on_data / on_probe with an RxTrack and one QpPeer per
QP (receive indices in connection order, offloaded, `follow` as the QP's
EV state, `ack_bytes` as given), as NicModel._track does after
decapsulation; new data goes on to the endpoint, the NIC's answers to
`reply`. The endpoint's reverse EV writes (its `reverse_sink`) land in
the registers, which connecting seeds from the QP's reverse set. A SACK
for the endpoint's own data moves the reverse EV of its plane (`follow`),
as NicModel.receive does. A trim notice (trimmed DSCP) goes to the
endpoint untracked: the NIC NACKed the packet, its PSN is not received.
"""

from __future__ import annotations

from collections.abc import Callable

from mrc_host.endpoint import Endpoint
from mrc_wire import packet as W
from mrc_wire.constants import ACK_BYTES, OP_PROBE, OP_SACK, ev_plane
from mrc_wire.entries import QpPeer
from nic_model import rx_track
from nic_model.rx_track import RxTrack


class NicFront:
    def __init__(self, ep: Endpoint, reply: Callable[[bytes], None], ack_bytes: int = ACK_BYTES,
                 ecn_echo: bool = True):
        self.ep, self.reply = ep, reply
        self.ack_bytes, self.ecn_echo = ack_bytes, ecn_echo
        self.rx = RxTrack()
        self.peers: dict[int, QpPeer] = {}  # local QP number -> its qp_peer entry
        self.sacks = self.nacks = self.probe_answers = 0
        ep.reverse_sink = self.set_reverse

    def peer(self, qpn: int) -> QpPeer | None:
        """The entry of the endpoint's QP `qpn`, made when first needed
        (at its connection: the endpoint writes its reverse set then)."""
        e = self.peers.get(qpn)
        qp = self.ep.qps.get(qpn)
        if e is None and qp is not None:
            e = self.peers[qpn] = QpPeer(qpn, qp.peer_qpn, len(self.peers), True, qp.profile.enabled,
                                         self.ack_bytes)
            self.rx.start(e.qp_index, qp.start_psn)
        return e

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        e = self.peer(qpn)
        if e is not None:
            self.rx.set_reverse(e.qp_index, plane, ev)

    def cum(self, qpn: int) -> int:
        """The QP's cumulative PSN in the registers."""
        e = self.peer(qpn)
        assert e is not None
        return self.rx.cum[e.qp_index]

    def held(self, qpn: int) -> int:
        """PSNs of the QP held out of order."""
        e = self.peer(qpn)
        assert e is not None
        return self.rx.ooo[e.qp_index]

    def receive(self, raw: bytes) -> None:
        m = W.parse(raw)
        if m is None:
            return
        e = self.peer(m.dqpn)
        if e is not None and m.dscp not in self.ep.dscp_trimmed:
            dscp = self.ep.dscp_control
            if m.is_data:
                kind, answer, ev = rx_track.on_data(self.rx, e, m, dscp, self.ecn_echo)
                if answer is not None:
                    if W.Mrc(answer).opcode == OP_SACK:
                        self.sacks += 1
                    else:
                        self.nacks += 1
                    self.reply(rx_track.on_ev(answer, ev))  # on the reverse EV, as NicModel sends it
                if answer is None or kind == rx_track.NEW:
                    self.ep.receive(raw)
                return
            if m.opcode == OP_PROBE:
                self.probe_answers += 1
                self.reply(rx_track.on_probe(self.rx, e, m, dscp)[0])
                return
            if m.opcode == OP_SACK and e.follow and not m.probe_response:
                ev = m.sack()[0]
                self.rx.set_reverse(e.qp_index, ev_plane(ev), ev)
        self.ep.receive(raw)
