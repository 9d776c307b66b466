"""A trace's run as training steps (fabric_sim/report/steps.py): step,
compute, communication and exposed communication per iteration and rank,
and each collective's nccl-tests size and bandwidths, on a walk's log
made by hand where every answer is known."""

from __future__ import annotations

import pytest

from fabric_sim.report import steps
from fabric_sim.scenario.chakra.trace import Coll, Kind
from fabric_sim.scenario.chakra.walker import MeetingRun, Span, StepLog


def _log() -> StepLog:
    log = StepLog(ranks=2, iterations=2, nics=[4, 5])
    log.spans = [
        # rank 0, iteration 0: compute 0-50 and 100-120, communication 30-100: 50 µs of it (50-100) exposed
        Span(0, 0, 0, "fwd", Kind.COMPUTE, 0.0, 50.0), Span(0, 0, 1, "ar", Kind.COLL, 30.0, 100.0, 0),
        Span(0, 0, 2, "opt", Kind.COMPUTE, 100.0, 120.0),
        # rank 0, iteration 1 (from 120): a host op beside the GPU, communication inside compute: none exposed
        Span(0, 1, 0, "fwd", Kind.COMPUTE, 120.0, 170.0), Span(0, 1, 3, "h", Kind.HOST, 150.0, 200.0),
        Span(0, 1, 1, "ar", Kind.COLL, 130.0, 190.0, 1), Span(0, 1, 2, "mark", Kind.MARK, 200.0, 200.0),
        # rank 1, iteration 0: communication alone, then a send overlapping it; iteration 1 never ended
        Span(1, 0, 1, "ar", Kind.COLL, 10.0, 90.0, 0), Span(1, 0, 4, "s", Kind.SEND, 80.0, 110.0),
        Span(1, 1, 0, "fwd", Kind.COMPUTE, 110.0, -1.0),
    ]
    log.meetings = [MeetingRun("all_gather x #0", Coll.ALL_GATHER, 4, 1 << 20, 0, 10.0, 30.0, 130.0),
                    MeetingRun("send 1->0 tag 0 #0", None, 2, 4096, 0, 80.0, 80.0, -1.0)]
    return log


def test_step_compute_communication_and_exposed_per_rank():
    rows = steps.per_rank(_log())
    assert [(x["iteration"], x["rank"], x["nic"], x["start_us"], x["step_us"], x["compute_us"], x["comm_us"],
             x["exposed_us"]) for x in rows] == [
        (0, 0, 4, 0.0, 120.0, 70.0, 70.0, 50.0),
        (1, 0, 4, 120.0, 80.0, 80.0, 60.0, 0.0),
        (0, 1, 5, 0.0, 110.0, 0.0, 100.0, 100.0),  # the rank's unfinished iteration 1 is left out
    ]


def test_an_iteration_is_its_slowest_ranks_step_and_only_when_every_rank_ended_it():
    its = steps.per_iteration(steps.per_rank(_log()), 2)
    assert its == [{"iteration": 0, "time_us": 120.0, "compute_us": 35.0, "comm_us": 85.0, "exposed_us": 75.0,
                    "exposed_max_us": 100.0}]


def test_each_collective_as_nccl_tests_reports_it():
    ag, msg = steps.per_collective(_log())
    # an all-gather's size is its 4 parts of 1 MiB; its time from the last join (30) to its end (130)
    assert (ag["size_bytes"], ag["time_us"], ag["join_wait_us"]) == (4 << 20, 100.0, 20.0)
    assert ag["algbw_gbps"] == pytest.approx((4 << 20) * 8 / 100e3)
    assert ag["busbw_gbps"] == pytest.approx(ag["algbw_gbps"] * 3 / 4)
    assert (msg["collective"], msg["time_us"], msg["algbw_gbps"], msg["busbw_gbps"]) == ("sendrecv", None, None, None)
