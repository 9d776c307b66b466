"""Figs. 16 to 18 of the MRC paper, and the appendix's Figs. 20 and 21:
MRC against RoCE. Ring all-reduce and all-to-all over 64 NICs at 0, 0.1%
and 1% receive-side loss (Cluster C: MRC on four 100 Gb/s planes, RoCE on
one 400 Gb/s plane), a 7:1 incast beside a victim flow (one 400 Gb/s
plane; RoCE with DCQCN in Fig. 18, with PFC alone in Fig. 21b-c), and a
permutation across the spines (Fig. 20: RoCE with PFC alone and with
DCQCN, 1 and 8 QPs)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fabric_sim.runner.run import RunResult
from fabric_sim.scenario import collectives
from fabric_sim.transports import kinds, qps
from mrc_paper import metrics as M
from mrc_paper.claims import HASH_SEEDS, SINGLE_PATH, Claim, over_hash_seeds
from mrc_paper.experiments import Experiment, Finding, Runs, Scale
from mrc_wire.constants import ev_spine

LOSSES = (0, 0.001, 0.01)
MRC, ROCE = "mrc-1qp", ("roce-1qp", "roce-16qp")
LARGE = 1 << 30  # "large message sizes" (the paper's axis: 4 MiB to 16 GiB): from 1 GiB
SMALL = 64 << 20  # "small message sizes", latency-bound: up to 64 MiB
EVEN = 1.15  # Fig. 16 "little difference" at small sizes: the best at most this many times the worst
HALF = (0.35, 0.65)  # Fig. 16 "about half": RoCE 1 QP / MRC
LITTLE = 0.9  # "little impact", "barely sees any degradation": at least this share kept
THIRD = (0.2, 0.5)  # Fig. 16 "around a third" kept by MRC at 1% loss
UNUSABLE = 0.2  # Fig. 16 "pretty much unusable": RoCE keeps at most this share at 1% loss
SLIGHTLY = (0.85, 1.0)  # Fig. 17 "16 QPs slightly worse than one": RoCE 16 / RoCE 1
VICTIM_SHARE = 0.9  # Fig. 18: the victim's goodput under MRC, of line rate
FAIRNESS = 0.95  # Fig. 18: Jain's index of the incast flows under MRC
VICTIM_25 = (0.6, 0.9)  # Fig. 18a "degrades by about 25%": RoCE 1 QP's victim, of line rate
DIP_10QP = 0.35  # Fig. 18b "intervals where the victim's throughput is 100 Gb/s" (of 400): its lowest bin
DIRE = 0.3  # Fig. 21b-c "the victim flow only achieving 30 to 100 Gbps" (of 400): its mean at most this share
LINE = 0.9  # Fig. 20a "some flows get line rate": the fastest flow at least this share of line rate
COLLIDED = 0.6  # Fig. 20a "some ... achieve only a half or a third of line rate": the slowest at most this share
SAME = 0.15  # Fig. 20 "the outcome is the same when using DCQCN or PFC alone": each flow within this of line rate
MARGINAL = (0.95, 1.2)  # Fig. 20b "having multiple QPs only marginally helps" (PFC alone): 8 QPs' total / 1 QP's
AVOIDS = 1.1  # Fig. 20c "DCQCN avoids this phenomenon": DCQCN 8 QPs' total at least this times PFC alone 8 QPs'
MRC_ALL = 0.95  # Fig. 20 text: MRC with one QP "390 Gbps for all flows": the slowest at least this of line rate
WINDOW_CAUSE = ("an all-to-all's load is even, so RoCE 1 QP runs unpaused at line rate from its first packet, "
                "while MRC sends an ACK per data packet on the data's links (RoCE one per 8 packets: about 3% of "
                "the links) and its windows start at a share of the NIC's bandwidth-delay product")
SPRAY = "spraying each QP over many paths"
SACK = ("no listed ablation removes selective retransmission (SACK, NACK on trim): EV state, ECN echo and "
        "retirement leave it, and the claim compares MRC with RoCE's go-back-N")
NOT_MRC = "a claim about RoCE (DCQCN, PFC), the baseline: no MRC mechanism to remove"
# The claims that turn on where ECMP's hash puts a few RoCE flows across the spines, held over HASH_SEEDS hash
# seeds: each experiment's RoCE runs, repeated at each (its MRC runs do not hash).
FIG16BW_HASHED = over_hash_seeds(("roce-1qp", "roce-16qp"),
                                 {"workload.message_bytes": [1048576, 4194304, 16777216]})
FIG18_HASHED = over_hash_seeds(("roce-1qp", "roce-10qp", "roce-pfc-1qp", "roce-pfc-8qp"))
FIG20_HASHED = over_hash_seeds(("roce-pfc-1qp", "roce-pfc-8qp", "roce-dcqcn-1qp", "roce-dcqcn-8qp"))

CLAIMS = [
    Claim("fig16.small_even", "fig16", "Fig. 16", "for small message sizes the collective is latency-bound, and "
          "there is little difference between RoCE and MRC", "bus bandwidth at each size up to 64 MiB, best / worst "
          "of MRC 1 QP, RoCE 1 QP, RoCE 16 QPs", f"at most {EVEN}", "none (latency-bound)",
          indistinct="no MRC mechanism is expected to matter where each step waits on latency", transport=MRC),
    Claim("fig16.order", "fig16bw", "Fig. 16", "one MRC QP spraying across 256 paths achieves better performance "
          "than 16 QPs; QP scaling helps RoCE", "bus bandwidth where bandwidth-bound (an 8-rank stand-in), no loss",
          "MRC 1 QP > RoCE 16 QPs > RoCE 1 QP", SPRAY, SINGLE_PATH, transport=MRC, **FIG16BW_HASHED),
    Claim("fig16.roce_half", "fig16bw", "Fig. 16", "RoCE with one QP suffers from ECMP hash collisions and "
          "generally achieves only half the possible throughput", "RoCE 1 QP / MRC 1 QP where bandwidth-bound",
          f"{HALF[0]}..{HALF[1]}", SPRAY, SINGLE_PATH, transport=MRC, **FIG16BW_HASHED),
    Claim("fig16.loss_worse", "fig16", "Fig. 16", "RoCE was not designed to be resilient to packet loss and, as "
          "expected, it suffers poor performance; MRC is more resilient", "share of the no-loss bandwidth kept at "
          "0.1% and 1% loss, every size", "RoCE (1 and 16 QPs) keeps less than MRC everywhere",
          "selective retransmission", indistinct=SACK, transport=MRC),
    Claim("fig16.mrc_01", "fig16", "Fig. 16", "with large message sizes MRC can retransmit fast enough that 0.1% "
          "loss has little impact", "MRC's share kept at 0.1% loss, sizes from 1 GiB", f"at least {LITTLE}",
          "selective retransmission", indistinct=SACK, transport=MRC),
    Claim("fig16.mrc_1", "fig16", "Fig. 16", "at 1% loss even MRC only gets around a third of the intended "
          "throughput", "MRC's share kept at 1% loss, the largest size run", f"{THIRD[0]}..{THIRD[1]}",
          "selective retransmission", indistinct=SACK, transport=MRC),
    Claim("fig16.roce_1", "fig16", "Fig. 16", "at 1% loss RoCE is pretty much unusable",
          "RoCE's share kept at 1% loss, every size, 1 and 16 QPs", f"at most {UNUSABLE}", "none (RoCE)",
          indistinct=NOT_MRC, transport="roce-1qp"),
    Claim("fig17.mrc_best", "fig17", "Fig. 17", "for all message sizes MRC outperforms RoCE", "bus bandwidth, no "
          "loss, every size", "MRC 1 QP above RoCE 1 and 16 QPs at every size", SPRAY, SINGLE_PATH, transport=MRC),
    Claim("fig17.roce16", "fig17", "Fig. 17", "QP scaling is not helping RoCE: 16 RoCE QPs per destination "
          "perform slightly worse than one QP", "RoCE 16 QPs / RoCE 1 QP, no loss, every size",
          f"{SLIGHTLY[0]}..{SLIGHTLY[1]} (below 1)", "none (RoCE)", indistinct=NOT_MRC, transport="roce-16qp"),
    Claim("fig17.loss_worse", "fig17", "Fig. 17", "with loss, RoCE suffers worse than MRC", "share of the no-loss "
          "bandwidth kept at 0.1% and 1% loss, every size", "RoCE (1 and 16 QPs) keeps less than MRC everywhere",
          "selective retransmission", indistinct=SACK, transport=MRC),
    Claim("fig17.small_gap", "fig17", "Fig. 17", "the difference (with loss) is much greater at smaller message "
          "sizes", "MRC's share kept minus RoCE's best at 1% loss, smallest against largest size",
          "larger at the smallest size", "selective retransmission", indistinct=SACK, transport=MRC),
    Claim("fig17.roce_01", "fig17", "Fig. 17", "at large message sizes and 0.1% loss, RoCE barely sees any "
          "degradation", "RoCE's share kept at 0.1% loss, sizes from 1 GiB", f"at least {LITTLE}", "none (RoCE)",
          indistinct=NOT_MRC, transport="roce-1qp", seeded=5,
          seed_on={"workload.message_bytes": [268435456], "events[0].nic_rx_loss.rate": [0.001]},
          seed_transports=("roce-1qp",)),  # the edge: RoCE 16 QPs kept 0.99-1.01 over the same 5 seeds
    Claim("fig18.mrc_victim", "fig18", "Fig. 18c", "MRC has no impact on the victim flow", "the victim's mean "
          "goodput, of line rate", f"at least {VICTIM_SHARE}", "no PFC (lossy fabric, trimming, MRC's window)",
          indistinct="the claim is about PFC's absence: the congestion is at the last hop, which marks no ECN and "
                     "whose trims change no EV state, so EV state, single path, ECN echo and retirement off all "
                     "leave it (EV state off: the `oblivious` run beside it; a single path: the single-path run)"),
    Claim("fig18.mrc_fair", "fig18", "Fig. 18c", "MRC almost perfectly shares the bottleneck link among the incast "
          "flows", "Jain's index of the 7 incast flows' mean goodputs", f"at least {FAIRNESS}",
          "MRC's window reacting to trims", indistinct="the shared bottleneck is the last hop: trims (NACKs) drive "
          "the window there, and no listed ablation removes them"),
    Claim("fig21.mrc8", "fig18", "Fig. 21a", "MRC with 8 QPs behaves exactly the same as with 1 QP, perfectly "
          "sharing the bottleneck link among the incast flows, with no impact on the victim flow", "with 8 QPs per "
          "pair: the victim's mean goodput and Jain's index of the incast flows", f"victim at least {VICTIM_SHARE}, "
          f"Jain at least {FAIRNESS}", "no PFC (lossy fabric, trimming, MRC's window)",
          indistinct="as fig18.mrc_victim: the claim is about PFC's absence", transport="mrc-8qp"),
    Claim("fig18.roce1_victim", "fig18", "Fig. 18a", "RoCE with DCQCN, 1 QP: victim-flow performance still "
          "degrades by about 25%", "the victim's mean goodput, of line rate", f"{VICTIM_25[0]}..{VICTIM_25[1]}",
          "none (RoCE, PFC)", indistinct=NOT_MRC, transport="roce-1qp", **FIG18_HASHED),
    Claim("fig21.pfc1", "fig18", "Fig. 21b", "with PFC alone the effect on the victim flow is dire, with the victim "
          "flow only achieving 30 to 100Gbps depending on ECMP path choice and fairness", "RoCE with PFC alone, 1 QP: "
          "the victim's mean goodput, of line rate", f"at most {DIRE} (100 Gb/s of 400, with a margin)",
          "none (RoCE, PFC)", indistinct=NOT_MRC, transport="roce-pfc-1qp", **FIG18_HASHED),
    Claim("fig21.pfc8", "fig18", "Fig. 21c", "with PFC alone the effect on the victim flow is dire (8 QPs)",
          "RoCE with PFC alone, 8 QPs: the victim's mean goodput, of line rate", f"at most {DIRE}",
          "none (RoCE, PFC)", indistinct=NOT_MRC, transport="roce-pfc-8qp", **FIG18_HASHED),
    Claim("fig20.collide", "fig20", "Fig. 20a", "using a single QP per transfer with RoCEv2, some flows get line "
          "rate, but some suffer from flow collisions and achieve only a half or a third of line rate",
          "RoCE with PFC alone, 1 QP: each flow's mean goodput, of line rate", f"fastest at least {LINE}, slowest "
          f"at most {COLLIDED}", "none (RoCE, ECMP)", indistinct=NOT_MRC, transport="roce-pfc-1qp", **FIG20_HASHED),
    Claim("fig20.same", "fig20", "Fig. 20a", "the outcome is the same when using DCQCN or PFC alone",
          "RoCE 1 QP: each flow's mean goodput with DCQCN against PFC alone, of line rate",
          f"every flow within {SAME}", "none (RoCE, DCQCN)", indistinct=NOT_MRC, transport="roce-dcqcn-1qp",
          **FIG20_HASHED),
    Claim("fig20.pfc8", "fig20", "Fig. 20b", "when only PFC is used, having multiple QPs only marginally helps: the "
          "QPs experiencing most congestion cause the sending NIC to be throttled by PFC, which slows down all other "
          "QPs from the same host", "RoCE with PFC alone: the 8 flows' total goodput with 8 QPs per pair / with 1",
          f"{MARGINAL[0]}..{MARGINAL[1]}", "none (RoCE, PFC)", indistinct=NOT_MRC, transport="roce-pfc-8qp",
          **FIG20_HASHED),
    Claim("fig20.dcqcn8", "fig20", "Fig. 20c", "DCQCN avoids this phenomenon by reducing the sending rate based on "
          "ECN signals", "RoCE 8 QPs: the total goodput with DCQCN / with PFC alone, and the slowest flows",
          f"at least {AVOIDS}, the slowest flow faster with DCQCN", "none (RoCE, DCQCN)", indistinct=NOT_MRC,
          transport="roce-dcqcn-8qp", **FIG20_HASHED),
    Claim("fig20.mrc", "fig20", "Fig. 20 (text)", "in this same scenario, MRC using a single QP is able to achieve "
          "390 Gbps for all flows", "MRC 1 QP: the slowest flow's mean goodput, of line rate", f"at least {MRC_ALL}",
          SPRAY, SINGLE_PATH, transport="mrc"),
    Claim("fig18.roce10", "fig18", "Fig. 18b", "with more QPs sharing is worse but the average impact on the victim "
          "is smaller; there are intervals where the victim's throughput is 100 Gb/s",
          "Jain's index and the victim's mean, 10 QPs against 1, and the victim's lowest bin with 10 QPs",
          f"Jain lower, victim mean higher, lowest bin at most {DIP_10QP} of line rate", "none (RoCE, PFC)",
          indistinct=NOT_MRC, transport="roce-10qp", **FIG18_HASHED),
]


def _sizes(runs: Runs) -> list[int]:
    return sorted({nccl_size(r) for r in runs.results.values()})


def nccl_size(r: RunResult) -> int:
    """The collective's size as nccl-tests names it: an all-to-all's is each
    rank's whole buffer (its per-pair message times the ranks)."""
    w = r.scenario.workload
    return collectives.nccl_size(w.pattern, w.size, len({m.src for m in r.messages}))


