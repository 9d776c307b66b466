"""Posting a workload's messages on endpoints and noticing their delivery:
shared by the timed fabric and the BMv2 fabric, so both count the same."""

from __future__ import annotations

from collections.abc import Callable

from fabric_sim.net.ledger import Ledger
from fabric_sim.scenario.message import Message
from fabric_sim.transports.qps import QpLink
from mrc_host.host import Host


class Driver:
    """Posts a run's messages and is the application of every endpoint
    (mrc_host.host.App): deliveries complete messages, placements go to the
    ledger."""

    def __init__(self, msgs: list[Message], links: dict[tuple[int, int], list[QpLink]],
                 endpoint: Callable[[int], Host], now: Callable[[], float]):
        self.msgs, self.links, self.endpoint, self.now = msgs, links, endpoint, now
        self.parts: dict[tuple[int, int], Message] = {}  # (receiver QP, msg_id) -> message
        self.done = 0
        self.twice = 0  # a part delivered again: must never happen
        self.ledger = Ledger()  # the endpoints' placements, checked against the posts (placed)

    def post(self, m: Message) -> None:
        """Stripe `m` over its pair's QPs (one part per QP)."""
        m.posted_at = self.now()
        qps = self.links[(m.src, m.dst)]
        share = -(-m.size // len(qps))
        ep = self.endpoint(m.src)
        m.parts_left = 0
        for q in qps:
            size = min(share, m.size - share * q.k)
            if size <= 0 and q.k:
                break
            msg_id = ep.send_message(q.qpn_a, max(size, 1))
            self.ledger.post(q.qpn_b, msg_id, max(size, 1))
            self.parts[(q.qpn_b, msg_id)] = m
            m.parts_left += 1

    def placed(self, qpn: int, msg_id: int, offset: int, length: int) -> None:
        self.ledger.place(qpn, msg_id, offset, length)

    def failed(self, qpn: int, reason: str) -> None:
        pass  # the endpoint keeps its errors; the run reports them

    def delivered(self, qpn: int, msg_id: int, _data: bytes | None) -> None:
        """A receiving endpoint's message is whole."""
        m = self.parts.pop((qpn, msg_id), None)
        if m is None:
            self.twice += 1
            return
        m.parts_left -= 1
        if m.parts_left == 0:
            m.done_at = self.now()
            self.done += 1
            if m.after is not None:
                for x in m.after(m):
                    self.post(x)

    def all_done(self) -> bool:
        return self.done == len(self.msgs)
