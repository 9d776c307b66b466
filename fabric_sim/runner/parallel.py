"""Every independent run (a sweep variant with one transport, each of the
paper's experiments) as a Ray task: on this machine's cores by default,
with no set-up; on an existing Ray cluster with --ray-address (or
RAY_ADDRESS); in this process, without Ray, with --jobs 1. Runs are
seeded, so where a run executes does not change its result.

A finished run is kept in the run cache (fabric_sim/runner/run_cache.py) before
the next is waited on, so an interrupted sweep or `make paper` resumes
where it stopped. mrc-sim and `make paper` call run_all()."""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import re
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from control_plane import outputs
from control_plane.config import printable, short
from fabric_sim.runner import footprint, run_cache, stop
from fabric_sim.runner.progress import Progress
from fabric_sim.runner.run import RunResult, run
from fabric_sim.scenario import Scenario, Transport


@dataclass(frozen=True)
class Task:
    label: str  # how the progress display and errors name the run
    scenario: Scenario  # one variant (no sweep left in it)
    transport: Transport


@dataclass(frozen=True)
class Options:
    jobs: int | None = None  # runs at once; None: every core (this machine's or the cluster's); 1: here, no Ray
    address: str | None = None  # a Ray cluster to use; None: $RAY_ADDRESS, else a Ray of this machine's cores
    cache: Path | None = run_cache.DEFAULT_DIR  # None: no cache (every run executes, nothing is kept)
    quiet: bool = False  # no progress lines
    memory: int | None = None  # bytes a run may take (--max-memory); None: what this process may (footprint)


IN_PROCESS = Options(jobs=1, cache=None, quiet=True)  # what library callers and tests get unless they ask
_STARTED: list[bool] = []  # a Ray this process started (not a cluster it joined): shut down when interrupted


