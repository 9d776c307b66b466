"""The gallery's PNGs, laid out like the paper's figures: throughput over
time with the failure events marked, EV activity, bandwidth against
message size per loss rate, victim and incast throughput."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from fabric_sim.report import busy
from fabric_sim.report.plots import legend
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario.events import Event
from mrc_host.ev import make_ev
from mrc_paper import metrics as M
from mrc_paper.experiments import Runs
from mrc_paper.paths import lossy_evs
from mrc_paper.roce_figs import nccl_size

COLORS = {"mrc": "tab:blue", "mrc-1qp": "tab:blue", "mrc-swap": "tab:blue", "oblivious": "tab:orange",
          "roce-1qp": "tab:red", "roce-16qp": "tab:green", "roce-10qp": "tab:green",
          "mrc-8qp": "tab:purple", "roce-pfc-1qp": "tab:brown", "roce-pfc-8qp": "tab:olive"}


def _until(r: RunResult, t: list[float]) -> int:
    end = max((m.done_at for m in r.messages if m.done_at >= 0), default=r.end_us)
    return next((i + 1 for i, x in enumerate(t) if x >= end), len(t))


def _time_label(r: RunResult) -> str:
    """The time axis, with the figure's scale: how many µs stand for a second of the paper's plot."""
    scale = M.us_per_paper_s(r.scenario)
    return f"time (µs; 1 s of the paper = {scale:g} µs)" if scale else "time (µs)"


def _label(e: Event) -> str:
    a = e.args
    if e.kind.startswith("nic_port"):
        return f"{a[0]} port {a[1]} {e.kind.rsplit('_', 1)[1]}"
    if e.kind.startswith("switch"):
        return f"{a[0]} {e.kind.rsplit('_', 1)[1]}"
    if e.kind == "ev_loss":
        return f"{a[2]:.0%} drop on EV-A"
    return e.kind.replace("_", " ")


def _events(ax: Axes, r: RunResult, marks: tuple[tuple[float, str], ...] = ()) -> None:
    """One dashed line per distinct event time; labelled when there are few."""
    by_time: dict[float, list[tuple[str, str]]] = {}
    for e in r.scenario.events:
        by_time.setdefault(e.at_us, []).append((_label(e), e.kind.replace("_", " ")))
    for t, label in marks:
        by_time.setdefault(t, []).append((label, label))
    for t, labels in by_time.items():
        ax.axvline(t, color="0.5", ls="--", lw=0.7)
        if len(by_time) <= 3:
            text = labels[0][0] if len(labels) == 1 else f"{len(labels)} x {labels[0][1]}"
            ax.annotate(text, (t, 0.03), xycoords=("data", "axes fraction"), rotation=90, fontsize=7, color="0.3",
                        ha="right", va="bottom")


def throughput(ax: Axes, series: list[tuple[str, RunResult]], title: str, bidirectional: bool = True) -> None:
    r0 = series[0][1]
    for name, r in series:
        n = _until(r, r.timeline.t)
        ax.plot(r.timeline.t[:n], r.timeline.goodput[:n], color=COLORS.get(name, "k"), lw=1.2,
                label=name)
    line = (2 if bidirectional else 1) * M.line_goodput(r0, bidirectional)
    ax.axhline(line, color="k", ls=":", lw=0.8, label="payload line rate")
    _events(ax, r0)
    ax.set_ylim(0, line * 1.12)
    ax.set_xlabel(_time_label(r0))
    ax.set_ylabel("throughput (Gb/s)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    legend(ax, fontsize=7, loc="lower right")


def activity(ax: Axes, r: RunResult, flow: str, evs: dict[str, int], title: str,
             marks: tuple[tuple[float, str], ...] = ()) -> None:
    """Share of the flow's packets (on the EVs shown) that each EV carried, per bin."""
    t = r.timeline.t
    n = _until(r, t)
    per = r.timeline.ev_tx.get(flow, {})
    total = [sum(per.get(ev, [0] * len(t))[i] for ev in evs.values()) for i in range(n)]
    for k, (label, ev) in enumerate(evs.items()):
        s = per.get(ev, [0] * len(t))
        ax.step(t[:n], [s[i] / total[i] if total[i] else 0 for i in range(n)], where="post", lw=1.4,
                label=f"{label} ({ev:#x})", color=("tab:blue", "tab:red", "tab:green")[k % 3])
    _events(ax, r, marks)
    ax.set_ylim(-0.05, 1.1)
    ax.set_yticks([0, 1], ["inactive", "active"])
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    legend(ax, fontsize=7, loc="center right")


