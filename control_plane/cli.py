"""mrcctl: plan, install, verify and diff the fabric's switches and NICs.
`mrcctl COMMAND --help` lists a command's own options.

    mrcctl plan TOPO [--device NAME ...] [--write DIR]
    mrcctl install TOPO [--device NAME ...] [--batch-size N] [TLS] [--election-id N]
    mrcctl verify TOPO [--device NAME ...] [TLS] [--election-id N]
    mrcctl diff TOPO [--device NAME ...] [TLS] [--election-id N]
    mrcctl qp|ev|port|device ...        QPs and EVs on running NICs (control_plane/nic_cmds.py)

install/verify/diff act on the devices TOPO's `devices` lists, all at
once: a switch gets its planned tables (ports through its port_map), a NIC
its rows, plane ports, config and NACK-notice clone session; a NIC's QP
tables belong to EV control at run time and are never touched. Errors
name the device and the cause. TLS: --tls-ca-cert, --tls-cert,
--tls-key, --tls-server-name, for every device acted on, in place of the
`tls` of TOPO's devices (docs/tls.md). A controller with a lower election
id than the primary's can verify and diff, not install.
"""

from __future__ import annotations

import os

# gRPC core logs each failed TLS handshake at INFO on stderr (our error says
# it better); it reads this once, when grpc is imported, so before finsy.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import argparse
import asyncio
import dataclasses
import json
import logging
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import finsy as fy

from control_plane import installer, nic_cmds, nic_plan, pipelines, tls, topology
from control_plane import p4_entities as P
from control_plane import switch_plan as S
from control_plane.config import ConfigError, printable, short
from mrc_wire.constants import MAX_PORTS
from mrc_wire.entries import EcnStep


def cmd_plan(topo: topology.Topology, args: argparse.Namespace) -> int:
    if args.device:
        for name in args.device:
            try:
                dev = topo.device(name)
            except ValueError as exc:
                print(f"error: --device: {printable(str(exc))}", file=sys.stderr)
                return 2
            planned: Sequence[object]
            if dev.kind == "nic":  # its tables before any QP: rows, plane ports, config
                planned = nic_plan.nic_state(topo, dev.index).entries()
            else:
                planned = S.switch_state(topo, name).entries()
            print(f"{name}: {len(planned)} entries")
            for e in planned:
                print(f"  {e}")
        return 0
    kinds: Counter[str] = Counter()
    entries: Counter[str] = Counter()  # entries per switch tier
    largest = 0
    planner = S.Planner(topo)
    for name in S.switch_names(topo):
        state = planner.switch_state(name)
        kinds[name[:2]] += 1
        entries[name[:2]] += len(state.entries())
        largest = max(largest, len(state.routes))
        if args.write:
            try:
                (args.write / f"{name}.json").write_text(json.dumps(state_json(state), indent=1) + "\n")
            except OSError as exc:  # checked before planning; this is a disk that filled up since
                print(f"error: --write: {args.write / f'{name}.json'}: {exc.strerror or exc}", file=sys.stderr)
                return 2
    print(f"topology {topo.name}: {topo.switches} switches ({kinds['t0']} T0, {kinds['t1']} T1), {topo.nics} NICs")
    for kind in ("t0", "t1"):
        print(f"  {kind.upper()}: {entries[kind] // max(kinds[kind], 1)} entries each")
    nic = nic_plan.nic_state(topo, 0)
    print(f"  NIC: {len(nic.entries())} entries each before QPs ({len(nic.rows)} row templates, "
          f"{len(nic.planes)} plane ports, config), plus per QP its slots, EVs and peer")
    radix = max(topo.hosts_per_t0 + topo.t1_per_plane, topo.t0_per_plane)
    print(f"largest /48 table: {largest} entries; switch radix used: {radix} of {MAX_PORTS} ports")
    if args.write:
        print(f"wrote {topo.switches} device files to {args.write}")
    return 0


def state_json(state: S.SwitchState) -> dict[str, object]:
    """A switch's planned tables as JSON-ready data (hex for keys and MACs)."""
    return {
        "name": state.name,
        "my_usid": f"{state.my_usid.locator:012x}",
        "usid_route": {f"{r.locator:012x}": r.port for r in state.routes},
        "port_neighbour": {
            str(n.port): {"src_mac": f"{n.src_mac:012x}", "dst_mac": f"{n.dst_mac:012x}", "host_facing": n.host_facing}
            for n in state.neighbours
        },
        "dscp_class": {str(d.dscp): d.cls for d in state.dscp_classes},
        "ecn_profile": {str(e.cls): {"action": "ecn_step" if isinstance(e, EcnStep) else "ecn_ramp",
                                     **dataclasses.asdict(e)} for e in state.ecn_profiles},
        "congestion_config": dataclasses.asdict(state.congestion),
    }


