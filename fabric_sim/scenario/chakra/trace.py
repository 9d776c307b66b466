"""A Chakra trace as the walk needs it: a folder of per-rank ET files
(`<prefix>.<rank>.et`, as Chakra's tools and ASTRA-sim name them) and,
beside them, the process groups a collective's `pg_name` names
(`<prefix>.json`, ASTRA-sim's communicator-group file: {"name": [ranks]};
a collective without `pg_name` runs on every rank). Read once when the
scenario is parsed, into frozen objects; every mistake found is a line
naming the file and node (checks.py adds those across nodes and ranks)."""

from __future__ import annotations

import enum
import json
import re
from pathlib import Path

from control_plane.config import ConfigError, Model, read_regular
from fabric_sim.scenario.chakra import chakra_et_pb2 as pb
from fabric_sim.scenario.chakra.stream import NotAnEt, decode

MAX_FILE_BYTES = 256 << 20  # one rank's ET; a bigger file is refused before it is parsed
MAX_GROUPS_BYTES = 1 << 20
MAX_RANKS = 1 << 16
SHOWN = 8  # mistakes listed; the rest are counted
FILE = re.compile(r"^(?P<prefix>.+)\.(?P<rank>0|[1-9][0-9]{0,5})\.et$")
INTS = ("int32_val", "int64_val", "uint32_val", "uint64_val", "sint32_val", "sint64_val", "fixed32_val",
        "fixed64_val", "sfixed32_val", "sfixed64_val")


class Kind(enum.Enum):
    """What a node is to the walk."""

    COMPUTE = "compute"  # COMP_NODE: its duration on the rank's GPU, one kernel at a time
    HOST = "host"  # COMP_NODE with is_cpu_op: its duration on the rank's host thread, one at a time
    COLL = "collective"  # COMM_COLL_NODE: NCCL's collective with the other ranks of its group
    SEND = "send"  # COMM_SEND_NODE: a message to `peer`
    RECV = "recv"  # COMM_RECV_NODE: a message from `peer`
    MARK = "mark"  # METADATA_NODE: no time, only its place in the graph


class Coll(enum.Enum):
    """The collectives the walk runs (Chakra's CollectiveCommType), as NCCL
    runs them (collectives.py): the value is the name of its bus factor."""

    ALL_REDUCE = "all_reduce"
    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_TO_ALL = "all_to_all"
    BROADCAST = "broadcast"


COLLS: dict[int, Coll] = {pb.ALL_REDUCE: Coll.ALL_REDUCE, pb.ALL_GATHER: Coll.ALL_GATHER,
                          pb.REDUCE_SCATTER: Coll.REDUCE_SCATTER, pb.ALL_TO_ALL: Coll.ALL_TO_ALL,
                          pb.BROADCAST: Coll.BROADCAST}
KINDS: dict[int, Kind] = {pb.COMP_NODE: Kind.COMPUTE, pb.COMM_COLL_NODE: Kind.COLL, pb.COMM_SEND_NODE: Kind.SEND,
                          pb.COMM_RECV_NODE: Kind.RECV, pb.METADATA_NODE: Kind.MARK}


class Op(Model):
    """One node of a rank's graph."""

    id: int
    name: str
    kind: Kind
    deps: tuple[int, ...]  # ctrl_deps and data_deps: the nodes that must finish first
    duration_us: float = 0.0  # COMPUTE, HOST
    coll: Coll | None = None  # COLL
    size: int = 0  # COLL, SEND, RECV: comm_size, bytes (a collective's as Chakra and ASTRA-sim mean it)
    peer: int = -1  # SEND: comm_dst; RECV: comm_src
    tag: int = 0  # SEND, RECV: comm_tag
    group: str = ""  # COLL: pg_name ("": every rank)


