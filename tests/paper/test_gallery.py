"""make paper's command: progress, the figure, the gallery and the numbers."""

from __future__ import annotations

import json

from mrc_paper.__main__ import main, undelivered
from mrc_paper.experiments import Finding


def test_one_experiment_writes_its_figure_gallery_section_and_numbers(tmp_path, capsys, ray_cluster):
    assert main(["--only", "fig14", "--out", str(tmp_path), "--quiet", "--jobs", "2", "--no-cache"]) == 0
    assert (tmp_path / "fig14.png").stat().st_size > 10_000
    md = (tmp_path / "paper.md").read_text()
    assert "![fig14](fig14.png)" in md and "### fig14:" in md and "**The paper:**" in md
    assert "scenarios/paper/fig14.yaml" in md and "Where the model differs" in md
    assert "Not run this time: " in md and "fig09a" in md.split("Not run this time: ")[1]
    numbers = json.loads((tmp_path / "numbers.json").read_text())
    assert set(numbers) == {"fig14"} and numbers["fig14"]["mrc"]["delivered_once"] is True
    out = capsys.readouterr().out
    assert "[1/1] fig14" in out and "of the paper's claims reproduced" in out
    runs = sorted(p.name for p in (tmp_path / "runs" / "fig14").iterdir())  # every run kept, timeline and all
    assert runs == ["1", "summary.csv"]
    timeline = (tmp_path / "runs/fig14/1/timeline.csv").read_text()
    # 10 µs bins until each transport's last message, both transports (MRC's ends at 489.999 µs)
    assert timeline.count("\nmrc,") >= 49 and timeline.count("\nmrc-skip,") >= 49


def test_an_unknown_experiment_is_an_error_naming_it(capsys):
    assert main(["--only", "fig19"]) == 2
    assert "unknown fig19" in capsys.readouterr().err
def _claim(cid: str, exp: str, **kw):
    from mrc_paper.claims import EV_STATE_OFF, Claim
    return Claim(cid, exp, "Fig. X", f"statement {cid}", "q", "tol", "mech", **(kw or {"ablation": EV_STATE_OFF}))


def test_the_headline_counts_every_claim_a_contradiction_and_a_missing_result_as_not_reproduced():
    from mrc_paper import gallery
    from mrc_paper.experiments import Finding
    claims = {c.id: c for c in (_claim("a.ok", "a"), _claim("a.bad", "a"), _claim("a.far", "a"),
                                _claim("a.lost", "a", indistinct="why"), _claim("b.x", "b"))}
    f = Finding("a")
    f.hold("a.ok", "1.00", True, "unused cause")
    f.hold("a.bad", "0.50", False, "measured cause")
    f.untested("a.far", "sizes beyond the budget")
    res = gallery.results(claims, {"a": f})
    assert res["b.x"] is None and not res["a.lost"].ok and "no result" in res["a.lost"].cause
    assert res["a.ok"].cause == ""  # a cause only beside a ✗
    assert str(gallery.tally(res)) == ("1 of 4 of the paper's claims reproduced (2 contradicted, 1 not tested at this "
                                       "scale; 1 more not run this time (`--only`)).")
    rows = gallery.claims_table([claims[k] for k in ("a.ok", "a.bad", "a.far")], res)
    assert rows[2].endswith("| 1.00 | ✓ | quick | - |") and rows[3].endswith("| 0.50 | ✗ | quick | measured cause |")
    assert rows[4].endswith("| not run | ✗ (not tested) | quick | sizes beyond the budget |")


def test_a_claim_gives_an_ablation_or_why_none_tells_it_apart():
    import pytest
    with pytest.raises(ValueError, match="a.b: give an ablation or say why"):
        _claim("a.b", "a", indistinct="")


