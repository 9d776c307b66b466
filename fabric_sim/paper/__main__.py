"""make paper: run every experiment of the MRC paper's section 5.2 on the
timed fabric, write one PNG per figure and paper.md (the gallery) to
results/paper/ (or --out), and numbers.json with what each measured.

    python -m fabric_sim.paper [--only fig10,fig14] [--out DIR] [--quiet]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from control_plane.pipelines import REPO
from fabric_sim.fields import ScenarioError
from fabric_sim.report import strict
from fabric_sim.paper import gallery
from fabric_sim.paper.registry import BY_KEY, EXPERIMENTS
from fabric_sim.paper.experiments import run_experiment
from fabric_sim.paper.figures import FIGURES


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fabric_sim.paper", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated experiments (default: all): " + ", ".join(BY_KEY))
    ap.add_argument("--out", type=Path, default=REPO / "results" / "paper")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    keys = [k for k in args.only.split(",") if k]
    unknown = [k for k in keys if k not in BY_KEY]
    if unknown:
        print(f"error: --only: unknown {', '.join(unknown)} (known: {', '.join(BY_KEY)})", file=sys.stderr)
        return 2
    chosen = [e for e in EXPERIMENTS if not keys or e.key in keys]
    args.out.mkdir(parents=True, exist_ok=True)
    start, last = time.monotonic(), [0.0]

    def progress(line: str) -> None:
        if not args.quiet and (time.monotonic() - last[0] >= 2.0 or line.endswith("wall")):
            last[0] = time.monotonic()
            print(f"  [{time.monotonic() - start:5.0f} s] {line}", flush=True)

    runs, findings = {}, {}
    for i, exp in enumerate(chosen):
        print(f"[{i + 1}/{len(chosen)}] {exp.key}: {exp.title} ({exp.scenario})", flush=True)
        try:
            runs[exp.key] = run_experiment(exp, progress=progress)
        except ScenarioError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        findings[exp.key] = f = exp.measure(runs[exp.key])
        for row in f.rows:
            mark = {True: "ok  ", False: "FAIL", None: "    "}[row.ok]
            print(f"  {mark} {row.what}: {row.measured} (paper: {row.paper})", flush=True)
        # Draw every figure whose experiments are all in, and rewrite the gallery: a run cut short keeps its figures.
        for name, (needs, draw) in FIGURES.items():
            if exp.key in needs and all(k in runs for k in needs):
                draw(runs, args.out / f"{name}.png")
        gallery.write(args.out, EXPERIMENTS, runs, findings, FIGURES, sum(r.wall_s for rs in runs.values()
                                                                      for r in rs.results.values()))
        (args.out / "numbers.json").write_text(json.dumps(strict({k: f.numbers for k, f in findings.items()}), indent=1,
                                                          default=str, allow_nan=False) + "\n")
    rows = [r for f in findings.values() for r in f.rows if r.ok is not None]
    failed = [f"{k}: {r.what}" for k, f in findings.items() for r in f.rows if r.ok is False]
    print(f"\n{sum(r.ok for r in rows)} of {len(rows)} checks hold; {time.monotonic() - start:.0f} s wall. "
          f"Gallery: {args.out / 'paper.md'}; figures: " + ", ".join(sorted(p.name for p in args.out.glob('fig*.png'))))
    for line in failed:
        print(f"does not hold: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
