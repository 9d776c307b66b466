"""Fit a p4c-dpdk spec's metadata into what DPDK's SWX pipeline can address.

SWX reaches a field of a header or of the metadata through an 8-bit byte
offset (DPDK 24.11, lib/pipeline/rte_swx_pipeline_internal.h: struct
instr_operand), and nothing checks it: a field past the first 256 bytes of
the metadata silently aliases one near its start. p4c-dpdk 1.2.5.16 puts
every temporary of a program into the metadata, one field each: the NIC's
PNA program declares about 1,500 fields, 7 KB, of which a few dozen are
live at any instruction.

`pack` gives the metadata fields that are never live at once the same slot
(liveness over the spec's apply block, through its table actions and across
a recirculation into the next pass), lets a field take a wider slot by
masking the slot after each write of it (so it wraps as its own width
would), and refuses a program that still needs more than 256 bytes, or that
writes metadata between `recirculate` and `tx` (what the next pass reads
must survive to it). Table key fields keep their width; several metadata
fields of one table key stay adjacent, in order (SWX reads a key as one
range of the struct).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

MAX_BYTES = 256  # what an 8-bit byte offset reaches
ARITH = {"add", "sub", "and", "or", "xor", "shl", "shr"}  # read and write their first operand
WRITE_FIRST = {"mov", "regrd", "rx", "recircid", "entryid"}  # write their first operand, read the rest
READ_ALL = {"tx", "mirror", "regwr", "regadd"}
NO_METADATA = {"extract", "emit", "validate", "invalidate", "drop", "recirculate", "return", "jmp", "table"}
_FIELD = re.compile(r"\bm\.(\w+)")


class PackError(ValueError):
    """The spec cannot be packed into SWX's reach (or uses what the packer does not know)."""


@dataclass
class Instr:
    op: str
    tokens: list[str]  # as written, label and op removed
    label: str | None = None

    def fields(self, start: int = 0) -> list[str]:
        return [m[1] for t in self.tokens[start:] for m in [_FIELD.fullmatch(t)] if m]


def _parse_body(body: str) -> list[Instr]:
    out = []
    for line in body.splitlines():
        line = line.strip()
        if not line:
            continue
        label = None
        m = re.match(r"(\w+) :\s*(.*)$", line)
        if m:
            label, line = m[1], m[2]
        op, *tokens = line.split()
        out.append(Instr(op, tokens, label))
    return out


def _uses_defs(ins: Instr) -> tuple[set[str], set[str]]:
    """(metadata fields read, written) of one instruction (not a table)."""
    op = ins.op
    first = _FIELD.fullmatch(ins.tokens[0]) if ins.tokens else None
    dst = {first[1]} if first else set()
    if op in WRITE_FIRST:
        return set(ins.fields(1)), dst
    if op in ARITH:
        return set(ins.fields()), dst
    if op.startswith("jmp"):
        return set(ins.fields(1)), set()
    if op in READ_ALL:
        return set(ins.fields()), set()
    if op in NO_METADATA:
        return set(), set()
    raise PackError(f"instruction {op!r} is not one the SWX spec packer knows")


@dataclass
class Spec:
    text: str
    meta_struct: str
    width: dict[str, int]  # metadata field -> bits, in declared order
    header_width: dict[str, int]  # "h.<header>.<field>" -> bits
    actions: dict[str, list[Instr]]
    tables: dict[str, tuple[list[str], list[str]]]  # table -> (metadata key fields, its actions)
    apply: list[Instr]

    @classmethod
    def parse(cls, text: str) -> Spec:
        [meta] = re.findall(r"^metadata instanceof (\w+)", text, re.M)
        body = re.search(rf"^struct {meta} \{{\n(.*?)^\}}", text, re.M | re.S)
        if body is None:
            raise PackError(f"no struct {meta}")
        width = {f[2]: int(f[1]) for f in re.finditer(r"bit<(\d+)> (\w+)", body[1])}
        structs = {m[1]: re.findall(r"bit<(\d+)> (\w+)", m[2]) for m in re.finditer(r"^struct (\w+) \{\n(.*?)^\}",
                                                                                     text, re.M | re.S)}
        header_width = {f"h.{h}.{name}": int(w) for h, st in re.findall(r"^header (\w+) instanceof (\w+)", text, re.M)
                        for w, name in structs[st]}
        actions = {m[1]: _parse_body(m[2]) for m in re.finditer(r"^action (\w+) args [^{]*\{\n(.*?)^\}", text,
                                                                  re.M | re.S)}
        tables = {}
        for m in re.finditer(r"^table (\w+) \{\n(.*?)^\}", text, re.M | re.S):
            key = re.search(r"key \{\n(.*?)\t\}", m[2], re.S)
            keys = re.findall(r"^\t\tm\.(\w+) \w+$", key[1], re.M) if key else []
            listed = re.search(r"actions \{\n(.*?)\t\}", m[2], re.S)
            acts = re.findall(r"^\t\t(\w+)", listed[1], re.M) if listed else []
            tables[m[1]] = (keys, acts)
        apply = re.search(r"^apply \{\n(.*?)^\}", text, re.M | re.S)
        if apply is None:
            raise PackError("no apply block")
        return cls(text, meta, width, header_width, actions, tables, _parse_body(apply[1]))

    @property
    def bytes(self) -> int:
        return sum(self.width.values()) // 8


