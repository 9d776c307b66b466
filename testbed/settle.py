"""Waiting on a BMv2 target's own counters rather than on time.

A frame sent to BMv2 is done when the device's ingress has counted it,
its egress has sent every copy ingress asked for, and ptf has received
every copy egress sent. The switch and NIC programs count each step
(ingress: every frame once, as received or dropped; egress: every frame it
sends), so a test can wait for exactly that, however busy the machine is,
instead of hoping a fixed time was enough: a drop counter read after the
wait holds the drop, a negative check after it has nothing left in flight.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import finsy as fy

from control_plane.counters import NIC_DROP_COUNTER, NIC_DROP_ENUM, enum_members
from control_plane.session import Session
from mrc_wire.constants import HOST_PORT, NACK_TRIMMED, NACK_TRIMMED_LASTHOP, NIC_EVENTS

SETTLE_TIMEOUT = 30.0  # seconds: only a device that lost a frame waits this long
POLL_INTERVAL = 0.002


@dataclass(frozen=True)
class Progress:
    """Cumulative counts of one device (packets)."""

    ingress: int  # frames ingress has finished with (forwarded, cloned or dropped)
    egress: int  # frames egress has sent
    egress_due: int  # frames egress owes for what ingress finished

    def __sub__(self, o: Progress) -> Progress:
        return Progress(self.ingress - o.ingress, self.egress - o.egress, self.egress_due - o.egress_due)


def _packets(session: Session, cells: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Packet counts of (counter, index) cells, in one P4Runtime read."""
    out = dict.fromkeys(cells, 0)
    for ent in session.read([fy.P4CounterEntry(name, index=i) for name, i in cells]):
        if ent.data and ent.index is not None:  # a cell read back names its index
            out[(ent.counter_id, ent.index)] = ent.data.packet_count
    return out


def switch_progress(session: Session, ports: Sequence[int]) -> Progress:
    """The switch counts every frame in port_rx at ingress and either drops
    it (port_drop) or sends it once (port_tx, in egress)."""
    c = _packets(session, [(n, p) for n in ("port_rx", "port_tx", "port_drop") for p in ports])
    rx, tx, drop = (sum(c[(n, p)] for p in ports) for n in ("port_rx", "port_tx", "port_drop"))
    return Progress(rx, tx, rx - drop)


# The nic_events a frame ends ingress with, one each (or a nic_drops count).
FRAME_EVENTS = ("tx", "rx", "nack", "sack", "probe_answer")


def nic_progress(session: Session, ports: Sequence[int]) -> Progress:
    """The NIC ends ingress with one nic_events (tx, rx, nack, sack,
    probe_answer) or nic_drops count per frame. A sent frame (tx), a NACK,
    a SACK and a probe answer leave on a plane port; a received frame (rx),
    the copy of new data a SACK was made from (host_copy), a sent data
    packet's transmit completion (tx_done) and a trimmed packet's notice (a
    NACK of reason TRIMMED or TRIMMED_LASTHOP) on the host port;
    nic_port_tx counts each in egress. Egress is owed only on `ports` (all
    of them, or the plane ports alone)."""
    reasons = sorted(enum_members(session.switch.p4info, NIC_DROP_ENUM).values())
    cells = [("nic_events", i) for i in range(len(NIC_EVENTS))] + [(NIC_DROP_COUNTER, i) for i in reasons]
    cells += [("nack_reasons", r) for r in (NACK_TRIMMED, NACK_TRIMMED_LASTHOP)]
    c = _packets(session, cells + [("nic_port_tx", p) for p in ports])
    ev = {name: c[("nic_events", i)] for i, name in enumerate(NIC_EVENTS)}
    drops = sum(c[(NIC_DROP_COUNTER, i)] for i in reasons)
    notices = c[("nack_reasons", NACK_TRIMMED)] + c[("nack_reasons", NACK_TRIMMED_LASTHOP)]
    due = (ev["rx"] + ev["host_copy"] + ev["tx_done"] + notices if HOST_PORT in ports else 0) + \
        (ev["tx"] + ev["nack"] + ev["sack"] + ev["probe_answer"] if any(p != HOST_PORT for p in ports) else 0)
    return Progress(sum(ev[e] for e in FRAME_EVENTS) + drops, sum(c[("nic_port_tx", p)] for p in ports), due)


class Settler:
    """Counts the frames a target sends and waits until the device and ptf
    have finished with all of them."""

    def __init__(self, name: str, progress: Callable[[], Progress], received: Callable[[], int],
                 timeout: float = SETTLE_TIMEOUT):
        self.name, self.progress, self.received, self.timeout = name, progress, received, timeout
        self._rebase()

    def _rebase(self) -> None:
        self.base, self.base_rx, self.sent = self.progress(), self.received(), 0

    def state(self) -> tuple[Progress, int]:
        """(device progress, frames ptf received) since the last rebase."""
        return self.progress() - self.base, self.received() - self.base_rx

    def done(self) -> bool:
        p, rx = self.state()
        return p.ingress >= self.sent and p.egress == p.egress_due and rx == p.egress

    def wait_ingress(self) -> None:
        """Return once ingress has finished every frame sent (what it then
        sends is not waited for): a table written after this applies from
        the next frame sent, never to one sent before."""
        deadline = time.monotonic() + self.timeout
        while (got := (self.progress() - self.base).ingress) < self.sent:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: ingress finished {got} of {self.sent} frames sent "
                                     f"after {self.timeout:g} s")
            time.sleep(POLL_INTERVAL)

    def wait(self, strict: bool = True) -> None:
        """Return once every frame sent is done. After `timeout` (a frame was
        lost), start counting afresh so later tests are not held up, and
        raise if `strict`."""
        deadline = time.monotonic() + self.timeout
        while not self.done():
            if time.monotonic() > deadline:
                (p, rx), sent = self.state(), self.sent
                self._rebase()
                if not strict:
                    return
                raise AssertionError(
                    f"{self.name}: frames still unaccounted for after {self.timeout:g} s: ingress finished "
                    f"{p.ingress} of {sent} sent, egress sent {p.egress} of {p.egress_due}, ptf received {rx}")
            time.sleep(POLL_INTERVAL)
