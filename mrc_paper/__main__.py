"""make paper: run every experiment of the MRC paper's section 5.2 on the
timed fabric, write one PNG per figure and paper.md (the gallery) to
results/paper/ (or --out), and numbers.json with what each measured.

    python -m mrc_paper [--scale paper] [--only fig10,fig14] [--out DIR] [--quiet] [--jobs N] [--ray-address ADDR]

--scale paper (make paper SCALE=paper) also runs Figs. 15-17 on the
paper's 64 ranks (scenarios/paper/scale/), into results/paper-scale/, and
holds each claim at the largest scale that tested it. The expected CPU
time of what is left to run is printed before anything runs.

Every run (each experiment's sweep variants and transports) is a task on
Ray, on this machine's cores unless --ray-address or RAY_ADDRESS names a
cluster; finished runs are cached in results/cache/, so a second run after
an interruption executes only what was missing (--no-cache: all of them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from control_plane import outputs
from control_plane.config import printable
from control_plane.pipelines import RESULTS
from fabric_sim.report import strict, sweep_out
from fabric_sim.runner import parallel, run_cache, stop
from fabric_sim.runner.parallel import Task
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario.fields import ScenarioError
from mrc_paper import budget, gallery
from mrc_paper.claims import Claim
from mrc_paper.experiments import (
    Experiment,
    Finding,
    Held,
    RunKey,
    Runs,
    Scale,
    Values,
    fill,
    over_seeds,
    reseeded,
    seed_tasks,
    tasks,
)
from mrc_paper.figures import FIGURES
from mrc_paper.registry import CLAIMS, EXPERIMENTS, at

# An experiment's runs: its own (label None), then the seeded claims' runs per extra seed ((claims, k)): claims
# of one experiment that repeat the same runs (their seed, variants and transports) share them.
Job = tuple[tuple[tuple[str, ...], int] | None, Runs, list[tuple[RunKey, Task]]]


def _planned(chosen: list[Experiment]) -> dict[str, list[Job]] | None:
    """Every chosen experiment's runs, every scenario checked before
    anything runs; None, with the errors printed, if one has any."""
    plan: dict[str, list[Job]] = {}
    for exp in chosen:
        try:
            plan[exp.key] = [(None, *tasks(exp))]
            groups: dict[str, list[Claim]] = {}
            for c in CLAIMS.values():
                if c.experiment == exp.key and c.seeded:
                    same = json.dumps([c.vary, c.seeded, c.seed_on, c.seed_transports], sort_keys=True)
                    groups.setdefault(same, []).append(c)
            for cs in groups.values():
                ids = tuple(c.id for c in cs)
                plan[exp.key] += [((ids, k), *seed_tasks(exp, cs[0], k)) for k in range(1, cs[0].seeded)]
        except ScenarioError as exc:
            exc.report(f"{exp.key}: ")
            return None
    return plan


def _too_big(plan: dict[str, list[Job]], opts: parallel.Options) -> bool:
    """Whether a run, or the runs at once, would not fit in memory (said in one line), before any runs."""
    try:
        parallel.fits([t for jobs in plan.values() for _, _, todo in jobs for _, t in todo], opts)
    except ScenarioError as exc:
        print(f"error: {printable(str(exc), 400)}", file=sys.stderr)
        return True
    return False


def measure(exp: Experiment, jobs: list[Job], claims: dict[str, Claim] = CLAIMS) -> Finding:
    """The experiment's finding; each seeded claim held over its seeds (the
    experiment measured again with each seed's runs in place)."""
    base = jobs[0][1]
    f = exp.measure(base)
    again: dict[str, list[Held]] = {}
    for label, runs, _ in jobs[1:]:
        assert label is not None
        other = exp.measure(reseeded(base, runs))
        for cid in label[0]:
            again.setdefault(cid, []).append(other.result(cid))
    f.held = [over_seeds(claims[h.claim], h, again[h.claim]) if h.claim in again else h for h in f.held]
    return exp.stamp(f)