class RunFailed(RuntimeError):
    """Some runs raised; the others finished (and were cached)."""

    def __init__(self, failures: list[tuple[str, str]]):
        super().__init__("; ".join(f"{label}: {why}" for label, why in failures))
        self.failures = failures


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags mrc-sim and `python -m mrc_paper` share."""
    d = Options()
    ap.add_argument("--jobs", type=_whole, default=d.jobs, metavar="N",
                    help="runs at once (default: every core of this machine, or of the Ray cluster); "
                         "1 runs them one after another in this process, without Ray")
    ap.add_argument("--ray-address", type=_address, default=d.address, metavar="ADDR",
                    help="run on this existing Ray cluster (e.g. 10.0.0.5:6379, or 'auto'; default: $RAY_ADDRESS, "
                         "else a Ray started on this machine's cores for the run)")
    ap.add_argument("--max-memory", type=_memory, default=d.memory, metavar="SIZE",
                    help="the memory a run may take, e.g. 8G or 512M (default: what this machine has free, within "
                         "its cgroup and ulimit -v): a run estimated above it is refused before it is built; a "
                         "larger figure runs it anyway")
    ap.add_argument("--no-cache", action="store_true",
                    help=f"execute every run and keep none (default: reuse and keep finished runs in "
                         f"{run_cache.DEFAULT_DIR}/, keyed by scenario and code)")


def _whole(text: str) -> int:
    """A whole number as ASCII digits, the value cut in the error (argparse's own echoes it whole)."""
    if not re.fullmatch(r"-?[0-9]{1,9}", text):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {short(text)}")
    return int(text)


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _memory(text: str) -> int:
    """--max-memory: a size as `8G`, `512M`, `1.5GiB` or bytes, each refusal naming what is wrong."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected a size such as 8G or 512M, got {printable(short(text))}")
    if len(m.group(1)) > 20:
        raise argparse.ArgumentTypeError(f"a number of {len(m.group(1)):,} digits: more than any machine has")
    n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if n < 1 << 20:
        raise argparse.ArgumentTypeError(f"{printable(text.strip())} is less than a run takes (at least 1 MiB)")
    if n > footprint.MAX_MEMORY:
        raise argparse.ArgumentTypeError(f"{printable(text.strip())} is more than 1,024 TiB: no machine has it")
    return n


def _address(text: str) -> str:
    """A Ray address as printable text of a sane length (it is echoed in progress lines)."""
    if not text or not text.isprintable() or len(text) > 255 or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"expected host:port, 'auto' or ray://host:port, got {printable(short(text))}")
    return text


def options(args: argparse.Namespace) -> Options:
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"--jobs: {args.jobs} is not a number of runs (at least 1)")
    return Options(jobs=args.jobs, address=args.ray_address, cache=None if args.no_cache else Options().cache,
                   quiet=getattr(args, "quiet", False), memory=args.max_memory)


def apart(opts: Options, n: int) -> bool:
    """Whether `n` runs go to Ray workers, apart from the process that reports them."""
    return not (opts.jobs == 1 or (n <= 1 and not (opts.address or os.environ.get("RAY_ADDRESS"))))


def fits(tasks: list[Task], opts: Options) -> None:
    """ScenarioError, before anything is built, if a run, or the runs this
    machine takes at once, would not fit in memory (on a Ray cluster of
    other machines, each run on its own)."""
    local = not (opts.address or os.environ.get("RAY_ADDRESS"))
    at_once = (opts.jobs or os.cpu_count() or 1) if local and apart(opts, len(tasks)) else 1
    footprint.check_all([(t.scenario, t.transport) for t in tasks], opts.memory, apart(opts, len(tasks)), at_once)


def cost(sc: Scenario) -> float:
    """What a run is expected to cost, for the estimate of what is left:
    the bytes its workload offers (packet-hops follow them)."""
    return float(footprint.offered_bytes(sc.workload, sc.topology.nics)) or 1.0  # counted: a build may not fit


def run_all(tasks: list[Task], opts: Options = IN_PROCESS,
            on_result: Callable[[int, RunResult], None] | None = None) -> list[RunResult]:
    """The result of every task, in the tasks' order. `on_result(i, r)` is
    called as each arrives (from the cache first), for callers that write
    or measure as runs finish. Raises RunFailed after every other run is
    done if any raised."""
    address = opts.address or os.environ.get("RAY_ADDRESS")
    if address and opts.jobs != 1:
        _reachable(address)  # before any line or work
    cache = run_cache.Cache(opts.cache) if opts.cache else None
    results: list[RunResult | None] = [None] * len(tasks)
    prog = Progress(len(tasks), opts.quiet)
    failures: list[tuple[str, str]] = []

    def finish(i: int, r: RunResult | None, error: str = "") -> None:
        prog.finished(tasks[i].label, r.wall_s if r else 0.0, failed=r is None)
        if r is None:
            failures.append((tasks[i].label, error))
            return
        if cache:
            cache.put(r)
        results[i] = r
        if on_result:
            on_result(i, r)

    todo = _from_cache(tasks, cache, prog, results, on_result)
    costs = {i: cost(tasks[i].scenario) for i in todo}
    try:
        if not apart(opts, len(todo)):
            prog.plan(list(costs.values()), "one after another in this process")
            _in_process(tasks, costs, prog, finish, opts.memory)
        elif todo:
            _on_ray(tasks, costs, opts, address, prog, finish)
    except KeyboardInterrupt as exc:  # the caller says what it kept, in one line
        raise stop.Interrupted(exc, prog.done - prog.cached, cache.root if cache else None) from None
    if failures:
        raise RunFailed(failures)
    return results  # type: ignore[return-value]  # every slot is filled when nothing failed


def _from_cache(tasks: list[Task], cache: run_cache.Cache | None, prog: Progress, results: list[RunResult | None],
                on_result: Callable[[int, RunResult], None] | None) -> list[int]:
    """Fills `results` with what the cache holds (each passed to on_result);
    the indices of the tasks still to run."""
    todo = []
    for i, t in enumerate(tasks):
        hit = cache.get(t.scenario, t.transport) if cache else None
        if hit is None:
            todo.append(i)
            continue
        prog.from_cache(t.label)
        results[i] = hit
        if on_result:
            on_result(i, hit)
    return todo


class Finish(Protocol):
    """What a back end calls as each task ends: its result, or None and why."""

    def __call__(self, i: int, r: RunResult | None, error: str = "") -> None: ...


class Collected(Protocol):
    """What `collect` calls with one Ray task's result, or None and why."""

    def __call__(self, r: RunResult | None, why: str = "") -> None: ...


class _RayState(Protocol):
    """The part of ray's module used here (ray leaves it unannotated)."""

    def cluster_resources(self) -> dict[str, float]: ...


def _in_process(tasks: list[Task], costs: dict[int, float], prog: Progress, finish: Finish,
                memory: int | None) -> None:
    for i, c in costs.items():
        t = tasks[i]
        prog.started(t.label, c)
        try:
            r = run(t.scenario, t.transport, functools.partial(prog.update, t.label), memory=memory)
        except Exception as exc:  # one run's failure must not lose the others
            finish(i, None, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
            continue
        finish(i, r)


def _execute(sc: Scenario, t: Transport, memory: int | None) -> tuple[str, dict[str, Any]]:
    """A Ray task: one run, returned without its scenario and transport
    (the caller has them), with the code version it ran."""
    return run_cache.code_version(), run_cache.strip(run(sc, t, memory=memory))


def connect(address: str | None, jobs: int | None) -> None:
    """Join the Ray cluster at `address`, or start one on this machine
    with `jobs` CPUs (every core if None); a Ray already started in this
    process (a test's) is used as it is. A signal while Ray starts stops
    it whole (`_starting`)."""
    if not address:  # token auth, as Ray gives a local cluster by default, but said, so Ray does not warn;
        os.environ.setdefault("RAY_AUTH_MODE", "token")  # read when ray is first imported
    import ray  # imported here: it takes a second, and --jobs 1 does not need it

    if ray.is_initialized():
        return
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address:
        try:
            with _starting(ray):
                ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError) as exc:  # no cluster there, or the token refused
            raise RunFailed([(f"Ray cluster {address}", f"cannot connect: {str(exc).splitlines()[0]} (a cluster "
                              "with token authentication needs RAY_AUTH_MODE=token and its token here too)")]) from None
    else:
        with _workers_path_as_driver(), _starting(ray, local=True):
            ray.init(address="local", num_cpus=jobs or os.cpu_count(), include_dashboard=False, **quiet)
        _STARTED.append(True)


@contextlib.contextmanager
def _starting(ray: Any, local: bool = False) -> Iterator[None]:
    """ray.init in the block. Ray sets its own SIGTERM handlers as it
    starts (an exit from Python; a stack dump and an abort from its C++
    core): ours again after. Ctrl-C meanwhile is held until Ray is up; a
    SIGTERM stops Ray where it got to (what a start cut short leaves
    running, `local` processes of ours, is ended too), seen on the signal
    wakeup descriptor even where Ray's exit was lost (raised in a fork's
    callback, Python drops it)."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    before = descendants(os.getpid()) if local else set()
    try:
        with outputs.held():
            old = signal.set_wakeup_fd(w, warn_on_full_buffer=False) if _main_thread() else -1
            try:
                yield
            finally:
                if _main_thread():
                    signal.set_wakeup_fd(old)
        with contextlib.suppress(BlockingIOError):
            if signal.SIGTERM in os.read(r, 256):  # taken by Ray's handler and lost
                raise SystemExit(signal.SIGTERM)
    except (SystemExit, KeyboardInterrupt) as exc:
        if ray.is_initialized():
            ray.shutdown()
        if local:
            _reap(descendants(os.getpid()) - before)
        if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM:
            raise stop.Terminated from None
        raise
    finally:
        os.close(r)
        os.close(w)
        stop.reinstate()


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def descendants(pid: int) -> set[int]:
    """Every process under `pid` (Linux's /proc)."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):  # gone meanwhile
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = {c for c, pp in parent.items() if pp == p}
        out |= kids
        todo += list(kids)
    return out


def _reap(pids: set[int], grace_s: float = 2.0) -> None:
    """SIGTERM to `pids`, SIGKILL to those still there after `grace_s`."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in pids:
            with contextlib.suppress(OSError):
                os.kill(p, sig)
        deadline = time.monotonic() + grace_s
        while sig == signal.SIGTERM and time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.1)


@contextlib.contextmanager
def _workers_path_as_driver() -> Iterator[None]:
    """Ray puts the driver's working directory first on its workers' import
    path. A driver run with `python -P` (make run and make paper, on the
    installed compiled package) does not import from there, and neither
    must its workers: from a checkout they would run the interpreted
    source. Ray is started from the temporary directory instead."""
    if not sys.flags.safe_path:
        yield
        return
    here = os.getcwd()
    os.chdir(tempfile.gettempdir())
    try:
        yield
    finally:
        os.chdir(here)


def _reachable(address: str, timeout_s: float = 10.0) -> None:
    """A host:port address must answer a TCP connect, before Ray retries it
    for minutes ('auto' and ray:// addresses are left to Ray)."""
    if "://" in address or ":" not in address:
        return
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except (OSError, ValueError) as exc:
        raise RunFailed([(f"Ray cluster {address}", f"cannot connect: {exc} (is `ray start --head` running there?)")]
                        ) from None


def _on_ray(tasks: list[Task], costs: dict[int, float], opts: Options, address: str | None, prog: Progress,
            finish: Finish) -> None:
    where = f"on the Ray cluster at {address}" if address else "on a Ray of this machine's cores (starting)"
    prog.plan(list(costs.values()), where)
    connect(address, opts.jobs)
    import ray

    # Retried where a worker or node died (a run is deterministic), not where the run raised.
    remote = ray.remote(num_cpus=1, max_retries=2)(_execute)
    state: _RayState = ray
    cpus = int(state.cluster_resources().get("CPU", 1))
    slots = opts.jobs or max(1, cpus)
    prog.workers_ready(min(slots, len(costs)), f"Ray has {cpus} CPUs")
    queue, pending = deque(costs), dict[Any, int]()
    try:
        while queue or pending:
            while queue and len(pending) < slots:  # only as many in flight as run: "running" is true
                i = queue.popleft()
                pending[remote.remote(tasks[i].scenario, tasks[i].transport, opts.memory)] = i
                prog.started(tasks[i].label, costs[i])
            done, _ = ray.wait(list(pending), num_returns=1, timeout=prog.every_s)
            for ref in done:
                i = pending.pop(ref)
                collect(ray, ref, tasks[i], lambda r, why="", i=i: finish(i, r, why))
            prog.tick()
    except BaseException:  # interrupted: stop the rest; what finished is cached
        for ref in pending:
            ray.cancel(ref, force=True)
        if _STARTED:  # its workers, raylet and GCS stopped before the command's one line, not at its exit
            ray.shutdown()
            _STARTED.clear()
        raise


def collect(ray: Any, ref: Any, t: Task, finish: Collected) -> None:
    """A finished Ray task's result back with its scenario and transport,
    or why there is none."""
    try:
        version, kept = ray.get(ref)
    except ray.exceptions.RayError as exc:
        finish(None, str(exc))
        return
    mine = run_cache.code_version()
    if version != mine:
        finish(None, f"a Ray worker runs other code (version {version[:12]}, here {mine[:12]}): "
                     "every node needs this checkout installed")
        return
    finish(run_cache.attach(kept, t.scenario, t.transport))


def label(values: dict[str, Any]) -> str:
    """A sweep variant's values as `message_bytes=65536 rate=0.01` (each
    key by the last part of its dotted path)."""
    return " ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in values.items())

