"""A host transport's counters. The MRC endpoint keeps them; the RoCE
baseline (fabric_sim/transports/roce.py) counts the ones that apply to it
in the same fields, so a run sums every host's alike (fabric_sim/run.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Stats:
    sent: int = 0
    retransmits: int = 0
    retx_sack: int = 0  # resent because later packets were delivered (RACK/SACK)
    retx_nack: int = 0  # resent on a NACK (trimmed; RoCE: every go-back-N resend)
    spurious: int = 0  # resent, then the first copy's ACK came
    tail_probes: int = 0  # newest copy resent after silence, so SACKs show the holes
    timeouts: int = 0
    nacks: int = 0
    probes: int = 0
    suspects_lost: int = 0  # EVs retired because a probe after a late copy went unanswered
    delivered: int = 0
    duplicates: int = 0
    out_of_window: int = 0  # RoCE: out of sequence, discarded
    trim_notices: int = 0
    acks_sent: int = 0
    errors: int = 0
    rx_bytes: int = 0  # payload placed (first copies only)
    # reorder[b]: data packets that arrived d PSNs past the in-order point,
    # d.bit_length() == b (0: in order, 1: one ahead, 2: 2-3, 3: 4-7, ...)
    reorder: list[int] = field(default_factory=lambda: [0] * 25)