class Trace(Model):
    """A trace folder, read and checked."""

    folder: str  # as the scenario names it
    prefix: str
    ranks: tuple[tuple[Op, ...], ...]  # rank -> its nodes, in file order
    groups: dict[str, tuple[int, ...]]  # pg_name -> ranks, in ring order

    def members(self, group: str) -> tuple[int, ...]:
        return self.groups[group] if group else tuple(range(len(self.ranks)))

    def file(self, rank: int) -> str:
        return f"{self.prefix}.{rank}.et"


def read(folder: Path, shown: str) -> Trace:
    """The trace in `folder` (`shown`: how errors name it), each node read
    alone; ConfigError with a line per mistake (at most SHOWN, the rest
    counted). chakra.load also checks it across nodes and ranks."""
    prefix, files = _files(folder, shown)
    groups = _groups(folder / f"{prefix}.json", len(files))
    ranks, errors = [], []
    for rank, path in enumerate(files):
        ops, bad = _rank(path, rank)
        ranks.append(ops)
        errors += [f"{path.name}: {b}" for b in bad]
    raise_all(errors)
    return Trace.model_construct(folder=shown, prefix=prefix, ranks=tuple(ranks), groups=groups)


def raise_all(errors: list[str]) -> None:
    if errors:
        more = [f"and {len(errors) - SHOWN:,} more mistakes in the trace"] if len(errors) > SHOWN else []
        raise ConfigError.of(("", e) for e in errors[:SHOWN] + more)


def _files(folder: Path, shown: str) -> tuple[str, list[Path]]:
    """The prefix and each rank's file, in rank order; every rank from 0 up must have one."""
    if not folder.is_dir():
        raise ConfigError("", f"{shown} is not a folder (a Chakra trace is a folder of <prefix>.<rank>.et files)")
    found: dict[str, dict[int, Path]] = {}
    for p in folder.iterdir():
        m = FILE.match(p.name)
        if m:
            found.setdefault(m["prefix"], {})[int(m["rank"])] = p
    if not found:
        raise ConfigError("", f"{shown} holds no Chakra ET file (<prefix>.<rank>.et)")
    if len(found) > 1:
        raise ConfigError("", f"{shown} holds two traces ({', '.join(sorted(found))}): one trace per folder")
    prefix, by_rank = next(iter(found.items()))
    n = max(by_rank) + 1
    if n > MAX_RANKS:
        raise ConfigError("", f"{shown}: rank {n - 1:,}, more than the {MAX_RANKS:,} ranks a trace may have")
    missing = [r for r in range(n) if r not in by_rank]
    if missing:
        raise ConfigError("", f"{shown}: no file {prefix}.{missing[0]}.et for rank {missing[0]}"
                              + (f" (nor for {len(missing) - 1} more ranks)" if len(missing) > 1 else "")
                              + f"; the folder has ranks up to {n - 1}")
    return prefix, [by_rank[r] for r in range(n)]


