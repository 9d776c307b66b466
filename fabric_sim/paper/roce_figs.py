"""Figs. 16 to 18 of the MRC paper: MRC against RoCE. Ring all-reduce
and all-to-all over 64 NICs at 0, 0.1% and 1% receive-side loss (Cluster
C: MRC on four 100 Gb/s planes, RoCE on one 400 Gb/s plane), and a 7:1
incast beside a victim flow (one 400 Gb/s plane)."""

from __future__ import annotations

from fabric_sim import collectives
from fabric_sim.paper import metrics as M
from fabric_sim.paper.experiments import Experiment, Finding, Runs

LOSSES = (0, 0.001, 0.01)
VICTIM_SHARE = 0.9  # Fig. 18: the victim's goodput under MRC, of line rate
FAIRNESS = 0.95  # Fig. 18: Jain's index of the incast flows under MRC
PAPER_18 = {  # transport -> what the paper reports for the victim, and for the incast flows' sharing
    "mrc": ("no impact (1.00)", "almost perfect sharing"),
    "roce-1qp": ("degrades by about 25% (~0.75), through PFC", "not reported"),
    "roce-10qp": ("smaller average impact, 100 of 400 Gb/s in some seconds", "sharing worse than 1 QP"),
}


def _sizes(runs: Runs) -> list[int]:
    return sorted({nccl_size(r) for r in runs.results.values()})


def nccl_size(r) -> int:
    """The collective's size as nccl-tests names it: an all-to-all's is each
    rank's whole buffer (its per-pair message times the ranks)."""
    w = r.scenario.workload
    return collectives.nccl_size(w.pattern, w.message_bytes, len({m.src for m in r.messages}))


def _table(runs: Runs, f: Finding) -> dict[str, dict[float, dict[int, float]]]:
    """transport -> loss -> NCCL size -> bus bandwidth (Gb/s); every run also
    held to delivering every message exactly once."""
    out: dict[str, dict[float, dict[int, float]]] = {}
    bad = []
    for (vals, name), r in runs.results.items():
        v = dict(vals)
        size = nccl_size(r)
        loss = v.get("events[0].nic_rx_loss.rate", 0)
        out.setdefault(name, {}).setdefault(loss, {})[size] = M.collective_gbps(r)
        if not M.delivered_once(r):
            bad.append(f"{name} {size >> 20} MiB loss {loss}")
    f.row("every message of every run delivered exactly once", "-", "yes" if not bad else "NO: " + ", ".join(bad),
          not bad)
    f.numbers["gbps"] = {n: {str(l): {str(s): g for s, g in d.items()} for l, d in by.items()} for n, by in out.items()}
    return out


def _loss_rows(f: Finding, t: dict, size: int, paper_mrc: str, paper_roce: str) -> None:
    mib = f"{size / 2**20:g} MiB"
    for name, paper in (("mrc-1qp", paper_mrc), ("roce-1qp", paper_roce), ("roce-16qp", paper_roce)):
        if name in t and 0 in t[name] and size in t[name][0]:
            base = t[name][0][size]
            kept = " / ".join(f"{t[name][loss][size] / base:.2f}" for loss in LOSSES[1:] if loss in t[name])
            f.row(f"{name}, {mib}: bandwidth kept at 0.1% / 1% loss", paper, kept, None)


def fig16(runs: Runs) -> Finding:
    f = Finding("fig16")
    t = _table(runs, f)
    for size in _sizes(runs):
        got = " / ".join(f"{t[n][0][size]:.0f}" for n in ("mrc-1qp", "roce-16qp", "roce-1qp"))
        f.row(f"{size / 2**20:g} MiB, no loss: MRC 1 QP / RoCE 16 QPs / RoCE 1 QP (Gb/s)",
              "latency-bound (small): little difference; bandwidth-bound: MRC best", got, None)
    big = max(_sizes(runs))
    _loss_rows(f, t, big, "0.1%: some impact at small sizes; 1%: about a third",
               "poor at 0.1%; unusable at 1%")
    m, r16, r1 = (t[n][0][big] for n in ("mrc-1qp", "roce-16qp", "roce-1qp"))
    f.row(f"{big / 2**20:g} MiB (bandwidth-bound), no loss: MRC 1 QP >= RoCE 16 QPs >= RoCE 1 QP",
          "MRC best; 16 QPs help RoCE; RoCE 1 QP about half (ECMP collisions)", f"{m:.0f} / {r16:.0f} / {r1:.0f}",
          m >= r16 >= r1)
    f.notes.append("Scaled to 4 ranks (two racks of two, every ring hop across the spines) so the paper's "
                   "bandwidth-bound sizes run in the time budget: a 4-rank ring has 6 steps where the paper's has "
                   "126, so it leaves the latency-bound regime at smaller sizes than the paper's. With one rank "
                   "pair per rack direction sharing two uplinks, RoCE 1 QP's collisions depend on the hash (seed).")
    return f


