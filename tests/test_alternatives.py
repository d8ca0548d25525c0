"""Alternative scorers chapter: plan, table, ranks, verdict and command line, on hand-made results
(no training: the runs themselves are the ICL chapters' experiments, tested in test_icl.py)."""

from __future__ import annotations

import pytest

from ssa import alternatives, scoring
from ssa.alternatives import comparison
from ssa.alternatives.__main__ import main

SIGMAS = [1, 2, 3]


def fake_run(task: str, errors, entropy=(0.9, 0.8, 0.7)) -> dict:
    """A cached-result-shaped dict: ``errors`` along sigma (normalised for linear: the zero
    predictor's error is 1), attention entropy along sigma (one layer, one head)."""
    baseline = {"zero": [1.0] * len(SIGMAS)} if task == "linear" else {"majority class": [0.125] * len(SIGMAS)}
    shift = {"sigmas": SIGMAS, "model": {"prompt_error": list(errors)}, **{k: {"prompt_error": v} for k, v in baseline.items()}}
    concentration = {"sigmas": SIGMAS, "entropy": [[[e]] for e in entropy], "max_weight": [[[1 - e]] for e in entropy]}
    shifts = ("sigma_x", "sigma_ab") if task == "linear" else ("sigma_x",)
    return {"shifts": {s: shift for s in shifts}, "concentration": {s: concentration for s in shifts}}


def fake_runs(errors_by_scorer: dict, seeds: int = 3, jitter: float = 0.01) -> dict:
    """``{task: {scorer: [run per seed]}}`` with the same error curve on every task, seeds jittered."""
    return {task: {scorer: [fake_run(task, [e + jitter * seed for e in errors]) for seed in range(seeds)]
                   for scorer, errors in errors_by_scorer.items()} for task in ("every", "some", "linear")}


def test_plan_keeps_each_task_scorer_group_together_and_follows_the_registry(monkeypatch):
    monkeypatch.setitem(scoring._REGISTRY, "test_new_scorer", scoring._REGISTRY["softmax"])
    runs = alternatives.plan(seeds=(0, 1, 2))
    assert len(runs) == 3 * len(scoring.scorer_names()) * 3
    assert ("linear", "test_new_scorer", 2) in runs  # a newly registered scorer joins with no other change
    positions: dict = {}
    for index, (task, scorer, _) in enumerate(runs):
        positions.setdefault((task, scorer), []).append(index)
    assert all(found == list(range(found[0], found[0] + 3)) for found in positions.values())
    assert [seed for *_, seed in runs[:3]] == [0, 1, 2]


def test_seeds_per_profile():
    assert alternatives.chapter_seeds("cpu") == (0, 1, 2)
    assert len(alternatives.chapter_seeds("smoke", 5)) == comparison.SMOKE_SEEDS
    with pytest.raises(ValueError, match="profile"):
        alternatives.chapter_seeds("laptop")


def test_table_and_ranks():
    runs = fake_runs({"softmax": [0.05, 0.3, 0.6], "sparsemax": [0.05, 0.1, 0.2]})
    errors = alternatives.error_table(runs)
    assert set(errors["scorer"]) == {"softmax", "sparsemax"} and len(errors) == 4 * 3 * 2  # panels x sigmas x scorers
    assert (errors["low"] <= errors["mean"] + 1e-12).all() and (errors["mean"] <= errors["high"] + 1e-12).all()
    ranked = alternatives.rank_table(errors)
    assert set(ranked[(ranked["sigma"] == 3) & (ranked["scorer"] == "sparsemax")]["rank"]) == {1.0}
    table = alternatives.summary_table(errors, {"scorers": {"softmax": {"time_ratio": 1.0, "memory_ratio": 1.0},
                                                            "sparsemax": {"time_ratio": 1.5, "memory_ratio": None}}})
    assert list(table.index) == ["softmax", "sparsemax"]
    assert table.loc["sparsemax", ("cost", "peak memory / softmax")] == "n/a"


def test_verdict_follows_the_paper_when_no_alternative_wins_everywhere():
    runs = fake_runs({"softmax": [0.05, 0.3, 0.6], "sparsemax": [0.05, 0.31, 0.6], "cosformer": [0.05, 0.5, 0.9]})
    comparison_rows = alternatives.versus_softmax(runs)
    assert set(comparison_rows[comparison_rows["scorer"] == "cosformer"]["outcome"]) == {"worse"}
    assert set(comparison_rows[comparison_rows["scorer"] == "sparsemax"]["outcome"]) == {"no clear difference"}
    verdict = alternatives.paper_verdict(comparison_rows)
    assert verdict["verdict"] == "reproduced" and verdict["consistently_better"] == [] and verdict["panels"] == 4


def test_verdict_contradicts_the_paper_when_an_alternative_wins_everywhere():
    runs = fake_runs({"softmax": [0.05, 0.3, 0.6], "entmax15": [0.05, 0.1, 0.2]})
    verdict = alternatives.paper_verdict(alternatives.versus_softmax(runs))
    assert verdict["verdict"] == "not reproduced at this scale" and verdict["consistently_better"] == ["entmax15"]
    assert "1.5-entmax" in verdict["evidence"]


