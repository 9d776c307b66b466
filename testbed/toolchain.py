"""Find the P4 toolchain: P4C_BM2_SS, SIMPLE_SWITCH_GRPC override PATH."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from control_plane.pipelines import BUILD_DIR

# Re-exported: the tests and tools find the checkout and the compiled programs through the toolchain.
from control_plane.pipelines import REPO as REPO
from control_plane.pipelines import artifacts as artifacts
from testbed import bmv2_thrift

# program name -> main P4 file (relative to the repo, so p4c's output, which
# records source paths, is the same on every machine).
PROGRAMS = {
    "switch": "p4src/switch/switch.p4",
    "nic": "p4src/nic/nic.p4",
    "l2fwd": "p4src/bench/l2fwd.p4",
}


def tool(env: str, name: str) -> str | None:
    """Path of a tool from its environment variable, else from PATH."""
    value = os.environ.get(env)
    if value:
        return value if os.access(value, os.X_OK) else None
    return shutil.which(name)


def p4c() -> str | None:
    return tool("P4C_BM2_SS", "p4c-bm2-ss")


def p4test() -> str | None:
    return tool("P4TEST", "p4test")


def p4c_dpdk() -> str | None:
    return tool("P4C_DPDK", "p4c-dpdk")


# Compile-only variants: PNA, checked by p4test (front and mid end) and by
# p4c-dpdk, the PNA back end.
CHECK_ONLY = {"nic-pna": "p4src/nic/nic_pna.p4"}


def check_program(name: str, compiler: str) -> None:
    """Compile a check-only variant with `compiler` (p4test or p4c-dpdk);
    raise with the compiler's errors."""
    if compiler == "p4test":
        binary, extra = p4test(), []
    else:
        binary, extra = p4c_dpdk(), ["--arch", "pna", "-o", os.devnull]
    if binary is None:
        raise FileNotFoundError(f"{compiler} not found")
    # In a folder of its own: p4c-dpdk writes a file per table with constant
    # entries (the NIC receiver's trailing-ones tables) into its working folder.
    with tempfile.TemporaryDirectory() as scratch:
        proc = subprocess.run([binary, *extra, str(REPO / CHECK_ONLY[name])], cwd=scratch, capture_output=True,
                              text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{compiler} failed for {name}:\n{proc.stderr}")


def simple_switch_grpc() -> str | None:
    return tool("SIMPLE_SWITCH_GRPC", "simple_switch_grpc")


def bmv2_unavailable() -> str | None:
    """Why BMv2 tests cannot run here, or None when they can."""
    if simple_switch_grpc() is None:
        return "simple_switch_grpc not found (PATH or $SIMPLE_SWITCH_GRPC); see README 'Toolchain'"
    thrift = bmv2_thrift.unavailable(simple_switch_grpc())
    if thrift:
        return thrift
    if os.geteuid() != 0:
        return "BMv2 tests need root to create veth pairs"
    if shutil.which("ip") is None:
        return "iproute2 'ip' command not found"
    return None


def sources_digest(program: str) -> str:
    """SHA-256 over the P4 files a program is compiled from (its folder
    and p4src/include, with the generated `.inc` files they include), so a
    committed JSON can say what it was built from."""
    main = REPO / PROGRAMS[program]
    files = sorted({*main.parent.glob("*.p4"), *main.parent.glob("*.inc"),
                    *(REPO / "p4src" / "include").glob("*.p4")})
    h = hashlib.sha256()
    for f in files:
        h.update(f.relative_to(REPO).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def digest_path(program: str, out_dir: Path = BUILD_DIR) -> Path:
    return out_dir / f"{program}.sources.sha256"


def stale(program: str, out_dir: Path = BUILD_DIR) -> str | None:
    """Why the committed JSON of `program` does not match its P4 sources, or None."""
    recorded = digest_path(program, out_dir)
    if not recorded.exists():
        return f"{recorded.name} missing: run 'make build' (needs p4c)"
    if recorded.read_text().strip() != sources_digest(program):
        return (f"bmv2_configs/build/{program}.json is stale: p4src changed since it was compiled; "
                "run 'make build' where p4c is present")
    return None


def compile_program(program: str, out_dir: Path = BUILD_DIR) -> tuple[Path, Path]:
    """Compile `program` with p4c-bm2-ss into `out_dir`; raise on failure."""
    compiler = p4c()
    if compiler is None:
        raise FileNotFoundError("p4c-bm2-ss not found (PATH or $P4C_BM2_SS)")
    out_dir.mkdir(parents=True, exist_ok=True)
    p4info, json_path = artifacts(program, out_dir)
    cmd = [
        compiler, "--arch", "v1model", "--std", "p4-16", "-DTARGET_V1MODEL",
        "--p4runtime-files", str(p4info), "-o", str(json_path), PROGRAMS[program],
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"p4c failed for {program}:\n{proc.stderr}")
    digest_path(program, out_dir).write_text(sources_digest(program) + "\n")
    return p4info, json_path
