"""Alternative scorers chapter: plan, table, ranks, verdict and command line, on hand-made results
(no training: the runs themselves are the ICL chapters' experiments, tested in test_icl.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ssa import scoring
from ssa_book.alternatives import comparison, cost, statement
from ssa_book.cli.regenerate import main
from ssa_book.icl.records import ICLRun
from ssa_book.verdicts.words import claim_word
from ssa_book.verdicts.claim import no_effect_pairs

# the fewest pairs that decide a prompt error, which flips from seed to seed (the "every" and "some" panels)
FLIP_PAIRS = no_effect_pairs(statement.claim("softmax", "every", "sigma_x"))

SIGMAS = [1, 2, 3]


def fake_run(task: str, errors, entropy=(0.9, 0.8, 0.7), *, seed: int = 0, scorer: str = "softmax") -> ICLRun:
    """The record of a cached-result-shaped dict: ``errors`` along sigma (normalised for linear:
    the zero predictor's error is 1), attention entropy along sigma (one layer, one head)."""
    baseline = {"zero": [1.0] * len(SIGMAS)} if task == "linear" else {"majority class": [0.125] * len(SIGMAS)}
    shift = {
        "sigmas": SIGMAS,
        "model": {"prompt_error": list(errors)},
        **{k: {"prompt_error": v} for k, v in baseline.items()},
    }
    concentration = {"sigmas": SIGMAS, "entropy": [[[e]] for e in entropy], "max_weight": [[[1 - e]] for e in entropy]}
    shifts = ("sigma_x", "sigma_ab") if task == "linear" else ("sigma_x",)
    result = {"shifts": {s: shift for s in shifts}, "concentration": {s: concentration for s in shifts}}
    return ICLRun.from_result(result, task=task, scorer=scorer, seed=seed)


def fake_runs(errors_by_scorer: dict, seeds: int = 3, noise: float = 0.01, tasks=("every", "some", "linear")) -> dict:
    """``{task: {scorer: [run per seed]}}``, each run with its ``seed``: the error curve along sigma
    (one for every task, or ``{task: curve}``) plus independent noise of standard deviation
    ``noise`` per scorer, seed and sigma (drawn from a fixed generator)."""
    generator = np.random.default_rng(12345)
    runs = {}
    for task in tasks:
        runs[task] = {}
        for scorer, errors in errors_by_scorer.items():
            curve = errors[task] if isinstance(errors, dict) else errors
            runs[task][scorer] = [
                fake_run(task, [e + noise * generator.standard_normal() for e in curve], seed=seed, scorer=scorer)
                for seed in range(seeds)
            ]
    return runs


def test_plan_keeps_each_task_scorer_group_together_and_follows_the_registry(monkeypatch):
    monkeypatch.setitem(scoring._REGISTRY, "test_new_scorer", scoring._REGISTRY["softmax"])
    runs = comparison.plan(seeds=(0, 1, 2))
    assert len(runs) == 3 * len(scoring.scorer_names()) * 3
    assert ("linear", "test_new_scorer", 2) in runs  # a newly registered scorer joins with no other change
    positions: dict = {}
    for index, (task, scorer, _) in enumerate(runs):
        positions.setdefault((task, scorer), []).append(index)
    assert all(found == list(range(found[0], found[0] + 3)) for found in positions.values())
    assert [seed for *_, seed in runs[:3]] == [0, 1, 2]


def test_seeds_per_profile():
    assert comparison.chapter_seeds("cpu") == (0, 1, 2)
    assert len(comparison.chapter_seeds("smoke", 5)) == comparison.SMOKE_SEEDS
    with pytest.raises(ValueError, match="profile"):
        comparison.chapter_seeds("laptop")


def test_table_and_ranks():
    runs = fake_runs({"softmax": [0.05, 0.3, 0.6], "sparsemax": [0.05, 0.1, 0.2]})
    errors = comparison.error_table(runs)
    assert set(errors["scorer"]) == {"softmax", "sparsemax"} and len(errors) == 4 * 3 * 2  # panels x sigmas x scorers
    assert (errors["low"] <= errors["mean"] + 1e-12).all() and (errors["mean"] <= errors["high"] + 1e-12).all()
    ranked = comparison.rank_table(errors)
    assert set(ranked[(ranked["sigma"] == 3) & (ranked["scorer"] == "sparsemax")]["rank"]) == {1.0}
    table = comparison.summary_table(
        errors,
        {
            "scorers": {
                "softmax": {"time_ratio": 1.0, "memory_ratio": 1.0},
                "sparsemax": {"time_ratio": 1.5, "memory_ratio": None},
            }
        },
    )
    assert list(table.index) == ["softmax", "sparsemax"]
    assert table.loc["sparsemax", ("cost", "peak memory / softmax")] == "n/a"


SOFTMAX = [0.05, 0.3, 0.6]
WORSE = [0.05, 0.5, 0.9]
BETTER = [0.05, 0.1, 0.2]


def test_runs_are_paired_by_their_seed_not_their_order():
    softmax = [fake_run("every", [0.05, 0.1 * seed, 0.1 * seed], seed=seed) for seed in (0, 1, 2, 3)]
    gain = {seed: 0.05 + 0.01 * seed for seed in (0, 1, 3, 7)}  # softmax's error minus the other's, seed by seed
    other = [
        fake_run("every", [0.05, 0.1 * seed - gain[seed], 0.1 * seed - gain[seed]], seed=seed) for seed in (3, 1, 0, 7)
    ]
    seeds, error, reference = statement.paired(other, softmax, "every", "sigma_x")
    assert seeds == (0, 1, 3)  # seed 2 and seed 7 have no pair
    assert reference - error == pytest.approx([0.05, 0.06, 0.08])  # the same seed on both sides, whatever the order
    rows = statement.versus_softmax({"every": {"softmax": softmax, "sparsemax": other}})
    assert rows.loc[0, "seeds"] == (0, 1, 3) and rows.loc[0, "differences"] == pytest.approx((0.05, 0.06, 0.08))
    with pytest.raises(ValueError, match="a seed appears twice"):
        statement.paired([fake_run("every", SOFTMAX), fake_run("every", SOFTMAX)], softmax, "every", "sigma_x")


def test_loaders_give_each_run_its_seed(monkeypatch):
    from ssa_book.icl import experiments

    monkeypatch.setattr(
        experiments,
        "load_runs",
        lambda task, profile, scorers, seeds, device="auto": {
            scorer: [fake_run(task, SOFTMAX, seed=seed, scorer=scorer) for seed in seeds] for scorer in scorers
        },
    )
    runs = comparison.load_runs("cpu", scorers=("softmax", "sparsemax"), seeds=(4, 5, 6), tasks=("every",))
    assert [run.seed for run in runs["every"]["sparsemax"]] == [4, 5, 6]


def test_each_comparison_is_judged_by_the_books_rule_with_the_declared_threshold():
    runs = fake_runs(
        {"softmax": SOFTMAX, "sparsemax": SOFTMAX, "cosformer": WORSE, "entmax15": BETTER}, seeds=FLIP_PAIRS
    )
    rows = statement.versus_softmax(runs)
    assert len(rows) == 3 * 4  # scorers x panels
    outcome = rows.groupby("scorer")["outcome"].agg(set)
    assert outcome["sparsemax"] == {"no difference that matters"}
    assert outcome["cosformer"] == {"worse"} and outcome["entmax15"] == {"better"}
    verdict = rows.loc[0, "verdict"]
    assert verdict.threshold == statement.THRESHOLD == 0.1 and verdict.pairs == FLIP_PAIRS
    assert "declared" in statement.THRESHOLD_REASON
    better = rows[rows["scorer"] == "entmax15"].iloc[0]
    assert better["effect"] > 0 and better["effect"] == pytest.approx(
        better["softmax"] - better["error"]
    )  # > 0: scorer better
    counts = statement.outcome_counts(rows)
    assert counts.loc["1.5-entmax", "scorer better than softmax"] == 4
    assert list(counts.columns) == [
        "scorer better than softmax",
        "scorer worse than softmax",
        "no difference that matters",
    ]


def test_statement_holds_when_no_alternative_is_better_on_any_panel():
    runs = fake_runs({"softmax": SOFTMAX, "sparsemax": SOFTMAX, "cosformer": WORSE, "ssa": BETTER}, seeds=FLIP_PAIRS)
    verdict = statement.statement_verdict(runs)
    assert (
        verdict.claim
        == statement.STATEMENT
        == "None of the alternatives the paper tried is consistently better than softmax"
    )
    assert verdict.outcome == "better"  # SSA is better, but the paper did not try it as an alternative
    assert "2 of the 6 alternatives" in verdict.detail and "no results yet for" in verdict.detail
    assert "Power:" in verdict.detail and "with 10" in verdict.detail and "with 20" in verdict.detail
    assert dict(verdict.parts)["cosFormer"].outcome == "better"
    assert verdict.sentence() == f"{statement.STATEMENT}: the claim holds (holds on 2 of 2)."
    # each alternative's own claim is stated in its panels' direction and tallied as every claim of the book
    assert statement.scorer_verdict(statement.versus_softmax(runs), "cosformer").words() == "cosFormer worse"
    assert "sparsemax, does not hold (no difference that matters on 4 of 4)" in verdict.detail
    assert "So the statement holds (holds for 2 of the 2 alternatives)" in verdict.detail


def test_statement_does_not_hold_when_every_alternative_is_better_on_every_panel():
    runs = fake_runs({"softmax": SOFTMAX, "entmax15": BETTER}, seeds=FLIP_PAIRS)
    verdict = statement.statement_verdict(runs)
    assert verdict.outcome == "worse" and "1.5-entmax, holds (1.5-entmax better on 4 of 4)" in verdict.detail
    assert dict(verdict.parts)["1.5-entmax"].outcome == "worse"
    assert "the claim does not hold" in verdict.sentence()
    assert {part.words() for _, part in dict(verdict.parts)["1.5-entmax"].parts} == {"1.5-entmax better"}
    assert statement.scorer_verdict(statement.versus_softmax(runs), "entmax15").words() == "1.5-entmax better"


def test_statement_is_mixed_when_one_alternative_is_consistently_better_and_another_decided_not():
    # one tally for every claim of several parts: parts decided both ways read "mixed", the parts counted
    runs = fake_runs({"softmax": SOFTMAX, "sparsemax": SOFTMAX, "entmax15": BETTER}, seeds=FLIP_PAIRS)
    verdict = statement.statement_verdict(runs)
    assert verdict.outcome == "mixed" and verdict.words() == "mixed (holds on 1 of 2, does not hold on 1)"
    assert "So the statement is mixed (holds for 1 of the 2 alternatives, does not hold for 1)" in verdict.detail


def test_statement_holds_when_an_alternative_is_better_on_some_panels_and_decided_not_on_others():
    runs = fake_runs(
        {"softmax": SOFTMAX, "entmax15": {"every": BETTER, "some": SOFTMAX, "linear": SOFTMAX}}, seeds=FLIP_PAIRS
    )
    rows = statement.versus_softmax(runs)
    claim = statement.scorer_verdict(rows, "entmax15")
    assert claim.outcome == "mixed" and statement.scorer_words(claim) == (
        "mixed (no difference that matters on 3 of 4, 1.5-entmax better on 1)"
    )
    verdict = statement.judge_statement(rows)  # better on one panel of four is not consistently better
    assert verdict.outcome == "better" and "better than softmax on some panels: 1.5-entmax (1 of 4)" in verdict.detail


def test_statement_holds_in_part_while_an_alternative_better_somewhere_has_open_panels():
    runs = fake_runs({"softmax": SOFTMAX, "sparsemax": SOFTMAX, "entmax15": BETTER}, seeds=FLIP_PAIRS)
    rows = statement.versus_softmax(runs)
    open_panels = (rows["scorer"] == "entmax15") & (rows["task"] != "every")
    rows.loc[open_panels, "verdict"] = [
        dataclasses.replace(v, outcome="undecided") for v in rows.loc[open_panels, "verdict"]
    ]
    rows.loc[open_panels, "outcome"] = "undecided"
    assert statement.scorer_verdict(rows, "entmax15").outcome == "holds in part"
    verdict = statement.judge_statement(rows)
    assert (
        verdict.outcome == "holds in part" and "(holds for 1 of the 2 alternatives, undecided for 1)" in verdict.detail
    )


def test_scorer_evidence_names_each_panel_its_word_and_units_beside_its_number():
    rows = statement.versus_softmax(fake_runs({"softmax": SOFTMAX, "sparsemax": SOFTMAX}, seeds=3))
    text = statement.scorer_evidence(statement.scorer_verdict(rows, "sparsemax"))
    assert text.startswith("sparsemax is better than softmax on every panel: undecided (exploratory on 4 of 4): ")
    assert text.count("exploratory (3 pairs), ") == 4 and "prompt error" in text and "normalised squared error" in text


def test_statement_undecided_with_the_caches_three_seeds_and_says_what_would_decide_it():
    runs = fake_runs({"softmax": SOFTMAX, "sparsemax": SOFTMAX, "entmax15": BETTER}, seeds=3)
    rows = statement.versus_softmax(runs)
    assert set(rows["outcome"]) == {"exploratory"}  # fewer than 6 pairs decide nothing, even a large effect
    assert (rows["seeds_to_resolve"] >= 6).all()
    verdict = statement.judge_statement(rows)
    assert verdict.outcome == "exploratory" and verdict.seeds_to_resolve >= 6
    assert claim_word(verdict.outcome) == "undecided"
    assert (
        "8 comparisons are still open (undecided or exploratory)" in verdict.detail
        and "paired seeds would decide" in verdict.detail
    )
    assert "0% of experiments with 3 seeds" in verdict.detail  # the rule cannot find anything with 3 seeds
    table = statement.verdict_table(rows)
    assert {"outcome", "effect", "95% interval", "pairs", "seed 0", "seed 1", "seed 2"} <= set(table.columns)


def test_statement_with_one_seed_states_that_no_spread_is_known():
    rows = statement.versus_softmax(fake_runs({"softmax": SOFTMAX, "sparsemax": SOFTMAX}, seeds=1))
    verdict = statement.judge_statement(rows)
    assert claim_word(verdict.outcome) == "undecided" and "have one seed" in verdict.detail
    assert "cannot be estimated" in verdict.detail and statement.power_table(statement.observed_spread(rows)) is None
    assert set(statement.verdict_table(rows)["seeds to decide"]) == {"≥ 6"}


def test_power_table_from_the_books_rule():
    table = statement.power_table(0.05, pairs=(3, 10), effects=(0.3,))
    assert table.loc[3].iloc[0] == 0.0 and table.loc[10].iloc[0] > 0.95


def test_statement_not_tested_or_not_learned():
    assert statement.statement_verdict({}).outcome == "not tested"
    only_ssa = fake_runs({"softmax": SOFTMAX, "ssa": BETTER})
    assert statement.statement_verdict(only_ssa).outcome == "not tested"
    unlearned = fake_runs({"softmax": [0.9, 0.9, 0.9], "entmax15": BETTER}, seeds=6)
    verdict = statement.statement_verdict(unlearned)
    assert (
        verdict.outcome == "not learned" and "softmax did not learn the task ('every' in distribution" in verdict.detail
    )
    assert "'linear'" in verdict.detail  # every task's measurement, once each
    assert "no comparison tests anything" in statement.power_sentence(statement.versus_softmax(unlearned))
    assert "not learned" in verdict.sentence()
    # a scorer whose panels all test nothing reads as they do (never an error)
    table = statement.versus_softmax(unlearned)
    assert statement.scorer_verdict(table, "entmax15").outcome == "not learned"
    table["outcome"] = "not tested"
    table["verdict"] = [verdict.__class__(v.claim, "not tested") for v in table["verdict"]]
    assert statement.scorer_verdict(table, "entmax15").outcome == "not tested"


def test_mechanism_correlation_sees_entropy_drop_matching_error_growth():
    runs = {
        "every": {
            scorer: [
                fake_run(
                    "every", [0.05, 0.05 + growth / 2, 0.05 + growth], entropy=(0.9, 0.9 - growth / 2, 0.9 - growth)
                )
            ]
            for scorer, growth in (("softmax", 0.6), ("ssa", 0.1), ("sparsemax", 0.3))
        }
    }
    mechanism = comparison.mechanism_table(runs)
    assert comparison.mechanism_correlation(mechanism)[("every", "sigma_x")] == pytest.approx(1.0)
    two_scorers = comparison.mechanism_table({"every": {s: runs["every"][s] for s in ("softmax", "ssa")}})
    assert comparison.mechanism_correlation(two_scorers) == {}  # two points always correlate +-1: left out


def test_cost_needs_softmax_as_reference():
    with pytest.raises(ValueError, match="softmax"):
        cost.cost_benchmark(cost.cost_config("smoke", "cpu", scorers=("ssa",)))


def test_command_line_plan_and_bad_input(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SSA_RESULTS_DIR", str(tmp_path))
    # The chapter's runs through the book's one regenerate command: every task, plus the cost.
    assert main(["alternative_scorers", "--profile", "smoke", "--scorers", "sparsemax", "sigmoid", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{1 + 3 * 2 * comparison.SMOKE_SEEDS} runs at profile smoke: 0 cached" in out
    assert "to compute  cost of every scorer, the in-context model" in out and "every / sigmoid / seed 0" in out
    with pytest.raises(SystemExit):
        main(["alternative_scorers", "--scorers", "softermax", "--dry-run"])
    assert "argument --scorers: unknown scorer 'softermax'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["alternative_scorers", "--jobs", "0", "--dry-run"])
    assert "argument --jobs" in capsys.readouterr().err
    assert comparison.regenerate_command("cpu", ["cosformer"], [5]) == (
        "python -m ssa_book regenerate alternative_scorers --profile cpu --jobs 2 --seeds 5"
    )  # every scorer is the chapter's


def test_chapter_shows_the_cache_as_it_is_in_book_builds_and_trains_otherwise(monkeypatch):
    """Book builds (the cache required) show what is cached and count what is missing; a run of
    the chapter without that trains every planned run."""
    partial = {"every": fake_runs({"softmax": [0.1] * len(SIGMAS), "sparsemax": [0.2] * len(SIGMAS)})}
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


def test_the_cost_takes_every_scorer_through_one_path_on_each_benchmarks_own_model(monkeypatch):
    import torch

    import ssa.kernels

    def fused(*arguments, **keywords):
        raise AssertionError("a fused attention path ran during a like-for-like cost measurement")

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", fused)
    monkeypatch.setattr(ssa.kernels, "fast_ssa_attention", fused)
    for model in cost.COST_MODELS:
        config = dataclasses.replace(
            cost.cost_config("smoke", "cpu", scorers=("softmax", "ssa"), model=model), min_run_time=0.01
        )
        found = cost.cost_benchmark(config)
        assert found["model"] == model and found["path"] == "reference"
        assert found["scorers"]["softmax"]["time_ratio"] == 1.0 and found["scorers"]["ssa"]["time_ratio"] > 0
    with pytest.raises(ValueError, match="model must be one of"):
        cost.cost_config("smoke", "cpu", model="decoder")
