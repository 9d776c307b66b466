"""How much memory a run's fabric will take, from its topology, before
building it: a sum of measured costs per NIC, switch, cable and QP
(bench/footprint.py measures them: peak RSS of the set-up at several
shapes, least squares, checked against a larger fabric). A fabric that
would not fit in the memory the machine has free is refused up front,
not minutes into building it."""

from __future__ import annotations

from control_plane.topology import Topology
from fabric_sim.scenario import Scenario, Transport, Workload
from fabric_sim.scenario.fields import ScenarioError

# Bytes of Python heap, measured by bench/footprint.py (Python 3.11,
# x86_64): least squares over 10 set-up-only runs of 64-1,024 NICs; at 512
# NICs x 8 planes (larger than any fitted) the sum was within 1% of the heap.
BASE = 0
PER_NIC = 16_400  # the NIC model, its endpoint, its slot tables
PER_SWITCH = 2_500  # the switch model and its entries
PER_CABLE = 3_800  # both directions' egress queues
PER_QP = 23_300  # both ends' QP state, EV profiles and NIC plan entries
RSS_PER_HEAP = 1.05  # peak RSS growth per byte of heap (measured 1.02 at 512 NICs x 8 planes)


def counts(topo: Topology, qps: int) -> dict[str, int]:
    """NICs, switches, cables and QPs of the fabric."""
    cables = topo.planes * (topo.t0_per_plane * topo.t1_per_plane + topo.nics)
    return {"nics": topo.nics, "switches": topo.switches, "cables": cables, "qps": qps}


def estimate(topo: Topology, qps: int) -> int:
    """Bytes the fabric and `qps` QPs (connections, both ends) will take."""
    c = counts(topo, qps)
    heap = BASE + PER_NIC * c["nics"] + PER_SWITCH * c["switches"] + PER_CABLE * c["cables"] + PER_QP * c["qps"]
    return int(heap * RSS_PER_HEAP)


def available() -> int | None:
    """Bytes the machine can still give (MemAvailable), None if unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def too_big(topo: Topology, qps: int, free: int | None = None) -> str | None:
    """Why the fabric would not fit in `free` bytes (the machine's free
    memory by default), or None if it fits or nothing is known."""
    free = available() if free is None else free
    need = estimate(topo, qps)
    if free is None or need <= free:
        return None
    c = counts(topo, qps)
    return (f"the fabric would need about {size(need)} ({c['nics']:,} NICs, {c['switches']:,} switches, "
            f"{c['cables']:,} cables, {c['qps']:,} QPs) and this machine has {size(free)} free: "
            "a smaller topology, or fewer QPs per pair")


def size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def pairs(w: Workload, nics: int) -> int:
    """How many (sender, receiver) pairs the workload has, without building it."""
    h = min(w.hosts or nics, nics)
    if w.pattern == "all_to_all":
        return h * (h - 1)
    if w.pattern == "incast":
        assert w.fan_in is not None  # filled in when the scenario was parsed (capacity.workload)
        return w.fan_in
    if w.pattern == "flows":
        return len({(f.src, f.dst) for f in w.flows})
    return h  # permutation and ring: one pair per host


def check(sc: Scenario, t: Transport) -> None:
    """Refuse, before anything is built, a run that would not fit in memory."""
    topo = t.topology or sc.topology
    why = too_big(topo, pairs(sc.workload, topo.nics) * (t.qps_per_pair or sc.workload.qps_per_pair))
    if why:
        raise ScenarioError(f"transports[{t.name}]" if t.topology else "topology", why)
