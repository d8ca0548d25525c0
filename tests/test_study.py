"""The powered in-context study's plan (ssa_book.icl.study): declared, checked and judged before any run."""

import dataclasses

import numpy as np
import pytest

from ssa_book.verdicts.words import (
    BETTER,
    HOLDS_IN_PART,
    NEGLIGIBLE,
    NOT_TESTED,
    PREMISE_NOT_SHOWN,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
)
from ssa_book.verdicts.claim import MIN_PAIRS, no_effect_pairs
from ssa_book.verdicts.verdict import Verdict, withheld_direction
from ssa_book.verdicts.judge import judge
from ssa_book.verdicts.families import false_discoveries
from ssa_book.verdicts.power import FALSE_DIRECTIONAL, resampled_null_rates
from ssa_book.icl.study import (
    conduct as study_conduct,
    curves as study_curves,
    design as study_design,
    judging as study_judging,
    power as study_power,
    regimes as study_regimes,
    report as study_report,
)
from ssa_book.icl.records import ICLRun
from ssa_book.icl.train import SCHEDULES, _parameter_groups, build_model
from ssa_book.icl.tasks import QUANTIFIERS, get_task
from synthetic_runs import provenance_with


def test_the_plan_is_consistent_and_puts_the_primary_question_first():
    study_design.check_plan()
    runs = study_design.runs()
    assert len(runs) == len(set(runs))
    primary = study_design.COMPARISONS[0]
    assert primary.primary and primary.treatment == "ssa" and primary.control == "softmax"
    first = runs[: 2 * primary.seeds * len(primary.tasks)]
    assert {arm for arm, _, _ in first} == {"ssa", "softmax"} and {task for _, task, _ in first} == set(primary.tasks)
    assert min(seed for _, _, seed in runs) == study_design.FIRST_SEED  # the pilot seeds 0-2 are not part of it
    assert all(comparison.seeds >= study_design.ABLATION_SEEDS for comparison in study_design.COMPARISONS)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"treatment": "ssa_turbo"}, "treatment arm 'ssa_turbo' is not one of"),
        ({"endpoints": ("error at sigma 99",)}, "endpoint 'error at sigma 99' is not one of"),
        ({"tasks": ("linear",)}, "endpoint 'error at σ = 10' is not measured on linear"),
        ({"seeds": 5}, "5 seeds, fewer than the plan's 10"),
    ],
)
def test_a_plan_that_cannot_be_carried_out_is_refused_by_name(change, message):
    broken = dataclasses.replace(study_design.COMPARISONS[2], **change)
    with pytest.raises(ValueError, match=message):
        study_design.check_plan([broken])


@pytest.mark.parametrize("profile", ["smoke", "cpu"])
def test_every_arm_builds_a_valid_model_on_its_tasks(profile):
    for comparison in study_design.COMPARISONS:
        for arm_name in (comparison.treatment, comparison.control):
            arm = study_design.ARMS[arm_name]
            for task in comparison.tasks:
                experiment = arm.experiment(task, study_design.FIRST_SEED, profile)
                assert experiment.eval.per_position is False and experiment.eval.attention_map is False
                assert experiment.train.seed == study_design.FIRST_SEED
    # The settings reach the model and its optimizer.
    frozen = study_design.ARMS["ssa_frozen"].experiment("every", 100, "smoke").train
    assert not any(
        parameter.requires_grad for name, parameter in build_model(frozen).named_parameters() if ".scorer." in name
    )
    fast = study_design.ARMS["ssa_lr10"].experiment("every", 100, "smoke").train
    assert _parameter_groups(build_model(fast), fast)[1]["lr_scale"] == 10.0
    wide = study_design.ARMS["softmax_wide"].experiment("every", 100, "cpu").train.model
    assert wide.n_embd == 2 * study_design.ARMS["softmax"].experiment("every", 100, "cpu").train.model.n_embd
    assert study_design.ARMS["ssa_10k"].experiment("every", 100, "cpu").train.train_steps == 10 * 1000
    slope = dict(study_design.ARMS["softmax_slope"].experiment("every", 100, "cpu").train.model.scorer_kwargs)
    assert 1 / slope["temperature"] == pytest.approx(study_design.SSA_SLOPE_AT_ZERO)


def _run(errors_at_sigmas, task="every"):
    sigmas = list(range(1, 30))
    return ICLRun.from_result(
        {"shifts": {"sigma_x": {"sigmas": sigmas, "model": {"prompt_error": errors_at_sigmas}}}},
        task=task,
        scorer="softmax",
        seed=0,
    )


def test_endpoints_read_the_declared_numbers():
    run = _run([0.0] + [0.05] * 8 + [0.3] + [0.6] * 19)  # sigma 10 is the 10th
    assert study_design.ENDPOINTS["error at σ = 10"].measure(run, "every") == 0.3
    assert study_design.ENDPOINTS["mean error, σ = 2-29"].measure(run, "every") == pytest.approx(
        (8 * 0.05 + 0.3 + 19 * 0.6) / 28
    )
    assert study_design.ENDPOINTS["generalises at σ = 10"].measure(run, "every") == 0.0
    linear = ICLRun.from_result(
        {
            "shifts": {
                "sigma_ab": {
                    "sigmas": [1, 2, 3],
                    "model": {"prompt_error": [1.0, 2.0, 6.0]},
                    "zero": {"prompt_error": [10.0, 10.0, 20.0]},
                }
            }
        },
        task="linear",
        scorer="softmax",
        seed=0,
    )
    assert study_design.ENDPOINTS["normalised error, larger functions"].measure(linear, "linear") == pytest.approx(
        (0.2 + 0.3) / 2
    )


def test_a_comparison_with_missing_seeds_is_an_error_and_a_complete_one_is_judged():
    compared = study_conduct.comparison("SSA from b = 1 vs softmax")

    def load(arm, task, seed):
        error = 0.0 if arm == "ssa_b1" else 0.5 + 0.01 * (seed % 3)
        return _run([error] * 29)

    verdict = study_design.judge(compared, "every", "error at σ = 10", load)
    assert verdict.outcome == BETTER and verdict.pairs == compared.seeds
    with pytest.raises(
        study_design.IncompleteStudyError, match=f"1 of {2 * compared.seeds} runs on some are not cached"
    ):
        study_design.outcomes(
            compared,
            "some",
            "error at σ = 10",
            lambda arm, task, seed: None if seed == 105 and arm == "softmax" else load(arm, task, seed),
        )
    with pytest.raises(ValueError, match="task 'linear' is not one of"):
        study_design.outcomes(compared, "linear", "error at σ = 10", load)
    with pytest.raises(ValueError, match="comparison must be one of"):
        study_conduct.comparison("SSA vs nothing")


def test_the_budget_counts_each_run_once_at_its_cost():
    table = study_report.budget(seconds_per_run={"every": 100.0, "some": 100.0, "linear": 150.0})
    assert table.loc["all", "new runs"] == len(study_design.runs())
    assert table.loc["SSA vs softmax, 10 x steps", "cost (chapter runs)"] == 10 * 2 * study_design.ABLATION_SEEDS
    assert table.loc["all", "core-hours"] > 0


def test_the_measured_cost_sums_each_cached_run_once():
    import dataclasses

    primary, sharing = study_conduct.comparison("SSA vs softmax"), study_conduct.comparison("SSA from b = 1 vs softmax")

    class Timed(_Cache):
        def run(self, arm, task, seed):
            found = super().run(arm, task, seed)
            return None if found is None else dataclasses.replace(found, provenance=provenance_with(wall_time_s=360.0))

    cache = Timed(lambda arm, task, seed: None if arm == "ssa_b1" and seed % 2 else 0.0)
    table = study_report.budget([primary, sharing], cache=cache)
    assert table.loc[primary.name, "hours on one thread"] == pytest.approx(0.1 * table.loc[primary.name, "new runs"])
    # SSA from b = 1 shares its softmax runs with the primary comparison: only its own cached runs count
    assert table.loc[sharing.name, "new runs"] == len(sharing.tasks) * sharing.seeds
    assert table.loc[sharing.name, "hours on one thread"] == pytest.approx(0.1 * len(sharing.tasks) * sharing.seeds / 2)
    progress = study_report.progress_table([primary, sharing], cache)
    assert (
        progress.loc[sharing.name, "runs of its own"] == len(sharing.tasks) * sharing.seeds
        and not progress.loc[sharing.name, "complete"]
    )
    assert progress["hours on one thread"].sum() == pytest.approx(table.loc["all", "hours on one thread"])


