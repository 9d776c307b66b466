"""The configuration layer under the topology, scenario and TLS files:
one error class that carries every mistake of a file (each with its field
path), a YAML reader that refuses hostile files before building anything,
and the pydantic base model and field types the file models are built of.

Validation is pydantic v2's: a file's models are checked in one pass, so a
file with three mistakes gets three errors. Checks that need more than one
field (a device named in an event must be in the topology) run in the
models' validators and raise ConfigError with their own list; `errors_of`
flattens both kinds into (path, reason) pairs.
"""

from __future__ import annotations

import os
import reprlib
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_args

import yaml
from annotated_types import GroupedMetadata
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, ValidationError, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from mrc_wire.text import file_kind
from mrc_wire.text import printable as printable  # re-exported: the CLIs print through config

MAX_FILE_BYTES = 1 << 20  # a scenario or topology file is a few KiB; a bigger one is not ours
MAX_NODES = 100_000  # values after alias expansion (a billion-laughs file expands to 10**9)
HIDDEN = {"source", "meta"}  # fields the parser sets, never a file
MAX_DEPTH = 32  # nesting of mappings and lists (the formats need 6)
MAX_INT_DIGITS = 40  # 2**128 has 39: no field takes more, and Python refuses to read past 4,300

_short = reprlib.Repr()
_short.maxstring, _short.maxother, _short.maxlist, _short.maxdict, _short.maxlevel = 40, 40, 4, 4, 2


def short(value: Any) -> str:
    """A bounded repr for error messages (an input may be huge or shared)."""
    return _short.repr(value)


class ConfigError(ValueError):
    """Every mistake found in one file: `errors` is a list of (field path,
    reason); `path` and `reason` are the first's. ConfigError(path, reason)
    for one, ConfigError.of([(path, reason), ...]) for many."""

    def __init__(self, path: str, reason: str):
        # Cleaned once here, so that no caller can echo a value that forges a line or fills a screen.
        self.errors: list[tuple[str, str]] = [(printable(path), printable(reason))]
        super().__init__(self._text())

    @classmethod
    def of(cls, errors: Iterable[tuple[str, str]]) -> ConfigError:
        errors = [(printable(p), printable(r)) for p, r in errors]
        exc = cls(*errors[0])
        exc.errors = errors
        exc.args = ("\n".join(exc.lines()),)
        return exc

    @property
    def path(self) -> str:
        return self.errors[0][0]

    @property
    def reason(self) -> str:
        return self.errors[0][1]

    def lines(self) -> list[str]:
        """One line per mistake, `path: reason`."""
        return [f"{p}: {r}" if p else r for p, r in self.errors]

    def report(self, prefix: str = "") -> None:
        """Each mistake as an `error:` line on stderr (the CLIs' refusal)."""
        for line in self.lines():
            print(f"error: {prefix}{line}", file=sys.stderr)

    def _text(self) -> str:
        return "\n".join(self.lines())

    def prefixed(self, prefix: str) -> ConfigError:
        """The same errors under field path `prefix` (e.g. "topology")."""
        return ConfigError.of((join(prefix, p), r) for p, r in self.errors)


def join(prefix: str, path: str) -> str:
    if not prefix:
        return path
    if not path:
        return prefix.removesuffix(":")
    if path.startswith(("[", " ")):
        return prefix + path
    return f"{prefix} {path}" if prefix.endswith(":") else f"{prefix}.{path}"


