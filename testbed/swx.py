"""DPDK's SWX pipeline (`dpdk-pipeline`, the example app of DPDK's
lib/pipeline, the PNA reference target) running a PNA program p4c-dpdk
compiled (`make build`: bmv2_configs/build/<program>.spec), on TAP ports,
driven through the app's CLI on a loopback TCP port.

- The spec becomes C (`pipeline codegen`) and a shared object (`pipeline
  libbuild`: gcc against the DPDK tree, about a minute on 2 cores) once per
  spec and app; the object is kept (`$MRC_SWX_CACHE`, else
  ~/.cache/mrc/swx) for the next start.
- Each port is a TAP device made here first, IPv6 off (the kernel adds no
  frames of its own), that DPDK's net_tap driver opens; the suites and the
  relays read and write its kernel side.
- Table entries are the planner's P4Runtime entities
  (control_plane.p4_entities.to_p4), written in SWX's table-entry lines by
  one translation (testbed/swx_schema.py); registers and counters are
  register arrays (`regrd`/`regwr`).
- The app polls: both its threads share one core (`cpu`), and it runs only
  as long as its owner (stopped by its pid; killed by the kernel if the
  owner dies first).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import itertools
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import finsy as fy

from testbed import netdev, process, toolchain
from testbed.bmv2 import free_port
from testbed.swx_schema import SwxError, SwxSchema, is_delete, match_of

PIPELINE = "PIPELINE0"
PROMPT = "pipeline> "
# A frame in one buffer (SWX reads a packet's first segment only): up to the
# 9,000-byte MTU the app gives its ports, and the headroom.
MEMPOOL = "mempool MEMPOOL0 meta 0 pkt 9344 pool 8K cache 256 numa 0"
# PNA's direction of each port (the `direction` register array p4c-dpdk adds,
# read into the parser's istd.direction): the host port faces the host.
NET_TO_HOST, HOST_TO_NET = 0, 1
_ids = itertools.count()


def cache_dir() -> Path:
    env = os.environ.get("MRC_SWX_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "mrc" / "swx"


# ---- the app's CLI ----------------------------------------------------------------------------------------

class Cli:
    """The app's CLI on its TCP port: commands in, their output back. The
    app writes one prompt per read of its socket, not per command, so a
    batch ends with an unknown command whose answer marks its end."""

    def __init__(self, port: int, timeout: float = 30.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self._buf = ""
        self._batches = itertools.count()
        self._read_until(PROMPT, timeout)

    def close(self) -> None:
        self.sock.close()

    def _read_until(self, end: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while end not in self._buf:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(1 << 20)
            except TimeoutError:
                raise SwxError(f"the SWX CLI did not answer in {timeout:g} s") from None
            if not data:
                raise SwxError("the SWX CLI closed its connection (the app exited?)")
            self._buf += data.decode(errors="replace")
        out, self._buf = self._buf.split(end, 1)
        return out

    def run(self, commands: Sequence[str], timeout: float = 30.0) -> str:
        """Run `commands` in order; what they printed, prompts left out."""
        marker = f"mrc-end-{next(self._batches)}"
        self.sock.sendall(("\n".join([*commands, marker]) + "\n").encode())
        return self._read_until(f'Unknown command "{marker}".\n', timeout).replace(PROMPT, "")

    def quiet(self, commands: Sequence[str], timeout: float = 30.0) -> None:
        """Run commands that print nothing when they succeed; raise with what they printed."""
        out = self.run(commands, timeout).strip()
        if out:
            shown = "; ".join(commands[:3]) + (f"; ... ({len(commands)} commands)" if len(commands) > 3 else "")
            raise SwxError(f"SWX refused: {out} (in: {shown})")

    def values(self, commands: Sequence[str]) -> list[int]:
        """Run commands that print one value each (regrd)."""
        lines = self.run(commands).split()
        if len(lines) != len(commands) or not all(re.fullmatch(r"0x[0-9a-fA-F]+", x) for x in lines):
            raise SwxError(f"SWX answered {' '.join(lines)!r} to {commands[0]!r} and {len(commands) - 1} more")
        return [int(x, 16) for x in lines]


# ---- the app ----------------------------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1  # prctl(2)


def _in_app_process() -> None:
    """Run in the app's process before it starts. It ends with its owner
    (the kernel sends it SIGKILL when the process that started it dies: a
    polling app left behind keeps a core busy). And every real-time signal
    is ignored, so DPDK's TAP driver finds none free for its receive trigger
    and reads its queues on every poll (drivers/net/tap/rte_eth_tap.c:
    tap_trigger 0): with the trigger, a frame is read only once the
    signal's handler has run, in whichever thread the kernel gave it, the
    CLI thread sharing the core with the pipeline's among them. A host
    frame's completion came back in 9 ms without it, 15 ms with it (medians
    of 40 frames, 3 runs each, on a loaded 2-core machine)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for sig in range(signal.SIGRTMIN, signal.SIGRTMAX + 1):
        signal.signal(sig, signal.SIG_IGN)


