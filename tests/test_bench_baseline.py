"""The timed-fabric bench beside an earlier build (bench/sim_scale.py,
BENCH_BASELINE): the same runs there, and this build's CPU over its."""

from bench import sim_scale


def test_without_a_baseline_one_line_says_how_to_name_one(monkeypatch):
    monkeypatch.delenv("BENCH_BASELINE", raising=False)
    assert sim_scale.beside_baseline({}) == ["No earlier build beside (BENCH_BASELINE names one's python)."]


def test_each_run_gets_the_ratio_of_cpu_seconds_to_the_earlier_build(monkeypatch):
    monkeypatch.setenv("BENCH_BASELINE", "/old/bin/python -P")
    asked = []

    def child(build, args, timeout):
        asked.append((build, args))
        return {"cpu_s": 40.0, "hops": 4_000} if args == ["--nics", "1024"] else None

    monkeypatch.setattr(sim_scale, "_child", child)
    lines = sim_scale.beside_baseline({"flagship": {"cpu_s": 3.0, "hops": 10}, "1,024 NICs": {"cpu_s": 30.0,
                                                                                            "hops": 3_000}})
    assert asked[1] == (["/old/bin/python", "-P"], ["--nics", "1024"])
    assert lines[-2:] == ["| flagship | | | not run | | |", "| 1,024 NICs | 30.0 | 40.0 | 0.75x | 3,000 | 4,000 |"]


def _fig(cpu_s: float, hops: int, wall_s: float | None = None, rss: float = 1.0) -> dict:
    return {"cpu_s": cpu_s, "hops": hops, "wall_s": cpu_s if wall_s is None else wall_s, "rss_gib": rss}


def test_each_target_is_held_against_its_baseline_or_counted_not_held():
    sizes = {64: _fig(1.0, 250_000), 1024: _fig(30.0, 4_000_000), 8192: _fig(150.0, 30_000_000, rss=2.5),
             16384: _fig(400.0, 60_000_000, rss=5.0)}
    rows = sim_scale.targets(_fig(1.0, 500_000), sizes, {"cpu_s": 10.0})
    marks = [r.rsplit("|", 2)[-2].strip() for r in rows[4:]]
    # 3.00x htsim: held; 500,000 hops/CPU-s is over twice 242,737; 4.0 -> 5.0 µs per hop is +25%; 150 s, 2.5 GiB.
    assert marks == ["✓", "✓", "✓", "✓", "✓"], rows
    worse = {**sizes, 1024: _fig(31.0, 4_000_000), 8192: _fig(150.0, 30_000_000, wall_s=201.0)}
    del worse[16384]
    rows = sim_scale.targets(_fig(1.0, 485_000), worse, None)
    marks = [r.rsplit("|", 2)[-2].strip() for r in rows[4:]]
    assert marks == ["not held", "✗", "✓", "✗", "✗"], rows
    rows = sim_scale.targets(_fig(1.0, 500_000), {**sizes, 8192: _fig(161.0, 30_000_000)}, {"cpu_s": 10.0})
    assert rows[6].endswith("✗ |")  # 5.37 µs per hop against 4.0: +34%
