"""Raw links between BMv2 ports for multi-device runs: AF_PACKET sockets on
the host side of veth pairs, and a relay that joins port pairs, optionally
dropping every frame that carries one EV, and whose cables can be cut
and mended (scenario events on the BMv2 fabric)."""

from __future__ import annotations

import select
import socket
import threading
from collections import Counter

PACKET_OUTGOING = 4


# The largest frame read from a device's interface (a jumbo frame): a
# smaller read cuts the frame silently, as ptf's default of 4,096 did to
# every 4 KiB payload's frame.
MAX_FRAME = 9216


def sock(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    s.setblocking(False)
    return s


def recv(s: socket.socket) -> bytes | None:
    try:
        data, meta = s.recvfrom(MAX_FRAME)
    except BlockingIOError:
        return None
    return None if meta[2] == PACKET_OUTGOING else data


_OPCODE = 102  # the inner BTH opcode: Ethernet 14, outer IPv6 40, inner IPv6 40, UDP 8


class Link(threading.Thread):
    """Plane ports of two NICs, back to back; frames whose inner EV is
    `drop_ev` are dropped. Records the EV of every frame it saw."""

    def __init__(self, pairs: list[tuple[str, str]], drop_ev: int | None = None):
        super().__init__(daemon=True)
        self.peer: dict[socket.socket, socket.socket] = {}
        self.side: dict[socket.socket, str] = {}
        self.cable: dict[socket.socket, tuple[str, str]] = {}  # socket -> its cable (a, b)
        for a, b in pairs:
            sa, sb = sock(a), sock(b)
            self.peer[sa], self.peer[sb] = sb, sa
            self.side[sa], self.side[sb] = "a", "b"
            self.cable[sa] = self.cable[sb] = (a, b)
        self.drop_ev = drop_ev
        self.cut: set[tuple[str, str]] = set()  # cables (a, b) that drop everything
        self.cut_drops = 0
        self.seen: Counter[int] = Counter()
        self.data_from: dict[str, Counter[int]] = {}
        self.dropped = 0
        self.short = 0  # frames too short to carry an inner BTH, sent on
        self.read_from: Counter[str] = Counter()  # frames read per side ("a", "b")
        self.forwarded_to: Counter[str] = Counter()  # frames handed on per side
        self.running = True

    def run(self) -> None:
        while self.running:
            ready, _, _ = select.select(list(self.peer), [], [], 0.05)
            for s in ready:
                while (frame := recv(s)) is not None:
                    self.relay(s, frame)

    def relay(self, s: socket.socket, frame: bytes) -> None:
        """One frame read from `s`: counted, then dropped or sent on. A
        frame too short to be an MRC carrier (the kernel's own IPv6
        neighbour and multicast packets on a veth) is sent on uncounted: a
        relay thread that raised on one stopped forwarding everything."""
        self.read_from[self.side[s]] += 1
        if len(frame) <= _OPCODE:
            self.short += 1
        else:
            ev = (int.from_bytes(frame[94:96], "big") << 16) | int.from_bytes(frame[56:58], "big")
            self.seen[ev] += 1
            if 0xC6 <= frame[_OPCODE] <= 0xCB:  # inner BTH opcode: data
                self.data_from.setdefault(self.side[s], Counter())[ev] += 1
            if ev == self.drop_ev:
                self.dropped += 1
                return
        if self.cut and self.cable[s] in self.cut:
            self.cut_drops += 1
            return
        self.peer[s].send(frame)
        self.forwarded_to[self.side[self.peer[s]]] += 1

    def stop(self) -> None:
        self.running = False
        self.join(2)
