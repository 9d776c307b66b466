"""Trimmed data to NACK (receive step 2 of DESIGN.md section 5), stage for
stage as p4src/nic/trim_nack.p4: a data packet that arrives with a
trimmed DSCP on its outer header becomes a NACK back to its sender
(reason TRIMMED, or TRIMMED_LASTHOP for a cut at the last hop; its EV and
PSN echoed) over the reverse of the same path, and a notice to the host:
what arrived, decapsulated, with the trimmed DSCP on its inner header.
A data packet beyond the receiver's window turns round the same way
(PSN_OOR_WINDOW, nic_model/rx_track.py)."""

from __future__ import annotations

from mrc_wire import packet as W
from mrc_wire.constants import NACK_TRIMMED, NACK_TRIMMED_LASTHOP
from nic_model.outputs import Settings


def trimmed(odscp: int, m: W.Mrc, s: Settings) -> bool:
    """Whether `m` is data that a switch trimmed (its outer DSCP says so)."""
    return m.is_data and (odscp == s.dscp_trimmed or odscp == s.dscp_trimmed_lasthop)


def reason(odscp: int, s: Settings) -> int:
    """The NACK's reason for a trim marked `odscp`."""
    return NACK_TRIMMED if odscp == s.dscp_trimmed else NACK_TRIMMED_LASTHOP


def nack(inner: bytes, peer_qpn: int, odscp: int, s: Settings) -> bytes:
    """The NACK for a trimmed data packet `inner`, to its sender's QP `peer_qpn`."""
    return W.nack_for(inner, peer_qpn, reason(odscp, s), s.dscp_control)


def notice(inner: bytes, odscp: int) -> bytes:
    """The host's notice: the packet as it arrived, the trimmed DSCP on its inner header."""
    b = bytearray(inner)
    b[0] = (b[0] & 0xF0) | (odscp >> 2)
    b[1] = ((odscp & 0x3) << 6) | (b[1] & 0x3F)
    return bytes(b)
