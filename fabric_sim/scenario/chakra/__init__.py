"""MLCommons Chakra execution traces (ETs) as a workload of the timed
fabric: a folder of per-rank ET files, each rank's graph of compute and
communication nodes walked in dependency order (walker.py), its
collectives run as NCCL runs them (collectives.py) and its sends as
messages. The format (chakra_et.proto, stream.py), a trace read and
checked once when the scenario is parsed (trace.py, checks.py), and a
small writer of valid ETs for tests and examples (writer.py,
examples.py). docs/simulator.md, "Chakra traces"."""

from __future__ import annotations

from pathlib import Path

from fabric_sim.scenario.chakra import checks
from fabric_sim.scenario.chakra.trace import Trace, raise_all, read

__all__ = ["Trace", "load"]


def load(folder: Path, shown: str) -> Trace:
    """The trace in `folder`, read and checked: ConfigError with a line per
    mistake (naming the file and node) if it cannot run."""
    t = read(folder, shown)
    raise_all(checks.check(t))
    return t
