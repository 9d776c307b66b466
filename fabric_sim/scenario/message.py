"""A workload's message: what one rank sends one peer, when it may start,
and what its delivery releases. Kept apart from workload.py so that the
collectives (collectives.py), which workload.py builds, can make them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class Message:
    id: int
    src: int
    dst: int
    size: int
    start: float | None  # None: posted when a message before it is delivered
    step: int = 0  # ring: the algorithm's step (0 .. 2(N-1)-1)
    # Collectives (collectives.py): called on delivery, returns the messages
    # that may now be posted (the ring's next slices, a stream's next chunk).
    after: Callable[[Message], list[Message]] | None = None
    chunk: int = -1  # ring: which of the N data chunks it carries; p2p: its chunk index in the stream
    slice: int = 0  # ring: the slice of that chunk (NCCL's slices per chunk)
    loop: int = 0  # ring: NCCL's loop over the data, N chunks per loop
    posted_at: float = -1.0
    done_at: float = -1.0
    parts_left: int = 0
    parts: dict[tuple[int, int], bool] = field(default_factory=dict)  # (receiver QP, msg_id) -> True
