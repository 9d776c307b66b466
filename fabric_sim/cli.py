"""mrc-sim: run a scenario on the timed fabric of reference models and
report per transport (terminal table, results.json, CSV, PNG figures).

    mrc-sim                          # scenarios/flagship.yaml (make run)
    mrc-sim SCENARIO.yaml [--out DIR] [--transport NAME ...] [--quiet]
    mrc-sim SCENARIO.yaml --bmv2     # also on the BMv2 fabric (small topologies)
    mrc-sim SWEEP.yaml               # a file with `sweep:`: every variant, each in a subfolder
    mrc-sim ... --jobs 1             # one run after another, without Ray; --ray-address: on a cluster
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from control_plane import outputs
from control_plane.config import printable
from control_plane.pipelines import RESULTS, SCENARIOS
from fabric_sim import report, scenario
from fabric_sim.report import saved, steps, sweep_live, sweep_out
from fabric_sim.runner import outcome, parallel, stop
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario.message import Message

DEFAULT = SCENARIOS / "flagship.yaml"


def main(argv: list[str] | None = None) -> int:
    """mrc-sim; an input it cannot take is one line and exit 2, never a
    traceback; SIGINT and SIGTERM stop it keeping what finished (runner/stop.py)."""
    with stop.handled(), outputs.quiet_stdout():
        try:
            return _main(argv)
        except KeyboardInterrupt as exc:  # before any run: nothing to keep
            return stop.status(exc)
        except Exception as exc:  # a last resort: every bad input should have been refused by name before this
            print(f"error: {printable(f'{type(exc).__name__}: {exc}')} (a bug of mrc-sim: please report it)",
                  file=sys.stderr)
            return 1


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="mrc-sim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("scenario", nargs="?", type=Path, default=DEFAULT, help="scenario file (default: %(default)s)")
    ap.add_argument("--out", help="results folder (default: results/<scenario name>; not the current "
                                             "folder, not the run cache)")
    ap.add_argument("--transport", action="append", default=[], help="run only this transport (repeatable)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--no-plots", action="store_true", help="write results.json and the CSV files, no PNG figures")
    ap.add_argument("--clear", action="store_true", help="a sweep into a folder holding another run's results: "
                    "remove them first (only what runs write; without --clear such a folder is refused)")
    ap.add_argument("--bmv2", action="store_true", help="also run every transport on the BMv2 fabric and compare "
                    "who got through (needs simple_switch_grpc and root; small topologies)")
    parallel.add_arguments(ap)
    return ap


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    try:
        sc = scenario.load(args.scenario)
        opts = parallel.options(args)
        variants = scenario.variants(sc)  # every variant checked before any runs
    except scenario.ScenarioError as exc:
        exc.report()
        return 2
    except ValueError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return 2
    chosen = [t for t in sc.transports if not args.transport or t.name in args.transport]
    tasks = sweep_out.tasks(variants, args.transport)
    out = RESULTS / sc.name if args.out is None else Path(args.out)
    problem = _refusal(args, sc, variants, tasks, out, opts)
    if problem:
        print(f"error: {printable(problem, 400)}", file=sys.stderr)
        return 2
    topo = sc.topology
    print(f"scenario {sc.name} ({printable(str(args.scenario))}): {topo.nics} NICs, {topo.switches} switches "
          f"({topo.planes} planes x {topo.t0_per_plane} T0 + {topo.t1_per_plane} T1), "
          f"{_workload(sc.workload)}, {len(sc.events)} timed events, "
          f"transports: {', '.join(t.name for t in chosen)}", flush=True)
    if sc.meta.get("sweep"):
        return _sweep(args, variants, tasks, opts, out)
    return _single(args, sc, tasks, opts, out)


def _workload(w: scenario.Workload) -> str:
    """The workload in a few words."""
    if w.trace is None:
        return f"{w.pattern} of {w.size:,} B"
    nodes = sum(len(ops) for ops in w.trace.ranks)
    return (f"Chakra trace {w.trace.folder} ({len(w.trace.ranks)} ranks, {nodes:,} nodes) x {w.iterations} "
            f"iteration{'s' * (w.iterations > 1)}")


def _refusal(args: argparse.Namespace, sc: scenario.Scenario, variants: list[tuple[dict[str, Any], scenario.Scenario]],
             tasks: list[parallel.Task], out: Path, opts: parallel.Options) -> str | None:
    """Why the command cannot run as asked, before anything runs (None: it can)."""
    if args.bmv2 and sc.meta.get("sweep"):
        return f"--bmv2: {args.scenario} is a sweep; BMv2 runs one scenario"
    have = [t.name for t in sc.transports]
    unknown = set(args.transport) - set(have)
    if unknown:
        return f"--transport: {', '.join(sorted(unknown))} not in {args.scenario} (it has {', '.join(have)})"
    if not tasks:  # a sweep may rename its transports
        names = dict.fromkeys(t.name for _, v in variants for t in v.transports)
        return (f"--transport: no variant has {', '.join(args.transport)} (asked: {', '.join(args.transport)}; "
                f"the variants have: {', '.join(names)})")
    problem = outputs.folder_refusal(out if args.out is None else args.out)  # before the run, not after it
    if problem:
        return f"--out: {problem}"
    if sc.meta.get("sweep"):
        problem = _used(args, out, variants)
        if problem:
            return problem
    if args.bmv2:
        return _bmv2_refusal(sc)
    try:  # a fabric or workload too big for this machine: refused before anything is built
        parallel.fits(tasks, opts)
    except scenario.ScenarioError as exc:
        return str(exc)
    return None


def _used(args: argparse.Namespace, out: Path, variants: list[tuple[dict[str, Any], scenario.Scenario]]) -> str | None:
    """A sweep into a folder holding results it would leave beside its own
    (another sweep's variants): refused, or with --clear emptied of what
    runs write. The same sweep again (resuming it) replaces its own."""
    names = {sweep_out.folder(i, len(variants), vals) for i, (vals, _) in enumerate(variants)}
    left = sweep_out.leftovers(out, names)
    if not left:
        return None
    if args.clear:
        problem = sweep_out.clear(out)
        return f"--clear: {problem}: not removed; choose another --out" if problem else None
    folders = [n for n in left if (out / n).is_dir()]
    what = ", ".join([n for n in left if n not in folders][:3] + [f"{len(folders)} variant folders"] * bool(folders))
    return (f"--out: {printable(str(out))} holds an earlier run's results ({what}): --clear removes them first, or "
            "choose another --out")


def _run(tasks: list[parallel.Task], opts: parallel.Options, done: Any, failed: dict[str, str]) -> int | None:
    """run_all, with each run's crash kept in `failed`; an exit status if nothing could start."""
    try:
        parallel.run_all(tasks, opts, done)
    except parallel.RunFailed as exc:  # one run's crash costs nobody else's results
        labels = {t.label for t in tasks}
        if len(exc.failures) == 1 and exc.failures[0][0] not in labels:
            print(f"error: {printable(str(exc), 400)}", file=sys.stderr)  # a Ray cluster that does not answer
            return 1
        for name, why in exc.failures:
            failed[name] = printable(why.splitlines()[0] if why else "", 400)
            print(f"error: {name} failed: {failed[name]}", file=sys.stderr, flush=True)
    return None


def _finished_line(label: str, r: RunResult) -> str:
    return (f"  {label}: {sum(m.done_at >= 0 for m in r.messages)}/{len(r.messages)} messages in "
            f"{r.end_us:,.0f} µs simulated, {r.wall_s:.1f} s wall, {r.packet_hops / max(r.wall_s, 1e-9):,.0f} "
            f"packet-hops/s")


def _sweep(args: argparse.Namespace, variants: list[tuple[dict[str, Any], scenario.Scenario]],
           tasks: list[parallel.Task], opts: parallel.Options, out: Path) -> int:
    """Every variant, each written as it finishes; exit 1 naming each variant and transport that failed."""
    writer = sweep_live.Writer(variants, tasks, out, figures=not args.no_plots)  # summary.csv at each variant
    finished: dict[int, RunResult] = {}
    failed: dict[str, str] = {}

    def done(i: int, r: RunResult) -> None:
        finished[i] = r
        writer.add(i, r)
        print(_finished_line(tasks[i].label, r), flush=True)

    try:
        status = _run(tasks, opts, done, failed)
    except KeyboardInterrupt as exc:
        writer.cut_off(f"interrupted by {stop.why(exc)}")
        print(f"interrupted by {stop.why(exc)}: {len(writer.whole)} of {len(writer.wanted)} variants finished, "
              f"written to {printable(str(out))} (summary.csv says which are missing){stop.kept(exc)}",
              file=sys.stderr, flush=True)
        return stop.status(exc)
    if status is not None:
        return status
    writer.finish(failed)
    results = [(tasks[i], finished[i]) for i in sorted(finished)]
    if results:
        print("\n" + sweep_out.table(sweep_out.group(variants, results)))
    print(f"\nresults in {printable(str(out))}: a folder per variant (results.json, messages.csv, timeline.csv), "
          "summary.csv" + (f" ({writer.missing} variants missing)" if writer.missing else ""))
    bad = [f"{label}: did not finish ({why})" for label, why in failed.items()]
    bad += [f"{t.label}{line.removeprefix(r.transport.name)}" for t, r in results for line in outcome.failures([r], {})]
    for line in bad:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if bad else 0


def _single(args: argparse.Namespace, sc: scenario.Scenario, tasks: list[parallel.Task], opts: parallel.Options,
            out: Path) -> int:
    """One scenario's transports, results.json rewritten as each finishes
    (naming those still running), and once more, marked, if interrupted."""
    finished: dict[int, RunResult] = {}
    failed: dict[str, str] = {}  # run -> why it did not finish

    def results() -> list[RunResult]:
        return [finished[j] for j in sorted(finished)]

    def unfinished(why: str) -> dict[str, str]:
        return {t.label: why for i, t in enumerate(tasks) if i not in finished and t.label not in failed}

    def done(i: int, r: RunResult) -> None:
        finished[i] = r  # written as soon as it finishes: a later failure loses nothing
        saved.save(out, sc, results(), failed, unfinished("still running when this was written"))
        print(_finished_line(tasks[i].label, r), flush=True)

    try:
        status = _run(tasks, opts, done, failed)
    except KeyboardInterrupt as exc:
        cut = unfinished(f"interrupted by {stop.why(exc)}")
        saved.save(out, sc, results(), failed, cut)
        print(f"interrupted by {stop.why(exc)}: {len(finished)} of {len(tasks)} runs finished, written to "
              f"{printable(str(out / 'results.json'))} (results.json names the {len(cut)} cut off){stop.kept(exc)}",
              file=sys.stderr, flush=True)
        return stop.status(exc)
    if status is not None:
        return status
    got = results()
    if args.bmv2:
        _on_bmv2(sc, got)
    if not got:
        asked = ", ".join(args.transport) or "every transport"
        print(f"error: no transport finished (asked: {asked}; {args.scenario} has: "
              f"{', '.join(t.name for t in sc.transports)}): {'; '.join(f'{k}: {v}' for k, v in failed.items())}",
              file=sys.stderr)
        return 1
    _print_results(got)
    made = saved.save(out, sc, got, failed, figures=not args.no_plots)
    print(f"\nresults in {printable(str(out))}: results.json, messages.csv, timeline.csv"
          + (", steps.csv, collectives.csv" if any(r.steps is not None for r in got) else "")
          + (", " + ", ".join(made) if made else ""))
    bad = outcome.failures(got, failed)
    for line in bad:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if bad else 0


def _print_results(got: list[RunResult]) -> None:
    """The runs' table (a trace's iterations beside it) and their errors."""
    print()
    print(report.table(got))
    if any(r.steps is not None for r in got):  # a trace: its iterations, the transports side by side
        print("\n" + steps.table(got))
    for r in got:
        for e in r.errors[:5]:
            print(f"error: {r.transport.name}: {e}")
        for line in r.undelivered:
            print(f"error: {r.transport.name}: {line}")


def _on_bmv2(sc: scenario.Scenario, results: list[RunResult]) -> None:
    """Each transport again on the BMv2 fabric, appended to `results`."""
    from fabric_sim.runner import on_bmv2  # needs the BMv2 harness

    logging.getLogger("finsy").setLevel(logging.ERROR)  # BMv2 has no gNMI: not worth a warning
    topo = sc.topology
    for model in list(results):
        t = model.transport
        print(f"  {t.name}: starting the BMv2 fabric ({topo.switches} switches, NICs with QPs) ...", flush=True)
        r = on_bmv2.run_bmv2(sc, t)
        r.transport = t.model_copy(update={"name": f"{t.name}@bmv2"})
        results.append(r)
        same = _delivered(model.messages) == _delivered(r.messages)
        print(f"  {t.name}: BMv2 delivered {sum(m.done_at >= 0 for m in r.messages)}/{len(r.messages)} in "
              f"{r.wall_s:.1f} s wall; {'the same messages as' if same else 'NOT the same messages as'} the models",
              flush=True)


def _bmv2_refusal(sc: scenario.Scenario) -> str | None:
    from fabric_sim.runner import on_bmv2  # needs the BMv2 harness

    reason = on_bmv2.unsupported(sc)
    return f"--bmv2: {reason}" if reason else None


def _delivered(msgs: list[Message]) -> set[int]:
    return {m.id for m in msgs if m.done_at >= 0}


if __name__ == "__main__":
    raise SystemExit(main())
