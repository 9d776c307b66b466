"""htsim_uec beside the bench (bench/htsim_peer.py): the files it is given,
the line where it is absent, and, where it is installed, a tiny real run."""

import dataclasses
import os
import stat
import subprocess
import time

import pytest

from bench import htsim_peer, sim_scale

# 8 NICs, 2 T0s of 4 hosts, 4 spines, 2 planes: 64 KiB per message, 32 KiB (8 packets) per plane.
TINY = dataclasses.replace(
    htsim_peer.job(64), nics=8, pairs=((0, 5), (1, 6), (2, 7), (3, 4), (4, 1), (5, 2), (6, 3), (7, 0)),
    message_bytes=65536, planes=2, t0s=2, hosts_per_t0=4, spines=4)


def test_the_connection_matrix_is_htsims_format_one_connection_per_message():
    # connection_matrix.cpp: "Nodes N", "Connections C", then "src->dst id K start US size BYTES".
    assert htsim_peer.connection_matrix(TINY) == (
        "Nodes 8\nConnections 8\n"
        "0->5 id 1 start 0 size 32768\n1->6 id 2 start 0 size 32768\n2->7 id 3 start 0 size 32768\n"
        "3->4 id 4 start 0 size 32768\n4->1 id 5 start 0 size 32768\n5->2 id 6 start 0 size 32768\n"
        "6->3 id 7 start 0 size 32768\n7->0 id 8 start 0 size 32768\n")


def test_the_exported_permutation_is_the_benchs_seeded_one():
    j = htsim_peer.job(64)
    assert j.pairs[:4] == ((0, 49), (1, 3), (2, 62), (3, 45))  # seed 1's draw, not a new one
    assert sorted(a for a, _ in j.pairs) == sorted(b for _, b in j.pairs) == list(range(64))
    assert htsim_peer.connection_matrix(j).splitlines()[2] == "0->49 id 1 start 0 size 262144"  # 2 MiB / 8 planes


def test_one_plane_of_1024_nics_is_htsims_2_tier_file_with_the_benchs_shape():
    # read_cfg's keys; tier 0 down/up must equal its oversubscription, and its
    # uplinks (1,024 / 2) over 32 T0s give the 16 spines of the bench's plane.
    assert htsim_peer.topology(htsim_peer.job(1024)) == (
        "Nodes 1024\nTiers 2\nPodsize 1024\n\n"
        "Tier 0\nDownlink_speed_Gbps 100\nRadix_Down 32\nRadix_Up 16\nOversubscribed 2\n"
        "Downlink_Latency_ns 500\nSwitch_Latency_ns 0\n\n"
        "Tier 1\nDownlink_speed_Gbps 100\nRadix_Down 32\nDownlink_Latency_ns 500\nSwitch_Latency_ns 0\n")


def test_a_shape_htsims_fat_tree_cannot_take_is_refused_before_any_run():
    with pytest.raises(ValueError, match=r"hosts_per_t0 \(4\) a multiple of t1_per_plane \(8\)"):
        htsim_peer.topology(dataclasses.replace(TINY, spines=8))


def test_the_command_matches_payload_ecn_trimming_spraying_ack_spacing_and_horizon(tmp_path):
    """The scenario's switches mark ECN from 8 queued packets and trim past 128 to 256 bytes (the
    topology's congestion defaults); htsim marks between -ecn's two thresholds (equal: a step), trims what
    arrives at a full -q queue to -trimsize bytes, and ACKs every -sack_threshold bytes (endpoint.ack_bytes,
    16 KiB); REPS sprays each connection, as MRC sprays a QP."""
    assert htsim_peer.command("/x/htsim_uec", tmp_path, htsim_peer.job(64), 3, 100) == [
        "/x/htsim_uec", "-tm", str(tmp_path / "perm.cm"), "-topo", str(tmp_path / "plane.topo"),
        "-linkspeed", "100000", "-mtu", "4160", "-q", "128", "-ecn", "8", "8", "-trimsize", "256",
        "-load_balancing_algo", "reps", "-sack_threshold", "16384", "-end", "100",
        "-seed", "4", "-o", str(tmp_path / "log3.dat")]


