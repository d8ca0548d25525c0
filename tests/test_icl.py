"""In-context learning: tasks, baselines, training, cache, bad input. All fast (resuming: tests/test_training.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from ssa_book.icl import evaluate, experiments
from ssa_book.icl.curriculum import Curriculum
from ssa_book.icl.models import InContextLearner, ModelConfig, interleave
from ssa_book.icl.records import ICLRun, LogitSpread
from ssa_book.icl.samplers import PromptSpec, generator, sample_prompts
from ssa_book.icl.baselines import exact_rule, least_squares, majority_class, quantification_labels, zero_predictor
from ssa_book.icl.tasks import get_task, linear_labels
from ssa_book.icl.train import TrainConfig, train
from ssa_book.results.keys import config_dict
from ssa_book.verdicts.claim import no_effect_pairs
from ssa_book.verdicts.judge import judge

TINY = ModelConfig(n_layer=1, n_head=2, n_embd=8, n_positions=12)


def tiny_config(**changes) -> TrainConfig:
    base = TrainConfig(
        task="linear",
        model=TINY,
        curriculum=Curriculum(3, 5, 2, 3),
        batch_size=8,
        learning_rate=1e-2,
        train_steps=6,
        log_every=2,
    )
    return dataclasses.replace(base, **changes)


def test_quantifier_labels_on_hand_made_prompts():
    xs = torch.tensor([[0.5, 2.0, -1.0, 3.0], [-0.1, 0.2, 0.3, -4.0]])
    assert quantification_labels(xs, "every").tolist() == [[1, 1, -1, -1], [-1, -1, -1, -1]]
    assert quantification_labels(xs, "some").tolist() == [[1, 1, 1, 1], [-1, 1, 1, 1]]


def test_linear_labels_and_interleaving():
    xs = torch.tensor([[1.0, 2.0]])
    ys = linear_labels(xs, torch.tensor([3.0]), torch.tensor([-1.0]))
    assert ys.tolist() == [[2.0, 5.0]]
    assert interleave(xs, ys)[0, :, 0].tolist() == [1.0, 2.0, 2.0, 5.0]


def test_least_squares_is_exact_from_two_noiseless_points():
    """It is also the task's Bayes-optimal predictor (noiseless data), so the two are one baseline."""
    xs, ys = sample_prompts(get_task("linear"), PromptSpec(6, sigma_ab=3.0), 16, generator(0))
    torch.testing.assert_close(least_squares(xs, ys)[:, 2:], ys[:, 2:], rtol=1e-4, atol=1e-4)
    assert torch.all(zero_predictor(xs, ys) == 0)


