"""bench/mutation.py's report of a run that could not start: which test
failed mutmut's clean run, not only that one did."""

from __future__ import annotations

from bench import mutation

CLEAN_RUN_FAILED = """\
collected 1200 items
FAILED tests/test_a.py::test_one - AssertionError: assert 1 == 2
FAILED ptf_tests/nic/test_b.py::test_two[bmv2] - TimeoutError
Failed to run clean test
"""


def test_a_failed_clean_run_names_the_tests_that_failed_it(monkeypatch):
    monkeypatch.setattr(mutation, "installed", lambda: True)
    monkeypatch.setattr(mutation, "sync", lambda: None)
    monkeypatch.setattr(mutation, "generate", lambda: None)
    monkeypatch.setattr(mutation, "results", lambda: {"m.x__mutmut_1": None, "m.x__mutmut_2": 1})
    monkeypatch.setattr(mutation, "mutmut", lambda *args, timeout=None: CLEAN_RUN_FAILED)
    lines = mutation.run(max_mutants=1, budget_s=60)
    [line] = [ln for ln in lines if ln.startswith("**this run failed")]
    assert line == ("**this run failed: Failed to run clean test (tests/test_a.py::test_one, "
                    "ptf_tests/nic/test_b.py::test_two[bmv2] failed)** (the figures below are from earlier runs)")
