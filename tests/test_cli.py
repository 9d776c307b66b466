"""mrcctl without devices: plan output, generated files, input errors."""

from pathlib import Path

from control_plane import cli

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "bmv2_configs" / "topologies" / "demo.yaml"


def test_plan_summary(capsys):
    assert cli.main(["plan", str(DEMO)]) == 0
    out = capsys.readouterr().out
    assert "8 switches (4 T0, 4 T1), 4 NICs" in out
    assert "T0: 16 entries each" in out


def test_committed_device_files_equal_a_fresh_plan(tmp_path, capsys):
    assert cli.main(["plan", str(DEMO), "--write", str(tmp_path)]) == 0
    committed = REPO / "bmv2_configs" / "demo"
    fresh = sorted(p.name for p in tmp_path.iterdir())
    assert fresh == sorted(p.name for p in committed.iterdir())
    for name in fresh:
        assert (tmp_path / name).read_text() == (committed / name).read_text(), (
            f"{name} is stale: rerun mrcctl plan --write"
        )


def test_bad_topology_is_an_error_naming_the_field(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("planes: 9\nt0_per_plane: 2\nt1_per_plane: 2\nhosts_per_t0: 2\n")
    assert cli.main(["install", str(bad)]) == 2
    assert "planes: 9 is outside 1..8" in capsys.readouterr().err


def test_device_without_address_is_refused(tmp_path, capsys):
    topo = tmp_path / "t.yaml"
    topo.write_text("planes: 1\nt0_per_plane: 1\nt1_per_plane: 1\nhosts_per_t0: 1\n")
    assert cli.main(["verify", str(topo), "--device", "t0-p0-r0"]) == 2
    assert "no P4Runtime address for t0-p0-r0" in capsys.readouterr().err


def test_plan_of_a_nic_prints_its_tables(capsys):
    assert cli.main(["plan", str(DEMO), "--device", "nic-3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("nic-3: 5 entries")  # 2 row templates, 2 plane ports, config
    assert "DestRow(row=0, same_row=False)" in out and "DestRow(row=1, same_row=True)" in out
    assert out.count("PlanePort(") == 2 and "NicConfig(" in out


def test_plan_of_a_switch_and_a_nic_together(capsys):
    assert cli.main(["plan", str(DEMO), "--device", "t1-p1-s0", "--device", "nic-0"]) == 0
    out = capsys.readouterr().out
    assert "t1-p1-s0: " in out and "nic-0: 5 entries" in out


def test_plan_of_an_unknown_device_names_it(capsys):
    for name, why in (("nic-4", "'nic-4' is not a device of topology 'demo'"),
                      ("t0-p0-r9", "'t0-p0-r9' is not a device of topology 'demo'"),
                      ("spine-1", "'spine-1' is not a device name")):
        assert cli.main(["plan", str(DEMO), "--device", name]) == 2
        assert f"error: --device: {why}" in capsys.readouterr().err