def test_prompt_metric_counts_a_prompt_wrong_from_point_three_on():
    errors = torch.tensor([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    assert get_task("every").prompt_error(errors) == 0.5  # first prompt's errors come before point 3
    assert get_task("linear").prompt_error(errors) == pytest.approx(0.25)


def test_quantification_baselines():
    xs, ys = sample_prompts(get_task("some"), PromptSpec(10, sigma_x=7.0), 64, generator(1))
    assert (
        evaluate.evaluate(exact_rule("some"), get_task("some"), PromptSpec(10, sigma_x=7.0), 64, 1)["prompt_error"]
        == 0.0
    )
    majority = majority_class("some")(xs, ys)
    assert torch.all(majority == 1)


def test_injected_value_lands_at_its_position():
    xs, _ = sample_prompts(get_task("every"), PromptSpec(8, inject_position=3, inject_value=10.0), 4, generator(0))
    assert torch.all(xs[:, 3] == 10.0)


def test_smoke_training_lowers_the_loss():
    trained = train(
        tiny_config(train_steps=60, curriculum=Curriculum(5, 5, 1, 100), log_every=10), checkpoint=False, progress=False
    )
    losses = [loss for _, loss in trained.history]
    assert losses[-1] < 0.8 * losses[0]


def test_cache_is_reused_only_for_an_identical_config(tmp_path, monkeypatch):
    calls = []

    def fake_run(experiment, **kwargs):
        calls.append(experiment.train.seed)
        return {"seed": experiment.train.seed}

    monkeypatch.setattr(experiments, "run", fake_run)
    first = experiments.experiment_config("every", "ssa", "smoke", seed=0)
    for config in (
        first,
        first,
        experiments.experiment_config("every", "ssa", "smoke", seed=1),
        experiments.experiment_config("every", "ssa", "smoke", seed=0, n=2.0),
        first,
    ):
        experiments.cached_run(config, profile="smoke", results_dir=tmp_path)
    assert calls == [0, 1, 0]
    # An entry written by another version of the code is recomputed, never reused.
    from ssa_book import code_versions

    newer = code_versions.version("icl") + 1
    monkeypatch.setattr(code_versions, "version", lambda name: newer)
    experiments.cached_run(first, profile="smoke", results_dir=tmp_path)
    assert calls == [0, 1, 0, 0]


def test_softmax_and_ssa_return_attention_weights():
    for scorer in ("softmax", "ssa"):
        model = InContextLearner(dataclasses.replace(TINY, scorer=scorer))
        generator = torch.Generator().manual_seed(0)
        xs, ys = torch.randn(2, 4, generator=generator), torch.randn(2, 4, generator=generator)
        _, attentions = model(xs, ys, output_attentions=True)
        assert len(attentions) == 1 and attentions[0].shape == (2, 2, 8, 8)
        torch.testing.assert_close(attentions[0].sum(-1), torch.ones(2, 2, 8))


def test_bootstrap_band_brackets_the_mean():
    band = evaluate.bootstrap_band(np.array([[0.1, 1.0], [0.2, 2.0], [0.3, 3.0]]))
    assert np.all(band["low"] <= band["mean"]) and np.all(band["mean"] <= band["high"])
    with pytest.raises(ValueError, match="NaN"):
        evaluate.bootstrap_band([[np.nan]])


def test_bad_input_is_refused_with_clear_errors():
    with pytest.raises(ValueError, match="task must be one of"):
        experiments.experiment_config("all", "ssa")
    with pytest.raises(ValueError, match="scorer must be one of"):
        experiments.experiment_config("every", "softermax")
    with pytest.raises(ValueError, match="sigma_x must be"):
        PromptSpec(5, sigma_x=0.0)
    with pytest.raises(ValueError, match="sigma_ab must be"):
        PromptSpec(5, sigma_ab=-1.0)
    with pytest.raises(ValueError, match="n_positions"):
        InContextLearner(TINY)(torch.zeros(1, 13), torch.zeros(1, 13))
    with pytest.raises(ValueError, match="n_positions"):
        experiments.ICLExperiment(tiny_config(), experiments.EvalConfig(points=9, lengths=(10, 20)))


def test_injection_control_is_the_same_prompts_without_the_value():
    spec = PromptSpec(8, inject_position=3, inject_value=-10.0)
    injected, _ = sample_prompts(get_task("some"), spec, 4, generator(5))
    clean, _ = sample_prompts(get_task("some"), dataclasses.replace(spec, inject_position=None), 4, generator(5))
    changed = (injected != clean).any(dim=0)
    assert changed.tolist() == [False, False, False, True, False, False, False, False]


def fake_run(
    task: str,
    errors,
    *,
    seed=0,
    scorer="softmax",
    shifted_sigmas=2,
    mass=0.01,
    harm=0.0,
    max_weight=(0.2, 0.2),
    trivial=0.5,
) -> ICLRun:
    """The record of a result in the shape of :func:`ssa_book.icl.experiments.run`'s: ``errors`` is the
    model's error at sigma 1 and at each shifted sigma (the same for every shift and, at sigma 1,
    every length); the trivial baseline has error ``trivial`` everywhere."""
    errors = [float(e) for e in errors]
    sigmas = list(range(1, len(errors) + 1))
    baseline = "majority class" if task in ("every", "some") else "zero"
    sweep = {"sigmas": sigmas, "model": {"prompt_error": errors}, baseline: {"prompt_error": [trivial] * len(errors)}}
    layers_heads = lambda value: [[value, value], [value, value]]  # 2 layers x 2 heads
    run = {
        "shifts": {"sigma_x": sweep, "sigma_ab": sweep},
        "length": {
            "lengths": [10, 40],
            "model": {"prompt_error": [errors[0], errors[-1]]},
            baseline: {"prompt_error": [trivial, trivial]},
        },
        "concentration": {
            "sigma_x": {
                "sigmas": sigmas,
                "max_weight": [layers_heads(max_weight[0])] + [layers_heads(max_weight[1])] * (len(errors) - 1),
            }
        },
        "injection": {
            "injected_mass": layers_heads(mass),
            "model": {"prompt_error": errors[0] + harm},
            baseline: {"prompt_error": trivial},
            "clean": {"model": {"prompt_error": errors[0]}, baseline: {"prompt_error": trivial}},
        },
    }
    return ICLRun.from_result(run, task=task, scorer=scorer, seed=seed)


def test_icl_verdicts_pair_the_runs_by_seed():
    from ssa_book.icl import verdicts

    # SSA's error under shift is lower by seed-specific amounts; its runs arrive in another order.
    # Prompt errors flip from seed to seed, so a direction needs verdicts.no_effect_pairs pairs.
    count = 40
    softmax_shifted = {seed: 0.5 + 0.01 * seed for seed in range(count)}
    gain = {seed: 0.2 + 0.002 * seed for seed in range(count)}
    softmax = [fake_run("every", [0.0, softmax_shifted[s]], seed=s) for s in range(count)]
    ssa = [fake_run("every", [0.0, softmax_shifted[s] - gain[s]], seed=s) for s in reversed(range(count))]
    seeds, paired = verdicts.paired_seeds({"softmax": softmax, "ssa": ssa})
    assert seeds == list(range(count)) and [run.seed for run in paired["ssa"]] == seeds
    grows, lower = verdicts.shift_verdicts({"softmax": softmax, "ssa": ssa}, "every", "sigma_x", '"every"')
    assert lower.differences == pytest.approx([gain[s] for s in range(count)])  # softmax - SSA, seed by seed
    assert lower.outcome == "better" and lower.pairs == count
    assert grows.differences == pytest.approx([softmax_shifted[s] for s in range(count)]) and grows.outcome == "better"
    # A seed that only one scorer has is left out of the pairs.
    assert verdicts.shift_verdicts({"softmax": softmax, "ssa": ssa[1:]}, "every", "sigma_x", "x")[1].pairs == count - 1
    # With fewer pairs than that, the same gains decide nothing.
    assert (
        verdicts.shift_verdicts({"softmax": softmax[:8], "ssa": ssa[-8:]}, "every", "sigma_x", "x")[1].outcome
        == "exploratory"
    )
    with pytest.raises(ValueError, match="appears twice"):
        verdicts.paired_seeds({"softmax": softmax + softmax[:1], "ssa": ssa})


def test_three_seeds_are_too_few_to_decide_and_say_how_many_would():
    from ssa_book.icl import verdicts

    runs = {
        "softmax": [fake_run("some", [0.0, 0.6 + 0.01 * s], seed=s) for s in range(3)],
        "ssa": [fake_run("some", [0.0, 0.1 + 0.02 * s], seed=s) for s in range(3)],
    }
    verdict = verdicts.quantification_verdict({"some": runs})
    assert verdict.outcome == "exploratory" and verdict.claim == "ICL quantification under input-scale shift"
    ((name, part),) = verdict.parts
    assert part.pairs == 3 and part.seeds_to_resolve is not None and part.seeds_to_resolve >= 6
    table = verdicts.table([part])
    assert list(table.columns) == ["claim", "outcome", "effect", "95% interval", "pairs", "sentence"]
    assert (
        verdicts.resolve_summary([part])
        == f"If the observed means and spreads held, {part.seeds_to_resolve} seeds would decide the open claim."
    )
    assert "no claim can be decided" in verdicts.seed_statement(
        3
    ) and "every claim here is exploratory" in verdicts.seed_statement(3)
    differences = verdicts.differences_table([part], [0, 1, 2])
    assert list(differences.columns[1:4]) == ["seed 0", "seed 1", "seed 2"]


def test_linear_verdict_combines_the_two_shifts():
    from ssa_book.icl import verdicts

    runs = {
        "softmax": [fake_run("linear", [0.05, 0.6], seed=s) for s in range(6)],
        "ssa": [fake_run("linear", [0.05, 0.6 + 0.001 * (s - 2.5)], seed=s) for s in range(6)],
    }
    verdict = verdicts.linear_verdict(runs)
    assert [name for name, _ in verdict.parts] == list(verdicts.LINEAR_SHIFTS.values())
    assert verdict.outcome == "no difference that matters"  # the two models are the same within 0.003


def test_unlearned_models_test_nothing():
    from ssa_book.icl import verdicts

    runs = {
        "softmax": [fake_run("every", [0.4, 0.9], seed=s) for s in range(6)],  # 0.4 is not below 0.5 x 0.5
        "ssa": [fake_run("every", [0.0, 0.1], seed=s) for s in range(6)],
    }
    assert {v.outcome for v in verdicts.shift_verdicts(runs, "every", "sigma_x", "x")} == {"not learned"}
    assert "softmax did not learn" in verdicts.shift_verdicts(runs, "every", "sigma_x", "x")[1].detail
    assert verdicts.collapse_verdict({"every": runs}).outcome == "not learned"
    assert verdicts.quantification_verdict({"every": runs}).outcome == "not learned"


def test_collapse_premise_not_shown_when_softmax_barely_attends_to_the_injected_value():
    from ssa_book.icl import verdicts

    def runs(softmax_mass, ssa_mass, ssa_harm, count=6):
        return {
            "softmax": [fake_run("some", [0.0, 0.3], seed=s, mass=softmax_mass, harm=0.4) for s in range(count)],
            "ssa": [
                fake_run("some", [0.0, 0.1], seed=s, mass=ssa_mass + 0.001 * s, harm=ssa_harm) for s in range(count)
            ],
        }

    small = runs(0.008, 0.004, 0.1)
    verdict = verdicts.collapse_verdict({"some": small})
    assert verdict.outcome == "premise not shown"
    assert "softmax puts at most 0.008 of its attention on the injected value" in verdict.detail
    # The mechanism's claims are still judged on the chapter's page.
    share, harm = verdicts.injection_verdicts(small, "some", "x")
    assert share.outcome == "no difference that matters"
    # The harm on "some" is a prompt error, which flips from seed to seed: decided only from the pairs its flips need.
    flip_pairs = no_effect_pairs(verdicts.INJECTION_HARM_PROMPT_ERROR)
    assert flip_pairs == 36 and harm.outcome == "exploratory" and harm.no_effect_pairs == flip_pairs
    assert verdicts.injection_verdicts(runs(0.008, 0.004, 0.1, count=flip_pairs), "some", "x")[1].outcome == "better"
    assert (
        verdicts.harm_claim("linear") is verdicts.INJECTION_HARM
        and verdicts.harm_claim("every") is verdicts.INJECTION_HARM_PROMPT_ERROR
    )
    # A logit spread that does not grow is the premise's other half.
    flat = {
        "softmax": [
            LogitSpread.from_result(
                {"sigmas": [1, 2], "logit_spread": [[[3.0, 3.0]], [[2.0, 2.0]]]},
                task="some",
                scorer="softmax",
                seed=seed,
            )
            for seed in range(6)
        ]
    }
    premise = verdicts.collapse_premise(runs(0.9, 0.1, 0.1), flat)
    assert (
        premise["share"] == pytest.approx(0.9)
        and "growing by the 0.1 that would matter in none of the 6 seeds" in premise["not_shown"]
    )
    # A spread that grows while the share stays below the cut: not shown, and the step that occurred is said.
    growing = {
        "softmax": [
            LogitSpread.from_result(
                {"sigmas": [1, 2], "logit_spread": [[[1.0, 1.0]], [[3.0, 3.0]]]},
                task="some",
                scorer="softmax",
                seed=seed,
            )
            for seed in range(6)
        ]
    }
    premise = verdicts.collapse_premise(small, growing)
    assert (
        "below the cut of 0.5 for collapse onto one token, a cut set after the results had been read"
        in premise["not_shown"]
    )
    assert "did grow, by +2 to +2" in premise["not_shown"]
    assert premise["not_shown"].endswith("in each of the 6 seeds: the mechanism's first step occurred in these models")
    # Below the pairs the rule decides the logit claim from, the growth is said seed by seed, not as the step occurring.
    three = verdicts.collapse_premise(
        {name: found[:3] for name, found in small.items()}, {"softmax": growing["softmax"][:3]}
    )
    assert three["not_shown"].endswith("by at least 0.1 in each of the 3 seeds (exploratory: 3 seeds)")
    assert "first step" not in three["not_shown"]
    # With most of softmax's attention on the value, the mechanism claims decide.
    present = verdicts.collapse_verdict({"some": runs(0.9, 0.1, 0.1, count=flip_pairs)})
    assert present.outcome == "better" and {name for name, _ in present.parts} == {'"some"'}
    assert (
        verdicts.collapse_verdict({"some": runs(0.9, 0.1, 0.1, count=flip_pairs), "every": small}).outcome
        == "holds in part"
    )


def test_the_old_verdict_rule_is_gone():
    from ssa_book.verdicts.verdict import Verdict
    from ssa_book.icl import verdicts

    for name in ("difference_band", "grows", "lower", "VERDICTS", "MIN_RELATIVE_GAIN", "MIN_ABSOLUTE_GAIN"):
        assert not hasattr(verdicts, name), name
    assert verdicts.Verdict is Verdict
    for claim in (c for claims in verdicts.CLAIMS.values() for c in claims):
        assert claim.threshold == verdicts.MIN_EFFECT and claim.reason


def test_logit_spread_has_one_value_per_layer_and_head():
    from ssa_book.icl import diagnostics

    model = InContextLearner(dataclasses.replace(TINY, n_layer=2, scorer="ssa"))
    generator = torch.Generator().manual_seed(0)
    spreads = diagnostics.logit_ranges(
        model, torch.randn(3, 6, generator=generator), torch.randn(3, 6, generator=generator)
    )
    assert np.array(spreads).shape == (2, 2) and np.all(np.array(spreads) >= 0)


def test_every_task_is_one_registered_object_that_the_other_modules_ask():
    from ssa_book.icl import tasks

    assert tasks.TASKS == ("every", "some", "linear") and tasks.QUANTIFIERS == ("every", "some")
    with pytest.raises(ValueError, match="task must be one of every, some, linear; got 'all'"):
        tasks.get_task("all")
    xs, _ = sample_prompts(get_task("linear"), PromptSpec(12), 8, generator(3))
    for name in tasks.TASKS:
        task = tasks.get_task(name)
        assert tasks.get_task(task) is task
        xs, ys = sample_prompts(get_task(name), PromptSpec(12), 8, generator(3))
        assert task.uninformed in task.baselines()
        for predictor in task.baselines().values():  # the model's call signature and shape
            assert predictor(xs, ys).shape == xs.shape
        assert task.prompt_error(task.pointwise_error(ys, ys)) == 0.0  # the labels themselves are exact
        assert task.loss(torch.zeros_like(ys), ys).ndim == 0


def test_settings_added_for_the_study_leave_old_keys_alone_and_enter_the_key_when_set():
    from ssa_book.results.keys import cache_key, config_dict

    experiment = experiments.experiment_config("every", "ssa", "smoke", 0)
    plain = config_dict(experiment)
    for name in ("scorer_lr_scale", "schedule", "warmup_steps", "gradient_clip"):
        assert name not in plain["train"]
    assert (
        "read_in" not in plain["train"]["model"]
        and "per_position" not in plain["eval"]
        and "attention_map" not in plain["eval"]
    )
    changed = dataclasses.replace(experiment, train=dataclasses.replace(experiment.train, scorer_lr_scale=10.0))
    assert config_dict(changed)["train"]["scorer_lr_scale"] == 10.0
    assert cache_key(changed) != cache_key(experiment)
    # asdict holds every field; the key leaves out only the added ones at their defaults.
    full = dataclasses.asdict(experiment)
    for name in ("scorer_lr_scale", "schedule", "warmup_steps", "gradient_clip"):
        full["train"].pop(name)
    (
        full["train"]["model"].pop("read_in"),
        full["train"]["model"].pop("first_attention_norm"),
        full["eval"].pop("per_position"),
    )
    full["eval"].pop("attention_map")
    assert cache_key(full) == cache_key(experiment)


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"scorer_lr_scale": 0.0}, "scorer_lr_scale must be a number > 0"),
        ({"schedule": "linear"}, "schedule must be one of constant, warmup_cosine"),
        ({"warmup_steps": 5}, "warmup_steps: the constant schedule has no warm-up"),
        ({"schedule": "warmup_cosine", "warmup_steps": 30}, "warmup_steps must be an int in 0..train_steps-1"),
        ({"gradient_clip": -1.0}, "gradient_clip must be a number > 0 or None"),
    ],
)
def test_bad_training_settings_are_refused_by_name(settings, message):
    train = experiments.experiment_config("every", "ssa", "smoke", 0).train
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(train, **settings)