def test_pilot_power_grows_with_pairs():
    power = study_power.pilot_power([0.8, 0.0, 0.1, 0.5], effect=0.3, pairs=(6, 40), threshold=0.1)
    assert power[6] < power[40]
    with pytest.raises(ValueError, match="differences"):
        study_power.pilot_power([0.2, 0.2], effect=0.3, pairs=(6,), threshold=0.1)


class _Cache(study_conduct.StudyCache):
    """A study cache whose runs are made up: ``errors(arm, task, seed)`` is the prompt error at
    every sigma, ``None`` for a run not cached."""

    def __init__(self, errors, profile="cpu", train=None):
        super().__init__(profile, train=train)
        self.errors = errors

    def run(self, arm, task, seed):
        error = None if task == "linear" else self.errors(arm, task, seed)  # the made-up sweeps are quantifiers'
        return None if error is None else _run([error] * 29, task)

    __call__ = run


def test_the_chapter_judges_complete_comparisons_only_and_says_what_is_missing():
    primary, ablation = (
        study_conduct.comparison("SSA vs softmax"),
        study_conduct.comparison("SSA from b = 1 vs softmax"),
    )

    def errors(arm, task, seed):
        if arm == "ssa" and seed >= study_design.FIRST_SEED + 5:
            return None  # the primary comparison is incomplete
        return 0.0 if arm in ("ssa_b1", "ssa") else (0.05 if seed % 2 else 0.9)

    cache = _Cache(errors)
    progress = study_report.progress_table([primary, ablation], cache)
    assert (
        progress.loc["SSA vs softmax", "cached"] == 2 * 2 * 40 - 2 * 35
        and not progress.loc["SSA vs softmax", "complete"]
    )
    assert progress.loc["SSA from b = 1 vs softmax", "complete"]
    rows = study_judging.verdict_rows([primary, ablation], cache)
    assert len(rows) == 2 * 2 * 3
    missing = [row for row in rows if row["comparison"] == "SSA vs softmax"]
    assert {row["verdict"].outcome for row in missing} == {
        "not tested"
    } and "not run yet: 45 of 80 runs done" == missing[0]["verdict"].detail
    judged = {
        (row["task"], row["endpoint"]): row["verdict"]
        for row in rows
        if row["comparison"] == "SSA from b = 1 vs softmax"
    }
    assert judged[("every", "generalises at σ = 10")].differences == pytest.approx(
        [1.0, 0.0] * (ablation.seeds // 2)
    )  # softmax fails on even seeds
    assert judged[("every", "error at σ = 10")].effect == pytest.approx((0.9 + 0.05) / 2)
    table = study_report.verdict_table(rows)
    assert list(table.columns) == [
        "comparison",
        "task",
        "endpoint",
        "outcome",
        "effect",
        "95% interval",
        "pairs",
        "to decide / missing",
        "leaving one seed out",
    ]
    shares = study_report.generalising_table([primary, ablation], cache)
    in_ablation = shares[
        (shares["comparison"] == ablation.name) & (shares["arm"] == "softmax") & (shares["task"] == '"every"')
    ].iloc[0]
    assert (
        in_ablation["generalise"] == ablation.seeds // 2
        and in_ablation["seeds"] == ablation.seeds
        and in_ablation["95% low"] < 0.5 < in_ablation["95% high"]
    )
    assert primary.name not in set(
        shares["comparison"]
    )  # an incomplete comparison shows no share, as it has no verdict
    curves = study_curves.arm_curves(
        ["ssa", "softmax", "ssa_10k"], "every", primary.seed_list()[:8], study_curves.error_along_sigma(cache)
    )
    assert len(curves["ssa"][0]) == 5 and curves["softmax"][1].shape == (8, 29) and "ssa_10k" in curves


def test_the_amendments_list_the_verdicts_the_plans_rule_would_have_decided():
    ablation = study_conduct.comparison("SSA vs softmax, separate channels")
    assert ablation.seeds == 10

    def errors(arm, task, seed):  # on "every" both arms agree on every seed; on "some" SSA generalises more
        if task == "every":
            return 0.0 if seed % 2 else 0.9
        return 0.0 if arm == "ssa_channels" or seed % 2 else 0.9

    cache = _Cache(errors)
    rows = {(row["task"], row["endpoint"]): row["verdict"] for row in study_judging.verdict_rows([ablation], cache)}
    assert rows[("every", study_design.BINARY_ENDPOINT)].interval[1] > 0.2  # ten agreeing pairs are not "no effect"
    assert {verdict.outcome for (task, _), verdict in rows.items() if task == "every"} <= {"undecided", "exploratory"}
    changes = study_judging.rule_amendment_changes([ablation], cache)
    assert list(changes["task"]) == ['"every"'] * 3 and list(changes["endpoint"]) == list(ablation.endpoints)
    assert set(changes["as first planned"]) == {"no difference that matters +0.00 [+0.00, +0.00]"}
    assert all(cell.startswith(("undecided", "exploratory")) for cell in changes["as judged"])


def test_the_chapter_never_trains_at_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("SSA_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("SSA_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    monkeypatch.delenv("SSA_RESULTS_MIRROR", raising=False)
    cache = study_conduct.StudyCache("cpu")
    assert (
        cache.run("ssa", "every", study_design.FIRST_SEED) is None
        and cache.spread("ssa", "every", study_design.FIRST_SEED) is None
    )
    assert not any((tmp_path / "checkpoints").rglob("*")) if (tmp_path / "checkpoints").exists() else True
    assert (
        study_conduct.StudyCache("smoke").run("ssa_10k", "every", study_design.FIRST_SEED) is None
    )  # not in the smoke plan: not trained
    with pytest.raises(ValueError, match="train: the study's runs are trained at cpu by"):
        study_conduct.StudyCache("cpu", train=True)


def test_the_pilot_reads_the_chapters_seeds():
    found = study_power.pilot("cpu")
    if found is None:
        pytest.skip("the chapters' cpu runs are not in this checkout's cache")
    assert found["seeds"] == study_design.PILOT_SEEDS and len(found["differences"]) == len(study_design.PILOT_SEEDS)
    assert set(found["power"]) == {
        (endpoint, effect) for endpoint in ("error at σ = 10", "generalises at σ = 10") for effect in (0.2, 0.3)
    }


def test_a_comparison_is_judged_on_each_task_whose_runs_are_complete():
    primary = study_conduct.comparison("SSA vs softmax")

    def errors(arm, task, seed):
        if task == "some" and arm == "softmax" and seed == study_design.FIRST_SEED:
            return None  # "some" lacks one run
        return 0.9 if arm == "ssa" else 0.0  # SSA fails everywhere: the opposite of the paper's claim

    cache = _Cache(errors)
    assert cache.complete(primary, "every") and not cache.complete(primary, "some")
    assert cache.cached(primary, "some") == study_design.needed(primary, "some") - 1 == 79
    rows = study_judging.verdict_rows([primary], cache)
    assert {row["verdict"].outcome for row in rows if row["task"] == "every"} == {WORSE}
    assert {row["verdict"].outcome for row in rows if row["task"] == "some"} == {NOT_TESTED}
    answer = study_judging.claim_verdict(primary, cache)
    assert answer.outcome == WORSE and len(answer.parts) == len(primary.endpoints)
    assert all(name.startswith('"every"') for name, _ in answer.parts)
    assert '"some": not run yet: 79 of 80 runs done' in answer.detail
    assert study_judging.claim_verdict(primary, _Cache(lambda arm, task, seed: None)) is None
    with pytest.raises(ValueError, match="task 'linear' is not one of"):
        cache.cached(primary, "linear")


def test_the_front_page_takes_the_studys_answer_where_it_is_complete(monkeypatch):
    from ssa_book import claims
    from ssa_book.icl import claims as icl_claims

    row = claims.LedgerRow("quantification", "claim", "figure", "three seeds", "cpu", (0, 1, 2), UNDECIDED, None, "cmd")
    monkeypatch.setattr(
        study_conduct, "StudyCache", lambda profile, train: _Cache(lambda arm, task, seed: None, profile, train)
    )
    waiting = icl_claims.answered_by_study(row, "SSA vs softmax", "cpu")
    assert waiting.verdict == UNDECIDED and "not run yet: 0 of 160 runs done" in waiting.ours
    monkeypatch.setattr(
        study_conduct,
        "StudyCache",
        lambda profile, train: _Cache(
            lambda arm, task, seed: (0.9 if arm == "ssa" else 0.0) if task == "every" else None, profile, train
        ),
    )
    answered = icl_claims.answered_by_study(row, "SSA vs softmax", "cpu")
    assert answered.verdict == WORSE and answered.seeds == primary_seeds()
    assert "The chapter's 3 seeds alone: undecided." in answered.ours and '"some": not run yet' in answered.ours
    assert '"some": not run yet: 0 of 80 runs done' in answered.summary
    assert (
        icl_claims.answered_by_study(row, "SSA vs softmax, linear functions", "smoke") is row
    )  # not in the smoke plan


def primary_seeds():
    return study_conduct.comparison("SSA vs softmax").seed_list()


def test_the_collapse_row_adds_the_variant_where_the_premise_can_hold(monkeypatch):
    from ssa_book import claims
    from ssa_book.icl import claims as icl_claims

    variant = study_conduct.comparison(study_design.PREMISE_COMPARISON)
    sigmas = list(range(1, 30))

    class _WithWeights(_Cache):
        def run(self, arm, task, seed):
            if task == "linear":
                return None
            error = 0.0 if arm == variant.treatment else 0.8  # SSA generalises, softmax does not
            weight = np.linspace(0.2, 0.9, len(sigmas)) if arm == variant.control else np.full(len(sigmas), 0.3)
            return ICLRun.from_result(
                {
                    "shifts": {"sigma_x": {"sigmas": sigmas, "model": {"prompt_error": [error] * 29}}},
                    "concentration": {
                        "sigma_x": {
                            "sigmas": sigmas,
                            "max_weight": np.repeat(weight[:, None, None], 4, axis=2).repeat(2, axis=1).tolist(),
                        }
                    },
                },
                task=task,
                scorer=arm,
                seed=seed,
            )

        __call__ = run

    row = claims.LedgerRow(
        "collapse",
        "claim",
        "figure",
        "no collapse here",
        "cpu",
        (0, 1, 2),
        PREMISE_NOT_SHOWN,
        None,
        "cmd",
        summary="Premise absent.",
    )
    monkeypatch.setattr(
        study_conduct, "StudyCache", lambda profile, train: _WithWeights(lambda *_: None, profile, train)
    )
    combined = icl_claims.with_premise_made_to_hold(row, "cpu")
    # premise absent as trained; where it can hold, at ten pairs, only the yes-or-no endpoint may
    # decide (the prompt errors flip, and need no_effect_pairs pairs for any decision)
    assert combined.verdict == HOLDS_IN_PART
    assert "grows along σ from 0.20 to 0.90" in combined.ours and "variant: holds in part" in combined.summary
    assert set(variant.seed_list()) <= set(combined.seeds)
    not_tested = dataclasses.replace(row, verdict=NOT_TESTED)
    assert icl_claims.with_premise_made_to_hold(not_tested, "cpu") is not_tested


def test_a_task_chapter_shows_the_studys_answer_or_what_it_lacks(monkeypatch):
    monkeypatch.setattr(
        study_report,
        "StudyCache",
        lambda profile: _Cache(
            lambda arm, task, seed: (0.9 if arm == "ssa" else 0.0) if task == "every" else None, profile
        ),
    )
    answer = study_report.chapter_answer("SSA vs softmax", "cpu")
    assert answer["outcome"] == WORSE and answer["seeds"] == study_design.PRIMARY_SEEDS
    assert (
        answer["text"].startswith('Its answer: **the claim does not hold** ("every", error at σ = 10: SSA worse;')
        and '"some": not run yet: 0 of 80 runs done' in answer["text"]
    )
    assert len(answer["table"]) == 2 * len(study_design.QUANTIFICATION_ENDPOINTS)
    # with the distribution-free check beside the answer, counted among the verdicts it can test
    assert answer["text"].endswith("(added after reading) keeps 2 of 2 prompt-error directions.")
    waiting = study_report.chapter_answer("SSA vs softmax, linear functions", "cpu")
    assert waiting["outcome"] == NOT_TESTED and "not run yet: 0 of 40 runs done" in waiting["text"]
    absent = study_report.chapter_answer("SSA vs softmax, linear functions", "smoke")
    assert absent["table"] is None and "leaves this comparison out" in absent["text"]


def test_the_length_contingency_adds_30_x_steps_only_when_the_difference_still_moves():
    def cache_with(advantage_10k):
        def errors(arm, task, seed):
            if task != "every":
                return None
            noise = 0.01 * (seed % 3)
            return {
                "softmax_3k": 0.5,
                "ssa_3k": 0.4 + noise,
                "softmax_10k": 0.5,
                "ssa_10k": 0.5 - advantage_10k + noise,
            }.get(arm)

        return _Cache(errors)

    stable, moving = cache_with(0.1), cache_with(0.4)  # SSA's advantage: 0.1 at 3 x; 0.1 or 0.4 at 10 x
    assert (
        study_conduct.length_trend(stable).outcome == NEGLIGIBLE
        and study_conduct.longer_training_needed(stable) is False
    )
    assert study_design.LONGER_TRAINING not in study_conduct.plan("cpu", cache=stable)
    assert study_conduct.length_trend(moving).outcome == BETTER and study_conduct.longer_training_needed(moving) is True
    assert study_conduct.plan("cpu", cache=moving)[-1] is study_design.LONGER_TRAINING
    assert (
        "adds SSA vs softmax, 30 x steps with 6 pairs (not run yet: 0 of 12 runs done)"
        in study_report.length_trend_sentence(moving)
    )
    # undecided until both comparisons are complete; never part of the smoke plan
    unread = _Cache(lambda arm, task, seed: None if arm == "ssa_10k" and seed == 109 else 0.5)
    assert study_conduct.length_trend(unread) is None and study_conduct.longer_training_needed(unread) is None
    three, ten = (study_conduct.comparison(name) for name in study_design.LENGTH_TREND)
    assert (
        f"not run yet: {study_design.needed(three) + study_design.needed(ten) - 1} of {study_design.needed(three) + study_design.needed(ten)} runs"
        in study_report.length_trend_sentence(unread)
    )
    assert study_conduct.plan("smoke", cache=moving) == study_conduct.plan("smoke")
    # the contingent comparison takes the rule's fewest pairs, not the ablations' ten
    assert (
        study_design.LONGER_TRAINING.seeds == MIN_PAIRS
        and study_conduct.comparison(study_design.LONGER_TRAINING.name) is study_design.LONGER_TRAINING
    )


def test_the_ablation_table_has_one_row_per_comparison_and_a_cell_per_task_and_endpoint():
    def errors(arm, task, seed):
        if arm == "ssa_3k":
            return None  # not cached
        return 0.0 if arm == "ssa_b1" else 0.5 + 0.01 * (seed % 3)

    cache = _Cache(errors)
    compared = [
        study_conduct.comparison("SSA from b = 1 vs softmax"),
        study_conduct.comparison("SSA vs softmax, 3 x steps"),
    ]
    table = study_report.ablation_table(study_judging.verdict_rows(compared, cache))
    assert list(table.index) == [c.name for c in compared]
    assert table.loc["SSA from b = 1 vs softmax", '"every": error at σ = 10'].startswith(
        "SSA from b = 1 better +0.51 ["
    )
    # 3 x steps is read on "every" only: the glossary's word, as the regime map says it
    assert table.loc["SSA vs softmax, 3 x steps", '"some": error at σ = 10'] == "not tested"
    three = compared[1]
    # its runs are not cached: the cell says how far they are, the glossary's one word for that state
    assert table.loc["SSA vs softmax, 3 x steps", '"every": error at σ = 10'] == (
        f"not run yet: {cache.cached(three, 'every')} of {study_design.needed(three, 'every')} runs done"
    )


def test_the_starting_slope_is_named_only_when_the_three_facts_it_predicts_hold():
    def cache_with(ssa_b1_error):
        def errors(arm, task, seed):
            base = 0.1 + 0.01 * (seed % 3)
            return {
                "softmax": base,
                "ssa": 0.6 + 0.01 * (seed % 2),
                "softmax_slope": 0.6 + 0.01 * ((seed + 1) % 2),
                "ssa_b1": ssa_b1_error + 0.01 * (seed % 3),
            }.get(arm, base)

        return _Cache(errors)

    # "no effect" on a prompt error needs no_effect_pairs pairs, which these comparisons have
    assert min(study_conduct.comparison(name).seeds for name in study_judging.STARTING_POINT) >= no_effect_pairs(
        study_design.ENDPOINTS["error at σ = 10"].claim
    )
    slope = study_judging.starting_point_reading(cache_with(0.1), "every")
    assert (
        "SSA vs softmax: SSA worse (-0.4" in slope and "SSA from b = 1 vs softmax: no difference that matters" in slope
    )
    assert "deficit goes with its starting slope" in slope
    # the gentler start in its verdict's own words (a difference below the threshold, not equality)
    assert (
        "SSA started at b = 1 vs softmax reads no difference that matters (" in slope and "does not differ" not in slope
    )
    # SSA from b = 1 losing as well: the slope does not explain it
    assert "do not separate" in study_judging.starting_point_reading(cache_with(0.6), "every")

    # the slope's facts decided, SSA against the sharper softmax open: the open comparison first, then the decided ones
    def open_against_sharper(arm, task, seed):
        base = 0.1 + 0.01 * (seed % 3)
        return {
            "ssa": 0.55 + (0.45 if seed % 2 else -0.45),
            "softmax_slope": 0.55 + 0.01 * (seed % 2),
            "ssa_b1": 0.1 + 0.01 * (seed % 3),
        }.get(arm, base)

    follows = study_judging.starting_point_reading(_Cache(open_against_sharper), "every")
    # the seeds of the comparisons beside SSA vs softmax were raised after their ten-seed readings, said with those readings
    assert (
        "do not separate SSA's form from its starting slope (seeds raised after reading): SSA vs the sharper softmax is undecided ("
        in follows
    )
    assert follows.endswith(
        "; at 10 seeds, before the 36-pair minimum: undecided on 2 of 3, sharper softmax worse on 1"
        " (the analysis-changes page lists the raise)."
    )
    assert "); the decided ones are consistent with its starting slope (the sharper softmax vs softmax: " in follows
    assert "follows" not in follows
    # an undecided verdict's words say how many seeds would decide it; the reading does not say it again
    assert "seeds would decide)" in follows and "pairs would decide it" not in follows
    # no difference to attribute
    assert "nothing to attribute" in study_judging.starting_point_reading(
        _Cache(lambda arm, task, seed: 0.1 + 0.01 * (seed % 3)), "every"
    )
    # read only once all four comparisons are complete on the task
    assert (
        study_judging.starting_point_reading(
            _Cache(lambda arm, task, seed: None if arm == "softmax_slope" and seed == 100 else 0.1), "every"
        )
        is None
    )
    quantifiers = [c for c in study_design.COMPARISONS if "linear" not in c.tasks]
    summary = study_report.summary(quantifiers, cache_with(0.1))
    assert 'Form or starting slope, on "every"' in summary
    assert (
        "A check that assumes nothing" in summary
        and 'the primary question\'s under it: "every", error at σ = 10: SSA worse' in summary
    )


def test_the_bounded_check_decides_the_prompt_error_verdicts_again_and_reads_the_slope_with_them():
    def errors(arm, task, seed):  # SSA from b = 1 ties softmax exactly; SSA and the sharper softmax lose by 0.5
        base = 0.1 + 0.01 * (seed % 3)
        return {"ssa": base + 0.5, "softmax_slope": base + 0.5}.get(arm, base)

    cache = _Cache(errors)
    rows = study_judging.verdict_rows([study_conduct.comparison(name) for name in study_judging.STARTING_POINT], cache)
    checks = study_judging.bounded_checks(rows)
    assert {row["endpoint"] for row in checks} == {"error at σ = 10", "mean error, σ = 2-29"}  # not the binary endpoint
    assert all(row["verdict"].outcome in ("worse", "no difference that matters") for row in checks)
    checked = {(row["comparison"], row["task"], row["endpoint"]): row["checked"].outcome for row in checks}
    assert checked[("SSA vs softmax", "every", "error at σ = 10")] == "worse"  # 0.5 on every pair: decided under it too
    assert (
        checked[("SSA from b = 1 vs softmax", "every", "error at σ = 10")] == "undecided"
    )  # 40 ties cannot rule out flips
    table = study_report.bounded_check_table(checks)
    assert len(table) == len(checks) and table["bounded interval"].str.contains("worse|undecided").all()
    # counted among the verdicts the check can test: at 40 pairs no data could give "no difference that matters"
    directions = [row for row in checks if row["verdict"].outcome == "worse"]
    negligible = [row for row in checks if row["verdict"].outcome == "no difference that matters"]
    kept = sum(row["checked"].outcome == "worse" for row in directions)
    words = study_judging.bounded_check_words(checks)
    assert words.startswith(f"keeps {kept} of {len(directions)} prompt-error directions (SSA worse: ")
    assert words.endswith(
        f'; at 40 pairs it cannot decide "no difference that matters", so those {len(negligible)} are unchecked'
    )
    assert study_judging.bounded_check_words(directions[:1]) == "keeps 1 of 1 prompt-error directions"
    sentence = study_report.bounded_check_sentence(checks, cache)
    assert (
        sentence.startswith(f"On the decided prompt-error verdicts, the check {words}.")
        and "do not separate" in sentence
    )
    assert study_report.bounded_check_sentence([], cache) == "No verdict on a prompt-error endpoint is decided yet."


def test_the_resampled_nulls_measure_each_complete_prompt_error_verdict_at_its_pairs():
    compared = study_conduct.comparison("SSA vs softmax, 3 x steps")  # 10 seeds on "every"
    flips = {
        study_design.FIRST_SEED,
        study_design.FIRST_SEED + 1,
    }  # SSA fails on two seeds, and is a little better on the rest

    def errors(arm, task, seed):
        return (1.0 if seed in flips else 0.0) if arm == "ssa_3k" else 0.3

    cache = _Cache(errors)
    table, sentence = study_judging.resampled_nulls([compared], cache, simulations=400, seed=1)
    assert list(table.index) == [
        (compared.name, '"every"', "error at σ = 10"),
        (compared.name, '"every"', "mean error, σ = 2-29"),
    ]
    assert table["pairs"].tolist() == [compared.seeds] * 2
    verdict = study_design.judge(compared, "every", "error at σ = 10", cache)
    expected = resampled_null_rates(
        study_design.ENDPOINTS["error at σ = 10"].claim, verdict.differences, compared.seeds, simulations=400, seed=1
    )
    assert table.iloc[0].drop("pairs").to_dict() == expected
    largest = table[FALSE_DIRECTIONAL].max()
    assert f'at most {largest:.1%} ({compared.name}, "every", ' in sentence and "400 simulated studies" in sentence
    incomplete = _Cache(lambda arm, task, seed: None if arm == "ssa_3k" else 0.3)
    empty, nothing = study_judging.resampled_nulls([compared], incomplete)
    assert empty.empty and nothing.startswith("No prompt-error comparison is complete yet")


def test_the_compute_sentence_sums_the_cached_runs_and_estimates_the_rest_by_cost():
    compared = [study_conduct.comparison("SSA vs softmax, 10 x steps")]  # 10 seeds x 2 arms on "every", cost 10 each

    class Timed(_Cache):
        def run(self, arm, task, seed):
            found = super().run(arm, task, seed)
            return None if found is None else dataclasses.replace(found, provenance=provenance_with(wall_time_s=360.0))

    half = Timed(lambda arm, task, seed: None if arm == "ssa_10k" else 0.1)
    text = study_report.compute_sentence(compared, half)
    assert (
        text.startswith("The 10 cached runs took 1.0 h on one thread each")
        and "about 0.5 h of wall time at 2 runs" in text
    )
    assert "The 10 runs still missing need about 1.0 h more on one thread (0.5 h at 2 at a time)" in text
    assert "runs still missing" not in study_report.compute_sentence(compared, Timed(lambda arm, task, seed: 0.1))


def test_what_deciding_an_exploratory_comparison_costs_comes_from_its_cached_runs():
    compared = study_design.LONGER_TRAINING  # 6 pairs on "every"; a flipping prompt error decides from more

    class Timed(_Cache):
        def run(self, arm, task, seed):
            found = super().run(arm, task, seed)
            return None if found is None else dataclasses.replace(found, provenance=provenance_with(wall_time_s=360.0))

    timed = Timed(lambda arm, task, seed: 0.3 + 0.01 * (seed % 3) if task == "every" else None)
    minimum = study_design.judge(compared, "every", "error at σ = 10", timed).no_effect_pairs
    extra = minimum - compared.seeds
    assert extra > 0
    text = study_report.deciding_cost_sentence(compared, "every", "error at σ = 10", timed)
    assert f"the {minimum} pairs the rule decides from on error at σ = 10: {extra} more pairs, {2 * extra} runs" in text
    # the sentence follows the length trend's: it names the comparison its "it" is
    assert text.startswith(f" Deciding it ({compared.name}) would take")
    assert (
        f"about {extra * 2 * 360 / 3600:.0f} h on one thread" in text
        and f"({extra * 360 / 3600:.0f} h at 2 at a time)" in text
    )
    incomplete = Timed(lambda arm, task, seed: None if arm == "ssa_30k" and seed == study_design.FIRST_SEED else 0.3)
    assert study_report.deciding_cost_sentence(compared, "every", "error at σ = 10", incomplete) == ""


def test_false_discoveries_are_controlled_within_the_primary_and_the_other_comparisons():
    def errors(arm, task, seed):
        return {"ssa": 0.6, "ssa_b1": 0.6, "softmax": 0.0}.get(arm, 0.0) + 0.01 * (seed % 3)

    cache = _Cache(errors)
    compared = [study_conduct.comparison("SSA vs softmax"), study_conduct.comparison("SSA from b = 1 vs softmax")]
    found = study_judging.false_discovery_rows(compared, study_judging.verdict_rows(compared, cache))
    assert {row["family"] for row in found if row["comparison"] == "SSA vs softmax"} == {"primary"}
    assert {row["family"] for row in found if row["comparison"] == "SSA from b = 1 vs softmax"} == {"other comparisons"}
    primary = [row["verdict"] for row in found if row["family"] == "primary"]
    assert [row["adjusted p"] for row in found if row["family"] == "primary"] == pytest.approx(
        [f["adjusted p"] for f in false_discoveries(primary)]
    )
    table = study_report.false_discovery_table(found)
    assert set(table["verdict"]) <= {"SSA worse", "SSA from b = 1 worse"} and set(table["survives adjustment"]) == {
        "yes"
    }
    assert (
        "the primary comparisons: 6 of the 6 directions the interval and threshold decide"
        in study_report.false_discovery_sentence(found)
    )
    assert study_report.false_discovery_sentence([]).startswith("No verdict")


def test_the_false_discovery_count_shows_the_directions_control_takes_away():
    kept = Verdict("SSA's error is lower", WORSE, treatment="SSA")
    lost = Verdict("SSA's error is lower", UNDECIDED, treatment="SSA", uncontrolled=WORSE, adjusted_p=0.097)
    found = [
        {"family": "other comparisons", "verdict": verdict, "survives": verdict is kept} for verdict in (kept, lost)
    ]
    found.append(
        {"family": "other comparisons", "verdict": Verdict("SSA's error is lower", NEGLIGIBLE), "survives": False}
    )
    assert study_report.false_discovery_sentence(found) == (
        "Controlling false discoveries within each family of tests (Benjamini and Hochberg), the other comparisons: 1 of the "
        "2 directions the interval and threshold decide keep an adjusted p below 0.05 (3 tests), 1 read undecided."
    )
    # one direction: its verb agrees with it
    assert (
        "the other comparisons: the 1 direction the interval and threshold decide keeps an adjusted p below 0.05 (2 tests)."
        in (study_report.false_discovery_sentence([found[0], found[2]]))
    )
    assert "the 1 direction the interval and threshold decide does not keep an adjusted p below 0.05 (2 tests)." in (
        study_report.false_discovery_sentence([found[1], found[2]])
    )


def test_the_generalisation_cut_table_judges_the_same_runs_at_each_cut():
    class WithBaseline(_Cache):
        def run(self, arm, task, seed):
            error = self.errors(arm, task, seed)
            return ICLRun.from_result(
                {
                    "shifts": {
                        "sigma_x": {
                            "sigmas": list(range(1, 30)),
                            "model": {"prompt_error": [error] * 29},
                            "majority class": {"prompt_error": [0.15] * 29},
                        }
                    }
                },
                task=task,
                scorer="softmax",
                seed=seed,
            )

    # SSA's error 0.08 on every seed, softmax's 0.15 on half the seeds and 0.02 on the others
    cache = WithBaseline(lambda arm, task, seed: 0.08 if arm == "ssa" else (0.15 if seed % 2 else 0.02))
    compared = study_conduct.comparison("SSA vs softmax")
    table = study_report.generalisation_cut_table(compared, cache)
    assert len(table) == 2 * len(study_report.GENERALISATION_CUTS)
    every = table[table["task"] == '"every"'].set_index("cut")
    assert every.loc["0.05", "SSA generalise"] == "0 of 40" and every.loc["0.05", "softmax generalise"] == "20 of 40"
    assert (
        every.loc["0.1 (declared)", "SSA generalise"] == "40 of 40"
        and every.loc["0.2", "softmax generalise"] == "40 of 40"
    )
    assert every.loc["0.05", "verdict"] == "SSA worse" and every.loc["0.1 (declared)", "verdict"] == "SSA better"
    assert every.loc["0.2", "verdict"] == "no difference that matters"
    declared = study_design.judge(compared, "every", study_design.BINARY_ENDPOINT, cache)
    assert every.loc["0.1 (declared)", "effect"] == declared.estimate()
    assert set(table["majority class's error at σ = 10"]) == {"0.150"}


def _regime_errors(arm, task, seed):
    """SSA worse by 0.5 where it starts sharp, no different from b = 1; the lr 1e-4 arms not run at all."""
    if "lr1e-4" in arm:
        return None
    return 0.6 + 0.01 * (seed % 2) if arm.startswith("ssa") and arm != "ssa_b1" else 0.1 + 0.01 * (seed % 3)


def test_the_regime_map_sets_ssa_against_softmax_in_every_regime_the_study_has():
    frame = study_regimes.regime_map(_Cache(_regime_errors))
    rows = frame.set_index("comparison")
    assert list(frame["comparison"])[:2] == ["SSA vs softmax", "SSA from b = 1 vs softmax"]
    assert rows.loc["SSA vs softmax", '"every"'].startswith("SSA worse, -0.49")
    assert rows.loc["SSA from b = 1 vs softmax", '"some"'].startswith("no difference that matters")
    assert rows.loc["SSA vs softmax, lr 1e-4, 10 x steps", '"every"'] == "not run yet: 0 of 80 runs done"
    assert rows.loc["SSA vs softmax, 3 x steps", '"some"'] == "not tested"  # read on "every" only
    assert rows.loc["SSA vs softmax, 10 x steps", '"every"'].startswith(
        "exploratory"
    )  # ten pairs: below the 36 a prompt error needs
    assert "lr 0.0001 (constant), 10,000 steps" in rows.loc["SSA vs softmax, lr 1e-4, 10 x steps", "regime"]
    assert "SSA from b = 1" in rows.loc["SSA from b = 1 vs softmax", "regime"]
    # the chapters' regime in full, every other one by what differs from it
    assert rows.loc["SSA vs softmax", "regime"].startswith("the chapters': lr 0.001 (constant), 1,000 steps, width 64")
    assert rows.loc["SSA vs softmax, 3 x steps", "regime"] == "3,000 steps"
    assert (
        rows.loc["SSA vs softmax, warm-up + cosine", "regime"] == "lr 0.001 (warm-up + cosine)"
    )  # each schedule named in words
    assert set(study_design.SCHEDULE_WORDS) == set(SCHEDULES)
    assert set(frame["comparison"]) <= set(study_regimes.REGIME_MAP)


def test_the_regime_rows_and_their_takeaway_count_the_cells_in_the_books_words():
    rows = study_regimes.regime_rows(_Cache(_regime_errors))
    assert {row["endpoint"] for row in rows} == {study_regimes.REGIME_MAP_ENDPOINT}
    assert {row["comparison"] for row in rows} <= set(study_regimes.REGIME_MAP)
    takeaway = study_regimes.regime_takeaway(rows)
    pending = sum(row["verdict"].outcome == "not tested" for row in rows)
    exploratory = sum(row["verdict"].outcome == "exploratory" for row in rows)
    worse = sum(row["verdict"].outcome == "worse" for row in rows)
    # the map's cells the plan does not test are counted, so that the takeaway's cells add up to the map's
    frame = study_regimes.regime_map(_Cache(_regime_errors))
    unplanned = int((frame[[get_task(task).title for task in QUANTIFIERS]] == "not tested").to_numpy().sum())
    assert unplanned > 0 and len(rows) + unplanned == len(frame) * len(QUANTIFIERS)
    assert takeaway.startswith(f"{worse} SSA worse, ")
    assert "no difference that matters (seeds raised after reading" in takeaway
    assert takeaway.endswith(f", {exploratory} exploratory; {pending} not run yet, {unplanned} not tested.")
    # the short wording (the study's box) gives the planned cells' counts alone
    short = study_regimes.regime_takeaway(rows, detail=False)
    assert short.startswith(f"{worse} SSA worse, ") and short.endswith(
        f", {exploratory} exploratory; {pending} not run yet."
    )
    assert study_regimes.regime_takeaway([]) == "No regime of the study is complete yet."


def test_a_raised_regime_not_run_yet_carries_its_seeds_read_before_the_raise_and_the_figure_draws_them_hollow():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ssa_book.icl import figures

    def errors(arm, task, seed):  # the 3 x steps arms: only the ten seeds read before the raise are in
        if arm.endswith("_3k"):
            return (
                None
                if seed >= study_design.FIRST_SEED + study_design.ABLATION_SEEDS
                else _regime_errors(arm, task, seed)
            )
        return _regime_errors(arm, task, seed)

    cache = _Cache(errors)
    rows = study_regimes.regime_rows(cache)
    three = next(row for row in rows if row["comparison"] == "SSA vs softmax, 3 x steps")
    assert three["verdict"].detail.startswith("not run yet: 20 of ")
    earlier = three["read_before_raise"]
    assert len(earlier.differences) == study_design.ABLATION_SEEDS and earlier.effect == pytest.approx(-0.495)
    assert all("read_before_raise" not in row for row in rows if row["verdict"].differences)
    fig, ax = plt.subplots()
    handles = figures.plot_study_differences(ax, rows, study_regimes.REGIME_MAP_ENDPOINT)
    assert {"seeds read before a raise", "open (exploratory or undecided)"} <= {
        handle.get_label() for handle in handles
    }
    hollow = [line for line in ax.lines if line.get_markerfacecolor() == "white"]
    assert {line.get_color() for line in hollow} == {figures.OPEN_SHADE}
    assert [line.get_xdata()[0] for line in hollow] == [pytest.approx(earlier.effect)]
    assert any(text.get_text() == three["verdict"].detail for text in ax.texts)
    plt.close(fig)


def test_a_regime_cell_the_distribution_free_check_does_not_keep_says_so_in_the_map_and_its_takeaway():
    def errors(arm, task, seed):  # SSA worse on "every" by 0.15, spread enough that the bounded interval leaves it open
        if arm == "ssa" and task == "every":
            return 0.1 + 0.01 * (seed % 3) + 0.05 + 0.2 * (seed % 2)
        return _regime_errors(arm, task, seed)

    cache = _Cache(errors)
    rows = study_regimes.regime_map(cache).set_index("comparison")
    assert rows.loc["SSA vs softmax", '"every"'] == (
        "SSA worse, -0.15 [-0.18, -0.12] (SSA worse by the t interval, undecided by the distribution-free one)"
    )
    assert "distribution-free" not in rows.loc["SSA vs softmax", '"some"']  # kept: no note
    takeaway = study_regimes.regime_takeaway(study_regimes.regime_rows(cache))
    worse = takeaway.split(" SSA worse")[0].rsplit(" ", 1)[-1]
    assert f" SSA worse ({int(worse) - 1} kept by the distribution-free check), " in takeaway
    # the short wording keeps it too (the study's box)
    assert f" SSA worse ({int(worse) - 1} kept by the distribution-free check), " in study_regimes.regime_takeaway(
        study_regimes.regime_rows(cache), detail=False
    )
    # unless a sentence before it states that comparison's check: then the count stands alone
    assert f"{worse} SSA worse, " in study_regimes.regime_takeaway(
        study_regimes.regime_rows(cache), detail=False, checked_above={"SSA vs softmax"}
    )
    assert "kept by" in study_regimes.regime_takeaway(
        study_regimes.regime_rows(cache), detail=False, checked_above={"SSA vs softmax, 3 x steps"}
    )
    # the front page's sentence and the map say a check that does not keep a verdict in the same words
    checks = study_judging.bounded_checks(study_regimes.regime_rows(cache))
    assert [study_judging.not_kept_words(row) for row in study_judging.not_kept(checks)] == [
        "SSA worse by the t interval, undecided by the distribution-free one"
    ]


def test_the_regime_takeaway_counts_the_negligible_cells_whose_interval_excludes_zero():
    claim = study_design.ENDPOINTS[study_regimes.REGIME_MAP_ENDPOINT].claim
    small = judge(claim, [0.15 + 0.01 * (i % 5) for i in range(40)], [0.1] * 40)  # SSA's error above softmax's
    # the same numbers where false-discovery control over a family withholds the direction
    below = dataclasses.replace(small, adjusted_p=0.2, family_size=12)
    inside = judge(claim, [0.1] * 40, [0.1 + 0.01 * (i % 5 - 2) for i in range(40)])
    assert (
        below.outcome == inside.outcome == "no difference that matters" and below.interval[1] < 0 < inside.interval[1]
    )
    assert small.small_direction() == "SSA slightly worse" and withheld_direction(below) and not below.small_direction()
    rows = [
        {"comparison": "SSA vs softmax, warm-up + cosine", "verdict": below, "seeds": list(range(40))},
        {"comparison": "SSA from b = 1 vs softmax", "verdict": inside, "seeds": list(range(40))},
    ]
    # both comparisons' seeds were raised after reading; both run on every quantifier, so no cell is left
    # untested; an interval that excludes 0 is counted in the glossary's terms, its side not said, since the
    # rule withholds the direction
    assert study_regimes.regime_takeaway(rows) == (
        "2 no difference that matters (seeds raised after reading; 1 interval excluding 0, no direction said)."
    )
    # the short wording keeps the raise and the count, so the adverse part is not folded into the milder word
    assert (
        study_regimes.regime_takeaway(rows, detail=False)
        == "2 no difference that matters (seeds raised after reading; 1 excluding 0, no direction said)."
    )
    assert study_regimes.regime_takeaway([rows[0], dict(rows[1], comparison="SSA vs softmax")]).startswith(
        "2 no difference that matters (1 with seeds raised after reading; 1 interval excluding 0, no direction said)"
    )
    # a small direction the rule says is counted by its words
    assert study_regimes.regime_takeaway([dict(rows[0], verdict=small), rows[1]]) == (
        "2 no difference that matters (seeds raised after reading; 1 SSA slightly worse)."
    )
    # and how many of them a seed left out changes, in the full wording
    fragile_verdict = judge(claim, [0.18 + 0.04 * (i % 5 - 2) for i in range(40)], [0.1] * 40)  # near -0.1
    fragile = dict(rows[0], verdict=dataclasses.replace(fragile_verdict, adjusted_p=0.2, family_size=12))
    assert fragile["verdict"].outcome == "no difference that matters" and fragile["verdict"].interval[1] < 0
    assert "; 1 interval excluding 0, no direction said; 1 that one left-out seed changes)" in (
        study_regimes.regime_takeaway([fragile])
    )
    assert "(seeds raised after reading; 1 excluding 0, no direction said)" in study_regimes.regime_takeaway(
        [fragile], detail=False
    )
    assert "; 1 excluding 0, no direction said; 1 seed-dependent)" in study_regimes.regime_takeaway(
        [fragile], detail=False, seed_note=True
    )


def test_the_summary_counts_exploratory_verdicts_apart_from_the_decided():
    found = [
        Verdict("SSA's error is lower", outcome, treatment="SSA")
        for outcome in (WORSE, NEGLIGIBLE, TOO_FEW_SEEDS, TOO_FEW_SEEDS, UNDECIDED)
    ]
    counted = study_report.outcome_counts(found)
    assert counted.startswith("2 decided (1 SSA worse, 1 no difference that matters)")
    assert "2 exploratory (fewer pairs than the rule decides from: estimates, no verdict)" in counted
    assert "1 undecided" in counted and "decided (" not in counted.split("exploratory")[1]
    # a comparison whose runs are not all cached counts as "not run yet", not as the plan's "not tested"
    waiting = Verdict("SSA's error is lower", NOT_TESTED, treatment="SSA", detail="not run yet: 20 of 80 runs done")
    untested = Verdict("SSA's error is lower", NOT_TESTED, treatment="SSA")
    assert study_report.outcome_counts([waiting, waiting, untested]) == "2 not run yet, 1 not tested"


def test_the_verdict_table_says_why_a_verdict_beyond_zero_says_no_direction():
    controlled = Verdict(
        "generalises",
        UNDECIDED,
        -0.25,
        (-0.44, -0.05),
        6,
        0.2,
        differences=(-0.3,) * 5 + (-0.0,),
        adjusted_p=0.097,
        family_size=37,
        uncontrolled=WORSE,
    )
    row = {
        "comparison": "sharper softmax vs softmax",
        "task": "every",
        "endpoint": "generalises at σ = 10",
        "verdict": controlled,
        "seeds": list(range(100, 106)),
    }
    outcome = study_report.verdict_table([row])["outcome"].iloc[0]
    assert outcome == f"undecided ({withheld_direction(controlled)})" and "false-discovery control" in outcome
    plain = dataclasses.replace(controlled, interval=(-0.44, 0.05), adjusted_p=None, uncontrolled=None)
    assert study_report.verdict_table([{**row, "verdict": plain}])["outcome"].iloc[0] == "undecided"


def test_the_seed_amendments_are_the_analysis_changes_record_and_the_rule_then_is_the_one_before_or_after_the_flip_minimum():
    from ssa_book import analysis_changes, claims

    commits = [change.commit for change in analysis_changes.CHANGES]
    flip_minimum = commits.index(claims.FLIP_MINIMUM_SET_AFTER_READING)
    assert study_judging.FLIP_MINIMUM_MADE_ON == analysis_changes.CHANGES[flip_minimum].date
    # 3 x steps and 4 x parameters were raised after the flip minimum, their ten seeds read before it
    late = next(one for one in study_judging.SEED_AMENDMENTS if commits.index(one.commit) > flip_minimum)
    assert late.before_flip_minimum and set(late.comparisons) == set(study_design.LENGTH_AND_SIZE_COMPARISONS)
    for amendment in study_judging.SEED_AMENDMENTS:
        change = analysis_changes.CHANGES[commits.index(amendment.commit)]
        assert change.kind == "plan" and change.after_reading
        # its ten seeds were read by the rule of the day they were read, not of the day of the raise: before
        # the flip minimum's day, by the rule before it; a reading on that day could not be placed
        assert amendment.read_on <= change.date and amendment.read_on != study_judging.FLIP_MINIMUM_MADE_ON
        assert amendment.before_flip_minimum == (amendment.read_on < study_judging.FLIP_MINIMUM_MADE_ON)
        assert all(study_conduct.comparison(name).seeds > study_design.ABLATION_SEEDS for name in amendment.comparisons)
    # the comparisons the analysis-changes page tables as raised after reading are these
    assert set(study_judging.RAISED_AFTER_READING) == {
        *study_judging.STARTING_POINT[1:],
        *study_design.REGIME_COMPARISONS,
        *study_design.LENGTH_AND_SIZE_COMPARISONS,
    }
    # a comparison no amendment raised is refused, not read as if it were
    with pytest.raises(ValueError, match="name must be a comparison whose seeds an amendment raised"):
        study_judging.read_before_raise(
            _Cache(_regime_errors), "SSA vs softmax", "every", study_regimes.REGIME_MAP_ENDPOINT
        )


def test_the_reading_before_a_raise_is_the_first_ten_seeds_by_the_rule_of_its_time():
    # sharper softmax worse by 0.3 on every seed: at ten pairs the rule before the flip minimum read a direction, today's rule
    # reads exploratory (a direction on a prompt error needs 36 pairs)
    cache = _Cache(
        lambda arm, task, seed: 0.4 + 0.01 * (seed % 3) if arm == "softmax_slope" else 0.1 + 0.01 * (seed % 3)
    )
    then = study_judging.read_before_raise(
        cache, "sharper softmax vs softmax", "every", study_judging.STARTING_POINT_ENDPOINT
    )
    assert then.outcome == WORSE and then.pairs == study_design.ABLATION_SEEDS
    # 3 x the steps was raised after the flip minimum, but its ten seeds were read before it: by the rule before it
    raised_late = _Cache(lambda arm, task, seed: 0.4 + 0.01 * (seed % 3) if arm == "ssa_3k" else 0.1)
    late = study_judging.read_before_raise(
        raised_late, "SSA vs softmax, 3 x steps", "every", study_judging.STARTING_POINT_ENDPOINT
    )
    assert late.outcome == WORSE and late.pairs == study_design.ABLATION_SEEDS
    # today's rule reads the same ten pairs exploratory
    compared = study_conduct.comparison("SSA vs softmax, 3 x steps")
    ten = dataclasses.replace(compared, seeds=study_design.ABLATION_SEEDS)
    after = study_design.judge(ten, "every", study_judging.STARTING_POINT_ENDPOINT, raised_late)
    assert after.outcome == TOO_FEW_SEEDS and after.pairs == study_design.ABLATION_SEEDS
    assert study_judging.readings_words([after]) == after.label()
    # with a format, each estimate follows its word where one is exploratory or a direction, in the order of the readings
    assert study_judging.readings_words([after], "+.3f") == f"{after.label()}, {after.estimate('+.3f')}"
    assert study_judging.readings_words([late], "+.3f") == f"{late.label()}, {late.estimate('+.3f')}"
    assert study_judging.readings_words([then, after], "+.2f").endswith(
        f", {then.estimate('+.2f')} / {after.estimate('+.2f')}"
    )
    # which rule read each: the flip minimum's pairs named for ten seeds read before it, whenever the raise came
    claim = study_design.ENDPOINTS[study_judging.STARTING_POINT_ENDPOINT].claim
    for name in ("sharper softmax vs softmax", "SSA vs softmax, 3 x steps"):
        assert (
            study_judging.rule_then(name, study_judging.STARTING_POINT_ENDPOINT)
            == f"before the {no_effect_pairs(claim)}-pair minimum"
        )
    with pytest.raises(ValueError, match="name must be a comparison whose seeds an amendment raised"):
        study_judging.rule_then("SSA vs softmax", study_judging.STARTING_POINT_ENDPOINT)
    # the regime map's seeds column gives the rule and the estimates beside the words
    seeds = study_regimes.regime_map(cache).set_index("comparison").loc["SSA from b = 1 vs softmax", "paired seeds"]
    assert "; at 10, before the 36-pair minimum: both " in seeds
    # undecided readings come without estimates; an exploratory one or a direction with its own
    assert " / " not in seeds
    assert study_judging.readings_words([then, then], "+.2f") == (
        f"both sharper softmax worse, {then.estimate('+.2f')} / {then.estimate('+.2f')}"
    )
    assert study_judging.readings_words([then, then]) == "both sharper softmax worse"
    assert study_judging.readings_words([then, after]) == f"sharper softmax worse on 1 of 2, {after.label()} on 1"
    # no cached run: nothing to say
    assert (
        study_judging.read_before_raise(
            _Cache(lambda arm, task, seed: None),
            "SSA vs softmax, 3 x steps",
            "every",
            study_judging.STARTING_POINT_ENDPOINT,
        )
        is None
    )


def test_the_analysis_changes_table_gives_the_ten_seed_reading_by_the_rule_then_and_by_todays():
    from ssa_book import changed_readings

    cache = _Cache(
        lambda arm, task, seed: 0.4 + 0.01 * (seed % 3) if arm == "softmax_slope" else 0.1 + 0.01 * (seed % 3)
    )
    frame = changed_readings.seed_amendment_changes(cache, ("sharper softmax vs softmax",))
    row = frame.set_index(["task", "endpoint"]).loc[(get_task("every").title, study_judging.STARTING_POINT_ENDPOINT)]
    then = study_judging.read_before_raise(
        cache, "sharper softmax vs softmax", "every", study_judging.STARTING_POINT_ENDPOINT
    )
    # the same function as the pages' notes, with the rule it read by; today's rule beside it
    assert row["at 10, by the rule then"] == (f"{then.label()} {then.estimate()} (before the 36-pair minimum)")
    assert then.outcome == WORSE and row["at 10, by today's rule"].startswith("exploratory (10 pairs) ")


def test_the_ten_seed_readings_a_change_of_rule_moved_are_listed_while_the_raised_runs_are_not_all_in():
    from ssa_book import changed_readings

    # SSA worse by 0.3 at 3 x the steps, of which only the ten seeds read before the raise are cached
    def errors(arm, task, seed):
        if arm == "ssa_3k":
            return None if seed >= study_design.FIRST_SEED + study_design.ABLATION_SEEDS else 0.4 + 0.01 * (seed % 3)
        return _regime_errors(arm, task, seed)

    cache = _Cache(errors)
    endpoint = study_regimes.REGIME_MAP_ENDPOINT
    # the pair minimum for directions moved it: "SSA worse" before it, exploratory under it
    moved = changed_readings.pair_minimum_changes(cache).set_index(["comparison", "endpoint"])
    row = moved.loc[("SSA vs softmax, 3 x steps", endpoint)]
    assert row["pairs"] == study_design.ABLATION_SEEDS and row["before"].startswith("SSA worse -0.3")
    assert row["now"].startswith("exploratory (10 pairs") and "; at 40: not run yet: 50 of 80 runs done" in row["now"]
    # the table of the amendments' changes from the plan's rule lists it at its ten pairs too
    planned = study_judging.rule_amendment_changes(
        [study_conduct.comparison("SSA vs softmax, 3 x steps")], cache
    ).set_index(["comparison", "endpoint"])
    assert planned.loc[("SSA vs softmax, 3 x steps", endpoint), "pairs"] == study_design.ABLATION_SEEDS
    assert planned.loc[("SSA vs softmax, 3 x steps", endpoint), "as first planned"].startswith("SSA worse -0.3")
    # the regime map gives the plan's count with the pairs cached, and the reading by the rule of its day
    seeds = study_regimes.regime_map(cache).set_index("comparison").loc["SSA vs softmax, 3 x steps", "paired seeds"]
    assert seeds.startswith(
        "40 planned (10 cached; raised after reading; at 10, before the 36-pair minimum: SSA worse, -0.3"
    )


def test_a_table_prints_enough_decimals_that_no_bound_inside_the_threshold_reads_on_it():
    near = Verdict("x", NEGLIGIBLE, effect=-0.06, interval=(-0.0988, -0.02))
    assert (
        study_regimes.interval_spec([near], 0.1) == "+.3f"
        and near.estimate(study_regimes.interval_spec([near], 0.1)) == "-0.060 [-0.099, -0.020]"
    )
    assert study_regimes.interval_spec([Verdict("x", NEGLIGIBLE, effect=-0.06, interval=(-0.09, -0.02))], 0.1) == "+.2f"
    # a bound outside the threshold may round as it likes; one table, one format: the most decimals any cell needs
    far = Verdict("x", WORSE, effect=-0.2, interval=(-0.2996, -0.1004))
    assert study_regimes.interval_spec([far], 0.1) == "+.2f"
    assert (
        study_regimes.interval_spec([far, near, Verdict("x", NEGLIGIBLE, effect=0.0, interval=(-0.09996, 0.01))], 0.1)
        == "+.5f"
    )
    with pytest.raises(ValueError, match="threshold must be positive"):
        study_regimes.interval_spec([near], 0)


def test_the_rates_without_the_pair_minimums_are_the_largest_over_the_studys_verdicts_and_refuse_bad_pair_counts():
    cache = _Cache(_regime_errors)
    comparisons = [study_conduct.comparison("SSA vs softmax")]
    rates = study_judging.rates_without_minimums(comparisons, cache, (6, 40), simulations=200)
    judged = [
        (study_design.ENDPOINTS[row["endpoint"]].claim, row["verdict"])
        for row in study_judging.verdict_rows(comparisons, cache)
        if len(row["verdict"].differences) >= 2
    ]
    from ssa_book.claims import without_minimums

    assert rates == {
        pairs: max(
            resampled_null_rates(without_minimums(claim), found.differences, pairs, simulations=200)[FALSE_DIRECTIONAL]
            for claim, found in judged
        )
        for pairs in (6, 40)
    }
    for bad in ((), (0,), (6.5,), (True,)):
        with pytest.raises(ValueError, match="pair_counts must hold positive whole numbers"):
            study_judging.rates_without_minimums(comparisons, cache, bad)


def test_the_appendix_names_the_regime_cells_still_not_run():
    names = study_design.REGIME_COMPARISONS

    def every_run(arm, task, seed):
        return 0.1 + 0.01 * (seed % 3)

    assert study_report.pending_cells_sentence(names, _Cache(every_run)) == "All their runs are cached."
    lr = study_conduct.comparison(names[0])
    cells = sum(len(study_conduct.comparison(name).tasks) for name in names)
    missing = _Cache(
        lambda arm, task, seed: (
            None
            if arm == lr.treatment and task == "some" and seed == study_design.FIRST_SEED
            else every_run(arm, task, seed)
        )
    )
    runs = study_design.needed(lr, "some")
    assert study_report.pending_cells_sentence(names, missing) == (
        f"1 of their {cells} cells is not run yet and shows below with how many of its runs are in "
        f"({lr.name} on {get_task('some').title}: {runs - 1} of {runs})."
    )
    # the lr 1e-4 arms not run at all: both its cells, in the plural
    assert study_report.pending_cells_sentence(names, _Cache(_regime_errors)).startswith(
        f"2 of their {cells} cells are not run yet and show below with how many of their runs are in ({lr.name} on "
    )
