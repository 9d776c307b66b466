"""The installed package works outside the checkout: the
wheel carries the compiled P4 programs, topologies and scenarios as package
data, found with importlib.resources, and no test package."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from control_plane.pipelines import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return next(out.glob("mrc_offload-*.whl"))


def shipped() -> list[str]:
    folders = {"bmv2_configs/build": "*", "bmv2_configs/topologies": "*.yaml", "tofino_configs": "*",
               "scenarios": "**/*"}
    return sorted(f"control_plane/data/{p.relative_to(REPO).as_posix()}" for d, g in folders.items()
                  for p in (REPO / d).glob(g) if p.is_file())


def test_the_wheel_carries_the_data_and_no_tests(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    data = sorted(n for n in names if n.startswith("control_plane/data/"))
    assert data == shipped()
    assert "control_plane/data/bmv2_configs/build/switch.p4info.txtpb" in data
    assert "control_plane/data/scenarios/paper/topologies/cluster_b.yaml" in data
    assert "control_plane/data/scenarios/chakra/traces/tp_dp/trace.json" in data  # a trace's groups, beside its ETs
    tops = {n.split("/")[0] for n in names if not n.startswith("mrc_offload-")}
    assert tops == {"control_plane", "fabric_sim", "mrc_paper", "mrc_host", "mrc_wire", "nic_model", "sim_core",
                    "switch_model", "testbed"}


def test_the_unpacked_wheel_finds_its_data_outside_the_checkout(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("from control_plane import pipelines, cli; from fabric_sim import cli as sim;"
            "print(pipelines.CHECKOUT, pipelines.artifacts('switch')[0], sim.DEFAULT, pipelines.RESULTS);"
            "raise SystemExit(cli.main(['plan', str(pipelines.TOPOLOGIES / 'demo.yaml')]))")
    p = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, capture_output=True, text=True, timeout=300,
                       env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr[-2000:]
    first, *rest = p.stdout.splitlines()
    data = site / "control_plane" / "data"
    assert first.split() == ["False", str(data / "bmv2_configs/build/switch.p4info.txtpb"),
                             str(data / "scenarios/flagship.yaml"), "results"]
    assert rest[0] == "topology demo: 8 switches (4 T0, 4 T1), 4 NICs"
