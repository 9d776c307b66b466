"""The endpoint's congestion control: one interface, two profiles.

- `uet-1.0-nscc` (mrc_host/nscc.py): UEC 1.0's NSCC, the default.
- `aimd`: the model's first window, kept as an option: multiplicative
  decrease on ECN, trims and delay over target (at most once per RTT),
  additive increase of about one packet per RTT otherwise.

The endpoint calls, per QP: `on_ack(now, acked, rtt, ecn, inflight)` for
every ACK or SACK (bytes newly acknowledged, the RTT of the copy it echoes
if that copy was sent once, else None, the ECN echo, bytes still in
flight), `on_nack(now, nacked, rtt, inflight)` for a trimmed packet,
`on_timeout(now, lost)` when a packet's retransmission timer fires, and
`window()` for the packets it may have in flight. Times in µs, sizes in
bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class CongestionControl(Protocol):
    def on_ack(self, now: float, acked: float, rtt: float | None, ecn: bool, inflight: float) -> None: ...

    def on_nack(self, now: float, nacked: float, rtt: float | None, inflight: float) -> None: ...

    def on_timeout(self, now: float, lost: float) -> None: ...

    def window(self) -> int: ...


@dataclass
class Aimd:
    """Profile `aimd`. The window in packets."""

    cwnd: float = 16.0
    min_cwnd: float = 1.0
    max_cwnd: float = 256.0
    target_delay: float = 40.0  # µs
    last_decrease: float = -1e9

    def window(self) -> int:
        return int(self.cwnd)

    def on_ack(self, now: float, acked: float, rtt: float | None, ecn: bool, inflight: float) -> None:
        self._signal(now, rtt, ecn)

    def on_nack(self, now: float, nacked: float, rtt: float | None, inflight: float) -> None:
        self._signal(now, None, True)  # a trim is congestion; no RTT sample on a NACK

    def on_timeout(self, now: float, lost: float) -> None:
        pass  # a timeout is a broken path here (the EV is retired), not congestion

    def _signal(self, now: float, rtt: float | None, congested: bool) -> None:
        if congested or (rtt is not None and rtt > self.target_delay):
            if now - self.last_decrease >= (rtt or self.target_delay):
                factor = 0.7 if congested else max(0.5, self.target_delay / rtt)  # type: ignore[operator]
                self.cwnd = max(self.min_cwnd, self.cwnd * factor)
                self.last_decrease = now
        else:
            self.cwnd = min(self.max_cwnd, self.cwnd + 1.0 / self.cwnd)
