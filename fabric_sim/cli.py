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

from control_plane.pipelines import RESULTS, SCENARIOS
from fabric_sim import report, scenario
from fabric_sim.report import outdir, plots, sweep_out
from fabric_sim.runner import footprint, outcome, parallel
from fabric_sim.runner.run import RunResult
from fabric_sim.scenario.workload import Message

DEFAULT = SCENARIOS / "flagship.yaml"


def main(argv: list[str] | None = None) -> int:  # noqa: C901 (the command in order: each check refuses with exit 2 before any run)
    ap = argparse.ArgumentParser(
        prog="mrc-sim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("scenario", nargs="?", type=Path, default=DEFAULT, help="scenario file (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="results folder (default: results/<scenario name>)")
    ap.add_argument("--transport", action="append", default=[], help="run only this transport (repeatable)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--no-plots", action="store_true", help="write results.json and the CSV files, no PNG figures")
    ap.add_argument("--bmv2", action="store_true", help="also run every transport on the BMv2 fabric and compare "
                    "who got through (needs simple_switch_grpc and root; small topologies)")
    parallel.add_arguments(ap)
    args = ap.parse_args(argv)
    try:
        sc = scenario.load(args.scenario)
        opts = parallel.options(args)
    except scenario.ScenarioError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.bmv2 and sc.meta.get("sweep"):
        print(f"error: --bmv2: {args.scenario} is a sweep; BMv2 runs one scenario", file=sys.stderr)
        return 2
    chosen = [t for t in sc.transports if not args.transport or t.name in args.transport]
    unknown = set(args.transport) - {t.name for t in sc.transports}
    if unknown:
        print(f"error: --transport: {', '.join(sorted(unknown))} not in {args.scenario} "
              f"(it has {', '.join(t.name for t in sc.transports)})", file=sys.stderr)
        return 2
    out = args.out or RESULTS / sc.name
    problem = outdir.unwritable(out)  # refused before the run, not after it
    problem = f"--out: {problem}" if problem else (_bmv2_refusal(sc) if args.bmv2 else None)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    topo = sc.topology
    print(f"scenario {sc.name} ({args.scenario}): {topo.nics} NICs, {topo.switches} switches "
          f"({topo.planes} planes x {topo.t0_per_plane} T0 + {topo.t1_per_plane} T1), "
          f"{sc.workload.pattern} of {sc.workload.message_bytes:,} B, {len(sc.events)} timed events, "
          f"transports: {', '.join(t.name for t in chosen)}", flush=True)
    variants = scenario.variants(sc)
    tasks = sweep_out.tasks(variants, args.transport)
    try:  # a fabric too big for this machine: refused before anything is built
        for t in chosen:
            footprint.check(sc, t)
    except scenario.ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finished: dict[int, RunResult] = {}
    failed: dict[str, str] = {}  # run -> why it did not finish

    def done(i: int, r: RunResult) -> None:
        finished[i] = r
        if not sc.meta.get("sweep"):  # written as soon as it finishes: a later failure loses nothing
            report.write([finished[j] for j in sorted(finished)], out, failed)
        print(f"  {tasks[i].label}: {sum(m.done_at >= 0 for m in r.messages)}/{len(r.messages)} messages in "
              f"{r.end_us:,.0f} µs simulated, {r.wall_s:.1f} s wall, {r.packet_hops / max(r.wall_s, 1e-9):,.0f} "
              f"packet-hops/s", flush=True)

    try:
        parallel.run_all(tasks, opts, done)
    except parallel.RunFailed as exc:  # one run's crash costs nobody else's results
        if not finished and len(exc.failures) == 1 and not tasks[0].label.startswith(exc.failures[0][0]):
            print(f"error: {exc}", file=sys.stderr)  # nothing could start (a Ray cluster that does not answer)
            return 1
        for name, why in exc.failures:
            failed[name] = why.splitlines()[0]
            print(f"error: {name} failed: {failed[name]}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        return 130  # what finished is cached (run_all said so)
    results = [finished[j] for j in sorted(finished)]
    if sc.meta.get("sweep") and results:
        by_variant = sweep_out.group(variants, list(zip(tasks, results, strict=True)))
        print("\n" + sweep_out.table(by_variant))
        summary = sweep_out.write(by_variant, out, figures=not args.no_plots)
        print(f"\nresults in {out}: a folder per variant (results.json, messages.csv, timeline.csv), {summary.name}")
        return 0
    if args.bmv2:
        from fabric_sim.runner import on_bmv2  # needs the BMv2 harness

        logging.getLogger("finsy").setLevel(logging.ERROR)  # BMv2 has no gNMI: not worth a warning

        reason = on_bmv2.unsupported(sc)
        if reason:
            print(f"error: --bmv2: {reason}", file=sys.stderr)
            return 2
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
    if not results:
        print(f"error: no transport finished: {'; '.join(f'{k}: {v}' for k, v in failed.items())}", file=sys.stderr)
        return 1
    print()
    print(report.table(results))
    for r in results:
        for e in r.errors[:5]:
            print(f"error: {r.transport.name}: {e}")
        for line in r.undelivered:
            print(f"error: {r.transport.name}: {line}")
    report.write(results, out, failed)
    made = [] if args.no_plots else plots.all_figures(results, out)
    print(f"\nresults in {out}: results.json, messages.csv, timeline.csv"
          + (", " + ", ".join(p.name for p in made) if made else ""))
    bad = outcome.failures(results, failed)
    for line in bad:
        print(f"FAILED {line}", file=sys.stderr)
    return 1 if bad else 0


def _bmv2_refusal(sc: scenario.Scenario) -> str | None:
    from fabric_sim.runner import on_bmv2  # needs the BMv2 harness

    reason = on_bmv2.unsupported(sc)
    return f"--bmv2: {reason}" if reason else None


def _delivered(msgs: list[Message]) -> set[int]:
    return {m.id for m in msgs if m.done_at >= 0}


if __name__ == "__main__":
    raise SystemExit(main())
