"""NSCC, UEC 1.0's sender congestion control, as MRC's window (the OCP MRC
API's CC profile `uet-1.0-nscc`, `struct mrc_ctl_cc_nscc_cfg` in
`mrc_ctl.h`). The rules follow the UEC reference simulator
(ultraethernet/uet-htsim, `UecSrc` in sim/uec.cpp); docs/nic.md lists them.

Window in bytes. Each ACK brings the bytes it newly acknowledges, an RTT
sample when the copy it echoes was sent once, and the ECN echo; the
queueing delay is the sample minus the base RTT (the smallest RTT seen).

| ECN | delay vs target_delay | action |
|---|---|---|
| no | below | proportional increase, alpha x bytes x (target - delay); fast increase (1) |
| no | at or above | fair increase, fi x bytes |
| yes | at or above | multiplicative decrease by gamma x (avg - target) / avg (2) |
| yes | below | nothing: the path, not the window, is congested; the endpoint steers away from the EV |

(1) x fi_scale per byte, after a whole window with delay under `fast_delay`.
(2) at most max_md_jump, at most once per base RTT, when the averaged delay is above target.

Increases accumulate and are applied as inc / cwnd every
`adjust_bytes_threshold` bytes acknowledged or `adjust_period_threshold`,
with eta added once per period. Quick adapt: at the end of each period of
base_rtt + target_delay, after a trim or a delay above `qa_threshold`, if
the bytes acknowledged in the period are below max_cwnd >> qa_gate, the
window becomes those bytes, and the ECN marks of what was then in flight
are ignored. A NACK (trimmed packet) takes its bytes off the window unless
it runs quick adapt; a retransmission timeout takes the packet's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

REF_RTT_US: Final = 12.0  # the reference network of UEC's constants: 100 Gb/s, 12 µs
REF_GBPS: Final = 100.0
DELAY_ALPHA: Final = 0.0125  # weight of one sample in the averaged delay (htsim's _delay_alpha)
FAST_DELAY_REF_US: Final = 1.0  # fast increase below this delay, on the reference network


@dataclass(frozen=True)
class NsccConfig:
    """`mrc_ctl_cc_nscc_cfg` in the simulator's units: times in µs, sizes in
    bytes. `fi` and `eta` are bytes (per RTT of window growth)."""

    base_rtt: float
    target_delay: float
    max_cwnd: float | None  # None: 1.5 x the BDP of the base RTT, following the base RTT down
    eta: float
    fi: float
    fi_scale: float
    gamma: float
    max_md_jump: float
    qa_threshold: float
    qa_gate: int
    disable_qa: bool
    adjust_bytes_threshold: float
    adjust_period_threshold: float


def defaults(base_rtt: float, line_gbps: float, mtu: int, trimming: bool = True) -> dict[str, Any]:
    """htsim's `initNsccParams` for a network of this base RTT (µs) and NIC
    line rate: constants of the 100 Gb/s, 12 µs reference network scaled by
    a = BDP / reference BDP and, for times, by this network's RTT."""
    target = (0.75 if trimming else 1.0) * base_rtt
    a = line_gbps * base_rtt / (REF_GBPS * REF_RTT_US)
    # qa_gate 4, not htsim's 3: with max_cwnd 1.5 BDPs and a quick-adapt period of 1.75 base RTTs, a flow
    # at its fair share of a 7:1 incast acknowledges 0.25 BDP a period against a gate of 1.5 / 8 = 0.19:
    # one a little behind was cut to what it achieved and fell further behind (the MRC paper's Fig. 18
    # incast shared with Jain's index 0.88). At 1.5 / 16 quick adapt waits for incasts of about 19:1.
    return dict(base_rtt=base_rtt, target_delay=target, max_cwnd=None, eta=0.15 * mtu * a, fi=5.0 * mtu * a,
                fi_scale=0.25 * a, gamma=0.8, max_md_jump=0.5, qa_threshold=4 * target, qa_gate=4, disable_qa=False,
                adjust_bytes_threshold=8.0 * mtu, adjust_period_threshold=base_rtt)


