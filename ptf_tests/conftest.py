"""Fixtures: a `target` parametrized over the reference model and BMv2.

The BMv2 switch is started once per session (simple_switch_grpc on veth
pairs, gRPC on loopback), loaded with the committed JSON and P4Info, and
given the demo T0's tables by our installer. Where BMv2 cannot run, the
bmv2 cases are skipped with the reason; the model cases always run.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from testbed import toolchain
from ptf_tests.lib import nic_fabric
from ptf_tests.lib.fabric import T0, T0_PORTS
from testbed.targets import NicBmv2Target, NicModelTarget, SwitchBmv2Target, SwitchModelTarget


def bmv2_skip_reason(program: str = "switch") -> str | None:
    reason = toolchain.bmv2_unavailable()
    if reason:
        return reason
    for path in toolchain.artifacts(program):
        if not path.exists():
            return f"{path.name} missing: run 'make build' (needs p4c)"
    return toolchain.stale(program)


@pytest.fixture(scope="session")
def bmv2_t0() -> Iterator[SwitchBmv2Target]:
    reason = bmv2_skip_reason()
    if reason:
        pytest.skip(f"BMv2: {reason}")
    target = SwitchBmv2Target(T0, T0_PORTS)
    yield target
    target.close()


@pytest.fixture(params=["model", "bmv2"])
def target(request: pytest.FixtureRequest):
    if request.param == "model":
        yield SwitchModelTarget(T0, T0_PORTS)
        return
    t: SwitchBmv2Target = request.getfixturevalue("bmv2_t0")
    t.reset()
    yield t
    t.reset()


@pytest.fixture(scope="session")
def bmv2_nic() -> Iterator[NicBmv2Target]:
    reason = bmv2_skip_reason("nic")
    if reason:
        pytest.skip(f"BMv2: {reason}")
    target = NicBmv2Target(nic_fabric.NIC, nic_fabric.PORTS)
    yield target
    target.close()


@pytest.fixture(params=["model", "bmv2"])
def nic_target(request: pytest.FixtureRequest):
    """NIC 0 of the demo fabric with QP 1 to NIC 3, fresh rotation."""
    if request.param == "model":
        yield NicModelTarget(nic_fabric.NIC, nic_fabric.PORTS)
        return
    t: NicBmv2Target = request.getfixturevalue("bmv2_nic")
    t.reset()
    yield t
    t.reset()
