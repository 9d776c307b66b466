"""What comes back from a Ray task: a result from other code is refused
(it would be cached under this code's version), a task's error is named."""

from __future__ import annotations

from types import SimpleNamespace

from fabric_sim.runner import parallel, run_cache
from tests.parallel.helpers import tasks


class TaskDied(Exception):
    pass


def _ray(answer):
    def get(_ref):
        if isinstance(answer, Exception):
            raise answer
        return answer

    return SimpleNamespace(get=get, exceptions=SimpleNamespace(RayError=TaskDied))


def _answer(answer, t=None) -> list:
    out = []
    parallel.collect(_ray(answer), None, t or tasks()[0], lambda r, why="": out.append((r, why)))
    return out


def test_a_result_from_other_code_is_refused_naming_both_versions():
    [(r, why)] = _answer(("0123456789abcdef", {}))
    mine = run_cache.code_version()
    assert r is None and why == (f"a Ray worker runs other code (version 0123456789ab, here {mine[:12]}): "
                                 "every node needs this checkout installed")


def test_a_task_that_died_is_a_failure_with_ray_s_reason():
    assert _answer(TaskDied("worker killed (out of memory)")) == [(None, "worker killed (out of memory)")]


def test_a_result_of_this_code_comes_back_with_its_scenario_and_transport():
    t = tasks()[0]
    kept = run_cache.strip(parallel.run(t.scenario, t.transport))
    [(r, why)] = _answer((run_cache.code_version(), kept), t)
    assert why == "" and r.scenario is t.scenario and r.transport is t.transport and r.messages == kept["messages"]
