"""A packet the NIC makes in answer to one that arrived (a NACK, a SACK,
a probe's answer), stage for stage as p4src/nic/reply.p4: the EV it
travels on, written into its inner headers (the rest of reply.p4's
`to_sender`, addresses, class and lengths, is mrc_wire.packet's build)."""

from __future__ import annotations


def on_ev(inner: bytes, ev: int) -> bytes:
    """A packet the NIC made, on `ev`: its inner UDP source port and flow
    label (the flow label's top bits cleared, as the P4's on_ev). A packet
    already on `ev` (a SACK or probe answer built on it) is returned as
    it is: the writes would change no byte."""
    if (inner[40] << 8 | inner[41]) == ev >> 16 and inner[1] & 0xF == 0 and (inner[2] << 8 | inner[3]) == ev & 0xFFFF:
        return inner
    b = bytearray(inner)
    b[40:42] = (ev >> 16).to_bytes(2, "big")
    b[1] &= 0xF0
    b[2:4] = (ev & 0xFFFF).to_bytes(2, "big")
    return bytes(b)
