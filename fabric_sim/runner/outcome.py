"""Why messages were not delivered, in words a user can act on: a QP that
gave up, a destination no path reaches, a ring step never started, or a
run that ended while the message was still on its way."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

from fabric_sim.net.fabric import Fabric
from fabric_sim.net.ledger import Verdict
from fabric_sim.scenario import Transport
from fabric_sim.scenario.chakra.walker import StepLog
from fabric_sim.scenario.message import Message
from fabric_sim.transports.qps import QpLink
from mrc_host.host import Host

SHOWN = 5  # reasons listed; the rest are counted


def undelivered(fab: Fabric, hosts: Mapping[int, Host], links: dict[tuple[int, int], list[QpLink]],
                msgs: list[Message], end_us: float) -> list[str]:
    """One line per reason, with how many messages it holds back."""
    why: Counter[str] = Counter()
    for m in msgs:
        if m.done_at < 0:
            why[_why(fab, hosts, links[(m.src, m.dst)], m, end_us)] += 1
    lines = [f"{n} message{'s' * (n > 1)} not delivered: {reason}" for reason, n in why.most_common(SHOWN)]
    rest = sum(n for _, n in why.most_common()[SHOWN:])
    return lines + ([f"{rest} more messages not delivered for other reasons"] if rest else [])


def _why(fab: Fabric, hosts: Mapping[int, Host], qps: list[QpLink], m: Message, end_us: float) -> str:
    a, b = m.src, m.dst
    if m.posted_at < 0:
        return "never posted: what releases it (the collective's step before it, or its trace node) did not end" \
            if m.start is None \
            else f"never posted: it starts at {m.start:,.0f} µs, after the run ended at {end_us:,.0f} µs (duration_us)"
    for q in qps:
        for nic, qpn in ((a, q.qpn_a), (b, q.qpn_b)):
            ep = hosts.get(nic)  # every NIC of a QP link has one
            err = ep.qps[qpn].error if ep is not None else None
            if err is not None:
                return (
                    f"nic-{nic} QP {qpn} ({'sender' if nic == a else 'receiver'} of nic-{a} -> nic-{b}) in error: {err}"
                )
    topo = fab.topo
    if not any(fab.path_alive(a, b, p, s) for p in range(topo.planes) for s in range(topo.t1_per_plane)):
        return f"nic-{b} unreachable from nic-{a}: every path between them crosses a cable that is down"
    return f"still on its way when the run ended at {end_us:,.0f} µs (raise duration_us)"


class Finished(Protocol):
    """What `failures` reads of a finished run (run.RunResult, which imports this module)."""

    @property
    def transport(self) -> Transport: ...
    @property
    def errors(self) -> list[str]: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def ledger(self) -> Verdict | None: ...
    @property
    def steps(self) -> StepLog | None: ...


def failures(results: Sequence[Finished], failed: dict[str, str]) -> list[str]:
    """What makes a run of the scenario fail (non-zero exit), one line per
    transport: it crashed, a QP ended in error, a message was not delivered,
    or the ledger found a byte placed twice or never."""
    out = [f"{name}: did not finish ({why})" for name, why in failed.items()]
    for r in results:
        bad = []
        if r.errors:
            bad.append(f"{len(r.errors)} QP{'s' * (len(r.errors) > 1)} in error")
        missing = sum(m.done_at < 0 for m in r.messages)
        if missing:
            bad.append(f"{missing} of {len(r.messages)} messages not delivered")
        v = r.ledger
        if v is not None and (v.duplicate or v.stray):
            bad.append(f"{v.duplicate} B placed twice, {v.stray} B placed unposted")
        if r.steps is not None and r.steps.unfinished:
            bad.append(f"{len(r.steps.unfinished)} of {r.steps.ranks} ranks did not finish the trace "
                       f"({r.steps.unfinished[0]})")
        if bad:
            out.append(f"{r.transport.name}: " + ", ".join(bad))
    return out
