"""PNG figures of a scenario's runs (matplotlib, no display needed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes

from fabric_sim.report import fcts, ideal_fct, steps
from fabric_sim.report.pfc_plot import paused
from fabric_sim.runner.run import RunResult
from fabric_sim.transports import kinds

COLORS = ["tab:blue", "tab:red", "tab:green", "tab:orange", "tab:purple", "tab:brown"]


def legend(ax: Axes, **kw: Any) -> None:
    """`ax`'s legend where something on it is labelled: matplotlib warns of
    an empty one ("No artists with labels"), a warning of the project's
    own business, not the user's."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kw)


def _events(ax: Axes, r: RunResult) -> None:
    for e in r.scenario.events:
        ax.axvline(e.at_us, color="0.4", ls="--", lw=0.8)
        label = f"{e.kind.replace('_', ' ')} {' '.join(map(str, e.args))}"
        ax.annotate(label, (e.at_us, 1), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                    fontsize=7, color="0.3")


def _active(r: RunResult) -> int:
    """Bins up to the last message's completion (plus one)."""
    last = max((m.done_at for m in r.messages if m.done_at >= 0), default=r.end_us)
    if not all(m.done_at >= 0 for m in r.messages):
        last = r.end_us
    return next((i + 1 for i, t in enumerate(r.timeline.t) if t >= last), len(r.timeline.t))


