"""PSN arithmetic: the BTH's 24-bit packet sequence number, modulo 2^24
everywhere (DESIGN.md section 7); both transports count with it."""

from __future__ import annotations

from typing import Final

from mrc_wire.constants import PSN_MOD

PSN_MASK: Final = PSN_MOD - 1
HALF: Final = PSN_MOD >> 1


def psn_add(psn: int, n: int) -> int:
    return (psn + n) & PSN_MASK


def psn_diff(a: int, b: int) -> int:
    """a - b as a signed distance on the 24-bit circle."""
    d = (a - b) & PSN_MASK
    return d - PSN_MOD if d >= HALF else d
