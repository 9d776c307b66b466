"""DCQCN rate control of the RoCE baseline: the reaction point of Zhu et
al., "Congestion Control for Large-Scale RDMA Deployments" (SIGCOMM 2015).

A CNP (the receiver saw a CE mark; at most one per CNP_INTERVAL_US per QP)
cuts the rate: target := current, current *= 1 - alpha/2, alpha moves
towards 1. Every TIMER_US without a CNP alpha decays and the rate
recovers: FAST_STEPS halvings of the distance to the target, then the
target grows by RATE_AI (additive), after 2 * FAST_STEPS by RATE_HAI
(hyper). The byte counter of the paper is left out: the timer alone
drives recovery. Timers are evaluated lazily when the sender asks for the
rate, so DCQCN schedules no events of its own.
"""

from __future__ import annotations

CNP_INTERVAL_US = 50.0  # the notification point: one CNP per QP per interval at most
TIMER_US = 55.0  # rate-increase and alpha-update period
G = 1 / 256  # alpha's gain
FAST_STEPS = 5
RATE_AI = 0.01  # additive increase, a share of the line rate per step
RATE_HAI = 0.1  # hyper increase
MIN_RATE = 0.001  # share of the line rate a QP never goes below


class Dcqcn:
    __slots__ = ("line", "rc", "rt", "alpha", "stage", "t_timer", "cnps")

    def __init__(self, line_gbps: float):
        self.line = line_gbps
        self.rc = self.rt = line_gbps  # a QP starts at line rate
        self.alpha = 1.0
        self.stage = 0
        self.t_timer = 0.0
        self.cnps = 0

    def rate(self, now: float) -> float:
        """The current rate (Gb/s), after the timer periods that have passed."""
        while now - self.t_timer >= TIMER_US:
            self.t_timer += TIMER_US
            self.alpha *= 1 - G
            self.stage += 1
            if self.stage > 2 * FAST_STEPS:
                self.rt = min(self.line, self.rt + RATE_HAI * self.line)
            elif self.stage > FAST_STEPS:
                self.rt = min(self.line, self.rt + RATE_AI * self.line)
            self.rc = (self.rt + self.rc) / 2
        return self.rc

    def cnp(self, now: float) -> None:
        self.rate(now)
        self.cnps += 1
        self.rt = self.rc
        self.rc = max(MIN_RATE * self.line, self.rc * (1 - self.alpha / 2))
        self.alpha = (1 - G) * self.alpha + G
        self.stage = 0
        self.t_timer = now