def fct_cdf(results: list[RunResult], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for i, r in enumerate(results):
        f = sorted(fcts(r))
        if f:
            ax.step(f, [(k + 1) / len(r.messages) for k in range(len(f))], where="post", color=COLORS[i % 6],
                    label=f"{r.transport.name} ({len(f)}/{len(r.messages)} delivered)")
    sizes = sorted({m.size for m in results[0].messages})
    if len(sizes) == 1:
        ax.axvline(ideal_fct(results[0], sizes[0]), color="k", ls=":", lw=1, label="line rate + base RTT")
    ax.set_xlabel("message completion time (µs)")
    ax.set_ylabel("fraction of messages")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    legend(ax, fontsize=8, loc="lower right")
    ax.set_title(f"{results[0].scenario.name}: message completion times")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def goodput(results: list[RunResult], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, r in enumerate(results):
        n = _active(r)
        ax.plot(r.timeline.t[:n], r.timeline.goodput[:n], color=COLORS[i % 6], label=r.transport.name)
    ax.axhline(results[0].nic_gbps * len({m.dst for m in results[0].messages}), color="k", ls=":", lw=1,
               label="receivers' line rate")
    _events(ax, results[0])
    ax.set_xlabel("time (µs)")
    ax.set_ylabel("goodput placed at receivers (Gb/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    legend(ax, fontsize=8, loc="lower left")
    ax.set_title(f"{results[0].scenario.name}: aggregate goodput")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def planes(results: list[RunResult], path: Path) -> None:
    fig, axes = plt.subplots(len(results), 1, figsize=(7, 2.6 * len(results)), sharex=True, squeeze=False)
    for ax, r in zip(axes[:, 0], results, strict=True):
        n = _active(r)
        for p, series in sorted(r.timeline.planes.items()):
            ax.plot(r.timeline.t[:n], series[:n], lw=1, label=f"plane {p}")
        _events(ax, r)
        ax.set_ylabel("NIC→T0 Gb/s")
        ax.set_title(f"{r.transport.name}: load per plane", fontsize=9)
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    legend(axes[0, 0], fontsize=7, ncol=4, loc="lower left")
    axes[-1, 0].set_xlabel("time (µs)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def spines(results: list[RunResult], path: Path) -> None:
    fig, axes = plt.subplots(len(results), 1, figsize=(7, 2.8 * len(results)), squeeze=False)
    for ax, r in zip(axes[:, 0], results, strict=True):
        names = sorted(r.timeline.spines, key=lambda s: tuple(int(x[1:]) for x in s.split("-")[1:]))
        n = _active(r)
        if not names:
            continue
        grid = [r.timeline.spines[s][:n] for s in names]
        t = r.timeline.t[:n]
        im = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="viridis",
                       extent=(0, t[-1] if t else 1, len(names) - 0.5, -0.5))
        if len(names) > 16:  # one label per plane: t1-pP-s0 starts each block
            starts = [i for i, nm in enumerate(names) if nm.endswith("-s0")]
            ax.set_yticks(starts, [names[i].rsplit("-", 1)[0] + "-s0.." for i in starts], fontsize=7)
        else:
            ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.set_title(f"{r.transport.name}: load sent down by each T1 (Gb/s)", fontsize=9)
        fig.colorbar(im, ax=ax, pad=0.01)
    axes[-1, 0].set_xlabel("time (µs)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def ev_states(results: list[RunResult], path: Path) -> None:
    runs = [r for r in results if kinds.of(r.transport).plots_ev_states]
    if not runs:
        return
    fig, axes = plt.subplots(len(runs), 1, figsize=(7, 2.6 * len(runs)), sharex=True, squeeze=False)
    for ax, r in zip(axes[:, 0], runs, strict=True):
        n = _active(r)
        for st, series in r.timeline.ev_states.items():
            if any(series[:n]) and st != "GOOD":
                ax.plot(r.timeline.t[:n], series[:n], lw=1.2, label=st)
        _events(ax, r)
        ax.set_ylabel("EVs of sending QPs")
        ax.set_title(f"{r.transport.name}: EVs not GOOD (of {r.timeline.ev_states['GOOD'][0]} at start)", fontsize=9)
        ax.grid(alpha=0.3)
        legend(ax, fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (µs)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def retx_drops(results: list[RunResult], path: Path) -> None:
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    causes = ["sack", "nack", "timeout"]
    w = 0.8 / len(results)
    for i, r in enumerate(results):
        a1.bar([c + i * w for c in range(3)], [r.retx[c] for c in causes], w, color=COLORS[i % 6],
               label=r.transport.name)
    a1.set_xticks([c + w * (len(results) - 1) / 2 for c in range(3)], ["SACK", "NACK (trim)", "timeout"])
    a1.set_title("retransmissions by cause", fontsize=9)
    legend(a1, fontsize=8)
    reasons = sorted({k for r in results for k in r.drops})
    for i, r in enumerate(results):
        a2.barh([k + i * w for k in range(len(reasons))], [r.drops.get(x, 0) for x in reasons], w,
                color=COLORS[i % 6])
    a2.set_yticks([k + w * (len(results) - 1) / 2 for k in range(len(reasons))], reasons, fontsize=7)
    a2.set_title("drops by reason", fontsize=9)
    for ax in (a1, a2):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def timeline(results: list[RunResult], path: Path) -> None:
    """A trace's walk per rank (report/steps.py): compute bars over
    communication bars, each iteration's end a thin line, the timed events
    marked; one panel per transport, on one time axis. Nothing is drawn
    for runs without a trace."""
    runs = [r for r in results if r.steps is not None]
    if not runs:
        return
    ranks = max(r.steps.ranks for r in runs if r.steps is not None)
    fig, axes = plt.subplots(len(runs), 1, figsize=(9, 1.2 + 0.42 * ranks * len(runs)), sharex=True, squeeze=False)
    for ax, r in zip(axes[:, 0], runs, strict=True):
        assert r.steps is not None
        for kind, y, color in (("compute", 0.05, "tab:blue"), ("comm", 0.45, "tab:orange")):
            for rank in range(r.steps.ranks):
                bars = [(s.start, s.end - s.start) for s in r.steps.spans if s.rank == rank and s.end >= 0 and
                        (s.kind in steps.COMPUTING if kind == "compute" else s.kind in steps.COMMUNICATING)]
                ax.broken_barh(bars, (rank + y, 0.4), facecolors=color, edgecolors="none",
                               label=kind if rank == 0 else None)
        for x in steps.per_rank(r.steps, r.scenario.workload.start_us):
            ax.plot([x["start_us"] + x["step_us"]] * 2, [x["rank"], x["rank"] + 0.9], color="k", lw=0.8)
        _events(ax, r)
        ax.set_yticks([k + 0.45 for k in range(r.steps.ranks)], [f"rank {k}" for k in range(r.steps.ranks)],
                      fontsize=7)
        ax.set_ylim(-0.1, r.steps.ranks)
        ax.invert_yaxis()
        ax.grid(alpha=0.3, axis="x")
        its = steps.per_iteration(steps.per_rank(r.steps, r.scenario.workload.start_us), r.steps.ranks)
        took = ", ".join(f"{x['time_us']:,.0f}" for x in its) or "none finished"
        ax.set_title(f"{r.transport.name}: iterations of {took} µs (black: each rank's iteration ends)", fontsize=9)
    axes[0, 0].legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False)
    axes[-1, 0].set_xlabel("time (µs)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


FIGURES = (("fct_cdf", fct_cdf), ("goodput", goodput), ("planes", planes), ("spines", spines),
           ("ev_states", ev_states), ("retx_drops", retx_drops), ("pfc", paused), ("timeline", timeline))


def all_figures(results: list[RunResult], place: Callable[[str], Path]) -> list[str]:
    """Every figure of the runs, each drawn to `place(name)`
    (fabric_sim/report/saved.py gives temporary names, moved into place
    with the rest of the results); the names of those drawn (a figure with
    nothing to show is not)."""
    made = []
    for name, fn in FIGURES:
        p = place(f"{name}.png")
        fn(results, p)
        if p.exists():
            made.append(f"{name}.png")
    return made
