"""A message as RDMA-write packets: what a sender keeps of each packet
until it is acknowledged, and the cut of a message into packets that both
transports (the MRC endpoint, the RoCE baseline) make alike."""

from __future__ import annotations

from mrc_wire.constants import OP_WRITE_FIRST, OP_WRITE_LAST, OP_WRITE_MIDDLE, OP_WRITE_ONLY
from mrc_wire.psn import psn_add


class Segment:
    """One packet of a message. An explicit __init__, not a dataclass's:
    compiled, a dataclass's generated __init__ stays a Python call, and
    every packet makes one."""

    __slots__ = ("psn", "msg_id", "offset", "msg_len", "opcode", "length", "payload")

    def __init__(self, psn: int, msg_id: int, offset: int, msg_len: int, opcode: int, length: int,
                 payload: bytes | None):
        self.psn, self.msg_id, self.offset, self.msg_len = psn, msg_id, offset, msg_len
        self.opcode, self.length = opcode, length
        self.payload = payload  # None: a simulated payload of `length` zero bytes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Segment) and self.key() == other.key()

    def __repr__(self) -> str:
        return (f"Segment(psn={self.psn}, msg_id={self.msg_id}, offset={self.offset}, msg_len={self.msg_len}, "
                f"opcode={self.opcode}, length={self.length}, payload={self.payload!r})")

    def key(self) -> tuple[int, int, int, int, int, int, bytes | None]:
        """Every field, in order: what two equal segments share."""
        return self.psn, self.msg_id, self.offset, self.msg_len, self.opcode, self.length, self.payload


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
