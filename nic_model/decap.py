"""Decapsulation (receive steps 1 and 4 of DESIGN.md section 5), stage for
stage as p4src/nic/decap.p4: what arrives from the fabric for this NIC
(its inner destination is this NIC's address, else it is dropped and
counted), the outer header taken off, an outer CE copied into an ECT
inner header (RFC 6040), and the host's QP it names found (qp_peer, keyed
by the host's QP number: what a packet to us names in BTH.dqpn). What no
other stage answers goes to the host port."""

from __future__ import annotations

from typing import final

from mrc_wire import entries as N
from mrc_wire import packet as W
from mrc_wire.constants import ECN_CE
from mrc_wire.frame import Frame
from nic_model.outputs import Settings
from nic_model.parser import Drops


@final
class Decap:
    """qp_peer, and the numbering it gives: the peer's QP number and the
    QP index of each of the host's QPs."""

    __slots__ = ("peers", "_local", "_by_index", "drops", "ce_copies")

    def __init__(self, drops: Drops):
        self.peers: dict[int, N.QpPeer] = {}  # the host's QP number -> its qp_peer entry
        self._local: dict[int, int] = {}  # the peer's QP number -> the host's
        self._by_index: dict[int, int] = {}  # QP index -> the host's QP number
        self.drops = drops
        self.ce_copies = 0

    def add(self, e: N.QpPeer) -> None:
        self.peers[e.qpn] = e
        self._local[e.peer_qpn] = e.qpn
        self._by_index[e.qp_index] = e.qpn

    def remove(self, qpn: int) -> None:
        e = self.peers.pop(qpn, None)
        if e is not None:
            self._local.pop(e.peer_qpn, None)
            self._by_index.pop(e.qp_index, None)

    def local_qpn(self, peer_qpn: int) -> int | None:
        """The host's QP whose peer is `peer_qpn`."""
        return self._local.get(peer_qpn)

    def qpn_of_index(self, index: int) -> int | None:
        return self._by_index.get(index)

    def for_me(self, m: W.Mrc, s: Settings) -> bool:
        """Whether the inner destination is this NIC (else dropped, counted)."""
        if m.raw[24:40] != s.my_addr:
            self.drops.drop("not_for_me")
            return False
        return True

    def ce_copied(self, f: Frame, m: W.Mrc) -> W.Mrc:
        """`m` with the outer header's CE on it, if it is ECT (RFC 6040)."""
        if f.tc & 3 == ECN_CE and m.ecn:
            self.ce_copies += 1
            return m.marked_ce()
        return m
