"""make paper: run every experiment of the MRC paper's section 5.2 on the
timed fabric, write one PNG per figure and paper.md (the gallery) to
results/paper/ (or --out), and numbers.json with what each measured.

    python -m mrc_paper [--only fig10,fig14] [--out DIR] [--quiet] [--jobs N] [--ray-address ADDR]

Every run (each experiment's sweep variants and transports) is a task on
Ray, on this machine's cores unless --ray-address or RAY_ADDRESS names a
cluster; finished runs are cached in results/cache/, so a second run after
an interruption executes only what was missing (--no-cache: all of them).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from control_plane.pipelines import RESULTS
from fabric_sim.report import outdir, strict, sweep_out
from fabric_sim.runner import parallel
from fabric_sim.runner.parallel import Task
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario.fields import ScenarioError
from mrc_paper import gallery
from mrc_paper.experiments import Experiment, Finding, RunKey, Runs, Values, fill, tasks
from mrc_paper.figures import FIGURES
from mrc_paper.registry import BY_KEY, CLAIMS, EXPERIMENTS


def _planned(chosen: list[Experiment]) -> dict[str, tuple[Runs, list[tuple[RunKey, Task]]]] | None:
    """Every chosen experiment's runs, every scenario checked before
    anything runs; None, with the errors printed, if one has any."""
    plan: dict[str, tuple[Runs, list[tuple[RunKey, Task]]]] = {}
    for exp in chosen:
        try:
            plan[exp.key] = tasks(exp)
        except ScenarioError as exc:
            for line in exc.lines():
                print(f"error: {exp.key}: {line}", file=sys.stderr)
            return None
    return plan


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mrc_paper", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated experiments (default: all): " + ", ".join(BY_KEY))
    ap.add_argument("--out", type=Path, default=RESULTS / "paper",
                    help="where the figures, paper.md, numbers.json and runs/ go (default: %(default)s)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    parallel.add_arguments(ap)
    args = ap.parse_args(argv)
    keys = [k for k in args.only.split(",") if k]
    unknown = [k for k in keys if k not in BY_KEY]
    if unknown:
        print(f"error: --only: unknown {', '.join(unknown)} (known: {', '.join(BY_KEY)})", file=sys.stderr)
        return 2
    chosen = [e for e in EXPERIMENTS if not keys or e.key in keys]
    problem = outdir.unwritable(args.out)
    if problem:
        print(f"error: --out: {problem}", file=sys.stderr)
        return 2
    try:
        opts = parallel.options(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    plan = _planned(chosen)
    if plan is None:
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    flat = [(e, i) for e in chosen for i in range(len(plan[e.key][1]))]  # every run of every experiment, in order
    got: dict[str, dict[int, RunResult]] = {e.key: {} for e in chosen}
    runs: dict[str, Runs] = {}
    findings: dict[str, Finding] = {}

    def arrived(n: int, r: RunResult) -> None:
        exp, i = flat[n]
        got[exp.key][i] = r
        todo = plan[exp.key][1]
        if len(got[exp.key]) == len(todo):
            runs[exp.key] = fill(plan[exp.key][0], todo, [got[exp.key][j] for j in range(len(todo))])
            _finish(exp, runs, findings, args.out, len(chosen))

    try:
        parallel.run_all([t for e in chosen for _, t in plan[e.key][1]], opts, arrived)
    except parallel.RunFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130  # what finished is cached (run_all said so)
    res = gallery.results(CLAIMS, findings)
    bad = [k for k, f in findings.items() for run, ok in f.delivery if not ok]
    print(f"\n{gallery.tally(res)} {time.monotonic() - start:.0f} s wall. Gallery: {args.out / 'paper.md'}; "
          "figures: " + ", ".join(sorted(p.name for p in args.out.glob('fig*.png'))))
    for cid, h in res.items():
        if h is not None and not h.ok:
            print(f"not reproduced: {cid}: {h.cause}")
    for k in bad:
        print(f"delivery failed: {k}")
    return 0


def _finish(exp: Experiment, runs: dict[str, Runs], findings: dict[str, Finding], out: Path, total: int) -> None:
    """An experiment whose runs are all in: measure it, keep its runs
    (out/runs/<key>/, as mrc-sim writes a sweep), draw every figure whose
    experiments are all in, and rewrite the gallery: a run cut short keeps
    its figures."""
    print(f"[{len(runs)}/{total}] {exp.key}: {exp.title} ({exp.scenario})", flush=True)
    findings[exp.key] = f = exp.measure(runs[exp.key])
    for h in f.held:
        mark = "ok  " if h.ok else "FAIL" if h.tested else "n/t "
        print(f"  {mark} {h.claim}: {h.measured}" + (f" ({h.cause})" if h.cause else ""), flush=True)
    by_variant: dict[Values, list[RunResult]] = {}
    for (vals, _), r in runs[exp.key].results.items():
        by_variant.setdefault(vals, []).append(r)
    sweep_out.write([(dict(v), rs) for v, rs in by_variant.items()], out / "runs" / exp.key, figures=False)
    for name, (needs, draw) in FIGURES.items():
        if exp.key in needs and all(k in runs for k in needs):
            draw(runs, out / f"{name}.png")
    gallery.write(out, EXPERIMENTS, runs, findings, FIGURES,
                  sum(r.wall_s for rs in runs.values() for r in rs.results.values()), CLAIMS)
    ordered = {k: findings[k].numbers for k in BY_KEY if k in findings}  # not the order runs happened to end in
    (out / "numbers.json").write_text(json.dumps(strict(ordered), indent=1, default=str, allow_nan=False) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
