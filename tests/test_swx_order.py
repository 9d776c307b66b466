"""testbed/swx_order.py: a spec SWX runs one packet at a time (no table
lookup that yields to another packet), on hand-written specs, and the
committed specs held to it."""

from __future__ import annotations

import re

import pytest

from testbed import toolchain
from testbed.swx_order import OrderError, in_arrival_order

TABLES = """struct meta_t {
\tbit<32> qp
\tbit<32> exact
}
metadata instanceof meta_t

table by_qp {
\tkey {
\t\tm.qp exact
\t\tm.exact exact
\t}
\tactions {
\t\tNoAction
\t}
\tdefault_action NoAction args none const
\tsize 0x1000
}

table by_word {
\tkey {
\t\tm.qp wildcard
\t}
\tactions {
\t\tNoAction
\t}
\tsize 0x10
}

apply {
\trx m.qp
\ttable by_qp
\ttable by_word
\ttx m.qp
}
"""


def test_every_exact_key_becomes_a_wildcard_key_and_nothing_else_changes():
    out = in_arrival_order(TABLES)
    assert "\t\tm.qp wildcard\n\t\tm.exact wildcard\n" in out
    assert not re.findall(r"^\t\t\S+ exact$", out, re.M)
    # The struct's field named "exact", the wildcard table and the apply block as they were.
    assert out.replace("m.qp wildcard\n\t\tm.exact wildcard", "m.qp exact\n\t\tm.exact exact") == TABLES


@pytest.mark.parametrize(("extra", "named"), [
    ("learner flows {\n\tkey {\n\t\tm.qp\n\t}\n}\n", "learner flows"),
    ("selector paths {\n\tgroup_id m.qp\n}\n", "selector paths"),
])
def test_a_learner_or_selector_is_refused_by_name(extra, named):
    with pytest.raises(OrderError, match=named):
        in_arrival_order(TABLES + extra)


def test_an_extern_call_is_refused_by_name():
    with pytest.raises(OrderError, match="extern"):
        in_arrival_order(TABLES.replace("\ttx m.qp\n", "\textern obj h.x\n\ttx m.qp\n"))


@pytest.mark.parametrize("program", sorted(toolchain.SWX_PROGRAMS))
def test_the_committed_specs_have_no_exact_key(program):
    text = toolchain.swx_artifacts(program)[0].read_text()
    assert re.search(r"^table ", text, re.M)
    assert not re.findall(r"^\t\t\S+ exact$", text, re.M)
    assert in_arrival_order(text) == text
