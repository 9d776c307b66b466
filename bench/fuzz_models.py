"""100,000 seeded fuzz frames through each reference model:
every frame output or counted under exactly one drop reason, no exception;
frames per second and the outcome mix."""

from __future__ import annotations

import time
from collections import Counter

from bench import sections
from nic_model.nic_pipeline import NicModel
from ptf_tests.lib import cache_check, fuzz, nic_fabric
from ptf_tests.lib.fabric import T0
from switch_model.pipeline import SwitchModel

COUNT = 100_000


def _run(program: str, model: SwitchModel | NicModel, seed: int) -> tuple[str, bool]:
    frames = fuzz.frames(program, COUNT, seed=seed, on_wire=False)
    bad = 0
    out = 0
    t0 = time.perf_counter()
    for port, raw in frames:
        before = sum(model.drops.values())
        res = model.process(port, raw)
        produced = bool(res) if isinstance(res, list) else res is not None
        out += produced
        bad += (sum(model.drops.values()) - before) + produced != 1
    secs = time.perf_counter() - t0
    top = ", ".join(f"{r} {n:,}" for r, n in Counter(model.drops).most_common(4))
    ok = bad == 0
    return (f"- {program} model: {COUNT:,} frames in {secs:.1f} s ({COUNT / secs:,.0f} frames/s); "
            f"output {out:,}, dropped {COUNT - out:,} (top: {top}); frames not accounted for: {bad}"), ok


def run() -> list[str]:
    sw = SwitchModel(T0.name)
    sw.install(T0.entries())
    nic = NicModel(nic_fabric.NIC.name)
    nic.install(nic_fabric.NIC.entries())
    lines = ["## Fuzzing the reference models (seeded; random, truncated, bit-flipped, extension headers, jumbo, "
             "shorter than Ethernet)"]
    for program, model, seed in (("switch", sw, 101), ("nic", nic, 102)):
        line, ok = _run(program, model, seed)
        lines.append(line + ("" if ok else "  **FAILED**"))
    for program, seed in (("switch", 201), ("nic", 202)):
        t0 = time.perf_counter()
        bad = cache_check.compare(program, COUNT, seed)
        lines.append(f"- {program} model, decision cache against the full pipeline: {COUNT:,} frames with depths and "
                     f"tables changing, {bad} differences ({time.perf_counter() - t0:.1f} s)"
                     + ("" if bad == 0 else "  **FAILED**"))
    for program, seed in (("switch", 301), ("nic", 302)):
        t0 = time.perf_counter()
        bad = cache_check.compare_elided(program, COUNT, seed)
        lines.append(f"- {program} model, a payload's zeros counted (`pad`) against carried: {COUNT:,} frames, "
                     f"{bad} differences ({time.perf_counter() - t0:.1f} s)" + ("" if bad == 0 else "  **FAILED**"))
    for program, seed in (("switch", 401), ("nic", 402)):
        t0 = time.perf_counter()
        bad = cache_check.compare_fields(program, COUNT, seed)
        lines.append(f"- {program} model, given header fields (the timed fabric's) against bytes (the PTF model "
                     f"target's), outputs serialized: {COUNT:,} frames, {bad} differences "
                     f"({time.perf_counter() - t0:.1f} s)" + ("" if bad == 0 else "  **FAILED**"))
    return lines


def main(argv: list[str] | None = None) -> None:
    sections.main("python -m bench.fuzz_models", __doc__, run, argv)


if __name__ == "__main__":
    main()
