"""A program the test bed started (simple_switch_grpc, dpdk-pipeline):
ended through its own handle, never by name, and its log's last lines for
an error message."""

from __future__ import annotations

import subprocess
from pathlib import Path


def end(proc: subprocess.Popen[bytes] | None, grace: float) -> None:
    """Terminate `proc` if it still runs; kill it after `grace` seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"

