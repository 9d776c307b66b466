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
from mrc_wire import pcie


class App(Protocol):
    """What the transport tells the application above it (the run's
    driver and ledger): one object, not a callback each."""

    def delivered(self, qpn: int, msg_id: int, data: bytes | None) -> None:
        """Message `msg_id` of QP `qpn` is whole (its bytes where payloads are kept)."""

    def placed(self, qpn: int, msg_id: int, offset: int, length: int) -> None:
        """`length` payload bytes of the message placed at `offset`."""

    def failed(self, qpn: int, reason: str) -> None:
        """QP `qpn` gave up (its error state)."""


class NoApp:
    """An application that listens to nothing (endpoints built without one)."""

    def delivered(self, qpn: int, msg_id: int, data: bytes | None) -> None:
        pass

    def placed(self, qpn: int, msg_id: int, offset: int, length: int) -> None:
        pass

    def failed(self, qpn: int, reason: str) -> None:
        pass


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


class Host(pcie.Host, Protocol):
    """A transport on a NIC's host: what the NIC hands it (mrc_wire.pcie.Host) and what the run asks of it."""

    @property
    def addr(self) -> str: ...  # the NIC's IPv6 address, as text

    @property
    def stats(self) -> Stats: ...

    @property
    def errors(self) -> Sequence[tuple[int, str]]: ...  # (QP, why) of each QP in error

    @property
    def qps(self) -> Mapping[int, HostQp]: ...  # local QP number -> QP

    def connect(self, qpn: int, peer_qpn: int, peer_addr: bytes, profile: EvProfile, *,
                cc: CongestionControl | None = None) -> HostQp: ...

    def send_message(self, qpn: int, size: int) -> int:
        """Posts `size` bytes on QP `qpn`; returns the message's id."""

    def reroute(self, qpn: int, ev: int) -> None:
        """QP `qpn` moves to the one path `ev`, its control packets too (the
        single-path baselines' routing after a fault,
        fabric_sim.transports.qps.Reconverger): its slot rewritten in the NIC."""