def _save(fig: Figure, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fig09(runs: dict[str, Runs], path: Path) -> None:
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    titles = {"fig09a": "(a) T0-local: NIC-T0 link fail/recovery", "fig09b": "(b) T0-local: four NIC links flap",
              "fig09c": "(c) Cross-T1: 20 T0-T1 links fail", "fig09d": "(d) Cross-T1: 8 T0-T1 links flap"}
    for ax, (key, title) in zip(axes.flat, titles.items(), strict=True):
        rs = runs[key]
        throughput(ax, [(n, rs.get(n)) for n in rs.transports], title)
    _save(fig, path)


def fig19(runs: dict[str, Runs], path: Path) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
    titles = {"fig19a": "(a) three of four 400 Gb/s T0-T1 links fail",
              "fig19b": "(b) three of four 100 Gb/s T0-T1 links fail, then return",
              "fig19c": "(c) two of four 100 Gb/s T0-T1 links fail together, then return"}
    for ax, (key, title) in zip(axes, titles.items(), strict=True):
        rs = runs[key]
        throughput(ax, [(n, rs.get(n)) for n in rs.transports], title, bidirectional=False)
    _save(fig, path)


def _single(key: str, title: str) -> Callable[[dict[str, Runs], Path], None]:
    def plot(runs: dict[str, Runs], path: Path) -> None:
        fig, ax = plt.subplots(figsize=(7, 3.8))
        rs = runs[key]
        throughput(ax, [(n, rs.get(n)) for n in rs.transports], title)
        _save(fig, path)
    return plot


def fig13(runs: dict[str, Runs], path: Path) -> None:
    rs = runs["fig12"]
    r, sc = rs.get("mrc"), rs.scenario
    [loss] = [e for e in sc.events if e.kind == "ev_loss"]
    flow = f"{sc.topology.device(loss.args[0]).index}->{sc.workload.flows[0].dst}"
    a, b = lossy_evs(r, flow, loss.args[1], loss.at_us)
    fig, ax = plt.subplots(figsize=(7, 2.8))
    activity(ax, r, flow, {"EV-A": a, "EV-B": b}, f"Fig. 13: path activity of QP {flow}, plane {loss.args[1]} "
             "(20% drop on EV-A)")
    ax.set_xlabel(_time_label(r))
    _save(fig, path)


def fig14(runs: dict[str, Runs], path: Path) -> None:
    rs = runs["fig14"]
    f1, f2 = rs.scenario.workload.flows[:2]
    a, b = make_ev(f1.pin.plane, f1.pin.spines[0], 0), make_ev(f1.pin.plane, f1.pin.backups[0], 1 << 20)
    names = rs.transports
    fig, axes = plt.subplots(3, len(names), figsize=(5.5 * len(names), 7.5), squeeze=False)
    for col, name in enumerate(names):
        r = rs.get(name)
        mark = ((f2.start_us, "client2 starts on EV-A"),)
        activity(axes[0, col], r, f"{f1.src}->{f1.dst}", {"EV-A": a, "EV-B": b}, f"{name}: client1-server1", mark)
        activity(axes[1, col], r, f"{f2.src}->{f2.dst}", {"EV-A": a}, f"{name}: client2-server2", mark)
        ax = axes[2, col]
        n = _until(r, r.timeline.t)
        for k, g in enumerate(r.timeline.flows.values()):
            ax.plot(r.timeline.t[:n], g[:n], lw=1.2, label=f"client{k + 1}-server{k + 1}")
        ax.axhline(M.line_goodput(r, False), color="k", ls=":", lw=0.8, label="one plane's line rate")
        ax.set_ylim(0, M.line_goodput(r, False) * 1.15)
        ax.set_title(f"{name}: throughput per flow", fontsize=9)
        ax.set_ylabel("Gb/s")
        ax.set_xlabel(_time_label(r))
        ax.grid(alpha=0.3)
        legend(ax, fontsize=7, loc="lower right")
    _save(fig, path)


def _sizes_panel(ax: Axes, rs: Runs, title: str) -> None:
    """Bandwidth against message size: a colour per transport, a line style
    per loss rate (solid: none), as the paper's Figs. 16 and 17."""
    styles = {0: "-", 0.001: "--", 0.01: ":"}
    sizes: set[int] = set()
    for name in rs.transports:
        by_loss: dict[float, list[tuple[int, float]]] = {}
        for vals, r in rs.by_transport(name):
            by_loss.setdefault(vals.get("events[0].nic_rx_loss.rate", 0), []).append(
                (nccl_size(r), M.collective_gbps(r)))
        for loss, pts in sorted(by_loss.items()):
            pts.sort()
            sizes.update(p[0] for p in pts)
            ax.plot([p[0] / 2**20 for p in pts], [p[1] for p in pts], ls=styles.get(loss, "-."), marker="o", ms=4,
                    color=COLORS.get(name, "k"))
    handles = [plt.Line2D([], [], color=COLORS.get(n, "k"), label=n) for n in rs.transports]
    handles += [plt.Line2D([], [], color="k", ls=ls, label="no loss" if loss == 0 else f"{loss:.1%} loss")
                for loss, ls in styles.items()]
    ax.set_xscale("log", base=2)
    ax.set_xticks([x / 2**20 for x in sorted(sizes)], [f"{x / 2**20:g}" for x in sorted(sizes)])
    ax.minorticks_off()
    ax.set_xlabel("message size (MiB, nccl-tests' size)")
    ax.set_ylabel("busbw per NIC (Gb/s, nccl-tests)")
    ax.set_ylim(0, 420)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _scale(fig: Figure, *rss: Runs) -> None:
    """The figure's scale against the paper's, from its scenario files, under the plot."""
    fig.text(0.01, 0.01, "scale: " + "; ".join(f"{rs.scenario.name}: {rs.scenario.meta.get('scale')}" for rs in rss),
             fontsize=6.5, color="0.3", wrap=True)


def _ranks(rs: Runs) -> int:
    return len({m.src for r in rs.results.values() for m in r.messages})


def fig15(runs: dict[str, Runs], path: Path, key: str = "fig15") -> None:
    rs = runs[key]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    pts = sorted((nccl_size(r), M.collective_gbps(r)) for _, r in rs.by_transport("mrc"))
    ax.plot([p[0] / 2**20 for p in pts], [p[1] for p in pts], marker="o", ms=4, color=COLORS["mrc"], label="MRC")
    line = rs.get("mrc").nic_gbps
    ax.axhline(line, color="k", ls=":", lw=0.8, label=f"NIC rate ({line:g} Gb/s)")
    ax.axhline(736, color="0.5", ls="--", lw=0.8, label="paper: 92 GB/s at 1-2 GiB, 42K GPUs")
    ax.set_xscale("log", base=2)
    ax.set_xticks([p[0] / 2**20 for p in pts], [f"{p[0] / 2**20:g}" for p in pts])
    ax.minorticks_off()
    ax.set_xlabel("message size (MiB)")
    ax.set_ylabel("busbw per NIC (Gb/s, nccl-tests)")
    ax.set_ylim(0, line * 1.1)
    ax.set_title(f"NCCL sendrecv over MRC, {_ranks(rs)} ranks (Cluster B)", fontsize=9)
    ax.grid(alpha=0.3)
    legend(ax, fontsize=7, loc="lower right")
    fig.subplots_adjust(bottom=0.2)
    _scale(fig, rs)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fig16(runs: dict[str, Runs], path: Path) -> None:
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.4), gridspec_kw={"width_ratios": [2, 1]})
    _sizes_panel(a1, runs["fig16"], f"{_ranks(runs['fig16'])}-rank ring all-reduce (Cluster C's NICs and planes)")
    _sizes_panel(a2, runs["fig16bw"], "8-rank ring all-reduce, no loss")
    drawn = a2.get_legend()
    if drawn is not None:  # one legend for both panels
        drawn.remove()
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    _scale(fig, runs["fig16"], runs["fig16bw"])
    fig.savefig(path, dpi=110)
    plt.close(fig)