Table = dict[str, dict[float, dict[int, float]]]  # transport -> loss -> NCCL size -> bus bandwidth (Gb/s)


def _table(runs: Runs, f: Finding) -> Table:
    """transport -> loss -> NCCL size -> bus bandwidth (Gb/s); every run's
    delivery counted apart."""
    out: Table = {}
    for (vals, name), r in runs.results.items():
        v = dict(vals)
        size = nccl_size(r)
        loss = v.get("events[0].nic_rx_loss.rate", 0)
        out.setdefault(name, {}).setdefault(loss, {})[size] = M.collective_gbps(r)
        f.delivered(f"{name} {_mib(size)} loss {loss:g}", M.delivered_once(r))
    f.numbers["gbps"] = {n: {str(rate): {str(s): g for s, g in d.items()} for rate, d in by.items()}
                         for n, by in out.items()}
    return out


def _mib(size: int) -> str:
    return f"{size / 2**20:g} MiB"


def _kept(t: Table, name: str, loss: float, size: int) -> float:
    return t[name][loss][size] / t[name][0][size]


def _have(t: Table, names: tuple[str, ...], loss: float) -> list[int]:
    """Sizes run at `loss` (and without loss) by every one of `names`."""
    sets = [set(t[n].get(loss, {})) & set(t[n].get(0, {})) for n in names if n in t]
    return sorted(set.intersection(*sets)) if len(sets) == len(names) else []