def test_verdict_not_tested_without_learning_or_results():
    unlearned = fake_runs({"softmax": [0.9, 0.9, 0.9], "entmax15": [0.05, 0.1, 0.2]})
    assert alternatives.paper_verdict(alternatives.versus_softmax(unlearned))["verdict"] == "not tested"
    only_ssa = fake_runs({"softmax": [0.05, 0.3, 0.6], "ssa": [0.05, 0.1, 0.2]})
    assert alternatives.paper_verdict(alternatives.versus_softmax(only_ssa))["verdict"] == "not tested"


def test_mechanism_correlation_sees_entropy_drop_matching_error_growth():
    runs = {"every": {
        scorer: [fake_run("every", [0.05, 0.05 + growth / 2, 0.05 + growth], entropy=(0.9, 0.9 - growth / 2, 0.9 - growth))]
        for scorer, growth in (("softmax", 0.6), ("ssa", 0.1), ("sparsemax", 0.3))}}
    mechanism = alternatives.mechanism_table(runs)
    assert comparison.mechanism_correlation(mechanism)[("every", "sigma_x")] == pytest.approx(1.0)
    two_scorers = alternatives.mechanism_table({"every": {s: runs["every"][s] for s in ("softmax", "ssa")}})
    assert comparison.mechanism_correlation(two_scorers) == {}  # two points always correlate +-1: left out


def test_cost_needs_softmax_as_reference():
    with pytest.raises(ValueError, match="softmax"):
        comparison.cost_benchmark(comparison.cost_config("smoke", "cpu", scorers=("ssa",)))


def test_command_line_plan_and_bad_input(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SSA_RESULTS_DIR", str(tmp_path))
    assert main(["regenerate", "--profile", "smoke", "--task", "every", "--scorer", "sparsemax", "sigmoid", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{2 * comparison.SMOKE_SEEDS} runs planned" in out and "to run" in out
    assert "python -m ssa.icl regenerate --profile smoke" in out  # softmax/SSA are the ICL chapters' to make
    with pytest.raises(SystemExit):
        main(["regenerate", "--scorer", "softermax", "--dry-run"])
    with pytest.raises(SystemExit):
        main(["regenerate", "--jobs", "0", "--dry-run"])
    assert alternatives.regenerate_command("cpu", ["linear"], ["cosformer"], [1]) == (
        "python -m ssa.alternatives regenerate --profile cpu --jobs 2 --task linear --scorer cosformer --seeds 1")


@pytest.mark.parametrize("cached, verdict", [(63, "reproduced"), (15, "partly"), (0, "not tested")])
def test_ledger_row_uses_the_chapter_verdict_and_says_what_is_missing(monkeypatch, cached, verdict):
    """The front page's row is the chapter's own verdict on whatever is cached; while runs are
    missing, "no alternative wins" is only partly established and the row gives the command."""
    from ssa import ledger

    runs = fake_runs({"softmax": [0.05, 0.3, 0.6], "sparsemax": [0.05, 0.31, 0.6]}) if cached else {}
    monkeypatch.setattr(comparison, "cached_runs", lambda profile, scorers: (runs, cached, 63))
    monkeypatch.setattr(comparison, "load_provenance", lambda profile, scorers, tasks: {})
    row = ledger._alternatives_row("cpu")
    assert row.verdict == verdict
    assert ("python -m ssa.alternatives regenerate" in row.ours) == (cached < 63)
    if cached:
        assert "sparsemax" in row.ours.lower()


def test_chapter_shows_the_cache_as_it_is_in_book_builds_and_trains_otherwise(monkeypatch):
    """Book builds (the cache required) show what is cached and count what is missing; a run of
    the chapter without that trains every planned run."""
    partial = {"every": fake_runs({"softmax": [0.1] * 5, "sparsemax": [0.2] * 5})}
    complete = {task: partial["every"] for task in ("every", "some", "linear")}
    monkeypatch.setattr(comparison, "cached_runs", lambda profile, seeds: (partial, 6, 90))
    monkeypatch.setattr(comparison, "load_runs", lambda profile, seeds, device: complete)
    monkeypatch.setenv("SSA_REQUIRE_CACHE", "1")
    assert comparison.chapter_runs("cpu") == (partial, 6, 90)
    monkeypatch.setenv("SSA_REQUIRE_CACHE", "0")
    assert comparison.chapter_runs("cpu") == (complete, 18, 18)


def test_coverage_says_how_much_is_missing():
    assert comparison.coverage(90, 90) == {"complete": True, "sentence": "All 90 planned runs are in the cache."}
    partial = comparison.coverage(37, 90)
    assert not partial["complete"]
    assert "37 of the 90" in partial["sentence"] and "provisional" in partial["sentence"]
    assert "`" not in partial["sentence"]  # glued as plain text