def fig16bw(runs: Runs) -> Finding:
    f = Finding("fig16bw")
    t = _table(runs, f)
    for size in _sizes(runs):
        m, r16, r1 = (t[n][0][size] for n in ("mrc-1qp", "roce-16qp", "roce-1qp"))
        f.row(f"8-rank ring, {size / 2**20:g} MiB: MRC 1 QP / RoCE 16 QPs / RoCE 1 QP (Gb/s)",
              "MRC best; 16 QPs help RoCE; RoCE 1 QP about half", f"{m:.0f} / {r16:.0f} / {r1:.0f}", None)
    size = max(_sizes(runs))
    m, r16, r1 = (t[n][0][size] for n in ("mrc-1qp", "roce-16qp", "roce-1qp"))
    f.row(f"8-rank ring, {size / 2**20:g} MiB (the largest): MRC 1 QP > RoCE 16 QPs > RoCE 1 QP",
          "MRC best; 16 QPs help RoCE; RoCE 1 QP about half (ECMP collisions)",
          f"{m:.0f} > {r16:.0f} > {r1:.0f}", m > r16 > r1)
    f.row("RoCE 1 QP, of MRC's", "about half", f"{r1 / m:.2f}", None)
    f.numbers.update(mrc=m, roce16=r16, roce1=r1, line=M.line_goodput(runs.get("mrc-1qp"), bidirectional=False))
    return f


def fig17(runs: Runs) -> Finding:
    f = Finding("fig17")
    t = _table(runs, f)
    for size in _sizes(runs):
        got = " / ".join(f"{t[n][0][size]:.0f}" for n in ("mrc-1qp", "roce-16qp", "roce-1qp"))
        ok = t["mrc-1qp"][0][size] > max(t["roce-1qp"][0][size], t["roce-16qp"][0][size])
        f.row(f"{size / 2**20:g} MiB, no loss: MRC 1 QP / RoCE 16 QPs / RoCE 1 QP (Gb/s)",
              "MRC above RoCE at every size; RoCE 16 QPs slightly below 1 QP", got, None)
        f.numbers.setdefault("mrc_best", {})[str(size)] = ok
        _loss_rows(f, t, size, "hurt less than RoCE", "much worse than MRC at small sizes; "
                   "barely hurt at large sizes and 0.1%")
    if not all(f.numbers["mrc_best"].values()):
        f.notes.append("Without loss RoCE 1 QP is ahead of MRC here, against the paper: RoCE starts every QP at line "
                       "rate (DCQCN) and, lossless, never backs off in an all-to-all whose load is even; MRC's "
                       "window starts at one bandwidth-delay product shared by the NIC's QPs and grows by "
                       "additive increase, and each receive-only QP probes its reverse paths every probe interval.")
    return f


def _pfc_numbers(r) -> dict:
    """Fig. 18 under PFC: pauses in all, and the spines whose downlink
    into the incast target's rack was never paused."""
    topo = r.transport.topology or r.scenario.topology
    target = f"t0-p0-r{r.scenario.workload.flows[0].dst // topo.hosts_per_t0}"
    spines = [f"t1-p0-s{j}" for j in range(topo.t1_per_plane)]
    return {"pause_frames": r.pfc["pause_frames"], "paused_us": r.pfc["paused_us"],
            "unpaused_into_target": [s for s in spines if f"{s}->{target}" not in r.pfc["links"]]}