def roceqp(runs: dict[str, Runs], path: Path) -> None:
    """RoCE's bus bandwidth against its QPs per pair (the 8-rank ring)."""
    pts = sorted((vals["transports[0].qps_per_pair"], M.collective_gbps(r)) for vals, r in
                 runs["roceqp"].by_transport("roce"))
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot([q for q, _ in pts], [g for _, g in pts], marker="o", color=COLORS["roce-16qp"], label="RoCE")
    ax.set_xscale("log", base=2)
    ax.set_xticks([q for q, _ in pts], [str(q) for q, _ in pts])
    ax.minorticks_off()
    ax.set_ylim(0, 420)
    ax.set_xlabel("QPs per pair")
    ax.set_ylabel("bus bandwidth per NIC (Gb/s)")
    ax.set_title("RoCE QP scaling: 8-rank ring all-reduce, 8 MiB, no loss", fontsize=9)
    ax.grid(alpha=0.3)
    _save(fig, path)


def fig17(runs: dict[str, Runs], path: Path) -> None:
    _collective(runs["fig17"], path, "all-to-all")


def _collective(rs: Runs, path: Path, what: str) -> None:
    """One collective's bus bandwidth against its size, every transport and loss rate."""
    fig, ax = plt.subplots(figsize=(8, 4.4))
    _sizes_panel(ax, rs, f"{_ranks(rs)}-rank {what} (Cluster C's NICs and planes)")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    _scale(fig, rs)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _flow_panels(rs: Runs, path: Path, draw: Callable[[Axes, RunResult], None], legend_first: bool) -> None:
    """One panel per transport of `rs` (three to a row): each flow's
    throughput as `draw` plots it, the end of the busy time, PFC's pauses."""
    names = rs.transports
    cols = min(3, len(names))
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.4 * rows), sharey=True, squeeze=False)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, names, strict=False):
        r = rs.get(name)
        draw(ax, r)
        ax.axvline(busy(r), color="0.5", ls="--", lw=0.7)
        ax.set_title(name + (f"\nPFC: {r.pfc['pause_frames']} pauses, {r.pfc['paused_us'] / 1e3:.1f} ms paused"
                             if r.pfc else ""), fontsize=9)
        ax.set_xlabel(_time_label(r))
        ax.set_ylim(0, 420)
        ax.grid(alpha=0.3)
        if not legend_first:
            legend(ax, fontsize=7, loc="center right")
    if legend_first:
        legend(axes.flat[0], fontsize=6, loc="lower left", ncol=2)
    for row in axes:
        row[0].set_ylabel("throughput (Gb/s)")
    _save(fig, path)


