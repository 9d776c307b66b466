"""Mutation testing (mutmut) over the wire format, the two pipeline models
and the endpoint: how many small changes to the code (an operator, a
constant, a condition) make some test fail. A mutant that survives is a
change no test notices: either a missing test, or a change that cannot
alter behaviour (an equivalent mutant), argued in bench/mutation_notes.md.

    python -m bench.mutation [--max N] [--budget S] [--only GLOB ...] [--survivors]

The run works in a copy of the tree (build/mutation/), so the work tree is
never mutated, and it is resumable: each mutant's result is kept there and
a later run tests only the mutants not yet tried (at most --max of them,
for at most --budget seconds of wall time). The section it writes to
bench/results/latest.md counts every mutant tried so far.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench import sections
from testbed import toolchain

REPO = toolchain.REPO
WORK = REPO / "build" / "mutation"
NOTES = REPO / "bench" / "mutation_notes.md"
TARGETS = ["mrc_wire/", "switch_model/pipeline.py", "nic_model/nic_pipeline.py", "mrc_host/endpoint.py"]
# The tests that judge the mutants: the unit tests and the timed fabric's
# (the paper's experiments are too slow to run per mutant), and the
# dual-target PTF tests of the switch and NIC on their models.
TESTS = ["tests/", "ptf_tests/switch/", "ptf_tests/nic/"]
# Less the paper's, the kernel's and the shell's, and those of the checkout
# rather than the code (its Makefile, CI script, packaging and package
# graph), which the copy does not hold.
SKIP_TESTS = ["tests/paper", "ptf_tests/switch/test_kernel_conformance.py", "ptf_tests/switch/test_p4runtime_shell.py",
              "tests/config/test_makefile.py", "tests/config/test_package.py", "tests/test_ci.py",
              "tests/test_packages.py"]
# And two tests whose child process runs the mutated code in a directory of
# its own, where mutmut's trampolines cannot find their configuration (in
# mutmut's clean run, which stops at the first failure, they failed it).
DESELECT = ["tests/config/test_hostile_files.py::test_no_cli_waits_on_a_fifo",
            "tests/config/test_sim_hostile.py::test_sigterm_keeps_the_variants_that_finished"]
COPIED = [
    "mrc_wire",
    "sim_core",
    "switch_model",
    "nic_model",
    "mrc_host",
    "control_plane",
    "fabric_sim",
    "testbed",
    "bench",
    "tests",
    "ptf_tests",
    "bmv2_configs",
    "p4src",
    "scenarios",
    "tofino_configs",
    "docs",  # the JSON schemas the config tests read
    "wireshark",  # the dissector the wire tests hold to mrc_wire's layouts
    "pyproject.toml",
]
# mutmut's exit codes per mutant
KILLED, SURVIVED, NO_TESTS, TIMEOUT = (1, 3, -24), (0,), (33,), (36, -9)
SECTION = "## Mutation testing"


def sync() -> None:
    """Copy the tree into WORK (times kept: mutmut redoes only changed files)."""
    WORK.mkdir(parents=True, exist_ok=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "results")
    for name in COPIED:
        src, dst = REPO / name, WORK / name
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True, ignore=skip)
        else:
            shutil.copy2(src, dst)
    (WORK / "bmv2_configs" / "build").mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "bmv2_configs" / "build", WORK / "bmv2_configs" / "build", dirs_exist_ok=True)
    deselect = "\n".join([f"    --ignore={p}" for p in SKIP_TESTS] + [f"    --deselect={t}" for t in DESELECT])
    (WORK / "setup.cfg").write_text(
        "[mutmut]\nsource_paths =\n" + "".join(f"    {d}\n" for d in dict.fromkeys(t.split('/')[0] for t in TARGETS))
        + "only_mutate =\n" + "".join(f"    {t}*\n" if t.endswith("/") else f"    {t}\n" for t in TARGETS)
        + "pytest_add_cli_args_test_selection =\n" + "".join(f"    {t}\n" for t in TESTS)
        + "also_copy =\n" + "".join(f"    {c}\n" for c in COPIED if c not in ("tests", "pyproject.toml"))
        + f"pytest_add_cli_args =\n    -p\n    no:cacheprovider\n{deselect}\n")


def results() -> dict[str, int | None]:
    """Every mutant generated so far -> its exit code (None: not tried)."""
    out: dict[str, int | None] = {}
    for meta in (WORK / "mutants").rglob("*.meta"):
        out.update(json.loads(meta.read_text())["exit_code_by_key"])
    return out


def installed() -> bool:
    """Whether mutmut's script is beside this python."""
    return (Path(sys.executable).parent / "mutmut").exists()