class _Plan:
    """What mrcctl installs on one device: program, entries, owned tables,
    and (NICs) the clone session that carries NACK notices to the host."""

    program: str
    tables: tuple[str, ...]
    defaults: tuple[str, ...]
    desired: list[fy.P4TableEntry]
    pre: fy.P4CloneSessionEntry | None

    def __init__(self, topo: topology.Topology, name: str):
        dev = topo.device(name)
        if dev.is_switch:
            self.program, self.tables, self.defaults = "switch", P.SWITCH_TABLES, P.SWITCH_DEFAULTS
            self.desired = [P.to_p4(e) for e in S.device_entries(topo, name)]
            self.pre = None
        else:
            state = nic_plan.nic_state(topo, dev.index)
            self.program, self.tables, self.defaults = "nic", P.NIC_STATIC_TABLES, P.NIC_DEFAULTS
            self.desired = [P.to_p4(e) for e in state.entries()]
            self.pre = P.notice_session(state.notice)


async def _pre_diff(sw: fy.Switch, pre: fy.P4CloneSessionEntry | None) -> tuple[bool, str] | None:
    """(whether it is missing, how) the device's clone session differs
    from the plan, or None when it is as planned."""
    if pre is None:
        return None
    found = await installer.read_clone_session(sw, pre.session_id)
    if found is None:
        return True, f"clone session {pre.session_id} missing"
    have, want = installer.replicas(found), installer.replicas(pre)
    if have != want:
        return False, f"clone session {pre.session_id} replicas {have} (planned {want})"
    return None


async def _each(topo: topology.Topology, names: list[str], action: str, batch: int, election_id: int = 10) -> int:
    """Run `action` on every device at once; print each device's line as it
    finishes, and write progress for large installs."""
    failed = 0

    def progress(name: str, total: int) -> Callable[[str, int], None]:
        step = max(batch, 10_000)

        def report(op: str, done: int) -> None:
            if total > step and (done % step < batch or done == total):
                print(f"{name}: {op} {done}/{total}", flush=True)

        return report

    async def one(name: str) -> tuple[str, bool]:
        """(the device's line, whether it is as planned)."""
        device = topo.devices[name]
        plan = _Plan(topo, name)
        p4info, blob = pipelines.artifacts(plan.program)
        async with installer.connect(
            device, p4info, blob if action == "install" else None, election_id=election_id
        ) as sw:
            pre_diff = await _pre_diff(sw, plan.pre)
            pre = pre_diff[1] if pre_diff else None
            if action == "install":
                d = await installer.reconcile(sw, plan.desired, plan.tables, plan.defaults, batch_size=batch,
                                              progress=progress(name, len(plan.desired)))
                if pre_diff and plan.pre is not None:  # a difference implies a planned session
                    await sw.write([(+plan.pre) if pre_diff[0] else (~plan.pre)])
                return f"{name}: installed ({d.summary()}{'; ' + pre + ': written' if pre else ''})", True
            d = await installer.verify(sw, plan.desired, plan.tables, plan.defaults)
            if action == "diff":
                lines = (
                    [f"  + {e}" for e in d.inserts] + [f"  ~ {e}" for e in d.modifies] + [f"  - {e}" for e in d.deletes]
                )
                lines += [f"  ! {pre}"] if pre else []
                return "\n".join([f"{name}: {d.summary()}", *lines]), True  # a diff is a report, not a failure
            ok = not d and pre is None
            return f"{name}: {'OK' if ok else 'DIFFERS: ' + d.summary() + ('; ' + pre if pre else '')}", ok

    async def report(name: str) -> None:
        nonlocal failed
        try:
            line, ok = await one(name)
        except installer.DeviceError as exc:
            failed += 1
            print(f"error: {exc}", file=sys.stderr, flush=True)
        except Exception as exc:  # e.g. a P4Info that lacks a table: name the device
            failed += 1
            code = getattr(getattr(exc, "code", None), "name", "")
            why = installer.no_pipeline(topo.devices[name], code, str(getattr(exc, "message", "")))
            print(f"error: {name}: {why or exc}", file=sys.stderr, flush=True)
        else:
            print(line, flush=True)
            failed += not ok

    await asyncio.gather(*(report(n) for n in names))
    return 1 if failed else 0


