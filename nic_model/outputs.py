"""What leaves the NIC's pipeline (`Output`), where frames to the plane
ports go (`Wire`), and the NIC's identity as every stage reads it per
packet (`Settings`, from its nic_config entry)."""

from __future__ import annotations

from typing import Protocol, final

from mrc_wire import entries as N
from mrc_wire import packet as W
from mrc_wire.frame import Frame


@final
class Output:
    """A frame out of the pipeline. To a plane port: `wire`, its header
    fields (mrc_wire.frame). To the host: the packet as parsed by this
    pipeline (`pkt`, after the CE copy, so a host model need not parse it
    again) behind the Ethernet header it arrived with (`eth`). `frame`
    is either as bytes. A plain class, not a NamedTuple: the timed fabric
    makes millions, and compiled, a NamedTuple's constructor is a Python
    call (its generated __new__) where this one is native."""

    __slots__ = ("port", "wire", "high_priority", "pkt", "eth")

    def __init__(self, port: int, wire: Frame | None, high_priority: bool = False, pkt: W.Mrc | None = None,
                 eth: bytes = b""):
        self.port, self.wire, self.pkt, self.eth = port, wire, pkt, eth
        # The queue the frame is handed to: control and trimmed-class DSCPs go
        # to the high-priority queue, as at the switch.
        self.high_priority = high_priority

    @property
    def frame(self) -> bytes:
        """The frame as bytes (its `pad` zeros not carried)."""
        if self.wire is not None:
            return self.wire.to_bytes()
        assert self.pkt is not None  # a host output carries its packet
        return self.eth + self.pkt.raw

    @property
    def pad(self) -> int:
        """Zero bytes after `frame`, counted, not carried (mrc_wire.packet)."""
        if self.wire is not None:
            return self.wire.pad
        return 0 if self.pkt is None else self.pkt.pad

    def __repr__(self) -> str:
        return f"Output(port={self.port}, frame={self.frame!r}, high_priority={self.high_priority}, pad={self.pad})"


class Wire(Protocol):
    """Where a NIC's frames to its plane ports go (a link, a capture, a test)."""

    def send(self, out: Output) -> None: ...


@final
class Settings:
    """What the pipeline reads of its nic_config entry on every packet, as
    native fields (the entry is a dataclass the compiled code reads
    generically); my_addr as the bytes a packet carries."""

    __slots__ = ("entry", "my_addr", "dscp_control", "dscp_trimmed", "dscp_trimmed_lasthop")

    def __init__(self, c: N.NicConfig):
        self.entry = c
        self.my_addr = c.my_addr.to_bytes(16, "big")
        self.dscp_control, self.dscp_trimmed, self.dscp_trimmed_lasthop = \
            c.dscp_control, c.dscp_trimmed, c.dscp_trimmed_lasthop

    def high(self, dscp: int) -> bool:
        """Whether `dscp` goes to the high-priority queue (control, trimmed)."""
        return dscp == self.dscp_control or dscp == self.dscp_trimmed or dscp == self.dscp_trimmed_lasthop