def _regime(f: Finding, claim: str, sizes: list[int], large: bool) -> list[int]:
    """The sizes in the claim's regime (from LARGE, or up to SMALL); none:
    the claim is counted as not tested, saying what was run."""
    inside = [s for s in sizes if (s >= LARGE if large else s <= SMALL)]
    if not inside:
        f.untested(claim, f"sizes run: {', '.join(map(_mib, sizes)) or 'none'}; the claim is about sizes "
                   f"{'from ' + _mib(LARGE) if large else 'up to ' + _mib(SMALL)} (beyond the time budget until "
                   "the collectives run faster)")
    return inside


def _loss_claims(f: Finding, t: Table, fig: str) -> None:
    """With loss, RoCE hurt more than MRC at every size and loss rate run."""
    lines, kept_up = [], []
    for loss in LOSSES[1:]:
        for size in _have(t, ROCE + (MRC,), loss):
            k = {n: _kept(t, n, loss, size) for n in ROCE + (MRC,)}
            if max(k[n] for n in ROCE) >= k[MRC]:
                kept_up.append(f"{_mib(size)} at {loss:.1%}")
            lines.append(f"{_mib(size)} {loss:.1%}: MRC {k[MRC]:.2f}, RoCE " + "/".join(f"{k[n]:.2f}" for n in ROCE))
    if not lines:
        f.untested(f"{fig}.loss_worse", "no run with loss")
        return
    f.hold(f"{fig}.loss_worse", "; ".join(lines), not kept_up,
           "RoCE keeps as much as MRC or more at " + ", ".join(kept_up) + ": a few losses there, each recovered by "
           "a NAK's go-back-N within the round trip, none by RoCE's timeout")


