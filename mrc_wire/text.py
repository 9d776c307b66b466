"""Text from any input made safe for one line of a terminal: every tool
of the project prints file names, flags and values through `printable`,
so that no input can forge a line or send an escape sequence. Here, at
the bottom, so that the dissector (which imports nothing above
mrc_wire) and the configuration layer share it."""

from __future__ import annotations

MAX_TEXT = 240  # characters of an error's path or reason: a safety net under control_plane.config.short()


def printable(text: str, limit: int = MAX_TEXT) -> str:
    """`text` safe for one line of a terminal: control characters (a
    newline that would forge a line, an escape code) written as escapes,
    and cut to `limit` characters."""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."