def loc_path(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        out = join(out, f"[{part}]" if isinstance(part, int) else str(part))
    return out


_REASONS: dict[str, Callable[[ErrorDetails], str]] = {
    "missing": lambda e: "missing key",
    "extra_forbidden": lambda e: "unknown key",
    "int_type": lambda e: f"expected an integer, got {short(e['input'])}",
    "int_from_float": lambda e: f"expected an integer, got {short(e['input'])}",
    "float_type": lambda e: f"expected a number, got {short(e['input'])}",
    "bool_type": lambda e: f"expected true or false, got {short(e['input'])}",
    "string_type": lambda e: f"expected a string, got {short(e['input'])}",
    "literal_error": lambda e: f"{short(e['input'])} is not one of {e['ctx']['expected']}",
    "model_type": lambda e: "expected a mapping",
    "model_attributes_type": lambda e: "expected a mapping",
    "dict_type": lambda e: "expected a mapping",
    "list_type": lambda e: "expected a list",
    "tuple_type": lambda e: "expected a list",
    "too_short": lambda e: "expected a non-empty list" if e["ctx"].get("min_length") == 1 else e["msg"],
    "finite_number": lambda e: "expected a finite number",
}


def _model_at(model: Any, loc: tuple[Any, ...]) -> Any:
    """The model class at `loc` under `model` (None if the way is lost)."""
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return None
        model = _inner_model(field.annotation)
    return model


def _inner_model(tp: Any) -> Any:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    for arg in get_args(tp):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def errors_of(exc: ValidationError, model: Any = None) -> list[tuple[str, str]]:
    """pydantic's errors as (field path, reason), nested ConfigErrors
    flattened under the path where they were raised."""
    out: list[tuple[str, str]] = []
    for e in exc.errors(include_url=False):
        path = loc_path(e["loc"])
        inner = (e.get("ctx") or {}).get("error")
        if isinstance(inner, ConfigError):
            out += [(join(path, p), r) for p, r in inner.errors]
        elif e["type"] == "extra_forbidden" and _model_at(model, e["loc"][:-1]) is not None:
            known = _model_at(model, e["loc"][:-1]).model_fields
            out.append((path, f"unknown key (expected {', '.join(k for k in known if k not in HIDDEN)})"))
        elif e["type"] in _REASONS:
            out.append((path, _REASONS[e["type"]](e)))
        else:
            out.append((path, str(inner) if inner is not None else e["msg"]))
    return out


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: Any, prefix: str = "", **context: Any) -> M:
    """`model` from `data`, or ConfigError with every mistake."""
    if not isinstance(data, dict):
        raise ConfigError(prefix, f"expected a mapping, got {short(data)}")
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise ConfigError.of(errors_of(exc, model)).prefixed(prefix) from None


class Model(BaseModel):
    """A file section: unknown keys refused, immutable once checked."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, hide_input_in_errors=True)

    @model_validator(mode="before")
    @classmethod
    def _empty(cls, raw: Any) -> Any:
        return {} if raw is None else raw  # `links:` with nothing under it: every default


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, int) and v.bit_length() > 64:  # cut: str() of a 4,300-digit int raises
        return (str(v)[:10] if v.bit_length() < 14_000 else f"an integer of {v.bit_length():,} bits") + "..."
    return str(v)


def _printable_name(v: str) -> str:
    if not v.isprintable():
        raise PydanticCustomError("printable", "expected printable characters, got {v}", {"v": short(v)})
    if len(v) > 100:
        raise PydanticCustomError("long", "expected at most 100 characters, got {n}", {"n": len(v)})
    return v


# A name the tools print (scenario, transport, device, topology): a string in the file (not !!binary),
# printable characters only, so a name can never forge an output line or carry a terminal escape.
Name = Annotated[str, Strict(), AfterValidator(_printable_name)]


def _within(lo: float, hi: float) -> Any:
    def check(v: Any) -> Any:
        if not lo <= v <= hi:
            raise PydanticCustomError(
                "outside", "{v} is outside {lo}..{hi}", {"v": _num(v), "lo": _num(lo), "hi": _num(hi)}
            )
        return v
    return check


# A field's range as metadata of its type, which mypy reads: `Annotated[int, Int(0, 7)]`.
# pydantic unpacks a GroupedMetadata into what it yields.
@dataclass(frozen=True)
class Int(GroupedMetadata):
    """An integer in lo..hi (booleans refused)."""

    lo: int
    hi: int
    description: str | None = None

    def __iter__(self) -> Iterator[object]:
        yield Strict()
        yield AfterValidator(_within(self.lo, self.hi))
        yield Field(json_schema_extra={"minimum": self.lo, "maximum": self.hi}, description=self.description)


@dataclass(frozen=True)
class Num(GroupedMetadata):
    """A number in lo..hi; `above`: lo itself excluded (a rate of 0 divides by zero)."""

    lo: float
    hi: float
    description: str | None = None
    above: bool = False

    def __iter__(self) -> Iterator[object]:
        lo, hi, above = self.lo, self.hi, self.above

        def check(v: Any) -> Any:
            if above and v <= lo:
                raise PydanticCustomError("outside", "{v} must be above {lo}", {"v": _num(v), "lo": _num(lo)})
            return _within(lo, hi)(v)
        bound = {"exclusiveMinimum": lo} if above else {"minimum": lo}
        yield Strict()
        yield AfterValidator(check)
        yield Field(json_schema_extra={**bound, "maximum": hi}, description=self.description)


# ---- reading files ----------------------------------------------------------------------------------------

class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses deep nesting while composing and, before
    constructing anything, a document whose aliases expand past MAX_NODES."""

    depth = 0
    composed = 0  # nodes as written (an alias once): past MAX_NODES the file is refused while composing

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth += 1
        self.composed += 1
        try:
            if self.depth > MAX_DEPTH:
                raise ConfigError("", f"nested deeper than {MAX_DEPTH} levels")
            if self.composed > MAX_NODES:  # stop now: composing and checking the rest would take long
                raise ConfigError("", f"more than {MAX_NODES:,} values: not a scenario or topology file")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return self.construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        _unique_keys(node)
        return super().construct_mapping(node, deep)

    def construct_huge_int(self, node: yaml.ScalarNode) -> Any:
        if sum(c.isdigit() for c in node.value) > MAX_INT_DIGITS:
            return _HugeInt(node.value)  # refused by read_yaml, where the field's path is known
        return self.construct_yaml_int(node)


