"""A PNA program's names as DPDK's SWX pipeline knows them: its tables,
actions and register arrays in the spec p4c-dpdk wrote, reached by their
P4Runtime names (the program's BF-RT schema), and the planner's P4Runtime
entities (control_plane.p4_entities.to_p4) as SWX's table-entry lines: the
one translation between the two (testbed/swx.py writes the lines)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import finsy as fy
from finsy.p4entity import P4UpdateType


class SwxError(RuntimeError):
    """The app refused a command, or did not start; or a name is not in the program."""


@dataclass(frozen=True)
class SwxTable:
    name: str  # in the spec
    keys: tuple[str, ...]  # P4Runtime key names, in the spec's order
    actions: dict[str, str]  # P4Runtime action name -> the spec's


class SwxSchema:
    """A PNA program's tables, actions and register arrays, as the spec
    names them, reached by their P4Runtime names (the BF-RT schema's)."""

    def __init__(self, spec: Path, bfrt: Path):
        text = spec.read_text()
        structs = {m[1]: re.findall(r"bit<\d+> (\w+)", m[2]) for m in re.finditer(r"^struct (\w+) \{(.*?)^\}", text,
                                                                                  re.M | re.S)}
        self.args: dict[str, tuple[str, ...]] = {
            m[1]: tuple(structs[m[3]]) if m[3] else () for m in re.finditer(
                r"^action (\w+) args (?:none|instanceof (?P<s>(\w+)))", text, re.M)}
        spec_actions = {m[1]: re.findall(r"^\t\t(\w+)", m[2], re.M)
                        for m in re.finditer(r"^table (\w+) \{.*?actions \{(.*?)\}", text, re.M | re.S)}
        self.regarrays = re.findall(r"^regarray (\w+) size", text, re.M)
        self.tables: dict[str, SwxTable] = {}
        for t in json.loads(bfrt.read_text())["tables"]:
            path = t["name"].split(".")
            if path[0] != "pipe" or not t.get("action_specs"):
                continue  # counters and registers
            name = "_".join(path[2:])
            keys = tuple(k["name"] for k in t["key"] if not k["name"].startswith("$"))
            prefix = "_".join(path[2:-1])
            actions = {}
            for a in spec_actions[name]:
                short = re.sub(r"_\d+$", "", a)
                actions[short[len(prefix) + 1:] if prefix and short.startswith(prefix + "_") else short] = a
            self.tables[path[-1]] = SwxTable(name, keys, actions)

    def table(self, name: str) -> SwxTable:
        try:
            return self.tables[name]
        except KeyError:
            raise SwxError(f"table {name!r} is not in the program (tables: {', '.join(sorted(self.tables))})") from None

    def line(self, entry: fy.P4TableEntry) -> tuple[str, str]:
        """(the spec's table, the entry as SWX reads it) of a P4Runtime
        entity: `match <key values> action <name> <arg> <value> ...`; the
        default action of a table without `match`."""
        t = self.table(entry.table_id)
        match = entry.match
        out = [] if entry.is_default_action or match is None else ["match", *(_value(match[k]) for k in t.keys)]
        action = entry.action
        if isinstance(action, fy.P4TableAction):
            swx = t.actions.get(action.name)
            if swx is None:
                raise SwxError(f"table {entry.table_id!r} has no action {action.name!r} "
                               f"(actions: {', '.join(sorted(t.actions))})")
            missing = [arg for arg in self.args[swx] if arg not in action.args]
            if missing:
                raise SwxError(f"action {action.name!r} of table {entry.table_id!r} needs argument(s) "
                               f"{', '.join(missing)}")
            out += ["action", swx, *(f"{arg} {_value(action.args[arg])}" for arg in self.args[swx])]
        return t.name, " ".join(out)

    def regarray(self, name: str) -> str:
        """The spec's register array of P4 name `name` (its last component is enough when unique)."""
        found = [r for r in self.regarrays if r == name] or [
            r for r in self.regarrays if re.fullmatch(rf"(?:\w+_)?{re.escape(name)}(?:_\d+)?", r)]
        if len(found) != 1:
            what = f"is ambiguous ({', '.join(found)})" if found else "is not in the program"
            raise SwxError(f"register array {name!r} {what}")
        name_found: str = found[0]
        return name_found


def match_of(line: str) -> str:
    """The key of an entry line: its `match ...` part."""
    return line.split(" action ")[0]


def _value(v: object) -> str:
    if isinstance(v, int):
        return hex(v)
    raise SwxError(f"SWX entries here take integers; got {v!r}")


def is_delete(update: fy.P4TableEntry) -> bool:
    """Whether a finsy update (+, ~ or - of an entry) deletes: SWX's `add`
    inserts or modifies. finsy keeps the update type in a private field."""
    return update._update_type == P4UpdateType.DELETE
