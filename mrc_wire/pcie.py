"""What crosses PCIe between an MRC NIC and its host: the one boundary
between the host transport (mrc_host) and a NIC (nic_model's reference
model, the timed fabric's NIC, the BMv2 NIC, the endpoint tests' front).
Neither side imports the other; each holds the other by these protocols.

Host to NIC (`Nic`): packets posted on a QP (the QP is the BTH's, as a
doorbell names it), and the NIC state the host writes: a QP created
(`QpCreate`: its EVs, what the NIC runs for it) or destroyed, its reverse
EVs, the EVs in its slots (the EV profile's slot table), the slots it
marks bad (EV state), and which of the NIC's ports are down (port state).
The NIC works out the rest once, on its side: the QP's index, its slot
range, and which of its QPs a packet names.

NIC to host (`Host`): packets for the host, already parsed (delivered
data, SACKs, NACKs, probes and their answers, endpoint requests), the
transmit completions of data (held by the NIC's scheduler; sent, with the
EV the data plane picked: the one place a packet's EV is chosen), the EV
events of the NIC's path health (its digests), and its ports going down
or coming back. Every QP is named by the host's own number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mrc_wire.constants import ACK_BYTES
from mrc_wire.entries import EvChange
from mrc_wire.packet import Mrc


@dataclass(frozen=True, slots=True)
class QpCreate:
    """A QP as the host creates it on its NIC."""

    qpn: int  # the host's number for it
    peer_qpn: int  # the peer's, as the host's packets name it in BTH.dqpn
    evs: tuple[int, ...]  # the EV of each slot of its rotation (a power of two)
    spares: tuple[int, ...] = ()  # EVs the host may later write into its slots (counted per EV)
    offload: bool = True  # the NIC runs its receiver (MRC's); False: the host does (RoCE)
    follow: bool = True  # the receiver's SACKs leave on the EV the data last came in on (EV state on)
    ack_bytes: int = ACK_BYTES  # payload a SACK is coalesced over
    # The data plane keeps the slots' path health (at most EV_HEALTH_SLOTS):
    # it passes over slots marked bad, on a plane that is down, or to skip
    # once (a TRIMMED NACK; a SACK's congestion mark with `skip_on_mark`),
    # keeping `min_active` usable.
    health: bool = False
    min_active: int = 1
    skip_on_mark: bool = False
    start_psn: int = 0  # the receiver's first expected PSN


class Host(Protocol):
    """What a NIC hands its host."""

    def deliver(self, pkt: Mrc) -> None:
        """A packet for the host, parsed by the NIC."""

    def on_held(self, qpn: int, psn: int) -> None:
        """The NIC holds data `psn` of QP `qpn` (its scheduler): not sent yet."""

    def on_sent(self, qpn: int, psn: int, ev: int) -> None:
        """Data `psn` of QP `qpn` left now, on `ev`."""

    def on_ev_event(self, qpn: int, change: EvChange) -> None:
        """A path-health change of QP `qpn` the NIC's data plane made (its
        `qp_index` is the NIC's own; the QP is `qpn`)."""

    def on_port(self, plane: int, up: bool) -> None:
        """The NIC's port of `plane` went down (`up` False) or came back."""


class Nic(Protocol):
    """What a host asks of its NIC."""

    def attach(self, host: Host) -> None:
        """`host` takes what this NIC hands over from now on."""

    def post(self, raw: bytes, pad: int = 0) -> None:
        """A packet (its IPv6 header on), then `pad` zero bytes counted, not carried."""

    def create_qp(self, qp: QpCreate) -> None: ...

    def destroy_qp(self, qpn: int) -> None: ...

    def write_slots(self, qpn: int, writes: Sequence[tuple[int, int]]) -> None:
        """(slot within the QP, EV) each: the QP's slot table rewritten."""

    def set_bad(self, qpn: int, slots: int) -> None:
        """The QP's slots the host marks bad (bit s: slot s), whole."""

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        """Where the receiver's SACKs for data on `plane` go."""

    def set_port_down(self, planes: int) -> None:
        """This NIC's ports that are down, a bit per plane."""

    def skipping(self, qpn: int) -> int:
        """The QP's slots the data plane will skip once (bit s: slot s)."""