class _HugeInt(str):
    """An integer too long to be any field's value, as the file wrote it."""


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_huge_int)


def _unique_keys(node: yaml.MappingNode) -> None:
    """ConfigError on a key given twice in one mapping (YAML says keys are
    unique; PyYAML keeps the last). A merge (`<<: *base`) may be overridden."""
    seen: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        line, first = key.start_mark.line + 1, seen.get((key.tag, key.value))
        if first is not None:
            raise ConfigError("", f"key {short(key.value)} is given twice (lines {first} and {line})")
        seen[key.tag, key.value] = line


def _huge_ints(data: Any, path: str = "") -> None:
    """ConfigError naming the field of the first integer too long for any field."""
    if isinstance(data, _HugeInt):
        digits = sum(c.isdigit() for c in data)
        raise ConfigError(path, f"an integer of {digits:,} digits ({data.lstrip('+-')[:10]}...): too large")
    if isinstance(data, dict):
        for k, v in data.items():
            _huge_ints(v, join(path, str(k)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            _huge_ints(v, join(path, f"[{i}]"))


def _expanded_size(root: yaml.Node) -> int:
    """How many values the document holds with every alias expanded,
    counted without expanding (each shared node once); ConfigError past
    MAX_NODES or on a node that contains itself."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(node: yaml.Node) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in open_:
            raise ConfigError("", "an alias refers to a node that contains it")
        open_.add(id(node))
        n = 1
        if isinstance(node, yaml.SequenceNode):
            n += sum(size(c) for c in node.value)
        elif isinstance(node, yaml.MappingNode):
            n += sum(size(k) + size(v) for k, v in node.value)
        open_.discard(id(node))
        if n > MAX_NODES:
            raise ConfigError("", f"more than {MAX_NODES:,} values once its aliases are expanded")
        sizes[id(node)] = n
        return n

    return size(root)


def read_mapping(path: str | Path) -> dict[str, Any]:
    """read_yaml of a file that must hold a mapping (a scenario, a topology)."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(str(path), "the file is empty" if data is None else
                          f"expected a mapping of keys at the top, got {type(data).__name__} {short(data)}")
    return data


def read_yaml(path: str | Path) -> Any:
    """A YAML file's data, refused in one line (ConfigError naming the
    file) if it cannot be read, is over MAX_FILE_BYTES, is not UTF-8 text,
    is not YAML, nests past MAX_DEPTH or expands past MAX_NODES."""
    path = Path(path)
    raw = read_regular(path, MAX_FILE_BYTES)
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(str(path), f"larger than {MAX_FILE_BYTES >> 20} MiB: not a scenario or topology file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), f"not UTF-8 text (byte {exc.start})") from None
    try:
        data = yaml.load(text, Loader=_BoundedLoader)  # a SafeLoader
    except ConfigError as exc:
        raise ConfigError(str(path), exc.reason) from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), f"not valid YAML: {' '.join(str(exc).split())}") from None
    _huge_ints(data)
    return data


def read_regular(path: Path, limit: int, name: str | None = None) -> bytes:
    """At most `limit` + 1 bytes of the regular file `path`; ConfigError at
    field `name` (default: the path) if it cannot be opened or is not a
    regular file. Every file a CLI reads comes through here. The file is
    opened without blocking, since opening a FIFO for reading waits for a
    writer, and its type is taken from the open descriptor, so what is
    checked is what is read."""
    where = str(path) if name is None else name
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(where, f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        what = file_kind(mode)
        if what is not None:
            raise ConfigError(where, f"not a regular file ({what})" + ("" if name is None else f": {path}"))
        return _read_up_to(fd, limit + 1)
    except OSError as exc:
        raise ConfigError(where, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _read_up_to(fd: int, n: int) -> bytes:
    chunks: list[bytes] = []
    while n > 0 and (chunk := os.read(fd, min(n, 1 << 16))):
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
