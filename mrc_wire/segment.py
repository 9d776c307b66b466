"""A message as RDMA-write packets: what a sender keeps of each packet
until it is acknowledged, and the cut of a message into packets that both
transports (the MRC endpoint, the RoCE baseline) make alike."""

from __future__ import annotations

from dataclasses import dataclass

from mrc_wire.constants import OP_WRITE_FIRST, OP_WRITE_LAST, OP_WRITE_MIDDLE, OP_WRITE_ONLY
from mrc_wire.psn import psn_add


@dataclass(slots=True)
class Segment:
    psn: int
    msg_id: int
    offset: int
    msg_len: int
    opcode: int
    length: int
    payload: bytes | None  # None: a simulated payload of `length` zero bytes


class Cut:
    """A message (bytes, or an int for that many simulated bytes) cut into
    packets of at most `mtu` payload bytes, PSNs from `first_psn` on: one
    WRITE_ONLY, or WRITE_FIRST, WRITE_MIDDLE..., WRITE_LAST. `segment(i)`
    makes the i-th when it is wanted, so a sender holds a message's unsent
    packets as one object (a 2 MiB message is 512 of them, 16 GiB 4 million)."""

    __slots__ = ("first_psn", "msg_id", "data", "mtu", "size", "count")

    def __init__(self, first_psn: int, msg_id: int, data: bytes | int, mtu: int):
        self.first_psn, self.msg_id, self.data, self.mtu = first_psn, msg_id, data, mtu
        self.size = data if isinstance(data, int) else len(data)
        self.count = max(1, -(-self.size // mtu))

    def segment(self, i: int) -> Segment:
        n, off = self.count, i * self.mtu
        length = min(self.mtu, self.size - off)
        op = OP_WRITE_ONLY if n == 1 else OP_WRITE_FIRST if i == 0 else OP_WRITE_LAST if i == n - 1 \
            else OP_WRITE_MIDDLE
        data = self.data
        payload = None if isinstance(data, int) else data[off:off + length]
        return Segment(psn_add(self.first_psn, i), self.msg_id, off, self.size, op, length, payload)


def segments(first_psn: int, msg_id: int, data: bytes | int, mtu: int) -> list[Segment]:
    """Every packet of `Cut(first_psn, msg_id, data, mtu)`, at once."""
    cut = Cut(first_psn, msg_id, data, mtu)
    return [cut.segment(i) for i in range(cut.count)]