class Nscc:
    """One QP's NSCC state. Times in µs, sizes in bytes, `line_gbps` the
    NIC's rate (for the BDP that bounds the window)."""

    def __init__(self, cfg: NsccConfig, line_gbps: float, mtu: int, cwnd: float | None = None):
        self.cfg, self.mtu = cfg, mtu
        self.bytes_per_us = line_gbps * 1e3 / 8
        self.base_rtt = cfg.base_rtt
        self.min_cwnd = float(mtu)
        self.max_cwnd = self._max_cwnd()
        self.cwnd = min(self.max_cwnd, cwnd if cwnd is not None else self.max_cwnd)
        # alpha (per µs): htsim's 4 MTU x a x b / target_delay with b = target_delay / 12 µs, so a
        # window acknowledged with no queueing grows by 4 MTU x a x target_delay / 12 µs per RTT
        self.alpha = 4.0 * mtu * line_gbps * cfg.base_rtt / (REF_GBPS * REF_RTT_US) / REF_RTT_US
        self.fast_delay = FAST_DELAY_REF_US * cfg.base_rtt / REF_RTT_US
        self.avg_delay = 0.0
        self.inc = 0.0  # increase accumulated since the last adjustment (bytes x bytes)
        self.received = 0.0  # bytes acknowledged since the last adjustment
        self.last_adjust = 0.0
        self.last_dec = -1e18
        self.fi_count = 0.0  # bytes acknowledged in a row with delay under fast_delay
        self.fast = False
        self.achieved = 0.0  # bytes acknowledged in this quick-adapt period
        self.qa_end = 0.0  # end of the quick-adapt period (0: none started)
        self.qa_trigger = False
        self.to_ignore = 0.0  # after quick adapt: ECN on these bytes (then in flight) is ignored
        self.ignored = 0.0
        self.counts = {"fair": 0, "proportional": 0, "fast": 0, "md": 0, "ecn_low_delay": 0, "quick_adapt": 0,
                       "nack": 0, "timeout": 0}

    def _max_cwnd(self) -> float:
        return self.cfg.max_cwnd if self.cfg.max_cwnd is not None else 1.5 * self.base_rtt * self.bytes_per_us

    def window(self) -> int:
        """Packets the QP may have in flight."""
        return max(1, int(self.cwnd // self.mtu))

    def _bound(self) -> None:
        self.cwnd = min(self.max_cwnd, max(self.min_cwnd, self.cwnd))

    # ---- delay ------------------------------------------------------------
    def _sample(self, rtt: float | None, ecn: bool) -> float:
        """Queueing delay of this ACK: the RTT sample over the base RTT
        (tracked down to the smallest sample), or the average without one."""
        if rtt is None:
            return self.avg_delay
        if rtt < self.base_rtt:
            self.base_rtt = rtt
            self.max_cwnd = self._max_cwnd()
            return self.avg_delay
        delay = rtt - self.base_rtt
        self._average(delay, ecn)
        return delay

    def _average(self, delay: float, ecn: bool) -> None:
        # Delay over target without ECN is another flow's queue: it pulls the average toward base_rtt / 4.
        x = self.base_rtt * 0.25 if not ecn and delay > self.cfg.target_delay else delay
        self.avg_delay = DELAY_ALPHA * x + (1 - DELAY_ALPHA) * self.avg_delay

    # ---- signals ----------------------------------------------------------
    def on_ack(self, now: float, acked: float, rtt: float | None, ecn: bool, inflight: float) -> None:
        self.achieved += acked
        self.received += acked
        self.ignored += acked
        delay = self._sample(rtt, ecn)
        if self._quick_adapt(now, False, ecn, delay, inflight):
            return
        target = self.cfg.target_delay
        if not ecn and delay >= target:
            self.counts["fair"] += 1
            self.inc += self.cfg.fi * acked
        elif not ecn:
            self._proportional(acked, delay)
        elif delay >= target:
            self._decrease(now)
        else:
            self.counts["ecn_low_delay"] += 1  # the window stays; the endpoint moves off the EV
        self._bound()
        if self.received > self.cfg.adjust_bytes_threshold or now - self.last_adjust > self.cfg.adjust_period_threshold:
            self._adjust(now)
        self._bound()

    def on_nack(self, now: float, nacked: float, rtt: float | None, inflight: float) -> None:
        """A trimmed packet: the trim stands for a delay of one base RTT
        (the queue that trims), quick adapt is due, and unless it runs now
        the window loses the packet's bytes."""
        self.counts["nack"] += 1
        self.ignored += nacked
        if rtt is not None and rtt < self.base_rtt:
            self.base_rtt = rtt
            self.max_cwnd = self._max_cwnd()
        self._average(self.cfg.base_rtt, True)
        self.qa_trigger = True
        if not self._quick_adapt(now, True, True, 0.0, inflight):
            self.cwnd -= nacked
            self._bound()

    def on_timeout(self, now: float, lost: float) -> None:
        """A retransmission timeout: the packet's bytes come off the window."""
        self.counts["timeout"] += 1
        self.cwnd = max(self.cwnd - lost, self.min_cwnd)

    # ---- rules ------------------------------------------------------------
    def _proportional(self, acked: float, delay: float) -> None:
        if delay < self.fast_delay:
            self.fi_count += acked
            if self.fi_count > self.cwnd or self.fast:
                self.counts["fast"] += 1
                self.cwnd += acked * self.cfg.fi_scale
                self.fast = True
                return
        else:
            self.fi_count = 0.0
        self.fast = False
        self.counts["proportional"] += 1
        self.inc += self.alpha * acked * (self.cfg.target_delay - delay)

    def _decrease(self, now: float) -> None:
        self.fast, self.fi_count = False, 0.0
        avg, target = self.avg_delay, self.cfg.target_delay
        if avg > target and now - self.last_dec > self.base_rtt:
            self.counts["md"] += 1
            self.cwnd *= max(1 - self.cfg.gamma * (avg - target) / avg, 1 - self.cfg.max_md_jump)
            self.cwnd = max(self.cwnd, self.min_cwnd)
            self.last_dec = now

    def _adjust(self, now: float) -> None:
        self.cwnd += self.inc / self.cwnd
        if now - self.last_adjust >= self.cfg.adjust_period_threshold:
            self.cwnd += self.cfg.eta
            self.last_adjust = now
        self.inc = self.received = 0.0

    def _quick_adapt(self, now: float, loss: bool, ecn: bool, delay: float, inflight: float) -> bool:
        """True when this signal is consumed by quick adapt (run, or ECN on
        bytes sent before the last one ran): no other rule applies."""
        if self.cfg.disable_qa:
            return False
        done = False
        if self.ignored < self.to_ignore and ecn:
            done = True
        elif now > self.qa_end:
            if self.qa_end != 0 and (self.qa_trigger or loss or delay > self.cfg.qa_threshold) \
                    and self.achieved < self.max_cwnd / (1 << self.cfg.qa_gate):
                self.counts["quick_adapt"] += 1
                self.cwnd = max(self.achieved, self.min_cwnd)
                self.to_ignore, self.ignored = inflight, 0.0
                self.qa_trigger = False
                done = True
            self.achieved = 0.0
            self.qa_end = now + self.base_rtt + self.cfg.target_delay
        if done:
            self.inc = self.received = 0.0
        return done
