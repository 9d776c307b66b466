"""mrc-sim's results: strict JSON, totals that reconcile from the file
alone, a non-zero exit naming why when a message is not delivered, and a
transport's results kept when a later one fails."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from fabric_sim import cli
from fabric_sim.runner import parallel

TOPO = {"planes": 2, "t0_per_plane": 2, "t1_per_plane": 2, "hosts_per_t0": 2}


def _file(tmp_path: Path, events: list, transports: list | None = None, duration_us: float = 400) -> Path:
    doc = {"name": "t", "seed": 1, "topology": TOPO, "endpoint": {"mtu": 4096},
           "workload": {"pattern": "flows", "message_bytes": 100_000,
                        "flows": [{"src": "nic-0", "dst": "nic-3"}, {"src": "nic-1", "dst": "nic-2"}]},
           "transports": transports or [{"name": "mrc", "kind": "mrc", "evs_per_qp": 8},
                                        {"name": "roce", "kind": "roce"}],
           "events": events, "duration_us": duration_us, "bins": 40}
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def _strict(path: Path) -> dict:
    def refuse(name: str):
        raise ValueError(f"{path.name} holds {name}: not JSON")
    return json.loads(path.read_text(), parse_constant=refuse)


UNREACHABLE = [{"at_us": 0, "nic_port_down": {"nic": "nic-3", "plane": 0}},
               {"at_us": 0, "nic_port_down": {"nic": "nic-3", "plane": 1}}]


def test_an_unreachable_destination_exits_1_naming_it_and_the_file_stays_strict_json(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main([str(_file(tmp_path, UNREACHABLE)), "--out", str(out), "--no-plots", "--quiet"]) == 1
    cap = capsys.readouterr()
    assert "error: mrc: 1 message not delivered: nic-3 unreachable from nic-0" in cap.out
    assert "FAILED mrc: 1 of 2 messages not delivered" in cap.err
    assert "duration_us" not in cap.out  # the run's length is not to blame
    doc = _strict(out / "results.json")
    mrc = doc["runs"][0]
    assert mrc["delivered"] == 1 and mrc["undelivered"] == [
        "1 message not delivered: nic-3 unreachable from nic-0: every path between them crosses a cable that is down"]


def test_a_run_with_nothing_delivered_writes_null_not_nan(tmp_path, capsys):
    events = [*UNREACHABLE, *({"at_us": 0, "nic_port_down": {"nic": "nic-2", "plane": p}} for p in (0, 1))]
    out = tmp_path / "out"
    assert cli.main([str(_file(tmp_path, events, [{"name": "mrc", "kind": "mrc"}])), "--out", str(out),
                     "--no-plots", "--quiet"]) == 1
    assert "NaN" in json.dumps(float("nan"))  # what Python's json would write unasked
    fct = _strict(out / "results.json")["runs"][0]["fct_us"]
    assert fct == {"p50": None, "p99": None, "max": None, "mean": None}


def test_packet_totals_reconcile_from_the_file_alone(tmp_path, capsys):
    # A spine lost mid-run and loss into every NIC: every packet sent is
    # delivered, dropped by a named cause, or still on a wire.
    out = tmp_path / "out"
    events = [{"at_us": 5, "switch_down": "t1-p0-s1"}, {"at_us": 0, "nic_rx_loss": {"rate": 0.05}}]
    # RoCE's local ACK timeout at 4.096 µs x 2^7 = 524 µs (NCCL's 2^20 is 4.29 s): its resends fit the run.
    transports = [{"name": "mrc", "kind": "mrc", "evs_per_qp": 8},
                  {"name": "roce", "kind": "roce", "rc": {"timeout": 7}}]
    assert cli.main([str(_file(tmp_path, events, transports, duration_us=4000)), "--out", str(out), "--no-plots",
                     "--quiet"]) == 0
    doc = _strict(out / "results.json")
    assert [r["transport"] for r in doc["runs"]] == ["mrc", "roce"]
    for r in doc["runs"]:
        p = r["packets"]
        made = p["sent"] + p["nacks_from_nics"] + p["sacks_from_nics"]
        assert made == p["delivered"] + p["kept_by_nics"] + sum(p["dropped"].values()) + p["in_flight"], r["transport"]
        assert (p["sacks_from_nics"] > 0) == (r["transport"] == "mrc")  # MRC's receiver is its NIC's
        assert (
            p["dropped"] == r["drops"] and p["dropped"]["link:random_loss"] > 0 and p["dropped"]["link:link_down"] > 0
        )
        once = r["exactly_once"]
        assert once["posted_bytes"] == once["placed_bytes"] == 200_000
        assert (once["duplicate_bytes"], once["missing_bytes"], once["stray_bytes"]) == (0, 0, 0)


def test_a_failing_transport_is_named_and_the_results_before_it_are_already_written(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    real = parallel.run
    seen = {}

    def second_fails(sc, t, progress=None, **kw):
        if t.name == "roce":
            seen["before"] = [r["transport"] for r in _strict(out / "results.json")["runs"]]
            raise RuntimeError("a bug in the second transport")
        return real(sc, t, progress, **kw)

    monkeypatch.setattr(parallel, "run", second_fails)  # every run goes through the parallel runner
    assert cli.main([str(_file(tmp_path, [])), "--out", str(out), "--no-plots", "--quiet", "--jobs", "1"]) == 1
    assert seen["before"] == ["mrc"]  # written when mrc finished, before roce started
    doc = _strict(out / "results.json")
    assert [r["transport"] for r in doc["runs"]] == ["mrc"] and doc["runs"][0]["delivered"] == 2
    assert doc["failed"] == {"roce": "RuntimeError: a bug in the second transport"}
    err = capsys.readouterr().err
    assert "error: roce failed: RuntimeError: a bug in the second transport" in err
    assert "FAILED roce: did not finish" in err

