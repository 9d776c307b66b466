"""Write frames to a pcap file (Ethernet link type), for captures of what
the models or BMv2 emit; mrc_wire.dissect and Wireshark read them."""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path

_GLOBAL = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)  # LINKTYPE_ETHERNET


def write(path: str | Path, frames: Iterable[tuple[float, bytes]]) -> int:
    """Write (time in µs, Ethernet frame) pairs; the number written."""
    n = 0
    with open(path, "wb") as f:
        f.write(_GLOBAL)
        for t_us, frame in frames:
            us = max(0, int(t_us))
            f.write(struct.pack("<IIII", us // 1_000_000, us % 1_000_000, len(frame), len(frame)))
            f.write(frame)
            n += 1
    return n
