"""The host's half of a QP's receiver: placing what the NIC's receiver
found new (nic_model/rx_track.py tracks the PSNs) into its message, and
handing each message over once, when its last byte is in."""

from __future__ import annotations


class _Message:
    __slots__ = ("placed", "parts")

    def __init__(self, keep: bool) -> None:
        self.placed = 0  # bytes
        self.parts: dict[int, bytes] | None = {} if keep else None  # offset -> payload, when payloads are kept


class Placement:
    __slots__ = ("partial", "delivered", "bytes", "active_at", "keep")

    def __init__(self, keep: bool) -> None:
        self.partial: dict[int, _Message] = {}  # msg_id -> what of it is placed
        self.delivered: set[int] = set()  # messages handed over (later copies of their packets place nothing)
        self.bytes = 0  # placed so far
        self.active_at = -1.0  # last data received (-1: none yet, as the sender's times)
        self.keep = keep  # keep payloads, to hand each message's bytes over

    def heard(self, now: float) -> None:
        self.active_at = now

    def place(self, msg_id: int, offset: int, n: int, payload: bytes) -> int:
        """`n` bytes at `offset` of message `msg_id`: the message's bytes
        placed so far, or -1 (nothing placed) if it was already handed over."""
        if msg_id in self.delivered:
            return -1
        m = self.partial.get(msg_id)
        if m is None:
            m = self.partial[msg_id] = _Message(self.keep)
        m.placed += n
        self.bytes += n
        if m.parts is not None:
            m.parts[offset] = payload
        return m.placed

    def take(self, msg_id: int) -> bytes | None:
        """Hand message `msg_id` over: its bytes in order (None: payloads not kept)."""
        m = self.partial.pop(msg_id)
        self.delivered.add(msg_id)
        return b"".join(m.parts[o] for o in sorted(m.parts)) if m.parts is not None else None