def fig16(runs: Runs) -> Finding:
    f = Finding("fig16")
    t = _table(runs, f)
    sizes = _have(t, ROCE + (MRC,), 0)
    for size in sizes:
        f.row(f"{_mib(size)}, no loss: MRC 1 QP / RoCE 16 QPs / RoCE 1 QP (Gb/s)", "-",
              " / ".join(f"{t[n][0][size]:.0f}" for n in (MRC, "roce-16qp", "roce-1qp")))
    small = _regime(f, "fig16.small_even", sizes, large=False)
    if small:
        spread = {s: max(t[n][0][s] for n in ROCE + (MRC,)) / min(t[n][0][s] for n in ROCE + (MRC,)) for s in small}
        worst = max(spread, key=lambda s: spread[s])
        peak = max(t[MRC][0])
        f.hold("fig16.small_even", ", ".join(f"{_mib(s)}: {x:.2f}" for s, x in spread.items()),
               max(spread.values()) <= EVEN,
               f"at {_mib(worst)} " + ", ".join(f"{n} {t[n][0][worst]:.0f}" for n in (MRC, *ROCE))
               + f" Gb/s: MRC is at {t[MRC][0][worst] / t[MRC][0][peak]:.0%} of its bandwidth at {_mib(peak)}, "
               "so the ring is bandwidth-bound there, not latency-bound, and the transports differ by bandwidth")
    _loss_claims(f, t, "fig16")
    big = _regime(f, "fig16.mrc_01", _have(t, (MRC,), 0.001), large=True)
    if big:
        k = [_kept(t, MRC, 0.001, s) for s in big]
        f.hold("fig16.mrc_01", ", ".join(f"{x:.2f}" for x in k), min(k) >= LITTLE, "0.1% loss costs MRC more")
    top = _have(t, (MRC,), 0.01)
    if top:
        kept = _kept(t, MRC, 0.01, max(top))
        f.hold("fig16.mrc_1", f"{kept:.2f} at {_mib(max(top))}", THIRD[0] <= kept <= THIRD[1],
               "1% loss costs MRC less than the paper saw" if kept > THIRD[1] else "1% loss costs MRC more")
    else:
        f.untested("fig16.mrc_1", "no run at 1% loss")
    sizes1 = _have(t, ROCE, 0.01)
    if sizes1:
        shares = {(n, s): _kept(t, n, 0.01, s) for n in ROCE for s in sizes1}
        most = max(shares.values())
        over = [f"{n} {x:.2f} at {_mib(s)}" for (n, s), x in shares.items() if x > UNUSABLE]
        bad = [s for s in sizes1 if any(shares[n, s] > UNUSABLE for n in ROCE)]
        rest = [x for (_, s), x in shares.items() if s > max(bad, default=-1)]
        f.hold("fig16.roce_1", f"at most {most:.2f}", most <= UNUSABLE,
               "RoCE keeps more at 1% loss than 'unusable' at " + ", ".join(over)
               + (f"; above {_mib(max(bad))} at most {max(rest):.2f}" if bad and rest else ""))
    else:
        f.untested("fig16.roce_1", "no RoCE run at 1% loss")
    ranks = _ranks(runs)
    if ranks < 64:
        f.notes.append(f"Scaled to {ranks} ranks (two racks of two, every ring hop across the spines) so the "
                       f"paper's bandwidth-bound sizes run in the time budget: a {ranks}-rank ring has "
                       f"{2 * ranks - 2} steps where the paper's has 126, so it leaves the latency-bound regime at "
                       "smaller sizes than the paper's. With one rank pair per rack direction sharing two uplinks, "
                       "RoCE 1 QP's collisions depend on the hash (seed).")
    return f


def fig16_at_scale(runs: Runs) -> Finding:
    """Fig. 16 on the paper's 64-way ring: its claims, and the bandwidth
    ordering (held on the 8-rank stand-in in the quick gallery) at the
    largest size run without loss."""
    f = fig16(runs)
    t = _table(runs, Finding("scratch"))
    size = max(_have(t, ROCE + (MRC,), 0))
    _order(f, runs, t, size, f"{_ranks(runs)} ranks")
    return f


def fig16bw(runs: Runs) -> Finding:
    f = Finding("fig16bw")
    t = _table(runs, f)
    for size in _sizes(runs):
        m, r16, r1 = (t[n][0][size] for n in (MRC, "roce-16qp", "roce-1qp"))
        f.row(f"8-rank ring, {_mib(size)}: MRC 1 QP / RoCE 16 QPs / RoCE 1 QP (Gb/s)", "-",
              f"{m:.0f} / {r16:.0f} / {r1:.0f}")
    size = max(_sizes(runs))  # the most bandwidth-bound size run
    _order(f, runs, t, size, "8 ranks")
    f.numbers.update(line=M.line_goodput(runs.get(MRC), bidirectional=False))
    return f