def test_absent_it_is_one_line_saying_so(monkeypatch, tmp_path):
    monkeypatch.delenv(htsim_peer.ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    binary, why = htsim_peer.find()
    assert binary is None
    assert why == ("htsim_uec not on PATH (nor HTSIM_UEC set): no ratio against htsim "
                   "(build it from ultraethernet/uet-htsim and put it on PATH)")
    line = sim_scale.verdict_1024({"cpu_s": 64.9}, None, why, True)
    assert line == "\n1,024 NICs: **64.9 CPU-s** (compiled), OVER the target of 20 s on an idle core; " + why


def test_a_named_binary_that_is_not_executable_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv(htsim_peer.ENV, str(tmp_path / "nope"))
    assert htsim_peer.find() == (None, f"HTSIM_UEC={tmp_path / 'nope'} is not an executable file: no ratio "
                                       "against htsim")


def test_beside_htsim_the_target_is_three_times_its_cpu_seconds():
    peer = {"cpu_s": 10.0, "flows_done": 8192, "flows": 8192}
    assert sim_scale.verdict_1024({"cpu_s": 29.0}, peer, "", True).endswith(
        "**29.0 CPU-s** (compiled), 2.9x htsim_uec's 10.0 CPU-s on the same permutation: within the target of "
        "at most 3x")
    assert sim_scale.verdict_1024({"cpu_s": 31.0}, peer, "", True).endswith("OVER the target of at most 3x")
    short = {**peer, "flows_done": 8000}
    assert sim_scale.verdict_1024({"cpu_s": 40.0}, short, "", False).endswith(
        "4.0x htsim_uec's 10.0 CPU-s on the same permutation (htsim did not finish every flow): OVER the target "
        "of at most 3x")


def test_a_run_past_its_timeout_is_killed_and_reported_as_none():
    proc = subprocess.Popen(["sleep", "30"])
    start = time.monotonic()
    assert htsim_peer.wait_child(proc, 0.2) is None
    assert proc.returncode == -9 and time.monotonic() - start < 5


def fake_htsim(folder, finished_at, from_end_us):
    """A stand-in printing what htsim_uec prints: a line per flow of its matrix
    finished at `finished_at` if run to at least `from_end_us`, then the
    summary; each -end it is given is appended to folder/ends."""
    fake = folder / "htsim_uec"
    fake.write_text(
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in -tm) tm=$2;; -end) end=$2;; esac; shift; done\n"
        f"echo $end >> {folder / 'ends'}\n"
        f"[ $end -ge {from_end_us} ] && grep -- '->' $tm | while read c rest; do "
        f"echo \"Flow Uec_$c flowId 1 uecSrc 0 finished at {finished_at} total messages 1\"; done\n"
        "echo 'New: 40 Rtx: 2 RTS: 0 Bounced: 0 ACKs: 10 NACKs: 1 Pulls: 0 sleek_pkts: 0'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return str(fake)


def test_figures_are_read_from_each_planes_output_and_summed(tmp_path):
    h = htsim_peer.run(TINY, fake_htsim(tmp_path, 12.5, 0), 30)
    assert h is not None
    assert (h["flows_done"], h["flows"], h["runs"], h["packets"], h["acks"], h["nacks"]) == (16, 16, 2, 84, 20, 2)
    assert (h["last_done_us"], h["end_us"]) == (12.5, 100)
    assert (tmp_path / "ends").read_text() == "100\n100\n"  # all done in the first 100 µs bin: one run per plane


def test_a_plane_unfinished_at_the_first_bin_is_rerun_to_the_bin_after_its_last_flow(tmp_path):
    # As the project's run stops at the first bin boundary (duration / bins = 100 µs) after its last message.
    h = htsim_peer.run(TINY, fake_htsim(tmp_path, 250.0, 300), 30)
    assert h is not None
    assert (h["flows_done"], h["last_done_us"], h["end_us"]) == (16, 250.0, 300)
    assert (tmp_path / "ends").read_text() == "100\n2000\n300\n" * 2


def test_flows_unfinished_at_the_horizon_are_counted_short(tmp_path):
    h = htsim_peer.run(TINY, fake_htsim(tmp_path, 2500.0, 3000), 30)
    assert h is not None
    assert (h["flows_done"], h["flows"], h["end_us"]) == (0, 16, 2000)
    assert (tmp_path / "ends").read_text() == "100\n2000\n" * 2


def test_the_bench_rows_run_each_size_up_to_the_limit_beside_the_projects_cpu_seconds(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_HTSIM_MAX_NICS", "64")
    lines, peers = htsim_peer.beside(fake_htsim(tmp_path, 12.5, 0), {64: {"cpu_s": 5.0}, 256: {"cpu_s": 9.0}}, 30)
    assert list(peers) == [64]  # 256 is over the limit: not run
    row = lines[-1].split(" | ")
    assert (row[0], row[4], row[5]) == ("| 64", "512/512", "12.5")  # 64 flows on each of 8 planes
    assert row[6] == htsim_peer.ratio(5.0, peers[64]["cpu_s"]) + " |"
    assert (htsim_peer.ratio(5.0, 2.0), htsim_peer.ratio(5.0, 0.0)) == ("2.5x", "n/a")


@pytest.mark.skipif(htsim_peer.find()[0] is None, reason="htsim_uec not installed (not on PATH, HTSIM_UEC unset)")
def test_a_tiny_real_run_finishes_every_flow():
    binary = htsim_peer.find()[0]
    assert binary is not None
    h = htsim_peer.run(TINY, binary, 120)
    assert h is not None
    assert (h["flows_done"], h["flows"], h["runs"]) == (16, 16, 2)
    assert h["packets"] >= 16 * 8  # 8 packets of 4 KiB per flow and plane, retransmissions on top
    assert h["cpu_s"] > 0 and h["rss_mib"] > 0
    assert 0 < h["last_done_us"] < h["end_us"] == 100  # all done within the first bin, as it stops


def test_the_environment_variable_wins_over_path(monkeypatch, tmp_path):
    named = tmp_path / "mine"
    named.write_text("#!/bin/sh\n")
    named.chmod(0o755)
    monkeypatch.setenv(htsim_peer.ENV, str(named))
    assert htsim_peer.find() == (str(named), f"HTSIM_UEC={named}")
    assert os.access(named, os.X_OK)
