"""UEC's htsim beside the timed-fabric bench: `htsim_uec`, found
on PATH or named by HTSIM_UEC, runs the bench's own seeded permutation
(fabric_sim.runner.timing's scale scenario, exported pair by pair, not drawn anew)
and its CPU seconds are set beside the project's.

htsim_uec asserts a single plane (`planes != 1` aborts in its main_uec.cpp),
so the 8 planes run as 8 independent runs, one per plane, each carrying
1/8 of every message at the plane's 100 Gb/s over the plane's own 2-tier
fabric (same T0s, hosts per T0, spines, link rates and delay); their CPU
seconds are summed. That keeps every link rate, switch count and packet
count of the project's job, where one plane at 8x the rate would keep the
process count but not the fabric. What differs is in NOTE."""

from __future__ import annotations

import math
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabric_sim import scenario
from fabric_sim.runner import timing
from fabric_sim.scenario import workload

ENV = "HTSIM_UEC"
PROGRAM = "htsim_uec"
HEADER_BYTES = 64  # htsim_uec's UEC header (UecSrc::_hdr_size): its -mtu is payload plus this
# One line per flow that completed: "Flow Uec_3_7 flowId 1000000001 uecSrc 3 finished at 176.2 total ..."
FINISHED = re.compile(r"^Flow \S+ flowId \d+ .*? finished at ([0-9.eE+-]+)", re.M)
SUMMARY = re.compile(r"^New: (\d+) Rtx: (\d+) .*?ACKs: (\d+) NACKs: (\d+)", re.M)
# What the command matches to the scenario (command()), and what it cannot.
MATCHED = ("same NICs, pairs, T0s, spines, link rate and delay, 4 KiB payloads; ECN marked from the switches' "
           "ecn_threshold (-ecn, low = high: the P4 switch's step), trimmed past their trim_threshold (-q: htsim "
           "trims what arrives at a full queue) to their trim_bytes (-trimsize), an ACK every ack_bytes "
           "(-sack_threshold) and REPS spraying (-load_balancing_algo reps: an MRC QP sprays too)")
NOTE = ("htsim_uec differs: NSCC is its own (UEC spec defaults), REPS is not MRC's EV rotation, each plane's flows "
        "have their own congestion state where an MRC QP spans the planes, it drops nothing past a trim where the "
        "project's data queue tail-drops past data_queue, and its peak RSS is one plane's")


@dataclass(frozen=True)
class Job:
    """The bench's permutation of `nics` NICs as htsim_uec is given it."""

    nics: int
    pairs: tuple[tuple[int, int], ...]
    message_bytes: int
    planes: int
    t0s: int
    hosts_per_t0: int
    spines: int
    nic_gbps: float
    fabric_gbps: float
    prop_us: float
    mtu: int
    ecn_packets: int  # the switches' congestion settings (topology.congestion)
    trim_packets: int
    trim_bytes: int
    ack_bytes: int
    end_us: int  # the project's horizon (duration_us)
    bin_us: int  # its run stops at the first multiple of this after its last message (fabric_sim/runner/run.py)
    seed: int


def job(nics: int) -> Job:
    """The timed bench's scenario of `nics` NICs (timing.SIZES) and its seeded permutation."""
    sc = scenario.parse(timing.size_scenario(nics), f"scale-{nics}", Path.cwd())
    topo = sc.topology
    msgs = workload.build(sc.workload, topo.nics, sc.seed, topo.hosts_per_t0)
    return Job(nics=topo.nics, pairs=tuple((m.src, m.dst) for m in msgs), message_bytes=sc.workload.size,
               planes=topo.planes, t0s=topo.t0_per_plane, hosts_per_t0=topo.hosts_per_t0,
               spines=topo.t1_per_plane, nic_gbps=sc.links.nic_gbps, fabric_gbps=sc.links.fabric_gbps,
               prop_us=sc.links.prop_us, mtu=sc.endpoint.mtu, ecn_packets=topo.congestion.ecn_threshold,
               trim_packets=topo.congestion.trim_threshold, trim_bytes=topo.congestion.trim_bytes,
               ack_bytes=sc.endpoint.ack_bytes or sc.endpoint.mtu,  # 0 is an ACK per data packet
               end_us=math.ceil(sc.duration_us), bin_us=math.ceil(sc.duration_us / sc.bins), seed=sc.seed)


