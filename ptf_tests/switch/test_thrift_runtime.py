"""BMv2's Thrift runtime (register writes PI cannot do) decides success by
the server's answer: a refused write raises with the server's error code
and names the register; an accepted one changes what the switch does."""

import pytest

from testbed.bmv2_thrift import ThriftError

pytestmark = pytest.mark.bmv2


def test_out_of_range_index_is_refused_with_the_servers_code(bmv2_t0):
    with pytest.raises(ThriftError, match=r"register_write port_qdepth\[512\] = 1 refused: INVALID_INDEX"):
        bmv2_t0.bmv2.runtime().register_write("port_qdepth", 512, 1)


def test_unknown_register_is_named_with_the_known_ones(bmv2_t0):
    with pytest.raises(ThriftError, match=r"register 'no_such' is not in the running program \(registers: port_qdepth\)"):
        bmv2_t0.bmv2.runtime().register_write("no_such", 0, 1)


def test_a_reset_of_a_register_the_program_has_succeeds(bmv2_t0):
    bmv2_t0.bmv2.runtime().register_reset("port_qdepth")  # raises on any refusal
