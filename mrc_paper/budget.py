"""What the gallery's runs are expected to cost before they start: CPU
seconds per GiB a run's workload offers, by pattern and transport,
measured with the compiled build on the 2-core machine the gallery is
developed on (64 NICs, the largest size each pattern runs at the paper's
scale; RATE_S_PER_GIB says which runs). A run's cost grows a little faster than its bytes (larger
windows reorder more, and the receiver acknowledges more often), so the
rates are those of the largest runs and overestimate smaller ones; the
estimate is for planning (within a factor of two), not a measurement."""

from __future__ import annotations

from fabric_sim.runner.footprint import offered_bytes
from fabric_sim.runner.parallel import Task

GIB = 1 << 30
# (pattern, transport kind, more than one QP per pair) -> CPU seconds per GiB offered: the largest run of
# `make paper SCALE=paper` on 2026-11-26 (64 ranks; the ring's and the all-to-all's 64 MiB, sendrecv's 64 MiB
# on an idle core), other work sharing the cores at times, so on the high side.
RATE_S_PER_GIB = {
    ("ring_allreduce", "mrc", False): 18.0,  # 141 CPU-s for 7.9 GiB
    ("ring_allreduce", "roce", False): 7.5,  # 58
    ("ring_allreduce", "roce", True): 11.6,  # 16 QPs a pair: 91
    ("all_to_all", "mrc", False): 46.0,  # 181 CPU-s for 3.9 GiB (4,032 QPs)
    ("all_to_all", "roce", False): 21.0,  # 83
    ("all_to_all", "roce", True): 137.0,  # 16 QPs a pair (64,512 QPs): 538
    ("sendrecv", "mrc", False): 29.0,  # Cluster B at 64 NICs: 115 CPU-s for 4 GiB
}
OTHER_S_PER_GIB = 25.0  # patterns and transports not measured above
STARTUP_S = 1.0  # building the fabric, its tables and the workload


def cpu_s(t: Task) -> float:
    """The run's expected CPU seconds."""
    sc, tr = t.scenario, t.transport
    topo = tr.topology or sc.topology
    many = (tr.qps_per_pair or sc.workload.qps_per_pair or 1) > 1
    rate = RATE_S_PER_GIB.get((sc.workload.pattern, tr.kind, many), OTHER_S_PER_GIB)
    return STARTUP_S + rate * offered_bytes(sc.workload, topo.nics) / GIB


def line(tasks: list[Task], cached: int, workers: int) -> str:
    """One line: the runs to execute, their expected CPU time and the wall
    time that makes on `workers` cores."""
    cpu = sum(cpu_s(t) for t in tasks)
    wall = cpu / max(workers, 1)
    return (f"{len(tasks)} runs to execute ({cached} more from the cache): about {cpu / 60:.0f} CPU-minutes, "
            f"{wall / 60:.0f} minutes of wall time on {workers} core{'s' * (workers != 1)} (an estimate from "
            "this project's development machine; within a factor of two)")