def make_tap(name: str) -> None:
    """A TAP device, IPv6 off before it is up (no router solicitations)."""
    netdev.delete([name])
    netdev.ip("tuntap", "add", "dev", name, "mode", "tap", "multi_queue")  # as net_tap opens it
    netdev.ipv6_off(name)
    netdev.ip("link", "set", name, "up")


@dataclass
class SwxPipeline:
    """One dpdk-pipeline process running `program` on `ports` (TAP devices),
    port p facing the host when `host_ports` says so (PNA's direction)."""

    name: str
    ports: list[int]
    program: str = "nic-pna"
    host_ports: tuple[int, ...] = (0,)
    cpu: int = 0  # the core both app threads run on
    workdir: Path = Path("/tmp/mrc-swx")
    tag: str = field(default_factory=lambda: f"w{os.getpid() % 10000}x{next(_ids)}")
    proc: subprocess.Popen[bytes] | None = None
    cli: Cli | None = None
    schema: SwxSchema | None = None
    # What this object wrote into each table (the spec's name): match -> line.
    entries: dict[str, dict[str, str]] = field(default_factory=dict)

    def iface(self, port: int) -> str:
        return f"{self.tag}p{port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.tag}.log"

    def start(self, timeout: float = 60.0) -> None:
        why = toolchain.swx_unavailable(self.program)
        app = toolchain.dpdk_pipeline()
        if why or app is None:
            raise SwxError(why or "dpdk-pipeline not found")
        if sorted(self.ports) != list(range(len(self.ports))):
            raise SwxError(f"{self.name}: SWX numbers its ports from 0 without gaps; got {self.ports}")
        spec, bfrt, constants = toolchain.swx_artifacts(self.program)
        self.schema = SwxSchema(spec, bfrt)
        self.workdir.mkdir(parents=True, exist_ok=True)
        for p in self.ports:
            make_tap(self.iface(p))
        port = free_port()
        vdevs = [f"--vdev=net_tap{p},iface={self.iface(p)}" for p in self.ports]
        cmd = [app, "--no-huge", "-m", "512", "--no-pci", "--no-shconf", f"--file-prefix={self.tag}",
               f"--lcores=(0,1)@{self.cpu}", *vdevs, "--", "-h", "127.0.0.1", "-p", str(port)]
        env = {**os.environ, "RTE_INSTALL_DIR": str(toolchain.dpdk_tree(app))}
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                         preexec_fn=_in_app_process)
        try:
            self.cli = self._connect(port, timeout)
            lib = self._library(spec, app)
            cli = self.cli
            cli.quiet([MEMPOOL, *(f"ethdev net_tap{p} rxq 1 128 MEMPOOL0 txq 1 512 promiscuous on"
                                  for p in self.ports)])
            for p in self.ports:  # net_tap sets the kernel side's MTU back to 1,500
                netdev.ip("link", "set", self.iface(p), "mtu", "9000")
            io = self.workdir / f"{self.tag}.io"
            io.write_text("mirroring slots 4 sessions 64\n" + "".join(
                f"port in {p} ethdev net_tap{p} rxq 0 bsz 1\n" for p in self.ports) + "".join(
                f"port out {p} ethdev net_tap{p} txq 0 bsz 1\n" for p in self.ports))
            cli.quiet([f"pipeline {PIPELINE} build lib {lib} io {io} numa 0"])
            for f in constants:  # <program>.<table>.entries: the table's constant entries
                cli.quiet([f"pipeline {PIPELINE} table {f.suffixes[-2][1:]} add {f}"])
            cli.quiet([f"pipeline {PIPELINE} commit"])
            if "direction" in self.schema.regarrays:
                self.write_registers("direction", [
                    (p, HOST_TO_NET if p in self.host_ports else NET_TO_HOST) for p in self.ports])
            cli.quiet([f"pipeline {PIPELINE} enable thread 1"])
        except BaseException:
            self.stop()
            raise

    def _connect(self, port: int, timeout: float) -> Cli:
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise SwxError(f"{self.name}: dpdk-pipeline exited: {self.log_tail()}")
            with contextlib.suppress(OSError):
                return Cli(port)
            if time.monotonic() > deadline:
                raise SwxError(f"{self.name}: the CLI did not open on port {port} in {timeout:g} s")
            time.sleep(0.1)

    def _library(self, spec: Path, app: str) -> Path:
        """The spec's shared object: from the cache, else made now (once, under a lock)."""
        binary = Path(app).resolve()
        stat = binary.stat()
        identity = f"{binary}:{stat.st_mtime_ns}:{stat.st_size}".encode()
        key = hashlib.sha256(spec.read_bytes() + identity).hexdigest()[:16]
        folder = cache_dir() / f"{self.program}-{key}"
        lib = folder / "pipeline.so"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not lib.exists():
                assert self.cli is not None
                c, tmp = folder / "pipeline.c", folder / "building.so"
                print(f"{self.name}: compiling {spec.name} for SWX (pipeline codegen and libbuild, once: "
                      f"kept in {folder})", flush=True)
                self.cli.quiet([f"pipeline codegen {spec} {c}"], timeout=120)
                out = self.cli.run([f"pipeline libbuild {c} {tmp}"], timeout=900)
                if "failed" in out or not tmp.exists():
                    raise SwxError(f"{self.name}: {out.strip()}")
                tmp.rename(lib)
        return lib

    def log_tail(self, lines: int = 20) -> str:
        return process.log_tail(self.log_path, lines)

    def stop(self) -> None:
        if self.cli is not None:
            self.cli.close()
            self.cli = None
        process.end(self.proc, 10)
        self.proc = None
        netdev.delete([self.iface(p) for p in self.ports])

    def __enter__(self) -> SwxPipeline:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- tables, registers, sessions, statistics --------------------------------------------------------
    def _cli(self) -> tuple[Cli, SwxSchema]:
        if self.cli is None or self.schema is None:
            raise SwxError(f"{self.name}: not running")
        return self.cli, self.schema

    def write(self, updates: Sequence[fy.P4TableEntry]) -> None:
        """P4Runtime updates (+ insert, ~ modify, - delete), in order, in one
        commit (SWX's add inserts or modifies)."""
        _, schema = self._cli()
        self._commit([(*schema.line(u), is_delete(u), u.is_default_action) for u in updates])

    def reconcile(self, desired: Sequence[fy.P4TableEntry], tables: Sequence[str]) -> None:
        """Make `tables` (P4Runtime names) hold exactly the entries of `desired`
        (and its default actions), as the running tables are known here:
        what this object wrote."""
        _, schema = self._cli()
        lines = [(*schema.line(e), e.is_default_action) for e in desired]
        want: dict[str, dict[str, str]] = {schema.table(t).name: {} for t in tables}
        for table, line, default in lines:
            if not default:
                want.setdefault(table, {})[match_of(line)] = line
        gone = [(t, line, True, False) for t, now in self.entries.items() if t in want
                for key, line in now.items() if key not in want[t]]
        self._commit(gone)
        self._commit([(t, line, False, default) for t, line, default in lines
                      if default or self.entries.get(t, {}).get(match_of(line)) != line])

    def _commit(self, ops: Sequence[tuple[str, str, bool, bool]]) -> None:
        """(table, line, delete, default action) each: each table's run of
        adds or deletes from a file of lines, then one commit."""
        cli, _ = self._cli()
        commands: list[str] = []
        for (table, delete, default), group in itertools.groupby(ops, key=lambda x: (x[0], x[2], x[3])):
            run = [line for _, line, _, _ in group]
            path = self.workdir / f"{self.tag}-{len(commands)}.txt"
            path.write_text("".join(line + "\n" for line in run))
            verb = "default" if default else "delete" if delete else "add"
            commands.append(f"pipeline {PIPELINE} table {table} {verb} {path}")
        if not commands:
            return
        try:
            cli.quiet(commands)
        except SwxError:
            cli.run([f"pipeline {PIPELINE} abort"])
            raise
        cli.quiet([f"pipeline {PIPELINE} commit"])
        for table, line, delete, default in ops:
            if not default:
                now = self.entries.setdefault(table, {})
                if delete:
                    now.pop(match_of(line), None)
                else:
                    now[match_of(line)] = line

    def written(self, table: str) -> list[tuple[tuple[int, ...], dict[str, int]]]:
        """(key values, action arguments) of each entry of `table` (its
        P4Runtime name) this object wrote and SWX committed."""
        _, schema = self._cli()
        out = []
        for line in self.entries.get(schema.table(table).name, {}).values():
            match, action = line.split(" action ")
            args = action.split()[1:]
            out.append((tuple(int(v, 16) for v in match.split()[1:]),
                        {args[i]: int(args[i + 1], 16) for i in range(0, len(args), 2)}))
        return out

    def read_registers(self, name: str, indices: Sequence[int]) -> list[int]:
        cli, schema = self._cli()
        reg = schema.regarray(name)
        return cli.values([f"pipeline {PIPELINE} regrd {reg} index {i}" for i in indices]) if indices else []

    def write_registers(self, name: str, cells: Sequence[tuple[int, int]]) -> None:
        cli, schema = self._cli()
        reg = schema.regarray(name)
        if not cells:
            return
        # regwr by index answers with the value written.
        echoed = cli.values([f"pipeline {PIPELINE} regwr {reg} value {v:#x} index {i}" for i, v in cells])
        if echoed != [v for _, v in cells]:
            raise SwxError(f"SWX wrote {echoed} into {reg}, not {[v for _, v in cells]}")

    def register_read(self, name: str, index: int) -> int:
        [v] = self.read_registers(name, [index])
        return v

    def register_write(self, name: str, index: int, value: int) -> None:
        self.write_registers(name, [(index, value)])

    def direct(self, name: str, table: str, key: Sequence[int]) -> int:
        """A direct register array's cell of a table entry (a direct counter's)."""
        cli, schema = self._cli()
        match = " ".join(hex(k) for k in key)
        [v] = cli.values([f"pipeline {PIPELINE} regrd {schema.regarray(name)} table {schema.table(table).name} "
                          f"match {match}"])
        return v

    def mirror(self, session: int, port: int, truncate: int = 0) -> None:
        """Mirror session `session`: a deep copy to `port`, cut to `truncate` bytes (0: whole)."""
        cli, _ = self._cli()
        cli.quiet([f"pipeline {PIPELINE} mirror session {session} port {port} clone slow truncate {truncate}"])

    def port_stats(self) -> tuple[dict[int, int], dict[int, int]]:
        """(frames each input port read, frames each output port sent, mirror copies included)."""
        cli, _ = self._cli()
        text = cli.run([f"pipeline {PIPELINE} stats"])
        inputs, outputs = text.split("Output ports:")[0], text.split("Output ports:")[1].split("Tables:")[0]
        rx = {int(m[1]): int(m[2]) for m in re.finditer(r"Port (\d+): packets (\d+)", inputs)}
        tx = {int(m[1]): int(m[2]) for m in re.finditer(r"Port (\d+): packets (\d+)", outputs)}
        return rx, tx
