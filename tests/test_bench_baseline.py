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
