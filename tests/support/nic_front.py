"""A NIC for the endpoint tests, at the inner-packet level: the reference
NIC model (nic_model.nic_pipeline, `.model`: the endpoint's
`mrc_wire.pcie.Nic`) wired to the test, its outer header taken off what it
sends and put on what it receives.

The endpoint creates its QPs on it and posts packets to it; the model
picks each data packet's EV (its rotation, or path health for a QP that
has it), says which (`on_sent`), and hands what it sends to `out` as the
inner packet (IPv6 / UDP / BTH ...). What the test's fabric brings back
goes in at `receive` (an inner packet, DSCP and ECN as they arrived):
the model's receiver tracks the PSNs, drops duplicates, SACKs and answers
probes (to `out`), and hands the endpoint the rest. A trim notice (a
trimmed DSCP, as the path fabric writes it into the inner header) goes
to the endpoint untracked: the NIC NACKed the packet, its PSN is not
received.

Its tables are those of a NIC with 2,048 rows and 8 planes, so any EV and
any destination of the NIC prefix can be encapsulated.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping

from mrc_wire import entries as E
from mrc_wire.constants import DSCP_DEFAULTS, IPPROTO_IPV6, IPV6_LEN
from mrc_wire.frame import Frame
from nic_model.nic_pipeline import NicModel, Output

BLOCK = 0xFCBBBB00  # fcbb:bb00::/32, the default block
ROWS = 2048  # every 11-bit row
ETH = bytes(12) + b"\x86\xdd"


class NicFront:
    def __init__(self, addr: str | bytes, out: Callable[[bytes], None], name: str = "nic",
                 dscp: Mapping[str, int] | None = None):
        """`dscp`: the classes the topology gives (over DSCP_DEFAULTS), as the host's."""
        self.addr = addr if isinstance(addr, bytes) else ipaddress.IPv6Address(addr).packed
        self.out = out
        self.model = NicModel(name)
        d = {**DSCP_DEFAULTS, **(dscp or {})}
        my_row = int.from_bytes(self.addr[12:14], "big") & 0x7FF
        self.model.install([E.NicConfig(BLOCK, my_row, int.from_bytes(self.addr, "big"), d["control"], d["trimmed"],
                                        d["trimmed_lasthop"])])
        self.model.install([E.DestRow(r, r == my_row) for r in range(ROWS)])
        self.model.install([E.PlanePort(p, p + 1, 0, 0, 0) for p in range(8)])
        self.model.connect(self)

    # ---- the wire: inner packets ---------------------------------------------
    def send(self, o: Output) -> None:
        """What the model sends to a plane port: its inner packet, to `out`."""
        if o.wire is not None:
            self.out(o.wire.inner)

    def receive(self, raw: bytes) -> None:
        """An inner packet from the fabric (its DSCP and ECN as they arrived
        travel in the outer header too, as a switch would have set them)."""
        tc = ((raw[0] & 0xF) << 4) | (raw[1] >> 4)
        plen = IPV6_LEN + ((raw[4] << 8) | raw[5])
        self.model.on_wire(Frame(ETH, tc, 0, plen, IPPROTO_IPV6, 64, bytes(16), bytes(16), raw))

    # ---- what the tests read of the NIC's receiver ----------------------------
    @property
    def rx(self) -> object:
        return self.model.rx

    def _index(self, qpn: int) -> int:
        return self.model.peers[qpn].qp_index

    def cum(self, qpn: int) -> int:
        """The QP's cumulative PSN in the registers."""
        return self.model.rx.cum[self._index(qpn)]

    def held(self, qpn: int) -> int:
        """PSNs of the QP held out of order."""
        return self.model.rx.ooo[self._index(qpn)]

    @property
    def sacks(self) -> int:
        return self.model.other_events["sack"]

    @property
    def nacks(self) -> int:
        return self.model.other_events["nack"]

    @property
    def probe_answers(self) -> int:
        return self.model.other_events["probe_answer"]
