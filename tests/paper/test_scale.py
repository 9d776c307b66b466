"""make paper SCALE=paper: the paper-scale experiments beside the quick
ones, each claim held at the largest scale that tested it, and the
expected CPU time printed before anything runs."""

from __future__ import annotations

from mrc_paper import gallery
from mrc_paper.claims import EV_STATE_OFF, Claim
from mrc_paper.experiments import Experiment, Finding, Scale, load
from mrc_paper.registry import CLAIMS, at


def _exp(key: str, scale: Scale, where: str) -> Experiment:
    return Experiment(key, "figX", key, f"{key}.yaml", "paper", lambda runs: Finding(key), scale, where)


def _findings(small_ok: bool, big: str) -> dict[str, Finding]:
    """One claim held by a quick experiment and a paper-scale one; `big`:
    what the paper-scale one did with it (ok, bad, untested)."""
    small, large = Finding("q"), Finding("p")
    small.hold("x.c", "small value", small_ok, "small cause")
    if big == "untested":
        large.untested("x.c", "sizes from 1 GiB not run")
    else:
        large.hold("x.c", "large value", big == "ok", "large cause")
    return {"q": _exp("q", Scale.QUICK, "4 ranks").stamp(small), "p": _exp("p", Scale.PAPER, "64 ranks").stamp(large)}


CLAIM = {"x.c": Claim("x.c", "q", "Fig. X", "s", "q", "t", "m", ablation=EV_STATE_OFF)}


def test_a_claim_is_held_at_the_largest_scale_that_tested_it():
    res = gallery.results(CLAIM, _findings(small_ok=True, big="bad"))["x.c"]
    assert res is not None and not res.ok and res.measured == "large value" and res.scale == Scale.PAPER
    assert res.at == "64 ranks" and res.cause == "large cause"
    tally = gallery.tally({"x.c": res})
    assert tally.at_paper_scale == 1 and "1 at the paper's scale" in str(tally)


def test_a_larger_scale_that_did_not_reach_the_claim_leaves_the_smaller_ones_result_and_says_why():
    res = gallery.results(CLAIM, _findings(small_ok=True, big="untested"))["x.c"]
    assert res is not None and res.ok and res.scale == Scale.QUICK and res.at == "4 ranks"
    assert res.measured == "small value (not tested at 64 ranks: sizes from 1 GiB not run)"
    assert gallery.tally({"x.c": res}).at_paper_scale == 0
    row = gallery.claims_table([CLAIM["x.c"]], {"x.c": res})[2]
    assert "| ✓ | quick (4 ranks) |" in row


def test_the_quick_gallery_has_no_paper_scale_run_and_the_paper_scale_adds_figs_15_to_17_on_64_ranks():
    quick, paper = at(Scale.QUICK), at(Scale.PAPER)
    assert all(e.scale == Scale.QUICK for e in quick)
    bigger = [e for e in paper if e not in quick]
    assert sorted(e.key for e in bigger) == ["fig15_64", "fig16_64", "fig17_64"]
    for e in bigger:
        sc = load(e)
        tops = {sc.topology.nics} | {t.topology.nics for t in sc.transports if t.topology}
        assert tops == {64}, e.key
        held = {c.id for c in CLAIMS.values() if c.experiment == e.key.removesuffix("_64")}
        assert held, e.key  # the claims it holds again are the quick experiment's


def test_the_estimate_counts_only_what_the_cache_lacks_and_grows_with_the_bytes():
    from mrc_paper import budget
    from mrc_paper.experiments import tasks
    from mrc_paper.registry import BY_KEY
    _, todo = tasks(BY_KEY["fig17_64"])
    costs = {(t.transport.name, t.scenario.workload.message_bytes): budget.cpu_s(t) for _, t in todo}
    assert costs["mrc-1qp", 1048576] > 3.5 * costs["mrc-1qp", 262144] > 0
    assert costs["roce-16qp", 262144] > costs["roce-1qp", 262144]  # 16 QPs a pair cost more per byte
    line = budget.line([t for _, t in todo], cached=5, workers=2)
    assert line.startswith(f"{len(todo)} runs to execute (5 more from the cache): about ")
    assert "minutes of wall time on 2 cores" in line


def test_a_paper_scale_experiment_asked_of_the_quick_gallery_is_refused_saying_where_it_runs(capsys):
    from mrc_paper.__main__ import main
    assert main(["--only", "fig17_64"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --only: unknown fig17_64 at --scale quick") and "with --scale paper" in err