class _Liveness:
    """Metadata liveness over the apply block. A table reads its keys and
    what its actions read before writing, and may write what any of its
    actions write (it kills only what all of them write). `tx` and `drop`
    end a packet (nothing flows on to the next); `recirculate` also leads
    to the start of the next pass."""

    def __init__(self, spec: Spec):
        self.spec = spec
        act: dict[str, tuple[set[str], set[str], set[str]]] = {}
        for name, body in spec.actions.items():
            uses: set[str] = set()
            defs: set[str] = set()
            for ins in body:
                u, d = _uses_defs(ins)
                uses |= u - defs
                defs |= d
            act[name] = (uses, defs, {f for ins in body for f in _uses_defs(ins)[0]})
        self.action_fields = act
        labels = {ins.label: i for i, ins in enumerate(spec.apply) if ins.label}
        self.uses: list[set[str]] = []
        self.defs: list[set[str]] = []
        self.kills: list[set[str]] = []
        self.inside: list[set[str]] = []  # what a table's actions touch (they run inside the instruction)
        self.succ: list[list[int]] = []
        n = len(spec.apply)
        for i, ins in enumerate(spec.apply):
            if ins.op == "table":
                keys, acts = spec.tables[ins.tokens[0]]
                u = set(keys).union(*(act[a][0] for a in acts))
                d = set().union(*(act[a][1] for a in acts))
                k = set.intersection(*(act[a][1] for a in acts)) if acts else set()
                self.inside.append(d | set().union(*(act[a][2] for a in acts)))
            else:
                u, d = _uses_defs(ins)
                k = d if ins.op not in ARITH else set()
                self.inside.append(set())
            self.uses.append(u)
            self.defs.append(d)
            self.kills.append(k)
            if ins.op == "jmp":
                self.succ.append([labels[ins.tokens[0]]])
            elif ins.op.startswith("jmp"):
                self.succ.append([labels[ins.tokens[0]], i + 1])
            elif ins.op in ("tx", "drop"):
                self.succ.append([])
            elif ins.op == "recirculate":
                self.succ.append([i + 1, 0])
            else:
                self.succ.append([i + 1] if i + 1 < n else [])
        self.live_in: list[set[str]] = [set() for _ in range(n)]
        self.live_out: list[set[str]] = [set() for _ in range(n)]
        changed = True
        while changed:
            changed = False
            for i in reversed(range(n)):
                out = set().union(*(self.live_in[s] for s in self.succ[i]))
                inn = self.uses[i] | (out - self.kills[i])
                if out != self.live_out[i] or inn != self.live_in[i]:
                    self.live_out[i], self.live_in[i] = out, inn
                    changed = True

    def check_recirculation(self) -> None:
        """Nothing writes metadata on the way from `recirculate` to `tx`."""
        for start, ins in enumerate(self.spec.apply):
            if ins.op != "recirculate":
                continue
            seen, todo = set(), [start + 1]
            while todo:
                i = todo.pop()
                if i in seen:
                    continue
                seen.add(i)
                if self.defs[i]:
                    raise PackError(f"metadata written after recirculate: {self.spec.apply[i].op} "
                                    f"{' '.join(self.spec.apply[i].tokens)}")
                todo += [s for s in self.succ[i] if s != 0]

    def interference(self) -> dict[str, set[str]]:
        adj: dict[str, set[str]] = defaultdict(set)
        for i in range(len(self.spec.apply)):
            for group in (self.live_in[i], self.live_out[i] | self.defs[i], self.live_out[i] | self.inside[i]):
                for f in group:
                    adj[f] |= group
        for f in adj:
            adj[f].discard(f)
        return adj

    def peak(self) -> int:
        return max((sum(self.spec.width[f] for f in s) for s in self.live_in), default=0) // 8


