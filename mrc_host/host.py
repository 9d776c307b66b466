"""What the timed fabric asks of a NIC's host, the MRC endpoint
(mrc_host/endpoint.py, also the single-path baseline) or the RoCE endpoint
(fabric_sim/transports/roce.py): one interface for every transport.

Typing only: a Protocol, never a base class. The endpoints are compiled
with mypyc (setup.py), and a compiled class cannot inherit from an
interpreted one; `mrc_wire.packet.PacketHost` stays their runtime base.
Every member is read-only here (properties), so a host may keep a
narrower type (its own QP class, a list of errors)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from mrc_host.cc import CongestionControl
from mrc_host.ev import EvProfile
from mrc_host.stats import Stats
from mrc_wire.packet import Mrc


class HostQp(Protocol):
    """What the run reads of a host's QP (fabric_sim/run.py, outcome.py)."""

    @property
    def error(self) -> str | None: ...  # why the QP gave up; None: it has not

    @property
    def rx_bytes(self) -> int: ...  # payload placed

    @property
    def ev_tx(self) -> Mapping[int, int]: ...  # EV -> data packets sent on it

    @property
    def profile(self) -> EvProfile: ...  # its EVs, with their state log


class Host(Protocol):
    @property
    def addr(self) -> str: ...  # the NIC's IPv6 address, as text

    @property
    def stats(self) -> Stats: ...

    @property
    def errors(self) -> Sequence[tuple[int, str]]: ...  # (QP, why) of each QP in error

    @property
    def qps(self) -> Mapping[int, HostQp]: ...  # local QP number -> QP

    def deliver(self, pkt: Mrc) -> None:
        """A packet its NIC parsed (fabric_sim.fabric.NicNode)."""

    def connect(self, qpn: int, peer_qpn: int, peer_addr: bytes, profile: EvProfile, *,
                cc: CongestionControl | None = None) -> HostQp: ...

    def send_message(self, qpn: int, size: int) -> int:
        """Posts `size` bytes on QP `qpn`; returns the message's id."""

    def port_down(self, plane: int) -> None:
        """The NIC's port of `plane` went down (fabric_sim/faults.py)."""

    def port_up(self, plane: int) -> None: ...

    def set_control_path(self, qpn: int, ev: int) -> None:
        """QP `qpn`'s control packets take `ev` alone (the single-path
        baselines' rerouting, fabric_sim.transports.qps.Reconverger)."""