def find() -> tuple[str | None, str]:
    """htsim_uec's path (HTSIM_UEC first, then PATH), or None and one line saying why not."""
    named = os.environ.get(ENV)
    if named:
        if os.path.isfile(named) and os.access(named, os.X_OK):
            return named, f"{ENV}={named}"
        return None, f"{ENV}={named} is not an executable file: no ratio against htsim"
    found = shutil.which(PROGRAM)
    if found:
        return found, found
    return None, (f"{PROGRAM} not on PATH (nor {ENV} set): no ratio against htsim "
                  "(build it from ultraethernet/uet-htsim and put it on PATH)")


def plane_bytes(j: Job) -> int:
    """Each message's share on one plane (rounded up: no byte left unsent)."""
    return -(-j.message_bytes // j.planes)


def connection_matrix(j: Job) -> str:
    """htsim's connection-matrix file (datacenter/connection_matrix.cpp): one
    connection per message of the permutation, all starting at 0."""
    size = plane_bytes(j)
    rows = [f"{a}->{b} id {i} start 0 size {size}" for i, (a, b) in enumerate(j.pairs, 1)]
    return "\n".join([f"Nodes {j.nics}", f"Connections {len(rows)}", *rows]) + "\n"


def topology(j: Job) -> str:
    """One plane as htsim's 2-tier fat-tree file (FatTreeTopologyCfg::read_cfg):
    tier 0 is the T0s (hosts down, a link to every spine up), tier 1 the spines."""
    if j.hosts_per_t0 % j.spines or j.nic_gbps != j.fabric_gbps or j.nic_gbps % 1:
        raise ValueError(f"topology: htsim's fat tree needs hosts_per_t0 ({j.hosts_per_t0}) a multiple of "
                         f"t1_per_plane ({j.spines}) and equal whole-Gb/s link rates ({j.nic_gbps:g}, "
                         f"{j.fabric_gbps:g})")
    latency = round(j.prop_us * 1000)
    return "\n".join([
        f"Nodes {j.nics}", "Tiers 2", f"Podsize {j.nics}", "",
        "Tier 0", f"Downlink_speed_Gbps {j.nic_gbps:g}", f"Radix_Down {j.hosts_per_t0}", f"Radix_Up {j.spines}",
        f"Oversubscribed {j.hosts_per_t0 // j.spines}", f"Downlink_Latency_ns {latency}", "Switch_Latency_ns 0", "",
        "Tier 1", f"Downlink_speed_Gbps {j.fabric_gbps:g}", f"Radix_Down {j.t0s}", f"Downlink_Latency_ns {latency}",
        "Switch_Latency_ns 0"]) + "\n"


def command(binary: str, folder: Path, j: Job, plane: int, end_us: int) -> list[str]:
    """htsim_uec's arguments for one plane up to `end_us` (each plane its own
    seed, as each of the project's planes hashes differently), matched to
    the scenario as MATCHED says."""
    return [binary, "-tm", str(folder / "perm.cm"), "-topo", str(folder / "plane.topo"),
            "-linkspeed", f"{j.nic_gbps * 1000:g}", "-mtu", str(j.mtu + HEADER_BYTES), "-q", str(j.trim_packets),
            "-ecn", str(j.ecn_packets), str(j.ecn_packets), "-trimsize", str(j.trim_bytes),
            "-load_balancing_algo", "reps", "-sack_threshold", str(j.ack_bytes), "-end", str(end_us),
            "-seed", str(j.seed + plane), "-o", str(folder / f"log{plane}.dat")]


def wait_child(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, resource.struct_rusage] | None:
    """The child's exit code and its own rusage (wait4: not the bench's other
    children, whose peak RSS RUSAGE_CHILDREN would report), None past `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            proc.returncode = -9
            return None
        time.sleep(0.02)


def run_plane(binary: str, folder: Path, j: Job, plane: int, deadline: float) -> dict[str, float] | None:
    """One plane stopped as the project's run stops, at the first bin boundary
    after its last flow finished: htsim_uec runs to its -end, its timers
    ticking on after the last flow (to 2,000 µs that doubles its CPU seconds
    at 1,024 NICs). A run with flows unfinished at the first boundary runs
    again to the horizon, then to the boundary after its last flow; the
    figures are the last run's. None past `deadline` (time.monotonic)."""
    one = run_once(binary, folder, j, plane, j.bin_us, deadline)
    if one is None or one["flows_done"] == len(j.pairs) or j.bin_us >= j.end_us:
        return one
    one = run_once(binary, folder, j, plane, j.end_us, deadline)
    if one is None or one["flows_done"] < len(j.pairs):
        return one
    tight = (math.floor(one["last_done_us"] / j.bin_us) + 1) * j.bin_us
    return run_once(binary, folder, j, plane, tight, deadline) if tight < j.end_us else one


def run_once(binary: str, folder: Path, j: Job, plane: int, end_us: int, deadline: float) -> dict[str, float] | None:
    """One run of one plane to `end_us`: its CPU seconds, peak RSS and the flows it finished."""
    out = folder / f"out{plane}.txt"
    if deadline <= time.monotonic():
        return None
    with out.open("w") as sink:
        proc = subprocess.Popen(command(binary, folder, j, plane, end_us), stdout=sink, stderr=subprocess.STDOUT,
                                cwd=folder)
        done = wait_child(proc, deadline - time.monotonic())
    if done is None:
        return None
    code, usage = done
    text = out.read_text(errors="replace")
    if code != 0:
        raise RuntimeError(f"{binary} (plane {plane}) exited {code}: {text[-600:]}")
    finished = [float(t) for t in FINISHED.findall(text)]
    summary = SUMMARY.search(text)
    new, rtx, acks, nacks = (int(x) for x in summary.groups()) if summary else (0, 0, 0, 0)
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "rss_mib": usage.ru_maxrss / 1024,
            "flows_done": len(finished), "last_done_us": max(finished, default=0.0),
            "packets": new + rtx, "acks": acks, "nacks": nacks, "end_us": end_us}