def mutmut(*args: str, timeout: float | None = None) -> str:
    """Run mutmut in WORK; on timeout, stop it and its forked test runs
    (each mutant's result is saved as it ends: nothing finished is lost)."""
    # Its script, not `python -m mutmut`: the mutants import mutmut.__main__,
    # which must not be the running __main__ (it would start twice).
    script = Path(sys.executable).parent / "mutmut"
    proc = subprocess.Popen([str(script), *args], cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate()
    return out


def generate() -> None:
    """mutmut makes every mutant and its test statistics, testing none (a
    name that matches no mutant)."""
    if list((WORK / "mutants").rglob("*.meta")):
        return
    out = mutmut("run", "no-such-mutant*")
    if "Failed to run clean test" in out or not (WORK / "mutants").exists():
        raise SystemExit(f"mutmut could not start:\n{out[-3000:]}")


def tally(res: dict[str, int | None]) -> dict[str, int]:
    c = {"killed": 0, "survived": 0, "no tests": 0, "timeout": 0, "not tried": 0, "other": 0}
    for code in res.values():
        key = ("not tried" if code is None else "killed" if code in KILLED else "survived" if code in SURVIVED
               else "no tests" if code in NO_TESTS else "timeout" if code in TIMEOUT else "other")
        c[key] += 1
    return c


def diff_of(name: str) -> str:
    lines = [
        ln
        for ln in mutmut("show", name).splitlines()
        if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))
    ]
    return " / ".join(ln.strip() for ln in lines)[:200]


def notes() -> dict[str, str]:
    """Mutant name -> why it survives (equivalent) or which test kills it now."""
    out = {}
    if NOTES.exists():
        for m in re.finditer(r"^- `([^`]+)`: (.+)$", NOTES.read_text(), re.M):
            out[m.group(1)] = m.group(2)
    return out


def section(res: dict[str, int | None], elapsed: float, tried_now: int) -> list[str]:
    c = tally(res)
    judged = c["killed"] + c["survived"] + c["timeout"]
    score = (c["killed"] + c["timeout"]) / judged if judged else float("nan")
    why = notes()
    lines = [
        SECTION,
        "",
        f"mutmut over {', '.join(TARGETS)}; tests: {', '.join(TESTS)} (less {', '.join(SKIP_TESTS + DESELECT)}).",
        f"- mutants: {len(res):,}; tried: {len(res) - c['not tried']:,} ({c['not tried']:,} left for later runs)",
        f"- killed {c['killed']}, timed out {c['timeout']} (counted as killed), survived {c['survived']}, "
        f"no test reaches {c['no tests']}, other {c['other']}",
        f"- **score {score:.1%}** of the mutants tried (killed / (killed + survived))"
        if judged
        else "- score: none tried",
        f"- this run: {tried_now} mutants in {elapsed:.0f} s wall ({elapsed / max(tried_now, 1):.1f} s each)",
        "",
    ]
    survivors = sorted(k for k, v in res.items() if v in SURVIVED)
    if survivors:
        lines += ["| surviving mutant | change | equivalent because / killed now by |", "|---|---|---|"]
        for name in survivors:
            lines.append(f"| `{name}` | `{diff_of(name)}` | {why.get(name, 'not yet argued')} |")
    return lines


def run(max_mutants: int = 40, budget_s: float = 600.0, only: list[str] | None = None,
        survivors: bool = False) -> list[str]:
    """Test up to `max_mutants` untried mutants (matching `only`) within
    `budget_s`, or (`survivors`) the survivors again, after new tests; the
    section for latest.md."""
    if not installed():
        return [SECTION, "", "mutmut is not installed: pip install mutmut (bench extra)", ""]
    sync()
    t0 = time.monotonic()
    generate()
    todo = [
        k for k, v in sorted(results().items()) if v is None and (not only or any(fnmatch.fnmatch(k, g) for g in only))
    ]
    # A spread over every target file, not the first file's mutants only.
    batch = todo[::max(1, len(todo) // max(1, max_mutants))][:max_mutants]
    if survivors:
        batch = [k for k, v in sorted(results().items()) if v in SURVIVED]
    before = {k for k, v in results().items() if v is not None}
    out = mutmut("run", *batch, timeout=max(60.0, budget_s - (time.monotonic() - t0))) if batch else ""
    failed = [ln for ln in out.splitlines() if ln.startswith(("Failed", "failed"))]
    # pytest's own line for each test that failed the clean run: which one, not only that one did
    failing = [ln.split(" - ")[0].removeprefix("FAILED ") for ln in out.splitlines() if ln.startswith("FAILED ")]
    tried = len(batch) if survivors else len({k for k, v in results().items() if v is not None} - before)
    lines = section(results(), time.monotonic() - t0, 0 if failed else tried)
    if failed:  # e.g. a test that does not import in the copy: say so, not a stale score as new
        why = f" ({', '.join(failing[:3])} failed)" if failing else ""
        lines[2:2] = [f"**this run failed: {failed[-1]}{why}** (the figures below are from earlier runs)", ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max", type=int, default=40, help="mutants to try in this run (default %(default)s)")
    ap.add_argument("--budget", type=float, default=600.0, help="seconds of wall time (default %(default)s)")
    ap.add_argument("--only", action="append", default=[], help="mutant names matching this glob (repeatable)")
    ap.add_argument("--survivors", action="store_true", help="test the surviving mutants again (after new tests)")
    args = ap.parse_args(argv)
    lines = run(args.max, args.budget, args.only, args.survivors)
    print("\n".join(lines))
    sections.replace(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