def test_the_warmup_cosine_schedule_and_the_scorer_learning_rate():
    from ssa_book.icl.train import _parameter_groups, build_model, learning_rate

    train = dataclasses.replace(
        experiments.experiment_config("every", "ssa", "smoke", 0).train,
        schedule="warmup_cosine",
        warmup_steps=10,
        train_steps=110,
        scorer_lr_scale=10.0,
    )
    rates = [learning_rate(train, step) for step in range(110)]
    assert rates[0] == pytest.approx(train.learning_rate / 10) and rates[9] == pytest.approx(train.learning_rate)
    assert rates[60] == pytest.approx(train.learning_rate / 2) and rates[-1] < 0.01 * train.learning_rate
    groups = _parameter_groups(build_model(train), train)
    assert len(groups) == 2 and groups[1]["lr_scale"] == 10.0
    assert len(groups[1]["params"]) == 2 * train.model.n_layer  # one b and one n per layer
    softmax = dataclasses.replace(train, model=dataclasses.replace(train.model, scorer="softmax", scorer_kwargs=()))
    with pytest.raises(ValueError, match="scorer_lr_scale: scorer 'softmax' has no trainable parameters"):
        _parameter_groups(build_model(softmax), softmax)


def test_a_scaled_scorer_learning_rate_moves_b_and_n_that_much_further_in_a_step():
    """Adam's first step moves each parameter by about its learning rate, so 10x the rate moves
    b and n about 10x as far while every other weight moves the same."""
    from ssa_book.icl.train import build_model

    base = dataclasses.replace(experiments.experiment_config("every", "ssa", "smoke", 0).train, train_steps=1)
    moved = {}
    for scale in (1.0, 10.0):
        config = dataclasses.replace(base, scorer_lr_scale=scale)
        trained = train(config, device="cpu", checkpoint=False, progress=False).model
        start = {name: parameter.detach() for name, parameter in build_model(config).named_parameters()}
        moved[scale] = {
            name: float((parameter.detach() - start[name]).abs().max())
            for name, parameter in trained.named_parameters()
        }
    scorer = [name for name in moved[1.0] if ".scorer." in name]
    assert scorer
    for name in scorer:
        assert moved[10.0][name] == pytest.approx(10 * moved[1.0][name], rel=0.05)
    other = next(name for name in moved[1.0] if name not in scorer)
    assert moved[10.0][other] == pytest.approx(moved[1.0][other], rel=1e-6)