def fig18(runs: Runs) -> Finding:
    f = Finding("fig18")
    for name in runs.transports:
        r = runs.get(name)
        end, line = M.steady_end(r), M.line_goodput(r, bidirectional=False)
        victim = next(n for n in r.timeline.flows if not n.endswith(f"->{r.scenario.workload.flows[0].dst}"))
        means = {n: M.window_mean(r, g, M.settle_us(r), end) for n, g in r.timeline.flows.items()}
        incast = [v for n, v in means.items() if n != victim]
        v_share, fair = means[victim] / line, M.jain(incast)
        f.numbers[name] = {"victim": v_share, "jain": fair, "incast_total": sum(incast) / line,
                           "delivered_once": M.delivered_once(r)}
        if r.pfc is not None:
            f.numbers[name].update(_pfc_numbers(r))
            f.row(f"{name}: PFC pause frames (paused time, all links)", "-",
                  f"{r.pfc['pause_frames']} ({r.pfc['paused_us'] / 1e3:.1f} ms)", None)
        mrc = name == "mrc"
        paper = PAPER_18.get(name, ("not in the paper (ablation)", "not in the paper (ablation)"))
        f.row(f"{name}: victim goodput, of line rate", paper[0], f"{v_share:.2f}",
              v_share >= VICTIM_SHARE if mrc else None)
        f.row(f"{name}: Jain's fairness of the 7 incast flows (their total, of line rate)", paper[1],
              f"{fair:.3f} ({sum(incast) / line:.2f})", fair >= FAIRNESS if mrc else None)
        f.row(f"{name}: every message delivered exactly once", "yes", "yes" if M.delivered_once(r) else "NO",
              M.delivered_once(r))
    roce = {n: v for n, v in f.numbers.items() if n.startswith("roce")}
    starved = [n for n, v in roce.items() if v["incast_total"] < 0.8]
    if starved:
        totals = ", ".join(f"{roce[n]['incast_total']:.2f}" for n in starved)
        f.notes.append(f"{', '.join(starved)}: DCQCN cuts the incast QPs far below their share (their total "
                       f"{totals} of line rate): the "
                       "queue built in the first RTTs marks every packet until it drains, each CNP halves the "
                       "rate, and recovery runs on a 55 µs timer; the paper's Fig. 22 shows such under-use with "
                       "aggressive DCQCN settings.")
    hit = [n for n, v in roce.items() if v["victim"] < VICTIM_SHARE]
    if hit:
        f.notes.append(f"{', '.join(hit)}: the victim loses bandwidth through PFC: some of its QPs hash onto "
                       "the spine downlinks the incast QPs use into the target's rack; the target's T0 pauses those "
                       "links and the victim's packets wait behind the incast's (head-of-line blocking), and the "
                       "pauses spread up to the senders' and the victim's NICs as buffers fill.")
    spared = [n for n, v in roce.items() if v["victim"] >= VICTIM_SHARE and v.get("unpaused_into_target")]
    for n in spared:
        f.notes.append(f"{n}: the victim keeps line rate: ECMP hashed its one QP onto a spine whose downlink into the "
                       f"target's rack carries no incast QP and was never paused "
                       f"({', '.join(roce[n]['unpaused_into_target'])}); the paper's victim shared one.")
    if "oblivious" in f.numbers and "mrc" in f.numbers:
        same = abs(f.numbers["oblivious"]["jain"] - f.numbers["mrc"]["jain"]) < 0.01
        f.notes.append("Ablation: with EV state off the incast runs " + ("the same" if same else "differently") +
                       f" (Jain {f.numbers['oblivious']['jain']:.3f} against {f.numbers['mrc']['jain']:.3f}): the "
                       "congestion is at the last hop, whose trims change no EV's state and which marks no ECN, so "
                       "what shares it is MRC's window (trims and delay), not path feedback.")
    return f


EXPERIMENTS = [
    Experiment("fig16", "fig16", "ring all-reduce (4 ranks of the paper's 64): MRC vs RoCE, with loss", "fig16.yaml",
               "Latency-bound at small sizes (little difference); bandwidth-bound at large ones, where RoCE 1 QP "
               "gets about half (ECMP collisions), QP scaling helps RoCE (little gain past 8 QPs), and one MRC "
               "QP beats 16 RoCE QPs. With loss RoCE performs poorly (unusable at 1%); MRC shrugs off 0.1% at "
               "large sizes and keeps about a third at 1%.", fig16),
    Experiment("fig16bw", "fig16", "ring all-reduce on 8 ranks, no loss", "fig16bw.yaml",
               "At bandwidth-bound sizes: MRC 1 QP above RoCE 16 QPs above RoCE 1 QP.", fig16bw),
    Experiment("fig17", "fig17", "all-to-all (4 ranks of the paper's 64): MRC vs RoCE, with loss", "fig17.yaml",
               "MRC outperforms RoCE at all sizes, most where bandwidth-bound; QP scaling does not help RoCE "
               "(16 QPs slightly below 1). With loss RoCE suffers more than MRC, much more at small sizes; at "
               "large sizes and 0.1% RoCE barely degrades.", fig17),
    Experiment("fig18", "fig18", "7:1 cross-spine incast with a victim flow into the target's rack", "fig18.yaml",
               "RoCE with DCQCN: the victim degrades by about 25% (1 QP) or drops to 100 Gb/s at times "
               "(10 QPs), through PFC. MRC shares the bottleneck almost perfectly among the incast flows and "
               "leaves the victim alone.", fig18),
]
