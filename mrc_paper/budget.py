"""What the gallery's runs are expected to cost before they start: CPU
seconds per GiB a run's workload offers, by pattern and transport,
measured with the compiled build on the 2-core machine the gallery is
developed on (64 NICs, the largest size each pattern runs at the paper's
scale). A run's cost grows a little faster than its bytes (larger
windows reorder more, and the receiver acknowledges more often), so the
rates are those of the largest runs and overestimate smaller ones; the
estimate is for planning (within a factor of two), not a measurement."""

from __future__ import annotations

from fabric_sim.runner.footprint import offered_bytes
from fabric_sim.runner.parallel import Task

GIB = 1 << 30
# (pattern, transport kind, more than one QP per pair) -> CPU seconds per GiB offered
RATE_S_PER_GIB = {
    ("ring_allreduce", "mrc", False): 18.6,  # 64-rank ring, 64 MiB: 147 CPU-s
    ("ring_allreduce", "roce", False): 14.0,  # 16 MiB: 13.7 CPU-s (scaled as MRC's grows)
    ("ring_allreduce", "roce", True): 27.0,  # 16 QPs, 16 MiB: 27 CPU-s
    ("all_to_all", "mrc", False): 30.0,  # 64 ranks, 16 MiB: 29 CPU-s
    ("all_to_all", "roce", False): 17.0,  # 16.6 CPU-s
    ("all_to_all", "roce", True): 64.0,  # 16 QPs: 63 CPU-s
    ("sendrecv", "mrc", False): 28.0,  # Cluster B at 64 NICs, 64 MiB: 115 CPU-s
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