def test_separate_read_in_channels_and_no_first_attention_norm():
    xs, ys = torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, 4.0]])
    assert interleave(xs, ys, "separate")[0].tolist() == [[1.0, 0.0], [0.0, 3.0], [2.0, 0.0], [0.0, 4.0]]
    model = InContextLearner(
        ModelConfig(n_layer=1, n_head=2, n_embd=8, n_positions=8, read_in="separate", first_attention_norm=False)
    )
    assert model.read_in.in_features == 2 and isinstance(model.backbone.h[0].ln_1, torch.nn.Identity)
    assert model(torch.randn(3, 5), torch.randn(3, 5)).shape == (3, 5)
    with pytest.raises(ValueError, match="read_in must be one of shared, separate"):
        ModelConfig(read_in="joint")


def test_an_evaluation_without_per_position_errors_keeps_the_prompt_errors():
    experiment = experiments.experiment_config("every", "softmax", "smoke", 0)
    lean = dataclasses.replace(experiment, eval=dataclasses.replace(experiment.eval, per_position=False))
    model = InContextLearner(experiment.train.model)
    full, small = (experiments.evaluate_trained(config, model) for config in (experiment, lean))
    assert (
        "per_position" in full["shifts"]["sigma_x"]["model"]
        and "per_position" not in small["shifts"]["sigma_x"]["model"]
    )
    assert small["shifts"]["sigma_x"]["model"]["prompt_error"] == full["shifts"]["sigma_x"]["model"]["prompt_error"]
    # Read as records: the same numbers, typed; the lean one has no pointwise errors.
    lean_run, full_run = (
        ICLRun.from_result(result, task="every", scorer="softmax", seed=0) for result in (small, full)
    )
    sweep = full_run.sweep("sigma_x")
    assert sweep.values == tuple(experiment.eval.sigmas) and sweep.predictors[0] == "model"
    assert set(sweep.baselines) == set(get_task("every").baselines())
    assert sweep.per_position["model"].shape == (len(experiment.eval.sigmas), experiment.eval.points)
    assert lean_run.sweep("sigma_x").per_position == {} and (lean_run.sweep("sigma_x").error() == sweep.error()).all()
    assert full_run.length.values == tuple(experiment.eval.lengths)
    assert full_run.injection.injected_mass.shape == full_run.concentration["sigma_x"].statistic("max_weight").shape[1:]
    assert full_run.attention_map.weights.ndim == 3 and full_run.injection.position == experiment.eval.inject_position
    mapless = experiments.evaluate_trained(
        dataclasses.replace(experiment, eval=dataclasses.replace(experiment.eval, attention_map=False)), model
    )
    assert "attention_map" not in mapless and mapless["shifts"] == full["shifts"]
    assert ICLRun.from_result(mapless, task="every", scorer="softmax", seed=0).attention_map is None


