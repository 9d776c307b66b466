"""mrc-sim: run a scenario on the timed fabric of reference models and
report per transport (terminal table, results.json, CSV, PNG figures).

    mrc-sim                          # scenarios/flagship.yaml (make run)
    mrc-sim SCENARIO.yaml [--out DIR] [--transport NAME ...] [--quiet]
    mrc-sim SCENARIO.yaml --bmv2     # also on the BMv2 fabric (small topologies)
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from control_plane.pipelines import REPO
from fabric_sim import outcome, plots, report, scenario
from fabric_sim.run import run
from fabric_sim.workload import Message

DEFAULT = REPO / "scenarios" / "flagship.yaml"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="mrc-sim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", nargs="?", type=Path, default=DEFAULT, help="scenario file (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="results folder (default: results/<scenario name>)")
    ap.add_argument("--transport", action="append", default=[], help="run only this transport (repeatable)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--bmv2", action="store_true", help="also run every transport on the BMv2 fabric and compare "
                    "who got through (needs simple_switch_grpc and root; small topologies)")
    args = ap.parse_args(argv)
    try:
        sc = scenario.load(args.scenario)
    except scenario.ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if sc.meta.get("sweep"):
        n = 1
        for _, vals in sc.meta["sweep"]:
            n *= len(vals)
        print(f"note: {args.scenario} sweeps {n} variants; this runs it as written "
              "(python -m fabric_sim.paper runs the paper's sweeps)", file=sys.stderr)
    chosen = [t for t in sc.transports if not args.transport or t.name in args.transport]
    unknown = set(args.transport) - {t.name for t in sc.transports}
    if unknown:
        print(f"error: --transport: {', '.join(sorted(unknown))} not in {args.scenario} "
              f"(it has {', '.join(t.name for t in sc.transports)})", file=sys.stderr)
        return 2
    out = args.out or REPO / "results" / sc.name
    topo = sc.topology
    print(f"scenario {sc.name} ({args.scenario}): {topo.nics} NICs, {topo.switches} switches "
          f"({topo.planes} planes x {topo.t0_per_plane} T0 + {topo.t1_per_plane} T1), "
          f"{sc.workload.pattern} of {sc.workload.message_bytes:,} B, {len(sc.events)} timed events, "
          f"transports: {', '.join(t.name for t in chosen)}", flush=True)
    results = []
    failed: dict[str, str] = {}  # transport -> why it did not finish
    for t in chosen:
        last = [0.0]

        def progress(line: str) -> None:
            if not args.quiet and time.monotonic() - last[0] >= 1.0:
                last[0] = time.monotonic()
                print(f"  {line}", file=sys.stderr, flush=True)

        try:
            r = run(sc, t, progress)
        except scenario.ScenarioError as exc:  # e.g. a fabric too big for this machine: refused before building
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # noqa: BLE001 (one transport's crash must not cost the others' results)
            failed[t.name] = f"{type(exc).__name__}: {exc}"
            print(f"error: {t.name} failed: {failed[t.name]}", file=sys.stderr, flush=True)
            continue
        results.append(r)
        report.write(results, out, failed)  # as soon as it finishes: a later failure loses nothing
        print(f"  {t.name}: {sum(m.done_at >= 0 for m in r.messages)}/{len(r.messages)} messages in "
              f"{r.end_us:,.0f} µs simulated, {r.wall_s:.1f} s wall, {r.packet_hops / max(r.wall_s, 1e-9):,.0f} "
              f"packet-hops/s", flush=True)
    if args.bmv2:
        from fabric_sim import on_bmv2  # noqa: PLC0415 (needs the BMv2 harness)

        logging.getLogger("finsy").setLevel(logging.ERROR)  # BMv2 has no gNMI: not worth a warning

        reason = on_bmv2.unsupported(sc)
        if reason:
            print(f"error: --bmv2: {reason}", file=sys.stderr)
            return 2
        for model in list(results):
            t = model.transport
            print(f"  {t.name}: starting the BMv2 fabric ({topo.switches} switches, NICs with QPs) ...", flush=True)
            r = on_bmv2.run_bmv2(sc, t)
            r.transport = type(t)(**{**t.__dict__, "name": f"{t.name}@bmv2"})
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


def _delivered(msgs: list[Message]) -> set[int]:
    return {m.id for m in msgs if m.done_at >= 0}


if __name__ == "__main__":
    raise SystemExit(main())