def fig18(runs: dict[str, Runs], path: Path) -> None:
    rs = runs["fig18"]
    target = rs.scenario.workload.flows[0].dst

    def draw(ax: Axes, r: RunResult) -> None:
        n = _until(r, r.timeline.t)
        for flow, g in r.timeline.flows.items():
            victim = not flow.endswith(f"->{target}")
            ax.plot(r.timeline.t[:n], g[:n], lw=1.6 if victim else 0.8, color="tab:red" if victim else "0.55",
                    label="victim" if victim else None)
        ax.plot([], [], color="0.55", lw=0.8, label="incast flows")

    _flow_panels(rs, path, draw, legend_first=False)


def fig20(runs: dict[str, Runs], path: Path) -> None:
    def draw(ax: Axes, r: RunResult) -> None:
        n = _until(r, r.timeline.t)
        for flow, g in r.timeline.flows.items():
            ax.plot(r.timeline.t[:n], g[:n], lw=0.9, label=flow)

    _flow_panels(runs["fig20"], path, draw, legend_first=True)


# figure -> (the experiments it needs, the function that draws it)
FIGURES: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Runs], Path], None]]] = {
    "fig09": (("fig09a", "fig09b", "fig09c", "fig09d"), fig09),
    "fig19": (("fig19a", "fig19b", "fig19c"), fig19),
    "fig10": (("fig10",), _single("fig10", "T0-local ib_write_bw during a T0 switch failure")),
    "fig11": (("fig11",), _single("fig11", "Cross-T1 ib_write_bw during T1 failure/recovery")),
    "fig12": (("fig12",), _single("fig12", "Packet-drop reliability: 20% drop on one EV")),
    "fig13": (("fig12",), fig13),
    "fig14": (("fig14",), fig14),
    "fig15": (("fig15",), fig15),
    "fig16": (("fig16", "fig16bw"), fig16),
    "roceqp": (("roceqp",), roceqp),
    "fig17": (("fig17",), fig17),
    # make paper SCALE=paper: the same figures on the paper's 64 ranks
    "fig15_64": (("fig15_64",), lambda runs, path: fig15(runs, path, "fig15_64")),
    "fig16_64": (("fig16_64",), lambda runs, path: _collective(runs["fig16_64"], path, "ring all-reduce")),
    "fig17_64": (("fig17_64",), lambda runs, path: _collective(runs["fig17_64"], path, "all-to-all")),
    "fig18": (("fig18",), fig18),
    "fig20": (("fig20",), fig20),
}
