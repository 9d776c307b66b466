"""testbed/nic_registers.py names every register of the NIC program, by how
it is indexed, as the P4 declares it: a register a target does not clear
between tests carries one test's state into the next (the plane words of
path health did, on SWX: the fuzz suite then differed from the model)."""

from __future__ import annotations

import re

from testbed import nic_registers
from testbed.toolchain import REPO

NIC = REPO / "p4src" / "nic"


def test_every_register_of_the_nic_program_is_listed_by_its_indexing():
    sizes = {m[1]: int(m[2]) for m in re.finditer(r"^#define (\w+)\s+(\d+)", (NIC / "size.p4").read_text(), re.M)}
    declared = {m[2]: m[1] for f in sorted(NIC.glob("*.p4"))
                for m in re.finditer(r"^\s*REGISTER\(bit<\d+>, (\w+)\) (\w+);", f.read_text(), re.M)}
    per_qp = sizes["QP_TABLE_SIZE"]
    assert {name for name, size in declared.items() if size == "QP_TABLE_SIZE"} == set(nic_registers.PER_QP)
    assert {name for name, size in declared.items() if size == "NIC_WIDE"} == set(nic_registers.NIC_WIDE)
    cells = {name: sizes[size] // per_qp for name, size in declared.items()
             if size not in ("QP_TABLE_SIZE", "NIC_WIDE")}
    assert cells == nic_registers.PER_QP_CELLS
    assert set(nic_registers.ALL) == set(declared)