def test_a_result_of_another_layout_is_refused_with_the_key_it_lacks():
    with pytest.raises(ValueError, match="every/ssa/seed 3: the result has no 'shifts'"):
        ICLRun.from_result({"length": {}}, task="every", scorer="ssa", seed=3)
    broken = {"shifts": {"sigma_x": {"sigmas": [1, 2], "model": {"prompt_error": [0.1]}}}}
    with pytest.raises(ValueError, match="shifts/sigma_x/model: 1 prompt errors for 2 sigmas"):
        ICLRun.from_result(broken, task="every", scorer="ssa", seed=3)
    run = ICLRun.from_result(
        {"shifts": {"sigma_x": {"sigmas": [1, 2], "model": {"prompt_error": [0.1, 0.2]}}}},
        task="every",
        scorer="ssa",
        seed=3,
    )
    with pytest.raises(ValueError, match="shift must be one of sigma_x; got 'sigma_ab'"):
        run.sweep("sigma_ab")
    with pytest.raises(ValueError, match="predictor must be one of model; got 'zero'"):
        run.sweep("sigma_x").error("zero")


def test_a_config_resolves_its_task_once_and_keys_it_by_name():
    by_name, by_rules = TrainConfig(task="some"), TrainConfig(task=get_task("some"))
    assert by_rules == by_name and by_rules.task == "some" and by_rules.task_rules is get_task("some")
    assert config_dict(by_rules) == config_dict(by_name) and "task_rules" not in config_dict(by_rules)
    with pytest.raises(TypeError, match="task must be a Task"):
        sample_prompts("some", PromptSpec(4), 2, generator(0))
    with pytest.raises(ValueError, match="task must be one of"):
        TrainConfig(task="none")


