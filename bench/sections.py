"""Rewrite one section of bench/results/latest.md, keeping the others: a
benchmark run alone (python -m bench.mutation, bench.footprint) updates
its own figures without rerunning every benchmark."""

from __future__ import annotations

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
