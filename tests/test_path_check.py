"""The path checker over planned tables: exhaustive on a medium fabric, a
seeded sample at full scale, and it must catch a broken table."""

from pathlib import Path

from control_plane import addressing as A
from control_plane import topology
from control_plane.path_check import PathChecker

FULL = Path(__file__).resolve().parent.parent / "bmv2_configs" / "topologies" / "full.yaml"
MEDIUM = topology.parse({"planes": 2, "t0_per_plane": 4, "t1_per_plane": 3, "hosts_per_t0": 3})


def test_every_pair_every_plane_every_spine_on_a_medium_fabric():
    n, failed = PathChecker(MEDIUM).check(PathChecker(MEDIUM).all_paths())
    assert n == 2 * 12 * 12 * 3
    assert failed == []


def test_seeded_sample_of_10000_paths_at_full_scale():
    pc = PathChecker(topology.load(FULL))
    n, failed = pc.check(pc.sample(10_000, seed=131072))
    assert (n, failed) == (10_000, [])


def test_checker_catches_a_missing_route_and_a_wrong_mac():
    pc = PathChecker(MEDIUM)
    src, dst = 0, 3 * 3 + 1  # row 0 to row 3
    assert pc.walk(src, dst, 0, 2).ok
    mine, routes, nbs = pc._switch(A.t1_name(0, 2))
    broken = dict(routes)
    del broken[A.locator48(MEDIUM, A.usid(A.TIER_T0, 0, 3))]
    pc._tables[A.t1_name(0, 2)] = (mine, broken, nbs)
    r = pc.walk(src, dst, 0, 2)
    assert not r.ok and r.detail == "no route at t1-p0-s2"
    pc._tables[A.t1_name(0, 2)] = (
        mine,
        routes,
        {p: type(n)(n.port, n.src_mac, n.dst_mac + 1, n.host_facing) for p, n in nbs.items()},
    )
    assert "wrong neighbour MAC on t1-p0-s2" in pc.walk(src, dst, 0, 2).detail