def test_the_power_summary_leaves_out_the_claims_the_rule_does_not_decide_with_that_many_seeds():
    from ssa_book.icl import verdicts

    # Six pairs of a normalised error (decided from 6 pairs) and of a prompt error (flips: decided from 36).
    linear = judge(
        dataclasses.replace(verdicts.INJECTION_HARM, name="linear functions"),
        [0.1, 0.12, 0.09, 0.11, 0.1, 0.13],
        [0.2] * 6,
    )
    prompt = judge(
        dataclasses.replace(verdicts.INJECTION_HARM_PROMPT_ERROR, name='"some"'),
        [0.1, 0.3, 0.0, 0.2, 0.1, 0.4],
        [0.2] * 6,
    )
    assert verdicts.power_pairs([linear, prompt]) == (10, 20, 36)
    assert verdicts.power_pairs([linear]) == (10, 20)
    power = verdicts.power_table([linear, prompt], (6, 10, 36), simulations=200)
    assert list(power.xs(prompt.claim, level="claim")[verdicts.DECIDED_FROM]) == [36, 36]
    assert (power.xs(prompt.claim, level="claim")["10 seeds"] == 0).all()  # no verdict below 36, so no "better"
    summary = verdicts.power_summary(power, (10, 36))
    assert summary.startswith(
        "Over the 2 claims with a spread of paired differences, the power is, for an effect of the threshold's size, "
    )
    low = power.xs((linear.claim, "the threshold"))["10 seeds"]
    assert f"{low:.2f} with 10" in summary  # the prompt error's 0 at 10 seeds is no power and is left out of the range
    assert summary.endswith(
        "1 of the 2 claims is decided only from 36 pairs on: with 10 seeds the rule gives it no verdict, so no "
        "power, and the ranges above leave it out."
    )
    alone = verdicts.power_summary(verdicts.power_table([prompt], (10, 20), simulations=200), (10, 20))
    assert (
        alone
        == "The claim is decided only from 36 pairs on: with 10 or 20 seeds the rule gives it no verdict, so no power."
    )
