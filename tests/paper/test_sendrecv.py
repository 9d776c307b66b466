"""Fig. 15: NCCL sendrecv over MRC (tolerance in mrc_paper/sendrecv.py)."""

from __future__ import annotations

from mrc_paper import sendrecv as S
from tests.paper.helpers import run


def test_fig15_sendrecv_reaches_the_papers_share_of_the_nic_at_its_largest_size():
    _, f = run("fig15", sweep={"workload.message_bytes": [1 << 20, 16 << 20]})
    assert all(ok for _, ok in f.delivery), "every message delivered exactly once"
    g = f.numbers["gbps"]
    assert g[str(16 << 20)] >= S.SHARE * f.numbers["line"] > g[str(1 << 20)], "bandwidth grows with size to ~0.9"
    assert f.result("fig15.share").ok
