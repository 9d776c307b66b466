"""Ray is started once for the tests that need it (`ray_cluster`) (seconds of start-up),
with two CPUs as on the machine the suite is timed on."""

from __future__ import annotations

import pytest

from fabric_sim.runner import parallel


@pytest.fixture(scope="session")
def ray_cluster():
    parallel.connect(None, 2)
    import ray

    yield ray
    ray.shutdown()
