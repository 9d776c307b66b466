"""Rewrite one section of bench/results/latest.md, keeping the others: a
benchmark run alone (python -m bench.mutation, bench.footprint) updates
its own figures without rerunning every benchmark."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from testbed import toolchain

RESULTS = toolchain.REPO / "bench" / "results" / "latest.md"


def replace(lines: list[str]) -> None:
    """Put `lines` (a section: its first line is its '## ' title) in place
    of the section of that title, or at the end."""
    title = lines[0]
    text = RESULTS.read_text() if RESULTS.exists() else ""
    start = text.find(title + "\n")
    if start >= 0:
        end = text.find("\n## ", start + len(title))
        text = text[:start] + text[end + 1:] if end >= 0 else text[:start]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text.rstrip("\n") + "\n\n" + "\n".join(lines).rstrip("\n") + "\n")


def main(prog: str, doc: str, run: Callable[[], list[str]], argv: list[str] | None = None) -> None:
    """A section run alone (`python -m bench.X [--write]`): print its figures,
    and with --write put them in bench/results/latest.md."""
    ap = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    ap.add_argument("--write", action="store_true",
                    help="also put the figures in bench/results/latest.md (this section only)")
    args = ap.parse_args(argv)
    lines = run()
    print("\n".join(lines))
    if args.write:
        replace(lines)
