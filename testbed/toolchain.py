"""Find the P4 toolchain: P4C_BM2_SS, SIMPLE_SWITCH_GRPC, P4TEST, P4C_DPDK,
DPDK_PIPELINE (with RTE_INSTALL_DIR, the DPDK tree) override PATH."""

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
from testbed import bmv2_thrift, swx_order, swx_spec

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


# PNA programs for DPDK's SWX pipeline: p4c-dpdk writes each a .spec, its
# BF-RT schema and a file per table with constant entries into
# bmv2_configs/build/ (`make build`); p4test checks them too.
SWX_PROGRAMS = {"nic-pna": "p4src/nic/nic_pna.p4", "l2fwd-pna": "p4src/bench/l2fwd_pna.p4"}


def check_program(name: str) -> None:
    """Check a PNA program with p4test (front and mid end); raise with its errors."""
    binary = p4test()
    if binary is None:
        raise FileNotFoundError("p4test not found")
    proc = subprocess.run([binary, str(REPO / SWX_PROGRAMS[name])], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"p4test failed for {name}:\n{proc.stderr}")


def swx_artifacts(program: str, out_dir: Path = BUILD_DIR) -> tuple[Path, Path, list[Path]]:
    """(spec, BF-RT schema, constant entries per table) of a PNA program."""
    return (out_dir / f"{program}.spec", out_dir / f"{program}.bfrt.json",
            sorted(out_dir.glob(f"{program}.*.entries")))


def compile_swx(program: str, out_dir: Path = BUILD_DIR) -> Path:
    """Compile a PNA program with p4c-dpdk into `out_dir`; its spec. Raise on failure."""
    compiler = p4c_dpdk()
    if compiler is None:
        raise FileNotFoundError("p4c-dpdk not found (PATH or $P4C_DPDK)")
    spec, bfrt, old = swx_artifacts(program, out_dir)
    # In a folder of its own: p4c-dpdk writes the constant entries of each
    # table (`<table>.txtpb`, SWX's table-entry lines) into its working folder.
    with tempfile.TemporaryDirectory() as scratch:
        proc = subprocess.run([compiler, "--arch", "pna", "-o", f"{scratch}/out.spec", "--bf-rt-schema",
                               f"{scratch}/out.bfrt.json", str(REPO / SWX_PROGRAMS[program])],
                              cwd=scratch, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"p4c-dpdk failed for {program}:\n{proc.stderr}")
        out_dir.mkdir(parents=True, exist_ok=True)
        for f in old:
            f.unlink()
        # SWX reaches the first 256 bytes of the metadata only (testbed/swx_spec.py),
        # and runs packets one at a time only without exact-match tables (testbed/swx_order.py).
        packed, _ = swx_spec.pack_spec(Path(f"{scratch}/out.spec").read_text())
        spec.write_text(swx_order.in_arrival_order(packed))
        shutil.copyfile(f"{scratch}/out.bfrt.json", bfrt)
        for entries in sorted(Path(scratch).glob("*.txtpb")):
            shutil.copyfile(entries, out_dir / f"{program}.{entries.stem}.entries")
    digest_path(program, out_dir).write_text(sources_digest(program) + "\n")
    return spec


def simple_switch_grpc() -> str | None:
    return tool("SIMPLE_SWITCH_GRPC", "simple_switch_grpc")


def dpdk_pipeline() -> str | None:
    return tool("DPDK_PIPELINE", "dpdk-pipeline")


def dpdk_tree(app: str | None) -> Path | None:
    """The DPDK source tree, with its build/, that `pipeline libbuild` compiles
    a spec's C against: RTE_INSTALL_DIR, else the tree the app was built in
    (<tree>/build/examples/dpdk-pipeline)."""
    env = os.environ.get("RTE_INSTALL_DIR")
    tree = Path(env) if env else Path(app).resolve().parents[2] if app else None
    return tree if tree is not None and (tree / "build").is_dir() and (tree / "lib" / "pipeline").is_dir() else None


def swx_unavailable(program: str = "nic-pna") -> str | None:
    """Why DPDK's SWX pipeline cannot run `program` here, or None when it can."""
    app = dpdk_pipeline()
    if app is None:
        return "dpdk-pipeline not found (PATH or $DPDK_PIPELINE); see docs/swx.md"
    if dpdk_tree(app) is None:
        return (f"no DPDK tree with build/ for 'pipeline libbuild': set RTE_INSTALL_DIR (looked at "
                f"{os.environ.get('RTE_INSTALL_DIR') or Path(app).resolve().parents[2]})")
    if shutil.which("gcc") is None:
        return "gcc not found: 'pipeline libbuild' compiles the spec's C with it"
    if os.geteuid() != 0:
        return "SWX tests need root to create TAP devices"
    if shutil.which("ip") is None:
        return "iproute2 'ip' command not found"
    spec, bfrt, _ = swx_artifacts(program)
    for path in (spec, bfrt):
        if not path.exists():
            return f"{path.name} missing: run 'make build' (needs p4c-dpdk)"
    return stale(program)


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
    main = REPO / {**PROGRAMS, **SWX_PROGRAMS}[program]
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
        what = f"{program}.spec" if program in SWX_PROGRAMS else f"{program}.json"
        return (f"bmv2_configs/build/{what} is stale: p4src changed since it was compiled; "
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
