"""What the tools print about their inputs: text from any input made safe
for one line of a terminal (every tool prints file names, flags and
values through `printable`, so that no input can forge a line or send an
escape sequence), and a file that is not a regular file named by its
kind. Here, at the bottom, so that the dissector (which imports nothing
above mrc_wire) and the configuration layer share them."""

from __future__ import annotations

import stat

MAX_TEXT = 240  # characters of an error's path or reason: a safety net under control_plane.config.short()


def printable(text: str, limit: int = MAX_TEXT) -> str:
    """`text` safe for one line of a terminal: control characters (a
    newline that would forge a line, an escape code) written as escapes,
    and cut to `limit` characters."""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str | None:
    """What a file of `mode` (st_mode) is when it is not a regular file
    ("a FIFO", "a folder", ...); None for a regular file."""
    return next((k for test, k in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a file")
