"""Transmit and spray (host to fabric), steps 1, 2 and 5 of DESIGN.md
section 5, stage for stage as p4src/nic/tx.p4: `Transmit` finds the
host's QP by the peer's QP number its packet names (qp_ev); the rotation
picks a data packet's slot (nic_model/ev_health.py, which owns each QP's
turn); `Spray` reads the slot's EV (slot_ev: what the host rewrites to
retire or restore an EV), writes it into the inner headers (UDP source
port and flow label) and counts the packet per EV and per plane (ev_stats,
plane_tx). Control packets keep the EV the host wrote into them: a reverse
EV of the QP, or the EV a probe tests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import final

from mrc_wire import entries as N
from mrc_wire.constants import ETH_LEN, OP_ACK, OP_EP_REQUEST, OP_EP_RESPONSE, OP_NACK, OP_PROBE, OP_SACK
from nic_model.ev_health import EvHealth


def is_control(opcode: int) -> bool:
    """Whether `opcode` is control: ACK, SACK, NACK, probe, endpoint request
    or response (a literal tuple: compiled, six native compares, where a
    named tuple's `in` is a Python call)."""
    return opcode in (OP_ACK, OP_SACK, OP_NACK, OP_PROBE, OP_EP_REQUEST, OP_EP_RESPONSE)


@final
class Transmit:
    """qp_ev: the host's QPs by the peer's QP number."""

    __slots__ = ("qps",)

    def __init__(self) -> None:
        self.qps: dict[int, N.QpEv] = {}


@final
class Spray:
    """slot_ev, ev_stats and plane_tx; ev_slots kept beside slot_ev for the
    QPs whose health the data plane keeps (nic_model/ev_health.py)."""

    __slots__ = ("slots", "_slot_qp", "health", "_ev_counts", "_plane_pkts", "_plane_bytes", "count")

    def __init__(self, health: EvHealth):
        self.slots: dict[int, int] = {}
        self._slot_qp: dict[int, N.QpEv] = {}  # slot -> the health QP whose range holds it
        self.health = health
        # The P4's ev_stats and plane counters as plain numbers (one lookup
        # per packet, not four Counter updates); read as Counters below.
        self._ev_counts: dict[int, list[int]] = {}  # EV -> [packets, bytes]
        self._plane_pkts = [0] * 8
        self._plane_bytes = [0] * 8
        self.count = 0  # packets sprayed (the NIC's tx event)

    def add_qp(self, e: N.QpEv) -> None:
        """A health QP: ev_slots of its range, from slot_ev as it stands."""
        if e.health:
            self.health.ensure(e.qp_index)
            for s in range(e.base, e.base + e.mask + 1):
                self._slot_qp[s] = e
                if s in self.slots:
                    self.health.move(e.qp_index, s - e.base, None, self.slots[s])

    def drop_qp(self, e: N.QpEv) -> None:
        for s in range(e.base, e.base + e.mask + 1):
            self._slot_qp.pop(s, None)

    def write(self, writes: Iterable[tuple[int, int]]) -> None:
        """Modify slot_ev entries, (slot, EV) each, ev_slots kept beside them."""
        slots, owner = self.slots, self._slot_qp
        for slot, ev in writes:
            qp = owner.get(slot) if owner else None
            if qp is not None:
                self.health.move(qp.qp_index, slot - qp.base, slots.get(slot), ev)
            slots[slot] = ev

    @staticmethod
    def on_ev(inner: bytearray, ev: int) -> None:
        """The EV into the inner headers: EV[31:16] in the UDP source port,
        EV[15:0] in the low flow label; the UDP checksum not recomputed (MRC
        relies on the ICRC)."""
        inner[40], inner[41] = (ev >> 24) & 0xFF, (ev >> 16) & 0xFF
        inner[46] = inner[47] = 0
        inner[2], inner[3] = (ev >> 8) & 0xFF, ev & 0xFF

    def counted(self, ev: int, inner_len: int, pad: int) -> None:
        """A packet sent on `ev`: bytes as the P4 counts them, in ingress
        (the host's frame before encapsulation; the wire carries 40 more)."""
        host_bytes = ETH_LEN + inner_len + pad
        c = self._ev_counts.get(ev)
        if c is None:
            c = self._ev_counts[ev] = [0, 0]
        c[0] += 1
        c[1] += host_bytes
        self._plane_pkts[ev & 7] += 1
        self._plane_bytes[ev & 7] += host_bytes
        self.count += 1

    # ---- the counters, as Counters (EVs or planes never counted are absent) ----
    def ev_tx(self) -> Counter[int]:
        return Counter({ev: c[0] for ev, c in self._ev_counts.items()})

    def ev_tx_bytes(self) -> Counter[int]:
        return Counter({ev: c[1] for ev, c in self._ev_counts.items()})

    def plane_tx(self) -> Counter[int]:
        return Counter({p: n for p, n in enumerate(self._plane_pkts) if n})

    def plane_tx_bytes(self) -> Counter[int]:
        return Counter({p: n for p, n in enumerate(self._plane_bytes) if n})