def test_a_seeded_claim_is_held_over_every_seed_with_its_spread_and_fails_if_one_seed_fails():
    from types import SimpleNamespace

    from mrc_paper import gallery
    from mrc_paper.__main__ import measure
    from mrc_paper.experiments import Experiment, Finding, Runs

    def kept(runs):  # the claim's number: the x=1 run's; the x=2 run is shared by every seed
        f = Finding("a")
        v = runs.results[(("x", 1),), "t"] * runs.results[(("x", 2),), "t"]
        f.hold("a.edge", f"{v:.2f}", v >= 0.9, "below 0.9", v)
        return f

    sc = SimpleNamespace(name="a")
    c = _claim("a.edge", "a", indistinct="why", seeded=3, seed_on={"x": [1]})
    exp = Experiment("a", "a", "t", "a.yaml", "p", kept)
    base = Runs(sc, {((("x", 1),), "t"): 0.95, ((("x", 2),), "t"): 1.0})  # type: ignore[arg-type]

    def jobs(*vals):
        return [(None, base, [])] + [((("a.edge",), k + 1), Runs(sc, {((("x", 1),), "t"): v}), [])  # type: ignore[arg-type]
                                     for k, v in enumerate(vals)]

    f = measure(exp, jobs(0.97, 0.93), {"a.edge": c})
    held = f.result("a.edge")
    assert "| tol, on each of 3 seeds |" in gallery.claims_table([c], gallery.results({"a.edge": c}, {"a": f}))[2]
    assert held.ok and "over 3 seeds: min 0.93, median 0.95, max 0.97; held on 3 of 3" in held.measured
    held = measure(exp, jobs(0.88, 0.97), {"a.edge": c}).result("a.edge")
    assert not held.ok and "min 0.88, median 0.95, max 0.97; held on 2 of 3" in held.measured
    assert held.cause == "holds on 2 of 3 seeds only; seed + 1: below 0.9"  # the first seed that fails
    # Over hash seeds: held when the paper's outcome is the majority's, every value shown.
    h = _claim("a.edge", "a", indistinct="why", seeded=3, seed_on={"x": [1]}, vary="ecmp_seed")
    held = measure(exp, jobs(0.88, 0.97), {"a.edge": h}).result("a.edge")
    assert held.ok and "over 3 hash seeds: min 0.88, median 0.95, max 0.97 (0.88 0.95 0.97); held on 2 of 3" \
        in held.measured
    assert "| tol, on most of 3 hash seeds |" in gallery.claims_table(
        [h], gallery.results({"a.edge": h}, {"a": measure(exp, jobs(0.88, 0.97), {"a.edge": h})}))[2]
    held = measure(exp, jobs(0.88, 0.87), {"a.edge": h}).result("a.edge")
    assert not held.ok and held.cause.startswith("holds on 1 of 3 hash seeds only: the paper's outcome is the "
                                                 "minority's; hash seed + 1: below 0.9")


def test_a_seeded_claim_names_the_runs_it_repeats():
    import pytest
    with pytest.raises(ValueError, match="seeded"):
        _claim("a.s", "a", indistinct="why", seeded=5)
    with pytest.raises(ValueError, match="seeded"):
        _claim("a.s", "a", indistinct="why", seeded=1, seed_on={"x": [1]})


def test_every_shipped_seeded_claim_re_runs_runs_of_its_experiment_with_other_seeds():
    from mrc_paper.__main__ import _planned
    from mrc_paper.registry import BY_KEY, CLAIMS
    seeded = [c for c in CLAIMS.values() if c.seeded]
    assert seeded, "fig17.roce_01 sits at its tolerance: it is held over seeds"
    for c in seeded:
        jobs = _planned([BY_KEY[c.experiment]])[c.experiment]
        base = {k for k, _ in jobs[0][2]}
        mine = [(label, getattr(rs.scenario, c.vary), todo) for label, rs, todo in jobs[1:]
                if label and c.id in label[0]]
        assert len(mine) == c.seeded - 1 and len({s for _, s, _ in mine} | {getattr(jobs[0][1].scenario, c.vary)}) \
            == c.seeded
        assert all(todo and {k for k, _ in todo} <= base for _, _, todo in mine)


def test_a_run_that_did_not_deliver_is_named_with_its_experiment():
    a, b = Finding("fig09c"), Finding("fig08")
    a.delivered("mrc", True)
    a.delivered("oblivious", False)
    b.delivered("mrc", True)
    assert undelivered({"fig09c": a, "fig08": b}) == [
        "not every message delivered exactly once: fig09c: oblivious (counted apart from the claims)"]
