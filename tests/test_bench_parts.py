"""The bench's profile by part (bench/sim_scale.py): own time per part of
the project, a builtin's time charged to the part that called it, and what
the reference models' share alone costs at 1,024 NICs against htsim."""

from bench import sim_scale

MODEL = ("/x/switch_model/pipeline.py", 10, "process")
FABRIC = ("/x/fabric_sim/net/links.py", 20, "send")
LIBRARY = ("/usr/lib/python3.11/heapq.py", 1, "heappush")
GET = ("~", 0, "<method 'get' of 'dict' objects>")


def test_a_builtins_time_goes_to_the_part_that_called_it():
    stats = {
        MODEL: (1, 1, 2.0, 2.0, {}),
        FABRIC: (1, 1, 1.0, 1.0, {}),
        LIBRARY: (1, 1, 0.125, 0.125, {}),
        GET: (3, 3, 0.75, 0.75, {MODEL: (2, 2, 0.5, 0.5), FABRIC: (1, 1, 0.25, 0.25)}),
    }
    assert sim_scale.by_part(stats) == {"reference models": 2.5, "timed fabric": 1.25,
                                        "other (Python's library, the run's set-up)": 0.125}


def test_the_models_bound_is_their_share_of_the_1024_run_over_htsims_seconds():
    line = sim_scale.models_bound(0.5, {"cpu_s": 40.0}, {"cpu_s": 5.0})
    assert "about 20.0 of the compiled 1,024-NIC run's 40.0 CPU-s: 4.0x htsim_uec's 5.0 s" in line
    assert sim_scale.models_bound(0.5, {"cpu_s": 40.0}, None).endswith("(no htsim beside it).")
    assert sim_scale.models_bound(0.5, None, None) == ""
