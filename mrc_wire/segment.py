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


def segments(first_psn: int, msg_id: int, data: bytes | int, mtu: int) -> list[Segment]:
    """`data` (bytes, or an int for that many simulated bytes) cut into
    packets of at most `mtu` payload bytes, PSNs from `first_psn` on: one
    WRITE_ONLY, or WRITE_FIRST, WRITE_MIDDLE..., WRITE_LAST."""
    size = data if isinstance(data, int) else len(data)
    n = max(1, -(-size // mtu))
    out = []
    for i in range(n):
        off = i * mtu
        length = min(mtu, size - off)
        op = OP_WRITE_ONLY if n == 1 else OP_WRITE_FIRST if i == 0 else OP_WRITE_LAST if i == n - 1 \
            else OP_WRITE_MIDDLE
        payload = None if isinstance(data, int) else data[off:off + length]
        out.append(Segment(psn_add(first_psn, i), msg_id, off, size, op, length, payload))
    return out