def main(argv: list[str] | None = None) -> int:
    """make paper; SIGINT and SIGTERM stop it keeping what finished, the
    gallery naming what they cut off (fabric_sim/runner/stop.py)."""
    with stop.handled(), outputs.quiet_stdout():
        try:
            return _main(argv)
        except KeyboardInterrupt as exc:  # before any run: nothing to keep
            return stop.status(exc)


def _main(argv: list[str] | None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mrc_paper", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", choices=[s.name.lower() for s in Scale], default="quick",
                    help="quick: the gallery sized for a laptop (default); paper: also Figs. 15-17 on 64 ranks")
    ap.add_argument("--only", default=None, help="comma-separated experiments (default: all of the scale's): "
                    + ", ".join(e.key for e in EXPERIMENTS))
    ap.add_argument("--out", default=None, help="where the figures, paper.md, numbers.json and runs/ go "
                    f"(default: {RESULTS / 'paper'}, or {RESULTS / 'paper-scale'} with --scale paper)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    parallel.add_arguments(ap)
    args = ap.parse_args(argv)
    scale = Scale[args.scale.upper()]
    known = [e.key for e in at(scale)]
    keys = [k for k in (args.only or "").split(",") if k]
    if not keys and args.only is not None:  # `--only ''` or `--only ,`: not every experiment
        print(f"error: --only: empty: name at least one experiment (known: {', '.join(known)})", file=sys.stderr)
        return 2
    unknown = [k for k in keys if k not in known]
    if unknown:
        print(printable(f"error: --only: unknown {', '.join(unknown)} at --scale {args.scale} (known: "
                        f"{', '.join(known)}" + ("; the _64 experiments run with --scale paper"
                                                  if any(k.endswith("_64") for k in unknown) else "") + ")", 1000),
              file=sys.stderr)
        return 2
    chosen = [e for e in at(scale) if not keys or e.key in keys]
    out = RESULTS / ("paper" if scale == Scale.QUICK else "paper-scale") if args.out is None else Path(args.out)
    problem = outputs.folder_refusal(out if args.out is None else args.out)
    if problem:
        print(f"error: --out: {problem}", file=sys.stderr)
        return 2
    try:
        opts = parallel.options(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    plan = _planned(chosen)
    if plan is None or _too_big(plan, opts):
        return 2
    out.mkdir(parents=True, exist_ok=True)
    if not args.quiet:
        print(_estimate(plan, opts), flush=True)
    start = time.monotonic()
    findings = _execute(chosen, plan, opts, out, at(scale))
    if isinstance(findings, int):
        return findings
    res = gallery.results(CLAIMS, findings)
    print(f"\n{gallery.tally(res)} {time.monotonic() - start:.0f} s wall. Gallery: {printable(str(out / 'paper.md'))}; "
          "figures: " + ", ".join(sorted(p.name for p in out.glob('fig*.png'))))
    for cid, h in res.items():
        if h is not None and not h.ok:
            print(f"not reproduced: {cid}: {h.cause}")
    for line in undelivered(findings):
        print(line)
    return 0


def undelivered(findings: dict[str, Finding]) -> list[str]:
    """A line per run that did not deliver every message exactly once,
    naming the run: a baseline that does not finish can be what its figure
    shows (fig09c's oblivious spraying with 20 links down)."""
    return [f"not every message delivered exactly once: {k}: {run} (counted apart from the claims)"
            for k, f in findings.items() for run, ok in f.delivery if not ok]


def _estimate(plan: dict[str, list[Job]], opts: parallel.Options) -> str:
    """The expected CPU and wall time of the runs the cache does not hold."""
    every = [t for jobs in plan.values() for _, _, todo in jobs for _, t in todo]
    cache = run_cache.Cache(opts.cache) if opts.cache else None
    left = [t for t in every if not (cache and cache.has(t.scenario, t.transport))]
    workers = opts.jobs or os.cpu_count() or 1
    return budget.line(left, len(every) - len(left), workers)


def _execute(chosen: list[Experiment], plan: dict[str, list[Job]], opts: parallel.Options,
             out: Path, scale_experiments: list[Experiment]) -> dict[str, Finding] | int:
    """Every run of every chosen experiment; each experiment finished (measured,
    drawn, written) as its last run comes in. An exit code if stopped."""
    # every run of every experiment, in order: (experiment, job, task)
    flat = [(e, j, i) for e in chosen for j, job in enumerate(plan[e.key]) for i in range(len(job[2]))]
    got: dict[str, dict[tuple[int, int], RunResult]] = {e.key: {} for e in chosen}
    runs: dict[str, Runs] = {}
    findings: dict[str, Finding] = {}

    def arrived(n: int, r: RunResult) -> None:
        exp, j, i = flat[n]
        got[exp.key][j, i] = r
        jobs = plan[exp.key]
        if len(got[exp.key]) == sum(len(todo) for _, _, todo in jobs):
            for jj, (_, rs, todo) in enumerate(jobs):
                fill(rs, todo, [got[exp.key][jj, k] for k in range(len(todo))])
            runs[exp.key] = jobs[0][1]
            _finish(exp, jobs, runs, findings, out, len(chosen), scale_experiments)

    try:
        parallel.run_all([t for e in chosen for _, _, todo in plan[e.key] for _, t in todo], opts, arrived)
    except parallel.RunFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:  # the gallery names what was cut off; what finished is kept
        why = f"interrupted by {stop.why(exc)}"
        cut = {e.key: why for e in chosen if e.key not in findings}
        _gallery(out, scale_experiments, runs, findings, cut)
        print(f"{why}: {len(findings)} of {len(chosen)} experiments finished, written to "
              f"{printable(str(out / 'paper.md'))} (it names the {len(cut)} cut off){stop.kept(exc)}",
              file=sys.stderr, flush=True)
        return stop.status(exc)
    return findings


def _gallery(out: Path, scale_experiments: list[Experiment], runs: dict[str, Runs], findings: dict[str, Finding],
             cut_off: dict[str, str] | None = None) -> None:
    """paper.md and numbers.json as they stand, each written whole."""
    with outputs.replacing(out / "paper.md") as tmp:
        gallery.write(tmp, scale_experiments, runs, findings, FIGURES,
                      sum(r.wall_s for rs in runs.values() for r in rs.results.values()), CLAIMS, cut_off)
    # in the registry's order, not the order runs happened to end in
    ordered = {e.key: findings[e.key].numbers for e in EXPERIMENTS if e.key in findings}
    with outputs.replacing(out / "numbers.json") as tmp:
        tmp.write_text(json.dumps(strict(ordered), indent=1, default=str, allow_nan=False) + "\n")


def _finish(exp: Experiment, jobs: list[Job], runs: dict[str, Runs], findings: dict[str, Finding], out: Path,
            total: int, scale_experiments: list[Experiment]) -> None:
    """An experiment whose runs are all in: measure it, keep its runs
    (out/runs/<key>/, as mrc-sim writes a sweep), draw every figure whose
    experiments are all in, and rewrite the gallery: a run cut short keeps
    its figures."""
    print(f"[{len(runs)}/{total}] {exp.key}: {exp.title} ({exp.scenario})", flush=True)
    findings[exp.key] = f = measure(exp, jobs)
    for h in f.held:
        mark = "ok  " if h.ok else "FAIL" if h.tested else "n/t "
        print(f"  {mark} {h.claim}: {h.measured}" + (f" ({h.cause})" if h.cause else ""), flush=True)
    by_variant: dict[Values, list[RunResult]] = {}
    for (vals, _), r in runs[exp.key].results.items():
        by_variant.setdefault(vals, []).append(r)
    for _, rs, _ in jobs[1:]:  # a seeded claim's runs: the variant's folder names its seeds
        for (vals, _), r in rs.results.items():
            by_variant.setdefault(vals + (("seed", rs.scenario.seed), ("ecmp_seed", rs.scenario.ecmp_seed)),
                                  []).append(r)
    sweep_out.write([(dict(v), rs) for v, rs in by_variant.items()], out / "runs" / exp.key, figures=False)
    for name, (needs, draw) in FIGURES.items():
        if exp.key in needs and all(k in runs for k in needs):
            with outputs.replacing(out / f"{name}.png") as tmp:
                draw(runs, tmp)
    _gallery(out, scale_experiments, runs, findings)


if __name__ == "__main__":
    raise SystemExit(main())
