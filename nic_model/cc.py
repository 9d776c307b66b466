"""Window congestion control in the spirit of NSCC (the MRC/UET family):
multiplicative decrease on ECN, trims and delay over target (at most once
per RTT), additive increase of about one packet per RTT otherwise."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CcState:
    cwnd: float = 16.0
    min_cwnd: float = 1.0
    max_cwnd: float = 256.0
    target_delay: float = 40.0  # µs
    last_decrease: float = -1e9

    def on_ack(self, now: float, rtt: float | None, congested: bool, acked: int = 1) -> None:
        """One ACK (or NACK: congested) that newly acknowledged `acked`
        packets (a coalesced ACK covers several)."""
        if congested or (rtt is not None and rtt > self.target_delay):
            if now - self.last_decrease >= (rtt or self.target_delay):
                factor = 0.7 if congested else max(0.5, self.target_delay / rtt)  # type: ignore[operator]
                self.cwnd = max(self.min_cwnd, self.cwnd * factor)
                self.last_decrease = now
        else:
            self.cwnd = min(self.max_cwnd, self.cwnd + acked / self.cwnd)
