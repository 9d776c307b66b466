"""What each transport kind is, as far as a scenario file's checks need
to know: the facts the format's validators and capacity checks read. The
transports that act on them (fabric_sim.transports.kinds) are built from
the same row, so a new kind is one row here and one class there, and no
check tests a kind by its name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["mrc", "single_path", "roce"]


@dataclass(frozen=True)
class KindFacts:
    sprays: bool  # a QP's packets over many EVs (evs_per_qp, pins, EV state, ablations); else one hashed path
    windowed: bool  # a congestion window (`transports[].cc`: NSCC or AIMD); else DCQCN's rate
    lossless: bool  # PFC on by default (its lossless class); refused on the others
    go_back_n: bool  # RC's go-back-N on verbs' local ACK timer (`transports[].rc`); refused on the others


FACTS: dict[str, KindFacts] = {
    "mrc": KindFacts(sprays=True, windowed=True, lossless=False, go_back_n=False),
    "single_path": KindFacts(sprays=False, windowed=True, lossless=False, go_back_n=False),
    "roce": KindFacts(sprays=False, windowed=False, lossless=True, go_back_n=True),
}
UNKNOWN = KindFacts(sprays=False, windowed=True, lossless=False, go_back_n=False)  # a kind the model refuses on its own


def facts(kind: str | None) -> KindFacts:
    """The facts of `kind` (a validator may see a kind the model refuses)."""
    return FACTS.get(kind or "", UNKNOWN)
