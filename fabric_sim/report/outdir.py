"""Results folders: checked before a run starts, so that nothing computed
is lost to a folder that cannot be written."""

from __future__ import annotations

import tempfile
from pathlib import Path


def unwritable(path: Path) -> str | None:
    """Why results cannot be written into folder `path`, or None when they
    can (the folder is created and a file is written and removed in it:
    permission bits alone do not say, e.g. for root or a read-only mount)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        return f"{path} exists and is not a folder"
    made = [p for p in (path, *path.parents) if not p.exists()]  # what the check creates, it removes
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        return f"{path}: not writable ({exc.strerror or exc})"
    finally:
        for p in made:  # deepest first: a run that is refused later leaves no empty folder behind
            try:
                p.rmdir()
            except OSError:
                break
    return None


def refusal(path: Path, cache: Path) -> str | None:
    """Why `path` must not take results whether or not it can: the current
    folder (results would mix with whatever is there, `--out ''` names it)
    or the run cache `cache` (results would sit among its entries)."""
    where, here, cache = Path(path).resolve(), Path.cwd().resolve(), Path(cache).resolve()
    if where == here:
        return f"{path} is the current folder: results go in a folder of their own"
    if where == cache or cache in where.parents:
        return f"{path} is the run cache's folder ({cache}): results go in a folder of their own"
    return None
