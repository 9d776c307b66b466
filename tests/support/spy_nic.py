"""A NIC that records what its host asks of it (mrc_wire.pcie.Nic) and
sends nothing: for tests of what the host writes into its NIC."""

from __future__ import annotations

from collections.abc import Sequence

from mrc_wire.pcie import Host, QpCreate


class SpyNic:
    def __init__(self) -> None:
        self.host: Host | None = None
        self.posted: list[bytes] = []
        self.qps: list[QpCreate] = []
        self.slot_writes: list[tuple[int, list[tuple[int, int]]]] = []
        self.bad: list[tuple[int, int]] = []
        self.reverse: list[tuple[int, int, int]] = []
        self.ports: list[int] = []

    def attach(self, host: Host) -> None:
        self.host = host

    def post(self, raw: bytes, pad: int = 0) -> None:
        self.posted.append(raw)

    def create_qp(self, qp: QpCreate) -> None:
        self.qps.append(qp)

    def destroy_qp(self, qpn: int) -> None:
        self.qps = [q for q in self.qps if q.qpn != qpn]

    def write_slots(self, qpn: int, writes: Sequence[tuple[int, int]]) -> None:
        self.slot_writes.append((qpn, list(writes)))

    def set_bad(self, qpn: int, slots: int) -> None:
        self.bad.append((qpn, slots))

    def set_reverse(self, qpn: int, plane: int, ev: int) -> None:
        self.reverse.append((qpn, plane, ev))

    def set_port_down(self, planes: int) -> None:
        self.ports.append(planes)

    def skipping(self, qpn: int) -> int:
        return 0
