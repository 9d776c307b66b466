"""Make DPDK's SWX pipeline run a p4c-dpdk spec one packet at a time, in the
order the packets arrived.

SWX interleaves up to 16 packets on one core (DPDK 24.11,
lib/pipeline/rte_swx_pipeline_internal.h: RTE_SWX_PIPELINE_THREADS_MAX):
a packet's context yields to the next at every instruction that may wait on
memory (rte_swx_pipeline.c: instruction_does_thread_yield): `rx`, a table
lookup whose table type prefetches (the exact-match table: its first lookup
call only prefetches the bucket, lib/table/rte_swx_table_em.c), a learner,
a selector, an extern. Another packet then runs its instructions in
between, so two packets that arrive back to back can finish in the other
order and a read-modify-write of a register that spans a lookup is not
atomic: measured on the NIC, a marked SACK and a port status sent back to
back left their EV events in the ring the other way round, and their
frames left in the other order.

A wildcard-match table (lib/table/rte_swx_table_wm.c, on DPDK's ACL
library) answers in one call. With every exact key made a wildcard key,
each packet's pass yields only at `rx`: contexts take packets in turn and
each runs its pass to the end before the next resumes, so passes run in
arrival order and each is atomic, as on BMv2. An entry of an exact key
(`match <value>`, no mask) reads as the whole field in the wildcard table
(rte_swx_ctl.c: a field without `/mask` is matched whole), and exact keys
never overlap, so every lookup answers as before. What this costs in
packets per second is in `make bench`.
"""

from __future__ import annotations

import re

# Instructions that yield whatever the tables are (the spec's names; a
# learner's or a selector's lookup is a `table` instruction on it).
YIELDING = ("extern",)
_TABLE = re.compile(r"^(table \w+ \{\n.*?^\})", re.M | re.S)
_EXACT_KEY = re.compile(r"^(\t\t\S+) exact$", re.M)


class OrderError(ValueError):
    """A spec SWX would still interleave packets in."""


def in_arrival_order(text: str) -> str:
    """The spec with every exact-match key field a wildcard one (module
    docstring); raise OrderError naming what would still yield."""
    for kind in ("learner", "selector"):
        found = re.findall(rf"^{kind} (\w+)", text, re.M)
        if found:
            raise OrderError(f"{kind} {', '.join(found)}: SWX yields at its lookup, packets would interleave")
    used = sorted({m[1] for m in re.finditer(rf"^\s*(?:\w+ :\s*)?({'|'.join(YIELDING)})\b", text, re.M)})
    if used:
        raise OrderError(f"instruction(s) {', '.join(used)}: SWX yields at them, packets would interleave")
    return _TABLE.sub(lambda m: _EXACT_KEY.sub(r"\1 wildcard", m[1]), text)
