"""Where the CLIs write: mrc-sim --out and python -m mrc_paper --out (a
results folder), make capture / python -m testbed.capture (a file).

Each output path is checked here, once, before any work starts: a name
(not empty, not an option, not longer than a file system takes), a file
that is a regular file or can be created, a folder that is a folder or
can be created, never the run cache nor (for results) the current
folder. Every output file is then written under a temporary name beside
it and moved into place when complete (`replacing`, `Together`), so that
an interrupt at any moment leaves whole files only. A closed stdout
(`| head`) ends the printing quietly, not the work (`quiet_stdout`)."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from control_plane.pipelines import RUN_CACHE
from mrc_wire.text import file_kind as kind
from mrc_wire.text import printable

MAX_NAME = 200  # bytes of one name: file systems take 255, and the temporary name beside it needs the rest
MAX_PATH = 4000  # bytes of a whole path (Linux's PATH_MAX is 4,096)
OWN = "results go in a folder of their own"


def _show(path: str | Path) -> str:
    return printable(str(path), 160)


def _name_refusal(text: str) -> str | None:
    """Why `text` cannot name an output whatever is on disk (None: it can)."""
    if not text:
        return "an empty name"
    if text.startswith("-"):
        return f"{_show(text)} starts with '-': an option, not a path (write ./{_show(text)} for such a name)"
    raw = os.fsencode(text)
    if len(raw) > MAX_PATH:
        return f"{_show(text)}: a path of {len(raw):,} bytes (at most {MAX_PATH:,})"
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > MAX_NAME:
        return f"{_show(text)}: a name of {len(longest):,} bytes (at most {MAX_NAME})"
    return None


def _mode(path: Path) -> int | None:
    """st_mode of what `path` names (following links), None if nothing."""
    try:
        return os.stat(path).st_mode
    except OSError:
        return None


def _in_cache(path: Path, cache: Path) -> bool:
    where, cache = path.resolve(), cache.resolve()
    return where == cache or cache in where.parents


def _creatable(given: str, folder: Path) -> str | None:
    """Why no file can be created in `folder` (None: one can). The folder
    and a file in it are made, then removed with what the check made:
    permission bits alone do not say (root, a read-only mount, /proc)."""
    for up in (folder, *folder.parents):
        mode = _mode(up)
        if mode is not None:
            if kind(mode) != "a folder":
                return f"{_show(given)}: {_show(up)} is a file, not a folder"
            break
    made = [p for p in (folder, *folder.parents) if _mode(p) is None]  # deepest first: removed in this order
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"{_show(given)}: not writable ({exc.strerror or exc})"
    finally:
        for p in made:
            try:
                p.rmdir()
            except OSError:
                break
    return None


def file_refusal(given: str | Path, cache: Path = RUN_CACHE) -> str | None:
    """Why output file `given` (as the user wrote it) cannot be written,
    before any work (None: it can)."""
    text = os.fspath(given)
    problem = _name_refusal(text)
    if problem:
        return problem
    path = Path(text)
    if _in_cache(path, cache):
        return f"{_show(text)} is in the run cache's folder ({_show(cache)}): outputs go elsewhere"
    mode = _mode(path)
    if mode is not None and kind(mode) == "a folder":
        return f"{_show(text)} is a folder, not a file"
    if mode is not None and kind(mode) is not None:
        return f"{_show(text)} is {kind(mode)}, not a regular file"
    return _creatable(text, path.parent)


def folder_refusal(given: str | Path, cache: Path = RUN_CACHE) -> str | None:
    """Why results folder `given` (as the user wrote it) cannot take a
    run's results, before any work (None: it can): not the current folder
    (results would mix with whatever is there) nor the run cache."""
    text = os.fspath(given)
    problem = _name_refusal(text)
    if problem:
        return f"{problem}: {OWN}"
    path = Path(text)
    mode = _mode(path)
    if mode is not None and kind(mode) != "a folder":
        return f"{_show(text)} exists and is not a folder"
    if path.resolve() == Path.cwd().resolve():
        return f"{_show(text)} is the current folder: {OWN}"
    if _in_cache(path, cache):
        return f"{_show(text)} is the run cache's folder ({_show(cache)}): {OWN}"
    return _creatable(text, path)


# ---- whole files only ---------------------------------------------------------------------------------------

def temporary(path: Path) -> Path:
    """The name `path` is written under until complete: hidden, beside it,
    with its suffix (matplotlib reads the format from it)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp{path.suffix}")


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary name beside `path` to write; moved onto `path` when the
    block ends without an exception, removed otherwise."""
    tmp = temporary(path)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class Together:
    """The files of one result (results.json, its CSV files, its figures),
    each written under a temporary name in `folder` (`path(name)`) and
    moved into place together when the block ends, SIGINT and SIGTERM
    held for the moves; on an exception, none is. A temporary file never
    written (a figure with nothing to draw) is not moved."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.files: dict[Path, Path] = {}  # final name -> temporary name
        self.made: list[Path] = []  # the folders __enter__ made

    def path(self, name: str) -> Path:
        final = self.folder / name
        self.files[final] = temporary(final)
        return self.files[final]

    def __enter__(self) -> Together:
        self.made = [p for p in (self.folder, *self.folder.parents) if not p.exists()]  # deepest first
        self.folder.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if kind is None:
                with held():
                    for final, tmp in self.files.items():
                        if tmp.exists():
                            os.replace(tmp, final)
        finally:
            for tmp in self.files.values():
                tmp.unlink(missing_ok=True)
            for p in self.made if kind is not None else []:  # a folder made for files that never came
                try:
                    p.rmdir()
                except OSError:
                    break


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM held while the block runs (in the main thread,
    for handlers set from Python): one that comes meanwhile is raised
    again, to the handler it was meant for, when the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    mine = {s: h for s, h in old.items() if h is not None}  # None: a handler set outside Python, left alone
    for s in mine:
        signal.signal(s, lambda n, _f: got.append(n))
    try:
        yield
    finally:
        for s, h in mine.items():
            signal.signal(s, h)
        if got:
            signal.raise_signal(got[0])


# ---- a closed stdout -----------------------------------------------------------------------------------------

class _QuietStdout(io.TextIOWrapper):
    """stdout that, once its reader has gone (`| head`), writes to
    /dev/null: the lines are dropped, the work and its files are not."""

    def write(self, s: str) -> int:
        try:
            return super().write(s)
        except BrokenPipeError:
            self._gone()
            return len(s)

    def flush(self) -> None:
        try:
            super().flush()
        except BrokenPipeError:
            self._gone()
            super().flush()

    def _gone(self) -> None:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, self.fileno())
        os.close(null)


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """sys.stdout as _QuietStdout while the block runs, where stdout is a
    file descriptor (not a test's capture)."""
    old = sys.stdout
    try:
        fd = old.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        yield
        return
    with contextlib.suppress(BrokenPipeError):
        old.flush()
    sys.stdout = _QuietStdout(open(fd, "wb", closefd=False), encoding=old.encoding, errors=old.errors,
                              line_buffering=bool(old.line_buffering))
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = old
