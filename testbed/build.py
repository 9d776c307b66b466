"""`make build` (python -m testbed.build): compile every P4 program the
toolchain here can compile, and say what it skipped and why.

BMv2 programs go to bmv2_configs/build/ (p4c-bm2-ss), the PNA programs for
DPDK's SWX pipeline too (p4c-dpdk: a .spec each), checked with p4test as
well; the Tofino switch goes to tofino_configs/ (bf-p4c). Without a
compiler the committed outputs are used.
"""

from __future__ import annotations

from testbed import tofino
from testbed.toolchain import (
    PROGRAMS,
    REPO,
    SWX_PROGRAMS,
    check_program,
    compile_program,
    compile_swx,
    p4c,
    p4c_dpdk,
    p4test,
)


def main() -> None:
    if p4c() is None:
        print("p4c-bm2-ss not found: using the committed JSON and P4Info in bmv2_configs/build/")
    else:
        for program in PROGRAMS:
            p4info, json_path = compile_program(program)
            print(f"compiled {program}: {json_path.relative_to(REPO)}, {p4info.relative_to(REPO)}")
    if p4c_dpdk() is None:
        print("p4c-dpdk not found: using the committed SWX specs in bmv2_configs/build/")
    else:
        for program in SWX_PROGRAMS:
            spec = compile_swx(program)
            print(f"compiled {program}: {spec.relative_to(REPO)} (p4c-dpdk, for DPDK's SWX pipeline)")
    for name in SWX_PROGRAMS:
        if p4test() is None:
            print(f"p4test not found: {name} not checked with it")
            continue
        check_program(name)
        print(f"checked {name} ({SWX_PROGRAMS[name]}) with p4test")
    if tofino.bf_p4c() is None:
        print("bf-p4c not found: the Tofino switch is not compiled; tofino_configs/ keeps the committed "
              "P4Info and resource summary (README 'Toolchain' says how to get p4c's Tofino back end)")
        return
    print(f"compiling {tofino.PROGRAM} with bf-p4c ...", flush=True)
    summary = tofino.build()
    print(f"compiled switch_tna into tofino_configs/: {tofino.describe(summary)}")


if __name__ == "__main__":
    main()