def _order(f: Finding, runs: Runs, t: Table, size: int, where: str) -> None:
    """Fig. 16's bandwidth claims at `size` without loss: MRC 1 QP above
    RoCE 16 QPs above RoCE 1 QP, and RoCE 1 QP at about half of MRC."""
    m, r16, r1 = (t[n][0][size] for n in (MRC, "roce-16qp", "roce-1qp"))
    seen = {n: M.congestion(_run(runs, n, size, 0)) for n in ROCE}
    f.row(f"{where} ring, {_mib(size)}: RoCE 1 QP / 16 QPs, ECN marks and PFC pauses", "-",
          f"{seen['roce-1qp']} / {seen['roce-16qp']}")
    f.hold("fig16.order", f"{m:.0f} > {r16:.0f} > {r1:.0f} Gb/s ({where}, {_mib(size)})", m > r16 > r1,
           "one QP on one path loses to RoCE's 16 QPs" if r16 >= m else
           f"16 QPs do not help RoCE: DCQCN cuts them ({seen['roce-16qp']}; 1 QP: {seen['roce-1qp']})",
           value=min(m / r16, r16 / r1))  # above 1 where the order holds
    k = _hash_load(_run(runs, "roce-1qp", size, 0))
    line = M.line_goodput(_run(runs, "roce-1qp", size, 0), bidirectional=False)
    f.hold("fig16.roce_half", f"{r1 / m:.2f} ({where}, {_mib(size)})", HALF[0] <= r1 / m <= HALF[1],
           "RoCE 1 QP's ECMP collisions cost it less than half" if r1 / m > HALF[1] else
           f"RoCE 1 QP loses more than half: ECMP hashes up to {k} of the ring's flows onto one spine link, so "
           f"its slowest hop gets at most {line / k:.0f} Gb/s and every step of the ring waits on it; DCQCN and "
           f"PFC take it lower ({seen['roce-1qp']})", value=r1 / m)
    f.numbers.update(mrc=m, roce16=r16, roce1=r1)


