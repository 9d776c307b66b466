"""The paper's claims as data: each one a statement of section 5.2 or
the appendix, the quantity the model measures for it, the tolerance it is
held to, and the MRC mechanism it is about, with the ablation that
removes that mechanism (the tests run it and expect the claim to fail) or
why no ablation can tell the mechanism apart. The gallery counts these;
nothing else is counted as a claim. Delivery checks (every message
exactly once, no QP error) are counted apart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# The ablations (transport fields, fabric_sim.scenario): what each removes.
EV_STATE_OFF = {"ev_state": False}  # oblivious spraying: no EV state, no port state, no retirement
SINGLE_PATH = {"kind": "single_path"}  # the MRC endpoint on one ECMP-hashed path per QP
PORT_BITMAP_OFF = {"ablate": ["port_bitmap"]}  # the peer's port-state bitmap in SACKs ignored
ECN_ECHO_OFF = {"ablate": ["ecn_echo"]}  # the receiver never echoes CE
EV_RETIRE_OFF = {"ablate": ["ev_retire"]}  # a lost packet is resent but never retires its EV
# Hash seeds a claim that turns on where ECMP put a flow is held over (the paper's fabric is one draw of the
# hash, the model's another): the switches' hash seeds 0..HASH_SEEDS-1 (scenario `ecmp_seed`).
HASH_SEEDS = 20


@dataclass(frozen=True)
class Claim:
    id: str  # "fig09a.steps"
    experiment: str  # the experiment (registry key) whose runs hold it
    figure: str  # where the paper shows it: "Fig. 9a", "5.2.1"
    statement: str  # the paper's claim, in its words where short enough
    quantity: str  # what the model measures for it
    tolerance: str  # when the measured quantity counts as the claim holding
    mechanism: str  # the MRC mechanism the claim is about
    ablation: dict[str, Any] | None = None  # transport fields that remove the mechanism
    indistinct: str = ""  # no ablation: why none can tell the mechanism apart
    transport: str = "mrc"  # the run the claim is held on
    ablate_on: str = ""  # the transport the ablation test runs on, if not `transport` (where the claim holds)
    # Held over seeds: the experiment's seed and seeded - 1 more (seed + 1, ...). `seed_on`: the sweep (its
    # keys and values as the scenario writes them) whose variants are run again with each seed, of
    # `seed_transports` (empty: every transport); the experiment's other runs are the first seed's. The claim's
    # measure gives a number (Finding.hold's `value`) whose spread the gallery shows; it holds if it holds on
    # every seed. `vary` "ecmp_seed": the switches' ECMP hash seed is varied instead (0, 1, ...: where a hash
    # puts each flow), and the claim holds if the paper's outcome is the majority's (the paper's fabric is one
    # draw of the hash): "holds on k of n".
    seeded: int = 0
    seed_on: dict[str, list[Any]] | None = None
    seed_transports: tuple[str, ...] = ()
    vary: Literal["seed", "ecmp_seed"] = "seed"

    @property
    def by_majority(self) -> bool:
        """Held if it holds on most of its seeds (hash seeds), not on every one."""
        return self.vary == "ecmp_seed"

    def __post_init__(self) -> None:
        if (self.ablation is None) == (not self.indistinct):
            raise ValueError(f"claim {self.id}: give an ablation or say why none tells it apart, not both")
        if self.seeded == 1 or self.seeded < 0 or (self.seeded > 1) != (self.seed_on is not None):
            raise ValueError(f"claim {self.id}: seeded is 0, or 2 or more seeds with the sweep they re-run")


def over_hash_seeds(transports: tuple[str, ...], sweep: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """Claim fields for a claim held over HASH_SEEDS ECMP hash seeds: `transports` (those whose flows ECMP
    places) re-run at each, in every variant of `sweep` (the experiment's, as its file writes it)."""
    return {"seeded": HASH_SEEDS, "vary": "ecmp_seed", "seed_on": sweep or {}, "seed_transports": transports}


def check(claims: list[Claim]) -> dict[str, Claim]:
    """The claims by id; an id used twice is an error."""
    out: dict[str, Claim] = {}
    for c in claims:
        if c.id in out:
            raise ValueError(f"claim {c.id} is defined twice")
        out[c.id] = c
    return out