def run(j: Job, binary: str, timeout: float) -> dict[str, float] | None:
    """Every plane of `j` on htsim_uec, one after another: CPU seconds summed,
    peak RSS the largest run's, flows done of flows; None if they exceed `timeout` together."""
    wall, deadline = time.perf_counter(), time.monotonic() + timeout
    total = {"cpu_s": 0.0, "rss_mib": 0.0, "flows_done": 0, "last_done_us": 0.0, "packets": 0, "acks": 0,
             "nacks": 0, "end_us": 0}
    with tempfile.TemporaryDirectory(prefix="htsim-") as tmp:
        folder = Path(tmp)
        (folder / "perm.cm").write_text(connection_matrix(j))
        (folder / "plane.topo").write_text(topology(j))
        for plane in range(j.planes):
            one = run_plane(binary, folder, j, plane, deadline)
            if one is None:
                return None
            for key in ("cpu_s", "flows_done", "packets", "acks", "nacks"):
                total[key] += one[key]
            for key in ("rss_mib", "last_done_us", "end_us"):
                total[key] = max(total[key], one[key])
    return {**total, "wall_s": time.perf_counter() - wall, "flows": len(j.pairs) * j.planes, "runs": j.planes}


def beside(
    binary: str, project: dict[int, dict[str, Any]], timeout: float
) -> tuple[list[str], dict[int, dict[str, float]]]:
    """The bench's lines: htsim_uec on each size the project ran (up to
    BENCH_HTSIM_MAX_NICS, default 1024), its figures beside the project's CPU
    seconds (`project`: NICs -> fabric_sim.runner.timing's figures); and htsim's figures by size."""
    limit = int(os.environ.get("BENCH_HTSIM_MAX_NICS", "1024"))
    lines = [f"\nhtsim_uec ({binary}) on the same seeded permutations: each plane its own run at "
             "100 Gb/s carrying 1/8 of every message (htsim_uec runs one plane only), CPU seconds summed; "
             f"{MATCHED}. {NOTE}.", "",
             "| NICs | htsim CPU s | htsim wall s | htsim peak RSS MiB | flows done | last flow done µs "
             "| project CPU s / htsim CPU s |", "|---|---|---|---|---|---|---|"]
    peers = {}
    for nics in sorted(n for n in project if n <= limit):
        print(f"  htsim_uec: {nics} NICs ...", flush=True)
        h = run(job(nics), binary, timeout)
        if h is None:
            lines.append(f"| {nics:,} | over {timeout:.0f} s | | | | | |")
            break
        peers[nics] = h
        done = f"{h['flows_done']}/{h['flows']}" + ("" if h["flows_done"] == h["flows"] else " **INCOMPLETE**")
        lines.append(f"| {nics:,} | {h['cpu_s']:.2f} | {h['wall_s']:.1f} | {h['rss_mib']:.0f} | {done} | "
                     f"{h['last_done_us']:.1f} | {ratio(project[nics]['cpu_s'], h['cpu_s'])} |")
    return lines, peers


def ratio(project_s: float, htsim_s: float) -> str:
    """Project CPU seconds over htsim's (a run too short for the clock to tick has none)."""
    return f"{project_s / htsim_s:.1f}x" if htsim_s > 0 else "n/a"