def _batch_size(text: str) -> int:
    """--batch-size: updates per WriteRequest, 1 or more (checked as parsed)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {short(text)}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: a WriteRequest carries at least 1 update")
    return n


MAX_ELECTION_ID = 2**128 - 1  # P4Runtime's election id is a uint128


def _election_id(text: str) -> int:
    """--election-id: 1 to 2^128-1 in ASCII digits (checked as parsed: a
    device told 0 or 2^200 fails with a reason that names nothing)."""
    if not re.fullmatch(r"[0-9]{1,39}", text) or not 1 <= int(text) <= MAX_ELECTION_ID:
        raise argparse.ArgumentTypeError(f"expected a whole number 1 to 2^128-1, got {short(text)}")
    return int(text)


class _Once(argparse.Action):
    """A repeatable option whose values must differ (--device X --device X
    would have two writers on one device at once)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        got = list(getattr(namespace, self.dest) or [])
        if values in got:
            raise argparse.ArgumentError(self, f"{short(values)} is given twice")
        setattr(namespace, self.dest, [*got, values])


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="mrcctl", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    topo = argparse.ArgumentParser(add_help=False)
    topo.add_argument("topology", type=Path, help="topology file (docs/topology.md)")
    remote = argparse.ArgumentParser(add_help=False)
    remote.add_argument("--device", action=_Once, default=[], metavar="NAME",
                        help="act on this device only (repeatable; default: every device the topology lists)")
    remote.add_argument("--election-id", type=_election_id, default=10,
                        help="P4Runtime election id, 1 to 2^128-1 (the highest connected is primary; "
                             "default: %(default)s)")
    group = remote.add_argument_group("TLS (every device acted on; replaces the topology's tls settings)")
    group.add_argument("--tls-ca-cert", type=Path, help="CA certificate that signed the devices' certificates")
    group.add_argument("--tls-cert", type=Path, help="this controller's certificate (mutual TLS)")
    group.add_argument("--tls-key", type=Path, help="this controller's private key")
    group.add_argument("--tls-server-name", help="name to check the devices' certificates against")
    plan = sub.add_parser("plan", parents=[topo], help="print (or write) the planned tables; no device touched",
                          description="Print the tables planned for the fabric (a summary), or for --device.")
    plan.add_argument("--device", action=_Once, default=[], metavar="NAME",
                      help="print this device's tables in full (repeatable)")
    plan.add_argument("--write", type=Path, metavar="DIR", help="write one JSON file per switch into this folder")
    install = sub.add_parser("install", parents=[topo, remote], help="push the pipeline and reconcile the tables",
                             description="Push each device's pipeline if it differs, then write only the "
                                         "inserts, modifies and deletes its tables need.")
    install.add_argument("--batch-size", type=_batch_size, default=installer.DEFAULT_BATCH,
                         help="updates per WriteRequest (default: %(default)s)")
    sub.add_parser("verify", parents=[topo, remote], help="compare the devices' tables with the plan",
                   description="Read each device's tables; exit 1 if any differs from the plan.")
    sub.add_parser("diff", parents=[topo, remote], help="list every entry that differs from the plan",
                   description="Read each device's tables and list each entry to insert (+), modify (~) or delete (-).")
    nic_cmds.add(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    """mrcctl; an input it cannot take is one line and exit 2, never a traceback."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a last resort: every bad input should have been refused by name before this
        print(f"error: {printable(f'{type(exc).__name__}: {exc}')} (a bug of mrcctl: please report it)",
              file=sys.stderr)
        return 1


def _main(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    if args.command in nic_cmds.COMMANDS:
        return nic_cmds.run(args)
    # finsy logs a failed session with its traceback; the device's error line says it in one line
    logging.getLogger("finsy").setLevel(logging.CRITICAL + 1)
    logging.basicConfig(format="%(levelname)s: %(message)s")  # the plaintext warning, on one line
    try:
        topo = topology.load(args.topology)
        if args.command != "plan":
            settings = tls.from_flags({k: getattr(args, f"tls_{k}") for k in tls.KEYS}, "--tls-")
            if settings is not None:
                devices = {n: dataclasses.replace(d, tls=settings) for n, d in topo.devices.items()}
                topo = topo.model_copy(update={"devices": devices})
        if args.command == "plan" and args.write:
            _writable(args.write, [f"{name}.json" for name in S.switch_names(topo)])
    except ConfigError as exc:
        exc.report()
        return 2
    if args.command == "plan":
        return cmd_plan(topo, args)
    names = args.device or list(topo.devices)  # switches and NICs, in the file's order
    missing = [n for n in names if n not in topo.devices]
    if missing:
        print(f"error: devices: no P4Runtime address for {printable(', '.join(missing))}", file=sys.stderr)
        return 2
    return asyncio.run(_each(topo, names, args.command, getattr(args, "batch_size", installer.DEFAULT_BATCH),
                             args.election_id))


def _writable(folder: Path, files: list[str]) -> None:
    """ConfigError (field --write) unless `folder` can take `files`: made if
    missing, a file written there and removed before any table is planned
    (/proc/self and /sys/kernel are folders that take no file), and none of
    the names is a folder or other non-file already."""
    for name in files:
        p = folder / name
        if p.exists() and not p.is_file():
            raise ConfigError("--write", f"{p} exists and is not a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError("--write", f"{folder}: {exc.strerror or exc}") from None


if __name__ == "__main__":
    raise SystemExit(main())
