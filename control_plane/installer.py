"""Install, verify and reconcile one device's entries over P4Runtime (finsy).

Reconcile reads the tables the plan owns, diffs them against the desired
entries and writes only the inserts, modifies and deletes needed, in
batches. A failed batch is reported exactly (which updates were rejected and
why); running install again finishes the job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar, cast

import finsy as fy
from finsy.grpcutil import GRPCStatusCode
from finsy.p4entity import P4Entity

from control_plane import tls, tls_errors
from control_plane.p4_entities import check_schema
from control_plane.topology import Device

DEFAULT_BATCH = 1000
DEFAULT_TIMEOUT = 10.0
LOG = logging.getLogger("control_plane.tls")

_E = TypeVar("_E", bound=P4Entity)


def read_each(sw: fy.Switch, entities: Sequence[_E]) -> AsyncIterator[_E]:
    """The device's entities matching `entities`, as they arrive. finsy
    declares `Switch.read`'s overloads `async def` with no `yield`, so a type
    checker takes them for coroutines; at run time `read` is an async
    generator, and this says so in one place."""
    return cast("AsyncIterator[_E]", sw.read(entities))


class DeviceError(RuntimeError):
    """A device could not be reached, refused an update, or is not primary."""

    def __init__(self, device: str, cause: str):
        super().__init__(f"{device}: {cause}")
        self.device = device
        self.cause = cause


@dataclass
class Diff:
    inserts: list[fy.P4TableEntry] = field(default_factory=list)
    modifies: list[fy.P4TableEntry] = field(default_factory=list)
    deletes: list[fy.P4TableEntry] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.inserts or self.modifies or self.deletes)

    def summary(self) -> str:
        return f"{len(self.inserts)} to insert, {len(self.modifies)} to modify, {len(self.deletes)} to delete"


@contextlib.asynccontextmanager
async def connect(
    device: Device,
    p4info: Path,
    p4blob: Path | None = None,
    *,
    election_id: int = 10,
    timeout: float = DEFAULT_TIMEOUT,
    force_pipeline: bool = False,
    loaded: bool = False,
) -> AsyncIterator[fy.Switch]:
    """Open a primary P4Runtime session; set the pipeline if `p4blob` is given
    and the device's cookie differs (or `force_pipeline`). With `loaded`,
    never set it: use the device's own P4Info, which must match `p4info`
    (a lab's device runs a pipeline loaded by its own tools). TLS when the
    device has tls settings (mutual when they hold a client certificate)."""
    warning = tls.plaintext_warning(device.name, device.grpc_addr, device.tls)
    if warning:
        LOG.warning(warning)
    opts = fy.SwitchOptions(
        p4info=None if loaded else p4info,
        p4blob=p4blob,
        p4force=force_pipeline,
        device_id=device.device_id,
        initial_election_id=election_id,
        channel_credentials=device.tls.credentials() if device.tls else None,
    )
    sw = fy.Switch(device.name, device.grpc_addr, opts)
    try:
        async with asyncio.timeout(timeout):
            await sw.__aenter__()
    except TimeoutError:
        with contextlib.suppress(Exception):
            await sw.__aexit__(None, None, None)
        raise DeviceError(device.name, f"unreachable at {device.grpc_addr} (no answer in {timeout:g} s)") from None
    except fy.P4ClientError as exc:
        # gRPC's words for a TLS failure are terse: say which side refused what.
        cause = await asyncio.to_thread(
            tls_errors.explain, device.grpc_addr, device.tls, exc.message, min(timeout, tls_errors.PROBE_TIMEOUT)
        )
        if cause:
            raise DeviceError(device.name, cause) from None
        cause = not_p4runtime(device, exc.code.name, exc.message)
        if cause is None and exc.code == GRPCStatusCode.INTERNAL:
            # The session's calls can end INTERNAL ("Internal error from Core") on a server without the
            # service, where one bare call answers UNIMPLEMENTED: ask once more, plainly.
            probed = await asyncio.to_thread(service_status, device, min(timeout, tls_errors.PROBE_TIMEOUT))
            cause = not_p4runtime(device, *probed) if probed else None
        if cause:
            raise DeviceError(device.name, cause) from None
        if exc.code == GRPCStatusCode.UNAVAILABLE:
            raise DeviceError(device.name, f"unreachable at {device.grpc_addr}: {exc.message}") from None
        raise DeviceError(
            device.name, f"P4Runtime error at {device.grpc_addr}: {exc.code.name} {exc.message}"
        ) from None
    except Exception as exc:  # grpc/OS errors while connecting
        raise DeviceError(device.name, f"unreachable at {device.grpc_addr}: {exc}") from None
    try:
        if loaded:
            _check_loaded(device, sw, p4info)
        yield sw
    finally:
        await sw.__aexit__(None, None, None)


def service_status(device: Device, timeout: float) -> tuple[str, str] | None:
    """gRPC's (code, message) for one bare P4Runtime Capabilities call to
    the device, or None if it answered. Blocks up to `timeout` seconds."""
    import grpc  # type: ignore[import-untyped]  # declared in pyproject.toml (finsy needs it too)

    if device.tls:  # finsy's credentials, as grpc's own (and the server name finsy would give as a channel option)
        creds = device.tls.credentials()
        name = [("grpc.ssl_target_name_override", creds.target_name_override)] if creds.target_name_override else None
        channel = grpc.secure_channel(device.grpc_addr, creds.to_client_credentials(), name)
    else:
        channel = grpc.insecure_channel(device.grpc_addr)
    try:
        channel.unary_unary("/p4.v1.P4Runtime/Capabilities")(b"", timeout=timeout)  # an empty request is valid
        return None
    except grpc.RpcError as exc:
        return exc.code().name, exc.details() or ""
    finally:
        channel.close()


def not_p4runtime(device: Device, code: str, message: str) -> str | None:
    """Why the server at the device's address is not a P4Runtime device
    it could talk to, from gRPC's status, or None."""
    if code == "UNIMPLEMENTED":
        return (f"not a P4Runtime server at {device.grpc_addr}: it answers gRPC but has no P4Runtime service "
                f"({message.strip()})")
    if code == "UNAVAILABLE" and ("HTTP/2" in message or "http1" in message.lower()):
        return f"not a P4Runtime server at {device.grpc_addr}: it does not speak gRPC (HTTP/2)"
    return None


def no_pipeline(device: Device, code: str, message: str) -> str | None:
    """FAILED_PRECONDITION without a pipeline, said as what to check, or None."""
    if code != "FAILED_PRECONDITION" or "pipeline" not in message.lower():
        return None
    return (f"no pipeline on device_id {device.device_id} at {device.grpc_addr} ({message.strip()}): "
            f"either device_id is wrong for this server, or no pipeline was pushed (mrcctl install pushes one)")


def _check_loaded(device: Device, sw: fy.Switch, p4info: Path) -> None:
    """The device's loaded P4Info must name the same entities, with the
    same ids, as the P4Info we plan against."""
    if not sw.p4info.exists:
        raise DeviceError(device.name, f"no pipeline loaded at {device.grpc_addr} (push one, or load it first)")

    def ids(schema: fy.P4Schema) -> set[tuple[str, int, str]]:
        kinds = ("tables", "actions", "counters", "direct_counters", "registers")
        return {(k, e.id, e.name) for k in kinds for e in getattr(schema, k)}

    want, have = ids(fy.P4Schema(p4info)), ids(sw.p4info)
    if want != have:
        diff = sorted(f"{k} {n} ({i:#x})" for k, i, n in want ^ have)
        raise DeviceError(device.name, f"loaded pipeline's P4Info differs from {p4info.name}: "
                                       f"{len(diff)} entities differ, e.g. {', '.join(diff[:4])}")


async def read_clone_session(sw: fy.Switch, session_id: int) -> fy.P4CloneSessionEntry | None:
    """The device's clone session `session_id`, or None if it has none
    (BMv2 answers NOT_FOUND, other devices an empty entry)."""
    try:
        found = [e async for e in read_each(sw, [fy.P4CloneSessionEntry(session_id)])]
    except fy.P4ClientError as exc:
        if exc.code != GRPCStatusCode.NOT_FOUND:
            raise
        return None
    return found[0] if found and found[0].replicas else None


def replicas(entry: fy.P4CloneSessionEntry) -> list[tuple[int, int]]:
    """(port, instance) pairs, whether given as tuples, bare ports or read back."""
    pairs: list[tuple[int, int]] = []
    for r in entry.replicas:
        if isinstance(r, tuple):
            pairs.append((r[0], r[1]))
        elif isinstance(r, int):
            pairs.append((r, 0))
        else:
            pairs.append((r.port, r.instance))
    return pairs


def _key(ent: fy.P4TableEntry, schema: fy.P4Schema) -> bytes:
    pb = ent.encode(schema).table_entry
    pb.ClearField("action")
    pb.ClearField("counter_data")
    pb.ClearField("meter_config")
    key: bytes = pb.SerializeToString(deterministic=True)
    return key


def _value(ent: fy.P4TableEntry, schema: fy.P4Schema) -> bytes:
    value: bytes = ent.encode(schema).table_entry.action.SerializeToString(deterministic=True)
    return value


async def read_entries(sw: fy.Switch, tables: Sequence[str], defaults: Sequence[str]) -> list[fy.P4TableEntry]:
    wanted = [fy.P4TableEntry(t) for t in tables]
    wanted += [fy.P4TableEntry(t, is_default_action=True) for t in defaults]
    return [e async for e in read_each(sw, wanted)]


def diff(desired: Sequence[fy.P4TableEntry], actual: Sequence[fy.P4TableEntry], schema: fy.P4Schema) -> Diff:
    have = {_key(e, schema): e for e in actual}
    out = Diff()
    for ent in desired:
        key = _key(ent, schema)
        cur = have.pop(key, None)
        if cur is None:
            # A default action always exists: it is modified, never inserted.
            (out.modifies if ent.is_default_action else out.inserts).append(ent)
        elif _value(cur, schema) != _value(ent, schema):
            out.modifies.append(ent)
    out.deletes = [e for e in have.values() if not e.is_default_action]
    return out


def _rejections(exc: fy.P4ClientError, batch: Sequence[fy.P4TableEntry]) -> list[str]:
    lines = []
    for index, err in sorted(exc.details.items()):
        if err.canonical_code == GRPCStatusCode.OK:
            continue
        what = batch[index] if index < len(batch) else "?"
        lines.append(f"update {index} ({what}): {err.canonical_code.name} {err.message}")
    return lines or [f"{exc.code.name} {exc.message}"]


async def write_batched(
    sw: fy.Switch,
    updates: Sequence[fy.P4TableEntry],
    op: str,
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Write `updates` as `op` (insert/modify/delete) in batches of
    `batch_size` updates per WriteRequest; return how many were written."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    method = {"insert": sw.insert, "modify": sw.modify, "delete": sw.delete}[op]
    done = 0
    for start in range(0, len(updates), batch_size):
        batch = updates[start : start + batch_size]
        try:
            await method(batch)
        except fy.P4ClientError as exc:
            failed = _rejections(exc, batch)
            # Per-update details: the others were applied. None: the whole
            # request was refused.
            applied = done + (len(batch) - len(failed) if exc.details else 0)
            raise DeviceError(
                sw.name,
                f"partially updated: {applied} of {len(updates)} {op}s applied; "
                f"rejected: " + "; ".join(failed[:5]) + (f" (+{len(failed) - 5} more)" if len(failed) > 5 else "")
                + "; run install again to reconcile",
            ) from None
        done += len(batch)
        if progress:
            progress(done)
    return done


async def reconcile(
    sw: fy.Switch,
    desired: Sequence[fy.P4TableEntry],
    tables: Sequence[str],
    defaults: Sequence[str],
    *,
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[str, int], None] | None = None,
) -> Diff:
    """Bring the device's `tables` to `desired`; return what was changed."""
    if not sw.is_primary:
        raise DeviceError(sw.name, f"not primary (election id {sw.election_id} < {sw.primary_id}): cannot write")
    check_schema(sw.p4info, desired)
    actual = await read_entries(sw, tables, defaults)
    d = diff(desired, actual, sw.p4info)
    # Deletes first frees table space; inserts before modifies is arbitrary.
    for op, ents in (("delete", d.deletes), ("insert", d.inserts), ("modify", d.modifies)):
        if ents:
            cb = (lambda n, op=op: progress(op, n)) if progress else None
            await write_batched(sw, ents, op, batch_size, cb)
    return d


async def verify(
    sw: fy.Switch, desired: Sequence[fy.P4TableEntry], tables: Sequence[str], defaults: Sequence[str]
) -> Diff:
    """Read back and diff: an empty Diff means the device holds `desired`."""
    actual = await read_entries(sw, tables, defaults)
    return diff(desired, actual, sw.p4info)
