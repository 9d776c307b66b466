"""pfc.png: where PFC paused the fabric, per link direction, for each run
with PFC (fabric_sim/net/pfc.py). Nothing is drawn for runs without it."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from fabric_sim.runner.run import RunResult

TOP = 24  # link directions shown per run, the most paused first


def paused(results: list[RunResult], path: Path) -> None:
    runs = [(r, r.pfc) for r in results if r.pfc is not None and r.pfc["links"]]
    if not runs:
        return
    fig, axes = plt.subplots(1, len(runs), figsize=(5.2 * len(runs), 0.9 + 0.22 * TOP), squeeze=False)
    for ax, (r, pfc) in zip(axes[0], runs, strict=True):
        links = list(pfc["links"].items())[:TOP][::-1]
        ax.barh(range(len(links)), [v["paused_us"] for _, v in links], color="tab:red")
        ax.set_yticks(range(len(links)), [f"{k} ({v['pause_frames']})" for k, v in links], fontsize=7)
        ax.set_xlabel("time paused (µs); in brackets: pause frames")
        ax.set_title(f"{r.transport.name}: {pfc['pause_frames']} pause frames on {pfc['links_paused']} links, "
                     f"{r.end_us:,.0f} µs run", fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
