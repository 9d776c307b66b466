"""The run cache: an interrupted sweep resumes with only the runs that are
missing; a changed scenario or changed code runs again; a run's whole
result (timeline included) comes back from it."""

from __future__ import annotations

import json

import pytest

from fabric_sim import report
from fabric_sim.runner import parallel, run_cache
from fabric_sim.runner.parallel import Options, RunFailed, run_all
from tests.parallel.helpers import SWEEP, tasks


@pytest.fixture
def executed(monkeypatch) -> list[str]:
    """The (transport, message_bytes, rate) of every run that executes."""
    out: list[str] = []
    real = parallel.run

    def counting(sc, t, *args, **kw):
        out.append((t.name, sc.workload.message_bytes, sc.events[0].args[0]))
        return real(sc, t, *args, **kw)

    monkeypatch.setattr(parallel, "run", counting)
    return out


def _text(r) -> str:
    return json.dumps(report.summary(r), sort_keys=True)  # text: NaN equals NaN


def _key(task) -> tuple:
    return task.transport.name, task.scenario.workload.message_bytes, task.scenario.events[0].args[0]


def test_a_rerun_after_an_interruption_executes_only_the_missing_runs(tmp_path, executed):
    ts, opts = tasks(), Options(jobs=1, cache=tmp_path, quiet=True)
    assert len(ts) == 8
    first = run_all(ts[:3], opts)  # interrupted after 3 of the 8 runs
    assert executed == [_key(t) for t in ts[:3]]
    executed.clear()
    again = run_all(ts, opts)
    assert executed == [_key(t) for t in ts[3:]]  # 5: only what was missing
    assert list(map(_text, again[:3])) == list(map(_text, first))  # the same, wall time included
    executed.clear()
    run_all(ts, opts)
    assert executed == []


def test_a_changed_scenario_or_changed_code_runs_again(tmp_path, executed, monkeypatch):
    opts = Options(jobs=1, cache=tmp_path, quiet=True)
    run_all(tasks(), opts)
    executed.clear()
    bigger = tasks({**SWEEP, "sweep": {**SWEEP["sweep"], "workload.message_bytes": [32768, 131072]}})
    run_all(bigger, opts)
    assert sorted(executed) == sorted((t, 131072, rate) for t in ("mrc", "roce") for rate in (0, 0.01))
    executed.clear()
    run_all(tasks({**SWEEP, "duration_us": 2001}), opts)  # a field of every variant
    assert len(executed) == 8
    executed.clear()
    monkeypatch.setattr(run_cache, "code_version", lambda: "edited")
    run_all(tasks(), opts)
    assert len(executed) == 8


def test_no_cache_executes_every_run_and_keeps_none(tmp_path, executed):
    run_all(tasks()[:2], Options(jobs=1, cache=None, quiet=True))
    run_all(tasks()[:2], Options(jobs=1, cache=None, quiet=True))
    assert len(executed) == 4


def test_the_whole_result_comes_back_from_the_cache_timeline_included(tmp_path):
    t = tasks()[7]  # RoCE with losses: retransmissions, drops, a timeline that moves
    fresh = run_all([t], Options(jobs=1, cache=tmp_path, quiet=True))[0]
    got = run_cache.Cache(tmp_path).get(t.scenario, t.transport)
    assert got is not fresh and got.scenario is t.scenario and got.transport is t.transport
    assert sum(fresh.retx.values()) > 0 and fresh.timeline.ev_states and len(fresh.timeline.t) > 2
    for name in run_cache.KEPT:
        assert getattr(got, name) == getattr(fresh, name), name


def test_the_code_version_follows_every_source_a_run_imports_and_not_the_paper(tmp_path):
    for rel in ("mrc_wire/wire.py", "fabric_sim/runner/run.py", "mrc_paper/figures.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    v0 = run_cache.sources_hash(tmp_path)
    (tmp_path / "mrc_paper/figures.py").write_text("x = 2\n")  # a figure: no run changes
    (tmp_path / "README.md").write_text("words\n")
    assert run_cache.sources_hash(tmp_path) == v0
    (tmp_path / "mrc_wire/wire.py").write_text("x = 2\n")
    v1 = run_cache.sources_hash(tmp_path)
    assert v1 != v0
    (tmp_path / "sim_core").mkdir()
    (tmp_path / "sim_core/new.py").write_text("")
    assert run_cache.sources_hash(tmp_path) not in (v0, v1)
    assert run_cache.code_version() == run_cache.sources_hash(run_cache.REPO)


def test_the_key_does_not_depend_on_order_or_name_and_refuses_what_it_cannot_encode():
    t = tasks()[0]
    sc = t.scenario
    same = sc.__class__(**{**sc.__dict__, "name": "renamed", "source": "elsewhere.yaml"})
    assert run_cache.key(same, t.transport) == run_cache.key(sc, t.transport)
    assert run_cache.canonical({"b": 1, "a": {2, 1}}) == run_cache.canonical({"a": {1, 2}, "b": 1})
    assert run_cache.key(sc, tasks()[1].transport) != run_cache.key(sc, t.transport)
    with pytest.raises(TypeError, match="no canonical form for object"):
        run_cache.canonical(object())


def test_a_failing_run_is_named_and_the_others_finish_and_are_kept(tmp_path, executed, monkeypatch):
    real = parallel.run

    def broken(sc, t, *args, **kw):
        if t.name == "roce" and sc.workload.message_bytes == 65536:
            raise ZeroDivisionError("a model bug")
        return real(sc, t, *args, **kw)

    monkeypatch.setattr(parallel, "run", broken)
    ts = tasks()
    with pytest.raises(RunFailed) as info:
        run_all(ts, Options(jobs=1, cache=tmp_path, quiet=True))
    assert [label for label, _ in info.value.failures] == ["[3/4] message_bytes=65536 rate=0 roce",
                                                           "[4/4] message_bytes=65536 rate=0.01 roce"]
    assert "ZeroDivisionError: a model bug" in info.value.failures[0][1]
    monkeypatch.setattr(parallel, "run", real)  # mended (still counting)
    executed.clear()
    run_all(ts, Options(jobs=1, cache=tmp_path, quiet=True))
    assert executed == [("roce", 65536, 0), ("roce", 65536, 0.01)]  # the others were kept