def _hash_load(r: RunResult) -> int:
    """The most of a 1-QP run's flows ECMP's hash puts on one link across
    the spines (a rack's uplink to a spine, or a spine's downlink into a rack)."""
    topo = r.transport.topology or r.scenario.topology
    links: Counter[tuple[str, int, int]] = Counter()
    for src, dst in {(m.src, m.dst) for m in r.messages}:
        spine = ev_spine(qps.hashed(topo, src, dst, 0, r.scenario.ecmp_seed).home[0])
        links["up", src // topo.hosts_per_t0, spine] += 1
        links["down", spine, dst // topo.hosts_per_t0] += 1
    return max(links.values(), default=0)


def _run(runs: Runs, name: str, size: int, loss: float) -> RunResult:
    """The run of `name` at nccl-tests' `size` and the loss rate `loss`."""
    return next(r for (vals, n), r in runs.results.items() if n == name and nccl_size(r) == size
                and dict(vals).get("events[0].nic_rx_loss.rate", 0) == loss)


def _ranks(runs: Runs) -> int:
    return len({m.src for r in runs.results.values() for m in r.messages})


def fig17(runs: Runs) -> Finding:
    f = Finding("fig17")
    t = _table(runs, f)
    sizes = _have(t, ROCE + (MRC,), 0)
    best = {s: t[MRC][0][s] > max(t[n][0][s] for n in ROCE) for s in sizes}
    f.numbers["mrc_best"] = {str(s): ok for s, ok in best.items()}
    f.hold("fig17.mrc_best", "; ".join(f"{_mib(s)}: " + " / ".join(f"{t[n][0][s]:.0f}" for n in (MRC,) + ROCE)
                                       for s in sizes) + " Gb/s (MRC / RoCE 1 / RoCE 16)",
           bool(sizes) and all(best.values()), WINDOW_CAUSE)
    ratio = {s: t["roce-16qp"][0][s] / t["roce-1qp"][0][s] for s in sizes}
    top = max(sizes, default=0)
    seen = {n: M.congestion(r) for (vals, n), r in runs.results.items() if n in ROCE and dict(vals).get(
        "events[0].nic_rx_loss.rate", 0) == 0 and top and nccl_size(r) == top}
    f.hold("fig17.roce16", ", ".join(f"{_mib(s)}: {x:.2f}" for s, x in ratio.items()),
           bool(sizes) and all(SLIGHTLY[0] <= x < SLIGHTLY[1] for x in ratio.values()),
           "RoCE 16 QPs is not slightly below RoCE 1 QP" + (
               f" (at {_mib(top)}: 1 QP {seen.get('roce-1qp')}, 16 QPs {seen.get('roce-16qp')}; a pair's 16 QPs "
               "leave the NIC's round-robin back to back, a burst of 16 packets at one receiver)" if seen else ""))
    _loss_claims(f, t, "fig17")
    s1 = _have(t, ROCE + (MRC,), 0.01)
    if len(s1) >= 2:
        gap = {s: _kept(t, MRC, 0.01, s) - max(_kept(t, n, 0.01, s) for n in ROCE) for s in s1}
        f.hold("fig17.small_gap", ", ".join(f"{_mib(s)}: {g:+.2f}" for s, g in gap.items()),
               gap[min(s1)] > gap[max(s1)], "the gap is no larger at the smaller size")
    else:
        f.untested("fig17.small_gap", "fewer than two sizes run at 1% loss")
    big = _regime(f, "fig17.roce_01", _have(t, ROCE, 0.001), large=True)
    if big:
        k, name, size = min((_kept(t, n, 0.001, s), n, s) for n in ROCE for s in big)
        f.hold("fig17.roce_01", f"at least {k:.2f}", k >= LITTLE, f"0.1% loss costs RoCE more at large sizes: "
               f"{name} at {_mib(size)} {_resent(runs, name, size)}", k)
    return f


def _resent(runs: Runs, name: str, size: int) -> str:
    """What go-back-N cost a run at 0.1% loss: its losses and what it sent again."""
    r = _run(runs, name, size, 0.001)
    lost = sum(v for k, v in r.drops.items() if "loss" in k)
    again = r.retx["nack"] + r.retx["timeout"]
    rto = kinds.of(r.transport).rto(r.scenario.endpoint, r.base_rtt) / 1e6
    stalled = f"{r.retx['timeout']} timeouts of {rto:.2f} s each: a NAK or a first resend lost, which the " \
        "responder, NAKing a gap once, leaves to the timer" if r.retx["timeout"] else "no timeout"
    return (f"lost {lost} packets and, going back N, sent {again} again ({again / max(lost, 1):.0f} per loss; "
            f"{stalled}); {M.congestion(r)}")


def _pfc_numbers(r: RunResult) -> dict[str, Any]:
    """Fig. 18 under PFC: pauses in all, and the spines whose downlink
    into the incast target's rack was never paused."""
    pfc = r.pfc
    if pfc is None:  # asked only of the runs under PFC
        raise ValueError(f"{r.transport.name}: Fig. 18 under PFC, run without it")
    topo = r.transport.topology or r.scenario.topology
    target = f"t0-p0-r{r.scenario.workload.flows[0].dst // topo.hosts_per_t0}"
    spines = [f"t1-p0-s{j}" for j in range(topo.t1_per_plane)]
    return {"pause_frames": pfc["pause_frames"], "paused_us": pfc["paused_us"],
            "unpaused_into_target": [s for s in spines if f"{s}->{target}" not in pfc["links"]]}


def _roce1_cause(one: dict[str, Any]) -> str:
    """Why RoCE 1 QP's victim kept more than the paper's three quarters."""
    spared = one.get("unpaused_into_target")
    if spared:
        return (f"ECMP hashed the victim's one QP onto a spine whose downlink into the target's rack carries no "
                f"incast QP and was never paused ({', '.join(spared)}); the paper's victim shared one")
    return "the victim's path shared no paused link with the incast"


def _roce10_cause(one: dict[str, Any], ten: dict[str, Any]) -> str:
    """What of Fig. 18b's claim failed, from the numbers."""
    why = []
    if ten["victim"] <= one["victim"]:
        why.append(f"the victim keeps less with 10 QPs ({ten['victim']:.2f}) than with 1 ({one['victim']:.2f}): some "
                   "of its 10 QPs hash onto the spine downlinks the incast uses, collect its ECN marks and are slowed "
                   "by DCQCN, while 1 QP's path escapes them")
    if ten["jain"] >= one["jain"]:
        why.append(f"10 QPs share the incast no worse (Jain {ten['jain']:.3f} against {one['jain']:.3f})")
    if ten["victim_low"] > DIP_10QP:
        why.append(f"the victim's lowest bin is {ten['victim_low']:.2f} of line rate")
    return "; ".join(why)


def _pfc_alone(f: Finding, n: dict[str, dict[str, Any]]) -> None:
    """Fig. 21b-c: RoCE with PFC alone, 1 and 8 QPs: the victim's share."""
    for claim, name in (("fig21.pfc1", "roce-pfc-1qp"), ("fig21.pfc8", "roce-pfc-8qp")):
        if name in n:
            v = n[name]
            f.hold(claim, f"{v['victim']:.2f}", v["victim"] <= DIRE, _pfc_victim_cause(v), value=v["victim"])


def _pfc_victim_cause(v: dict[str, Any]) -> str:
    """Why the victim kept more than the paper's 100 Gb/s under PFC alone."""
    spared = v.get("unpaused_into_target")
    why = f"the victim keeps {v['victim']:.2f} of line rate"
    if spared:
        why += (f"; spine downlinks into the target's rack never paused: {', '.join(spared)} (ECMP put some of the "
                "victim's traffic where no incast QP goes)")
    return why


def _flow_means(r: RunResult) -> list[float]:
    """Each flow's mean goodput over the steady window, of line rate, in flow order."""
    end, line = M.steady_end(r), M.line_goodput(r, bidirectional=False)
    return [M.window_mean(r, g, M.settle_us(r), end) / line for g in r.timeline.flows.values()]


def _spines(r: RunResult) -> list[int]:
    """The spine ECMP's hash (the run's hash seed) gives each flow's first QP (a 1-QP run's one path)."""
    topo = r.transport.topology or r.scenario.topology
    return [ev_spine(qps.hashed(topo, fl.src, fl.dst, 0, r.scenario.ecmp_seed).home[0])
            for fl in r.scenario.workload.flows]


def _all_shared(spines: list[int], per_rack: int = 4) -> bool:
    """Every flow shares its rack's uplink to its spine with another flow."""
    racks = [spines[i:i + per_rack] for i in range(0, len(spines), per_rack)]
    return all(rack.count(s) > 1 for rack in racks for s in rack)


def fig20(runs: Runs) -> Finding:
    f = Finding("fig20")
    n = f.numbers
    for name in runs.transports:
        r = runs.get(name)
        flows = _flow_means(r)
        n[name] = {"flows": flows, "total": sum(flows), "slowest": min(flows), "fastest": max(flows),
                   "seen": M.congestion(r)}
        f.row(f"{name}: each flow's goodput, of line rate (their total)", "-",
              " ".join(f"{x:.2f}" for x in flows) + f" ({sum(flows):.2f})")
        if r.pfc is not None:
            n[name].update(pause_frames=r.pfc["pause_frames"], paused_us=r.pfc["paused_us"],
                           nic_paused_us=sum(v["paused_us"] for k, v in r.pfc["links"].items()
                                             if k.startswith("nic-")))
            f.row(f"{name}: PFC pause frames (paused time, all links; the senders' NIC links)", "-",
                  f"{r.pfc['pause_frames']} ({r.pfc['paused_us']:.0f} µs; {n[name]['nic_paused_us']:.0f} µs)")
        f.delivered(name, M.delivered_once(r))
    p1, p8, d1, d8 = (n.get(k) for k in ("roce-pfc-1qp", "roce-pfc-8qp", "roce-dcqcn-1qp", "roce-dcqcn-8qp"))
    spines = _spines(runs.get("roce-pfc-1qp" if p1 else next(iter(runs.transports))))
    n["spines_1qp"] = spines
    if p1:
        f.hold("fig20.collide", f"fastest {p1['fastest']:.2f}, slowest {p1['slowest']:.2f}",
               p1["fastest"] >= LINE and p1["slowest"] <= COLLIDED,
               "no two flows' QPs share a spine: every flow runs at line rate" if p1["slowest"] > COLLIDED
               else f"ECMP's hash puts the 1-QP flows on spines {spines}: every uplink and spine downlink carries "
                    "two flows, so none keeps line rate" if _all_shared(spines)
               else "no flow keeps line rate: PFC's pauses slow the flows that do not collide too",
               value=p1["slowest"])
    if p1 and d1:
        diff = max(abs(a - b) for a, b in zip(d1["flows"], p1["flows"], strict=True))
        f.hold("fig20.same", f"largest difference {diff:.2f}", diff <= SAME,
               f"DCQCN changes some flow by {diff:.2f} of line rate (its total {d1['total']:.2f} against PFC alone's "
               f"{p1['total']:.2f})", value=diff)
    if p1 and p8:
        ratio = p8["total"] / p1["total"]
        f.hold("fig20.pfc8", f"{ratio:.2f} (slowest flow {p8['slowest']:.2f} against {p1['slowest']:.2f})",
               MARGINAL[0] <= ratio <= MARGINAL[1],
               (f"8 QPs per pair spread each flow over the spines and help RoCE under PFC alone more than "
                f"marginally: its senders' NIC links are paused {p8.get('nic_paused_us', 0):.0f} µs in all against "
                f"{p1.get('nic_paused_us', 0):.0f} with 1 QP, so PFC throttles the NICs less, not more"
                if ratio > MARGINAL[1] else "8 QPs under PFC alone do worse than 1"), value=ratio)
    if p8 and d8:
        ratio = d8["total"] / p8["total"]
        f.hold("fig20.dcqcn8", f"{ratio:.2f}; slowest {d8['slowest']:.2f} against {p8['slowest']:.2f}",
               ratio >= AVOIDS and d8["slowest"] > p8["slowest"],
               f"DCQCN's 8 QPs carry {ratio:.2f} of PFC alone's (slowest flow {d8['slowest']:.2f} against "
               f"{p8['slowest']:.2f}): {d8.get('seen', '')} against PFC alone's {p8.get('seen', '')}",
               value=ratio)
    f.notes.append(f"ECMP's hash (fabric_sim/transports/qps.py) depends on the source, the destination, the "
                   f"QP's index and the switches' hash seed (`ecmp_seed`), not on the run's seed: the paper's "
                   f"\"number of collisions varies between runs\" is a draw per hash seed, and the claims that "
                   f"turn on it are held over {HASH_SEEDS} of them (the gallery's \"Hash seeds\"). The 1-QP flows' "
                   f"spines at hash seed {runs.get(next(iter(runs.transports))).scenario.ecmp_seed}: {spines}.")
    if "mrc" in n:
        m = n["mrc"]
        f.hold("fig20.mrc", f"slowest {m['slowest']:.2f}", m["slowest"] >= MRC_ALL,
               "a flow of MRC's falls short of line rate")
    return f


def fig18(runs: Runs) -> Finding:
    f = Finding("fig18")
    for name in runs.transports:
        r = runs.get(name)
        end, line = M.steady_end(r), M.line_goodput(r, bidirectional=False)
        victim = next(n for n in r.timeline.flows if not n.endswith(f"->{r.scenario.workload.flows[0].dst}"))
        means = {n: M.window_mean(r, g, M.settle_us(r), end) for n, g in r.timeline.flows.items()}
        incast = [v for n, v in means.items() if n != victim]
        width = r.timeline.t[0]
        low = min((g for t, g in zip(r.timeline.t, r.timeline.flows[victim], strict=True) if t - width >= M.settle_us(r)
                   and t <= end), default=float("nan")) / line
        f.numbers[name] = {"victim": means[victim] / line, "victim_low": low, "jain": M.jain(incast),
                           "incast_total": sum(incast) / line, "delivered_once": M.delivered_once(r)}
        f.row(f"{name}: victim goodput, of line rate (mean; lowest bin of {width:g} µs)", "-",
              f"{means[victim] / line:.2f}; {low:.2f}")
        f.row(f"{name}: Jain's fairness of the 7 incast flows (their total, of line rate)", "-",
              f"{M.jain(incast):.3f} ({sum(incast) / line:.2f})")
        if r.pfc is not None:
            f.numbers[name].update(_pfc_numbers(r))
            f.row(f"{name}: PFC pause frames (paused time, all links)", "-",
                  f"{r.pfc['pause_frames']} ({r.pfc['paused_us'] / 1e3:.1f} ms)")
        f.delivered(name, M.delivered_once(r))
    n = f.numbers
    if "mrc" in n:
        f.hold("fig18.mrc_victim", f"{n['mrc']['victim']:.2f}", n["mrc"]["victim"] >= VICTIM_SHARE,
               "the incast's congestion reaches the victim's path")
        f.hold("fig18.mrc_fair", f"{n['mrc']['jain']:.3f}", n["mrc"]["jain"] >= FAIRNESS,
               "the incast flows do not share the bottleneck evenly")
    if "mrc-8qp" in n:
        m8 = n["mrc-8qp"]
        f.hold("fig21.mrc8", f"victim {m8['victim']:.2f}, Jain {m8['jain']:.3f}",
               m8["victim"] >= VICTIM_SHARE and m8["jain"] >= FAIRNESS, "8 QPs per pair share the incast unevenly"
               if m8["jain"] < FAIRNESS else "the victim loses bandwidth with 8 QPs per pair")
    if "roce-1qp" in n:
        v = n["roce-1qp"]["victim"]
        f.hold("fig18.roce1_victim", f"{v:.2f}", VICTIM_25[0] <= v <= VICTIM_25[1],
               _roce1_cause(n["roce-1qp"]) if v > VICTIM_25[1] else "the victim loses more than the paper's quarter",
               value=v)
    if "roce-1qp" in n and "roce-10qp" in n:
        one, ten = n["roce-1qp"], n["roce-10qp"]
        f.hold("fig18.roce10", f"victim {ten['victim']:.2f} (1 QP: {one['victim']:.2f}), lowest bin "
               f"{ten['victim_low']:.2f}; Jain {ten['jain']:.3f} (1 QP: {one['jain']:.3f})",
               ten["jain"] < one["jain"] and ten["victim"] > one["victim"] and ten["victim_low"] <= DIP_10QP,
               _roce10_cause(one, ten), value=ten["victim"] - one["victim"])
    _pfc_alone(f, n)
    roce = {k: v for k, v in n.items() if k.startswith("roce")}
    starved = [k for k, v in roce.items() if v["incast_total"] < 0.8]
    if starved:
        totals = ", ".join(f"{roce[k]['incast_total']:.2f}" for k in starved)
        f.notes.append(f"{', '.join(starved)}: DCQCN cuts the incast QPs far below their share (their total "
                       f"{totals} of line rate): "
                       "the deep queue built in the first RTTs marks every packet until it drains, each CNP halves "
                       "the rate, and recovery runs on a 55 µs timer; the paper's Fig. 22 shows such under-use "
                       "with aggressive DCQCN settings.")
    hit = [n for n, v in roce.items() if v["victim"] < VICTIM_SHARE]
    if hit:
        f.notes.append(f"{', '.join(hit)}: the victim loses bandwidth through PFC: some of its QPs hash onto "
                       "the spine downlinks the incast QPs use into the target's rack; the target's T0 pauses those "
                       "links and the victim's packets wait behind the incast's (head-of-line blocking), and the "
                       "pauses spread up to the senders' and the victim's NICs as buffers fill.")
    spared = [name for name, v in roce.items() if v["victim"] >= VICTIM_SHARE and v.get("unpaused_into_target")]
    for name in spared:
        f.notes.append(f"{name}: the victim keeps line rate: ECMP hashed its one QP onto a spine whose downlink into "
                       f"the target's rack carries no incast QP and was never paused "
                       f"({', '.join(roce[name]['unpaused_into_target'])}); the paper's victim shared one.")
    if "oblivious" in n and "mrc" in n:
        f.notes.append(f"Ablation: with EV state off the incast runs with Jain {n['oblivious']['jain']:.3f} against "
                       f"{n['mrc']['jain']:.3f} and the victim at {n['oblivious']['victim']:.2f}: the congestion is "
                       "at the last hop, whose trims change no EV's state, so what shares it is MRC's window.")
    return f


FIG16_PAPER = ("Latency-bound at small sizes (little difference); bandwidth-bound at large ones, where RoCE 1 QP gets "
               "about half (ECMP collisions), QP scaling helps RoCE (little gain past 8 QPs), and one MRC QP beats "
               "16 RoCE QPs. With loss RoCE performs poorly (unusable at 1%); MRC shrugs off 0.1% at large sizes "
               "and keeps about a third at 1%.")
FIG17_PAPER = ("MRC outperforms RoCE at all sizes, most where bandwidth-bound; QP scaling does not help RoCE (16 QPs "
               "slightly below 1). With loss RoCE suffers more than MRC, much more at small sizes; at large sizes "
               "and 0.1% RoCE barely degrades.")

EXPERIMENTS = [
    Experiment("fig20", "fig20", "permutation across the spines: RoCE with PFC alone and with DCQCN, 1 and 8 QPs",
               "fig20.yaml",
               "With one QP per transfer some flows get line rate and some collide (a half or a third of it), "
               "with DCQCN or PFC alone; with 8 QPs PFC alone helps only marginally (the most congested QPs pause "
               "the NIC, slowing all its QPs); DCQCN avoids that. MRC with one QP: 390 Gb/s for every flow.", fig20),
    Experiment("fig16", "fig16", "ring all-reduce (4 ranks of the paper's 64): MRC vs RoCE, with loss", "fig16.yaml",
               FIG16_PAPER, fig16, at="4 ranks"),
    Experiment("fig16bw", "fig16", "ring all-reduce on 8 ranks, no loss", "fig16bw.yaml",
               "At bandwidth-bound sizes: MRC 1 QP above RoCE 16 QPs above RoCE 1 QP.", fig16bw, at="8 ranks"),
    Experiment("fig17", "fig17", "all-to-all (4 ranks of the paper's 64): MRC vs RoCE, with loss", "fig17.yaml",
               FIG17_PAPER, fig17, at="4 ranks"),
    Experiment("fig18", "fig18", "7:1 cross-spine incast with a victim flow into the target's rack", "fig18.yaml",
               "RoCE with DCQCN: the victim degrades by about 25% (1 QP) or drops to 100 Gb/s at times "
               "(10 QPs), through PFC; with PFC alone (Fig. 21b-c) the victim gets 30 to 100 Gb/s. MRC shares "
               "the bottleneck almost perfectly among the incast flows and "
               "leaves the victim alone.", fig18),
]

# make paper SCALE=paper: Figs. 16 and 17 on the paper's 64 ranks, beside the quick gallery's.
AT_SCALE = [
    Experiment("fig16_64", "fig16", "ring all-reduce on the paper's 64 ranks: MRC vs RoCE, with loss",
               "scale/fig16.yaml", FIG16_PAPER, fig16_at_scale, Scale.PAPER, "64 ranks"),
    Experiment("fig17_64", "fig17", "all-to-all on the paper's 64 ranks: MRC vs RoCE, with loss", "scale/fig17.yaml",
               FIG17_PAPER, fig17, Scale.PAPER, "64 ranks"),
]
