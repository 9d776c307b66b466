"""EV restoration in the timed fabric (DESIGN.md section 7): a path whose
link went down and came back is used again within one probe interval of
its return (plus the probe's round trip), not after several good probes;
a retired EV is probed every interval, answered or not. Fig. 19b's fabric
(Cluster D, one plane, 100 Gb/s T0-T1 links), one link down 120 µs."""

from __future__ import annotations

import pytest

from fabric_sim import scenario
from fabric_sim.runner.run import run
from mrc_paper.appendix import restore_lags
from mrc_paper.experiments import SCENARIOS


def _lag(damping: dict[str, int]) -> tuple[float, float, float]:
    """(µs from the link's return to its EVs' restoration, probe interval, base RTT)."""
    sc = scenario.load(SCENARIOS / "fig19b.yaml")
    raw = {**sc.meta["raw"], "duration_us": 420, "events": [
        {"at_us": 120, "link_down": ["t0-p0-r0", "t1-p0-s0"]}, {"at_us": 240, "link_up": ["t0-p0-r0", "t1-p0-s0"]}]}
    raw["transports"] = [{**raw["transports"][0], "damping": damping}]
    sc = scenario.parse(raw, sc.source, sc.meta["base"])
    r = run(sc, sc.transports[0])
    [lag] = restore_lags(r)
    rtt = r.base_rtt
    return lag, 2 * rtt, rtt


def test_a_link_that_comes_back_is_used_within_one_probe_interval():
    lag, interval, rtt = _lag({})
    assert lag <= interval + 1.5 * rtt, (lag, interval)


@pytest.mark.parametrize("off", [{"down_after": 0}])
def test_without_the_fast_path_it_waits_for_good_probes_in_a_row(off):
    lag, interval, rtt = _lag(off)
    assert lag > interval + 1.5 * rtt, (lag, interval)