def _groups(path: Path, n: int) -> dict[str, tuple[int, ...]]:
    """ASTRA-sim's communicator groups, {"name": [ranks]}; none if the file is absent."""
    if not path.exists():
        return {}
    data = read_regular(path, MAX_GROUPS_BYTES, path.name)
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError("", f"{path.name}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise ConfigError("", f"{path.name}: expected a mapping of group name to its list of ranks")
    out = {}
    for name, ranks in raw.items():
        if not (isinstance(ranks, list) and ranks and all(type(r) is int for r in ranks)):
            raise ConfigError("", f"{path.name}: group {name!r}: expected a non-empty list of ranks")
        bad = [r for r in ranks if not 0 <= r < n]
        if bad or len(set(ranks)) < len(ranks):
            why = f"rank {bad[0]} has no file (the trace has {n} ranks)" if bad else "a rank listed twice"
            raise ConfigError("", f"{path.name}: group {name!r}: {why}")
        out[str(name)] = tuple(ranks)
    return out


def _rank(path: Path, rank: int) -> tuple[tuple[Op, ...], list[str]]:
    """A rank's nodes and what is wrong with them."""
    data = read_regular(path, MAX_FILE_BYTES, path.name)
    if len(data) > MAX_FILE_BYTES:
        return (), [f"more than {MAX_FILE_BYTES >> 20} MiB, the most a rank's trace may be"]
    try:
        _, nodes = decode(data)
    except NotAnEt as exc:
        return (), [f"not a Chakra ET: {exc}"]
    ops, errors = [], []
    for node in nodes:
        try:
            ops.append(_op(node))
        except ValueError as exc:
            errors.append(f"node {node.id} ({node.name or 'unnamed'}): {exc}")
    return tuple(ops), errors


def _op(node: pb.Node) -> Op:
    """The walk's view of one node; ValueError saying what is wrong."""
    kind = KINDS.get(node.type)
    if kind is None:
        name = pb.NodeType.Name(node.type) if node.type in pb.NodeType.values() else f"type {node.type}"
        raise ValueError(f"{name} is not run (compute, send, receive, collective and metadata nodes are)")
    attrs = {a.name: a for a in node.attr}
    deps = tuple(dict.fromkeys([*node.ctrl_deps, *node.data_deps]))
    base = Op.model_construct(id=node.id, name=node.name, kind=kind, deps=deps)
    if kind is Kind.COMPUTE:
        host = _flag(attrs, "is_cpu_op")
        return base.model_copy(update={"kind": Kind.HOST if host else Kind.COMPUTE,
                                       "duration_us": float(node.duration_micros)})
    if kind is Kind.MARK:
        return base
    size = _int(attrs, "comm_size")
    if size is None and kind is not Kind.COLL:
        size = _int(attrs, "tensor_size")  # Chakra's generator sizes a send or receive this way
    if size is None:
        raise ValueError("no comm_size attribute")
    if size <= 0:
        raise ValueError(f"comm_size {size}: a transfer moves at least one byte")
    if kind is Kind.COLL:
        return base.model_copy(update={"coll": _coll(attrs), "size": size, "group": _text(attrs, "pg_name")})
    key = "comm_dst" if kind is Kind.SEND else "comm_src"
    peer = _int(attrs, key)
    if peer is None:
        raise ValueError(f"a {kind.value} without {key}")
    return base.model_copy(update={"size": size, "peer": peer, "tag": _int(attrs, "comm_tag") or 0})


def _coll(attrs: dict[str, pb.AttributeProto]) -> Coll:
    t = _int(attrs, "comm_type")
    if t is None:
        raise ValueError("a collective without comm_type")
    if t not in pb.CollectiveCommType.values():
        raise ValueError(f"comm_type {t} is not one of Chakra's collectives")
    if t not in COLLS:
        raise ValueError(f"comm_type {pb.CollectiveCommType.Name(t)} is not modelled (the walk runs "
                         f"{', '.join(pb.CollectiveCommType.Name(k) for k in COLLS)})")
    return COLLS[t]


def _int(attrs: dict[str, pb.AttributeProto], name: str) -> int | None:
    a = attrs.get(name)
    if a is None:
        return None
    kind = a.WhichOneof("value")
    if kind not in INTS:
        raise ValueError(f"attribute {name} is {kind or 'empty'}, not an integer")
    value: int = getattr(a, kind)
    return value


def _flag(attrs: dict[str, pb.AttributeProto], name: str) -> bool:
    a = attrs.get(name)
    if a is None:
        return False
    if a.WhichOneof("value") != "bool_val":
        raise ValueError(f"attribute {name} is {a.WhichOneof('value') or 'empty'}, not a bool")
    return a.bool_val


def _text(attrs: dict[str, pb.AttributeProto], name: str) -> str:
    a = attrs.get(name)
    if a is None:
        return ""
    if a.WhichOneof("value") != "string_val":
        raise ValueError(f"attribute {name} is {a.WhichOneof('value') or 'empty'}, not a string")
    return a.string_val
