"""An application for the endpoint tests (mrc_host.host.App): what the
transport told it, kept in order."""

from __future__ import annotations

from collections.abc import Callable


class Recorder:
    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.clock = clock
        self.delivered_msgs: list[tuple[int, int, bytes | None]] = []  # (QP, message id, bytes)
        self.at: list[float] = []  # when each message was delivered (with a clock)
        self.placed_bytes = 0
        self.failures: list[tuple[int, str, float]] = []  # (QP, why, when)

    def delivered(self, qpn: int, msg_id: int, data: bytes | None) -> None:
        self.delivered_msgs.append((qpn, msg_id, data))
        if self.clock is not None:
            self.at.append(self.clock())

    def placed(self, qpn: int, msg_id: int, offset: int, length: int) -> None:
        self.placed_bytes += length

    def failed(self, qpn: int, reason: str) -> None:
        self.failures.append((qpn, reason, self.clock() if self.clock is not None else 0.0))

    @property
    def data(self) -> list[bytes | None]:
        return [d for _, _, d in self.delivered_msgs]