@dataclass(frozen=True)
class Packing:
    slots: list[tuple[str, int]]  # the packed struct: (field, bits), in order
    where: dict[str, str]  # old field -> its slot
    masked: dict[str, int]  # old field in a wider slot -> its width
    before: int  # bytes
    after: int
    peak: int  # bytes live at once, at most


def pack_spec(text: str) -> tuple[str, Packing]:
    """The spec with its metadata packed (module docstring); raise PackError."""
    spec = Spec.parse(text)
    live = _Liveness(spec)
    live.check_recirculation()
    adj = live.interference()
    width = spec.width
    written = set().union(*live.defs, *(a[1] for a in live.action_fields.values()))
    keyed = {f for keys, _ in spec.tables.values() for f in keys}
    pinned: list[str] = []
    for keys, _ in spec.tables.values():
        if len(keys) > 1:
            pinned += [f for f in keys if f not in pinned]
    pinned += [f for f in width if f not in written and f not in pinned]  # read, never written: stays 0
    first: dict[str, int] = {}
    for i in range(len(spec.apply)):
        for f in live.uses[i] | live.defs[i] | live.live_in[i]:
            first.setdefault(f, i)
    slots: list[tuple[int, set[str]]] = []
    for f in sorted((f for f in width if f not in pinned), key=lambda f: (-width[f], first.get(f, 1 << 30), f)):
        w = width[f]
        fits = [(sw, si) for si, (sw, members) in enumerate(slots)
                if (sw == w or (sw > w and f not in keyed)) and not adj[f] & members]
        if fits:
            slots[min(fits)[1]][1].add(f)
        else:
            slots.append((w, {f}))
    names = [(f, width[f]) for f in pinned] + [(f"s{w}_{i}", w) for i, (w, _) in enumerate(slots)]
    where = {f: f for f in pinned}
    masked = {}
    for i, (w, members) in enumerate(slots):
        for f in members:
            where[f] = f"s{w}_{i}"
            if width[f] < w:
                masked[f] = width[f]
    after = sum(w for _, w in names) // 8
    packing = Packing(names, where, masked, spec.bytes, after, live.peak())
    if after > MAX_BYTES:
        raise PackError(f"the metadata needs {after} bytes packed ({spec.bytes} declared, at most {packing.peak} "
                        f"live at once); SWX reaches {MAX_BYTES}")
    return _rewrite(spec, packing), packing


def _overflows(spec: Spec, p: Packing, op: str, dst: str, src: str | None) -> bool:
    """Whether writing field `dst` (in a wider slot) can leave bits above its width."""
    w = p.masked[dst]
    if op in ("and", "shr"):
        return False  # never wider than what the field held
    if op in ("mov", "or", "xor") and src is not None:
        if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", src):
            return int(src, 0) >> w != 0
        m = _FIELD.fullmatch(src)
        src_width = spec.width.get(m[1], 64) if m else spec.header_width.get(src, 64)
        return src_width > w
    return True  # add, sub, shl, regrd, rx, recircid, entryid


def _rewrite(spec: Spec, p: Packing) -> str:
    def rename(line: str) -> str:
        return _FIELD.sub(lambda m: f"m.{p.where.get(m[1], m[1])}", line)

    def body(lines: str) -> str:
        out = []
        for line in lines.splitlines(keepends=True):
            out.append(rename(line))
            m = re.match(r"(?:\w+ :\s*)?(\w+)\s+m\.(\w+)(?:\s+(\S+))?", line.strip())
            if m and m[2] in p.masked and (m[1] in WRITE_FIRST or m[1] in ARITH) and _overflows(
                    spec, p, m[1], m[2], m[3] if m[1] != "regrd" else None):
                out.append(f"\tand m.{p.where[m[2]]} {hex((1 << p.masked[m[2]]) - 1)}\n")
        return "".join(out)

    text = spec.text
    struct = f"struct {spec.meta_struct} {{\n" + "".join(f"\tbit<{w}> {f}\n" for f, w in p.slots) + "}\n"
    text = re.sub(rf"^struct {spec.meta_struct} \{{\n.*?^\}}\n", lambda _: struct, text, count=1, flags=re.M | re.S)
    text = re.sub(r"^(action \w+ args [^{]*\{\n)(.*?)(^\})", lambda m: m[1] + body(m[2]) + m[3], text,
                  flags=re.M | re.S)
    text = re.sub(r"^(table \w+ \{\n.*?^\})", lambda m: rename(m[1]), text, flags=re.M | re.S)
    return re.sub(r"^(apply \{\n)(.*?)(^\})", lambda m: m[1] + body(m[2]) + m[3], text, flags=re.M | re.S)
