"""In-context learning: tasks, baselines, training, resume, cache, bad input. All fast."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from ssa.icl import evaluate, experiments
from ssa.icl.curriculum import Curriculum
from ssa.icl.models import InContextLearner, ModelConfig, interleave
from ssa.icl.samplers import PromptSpec, generator, sample_prompts
from ssa.icl.tasks import linear_labels, quantification_labels
from ssa.icl.train import TrainConfig, train

TINY = ModelConfig(n_layer=1, n_head=2, n_embd=8, n_positions=12)


def tiny_config(**changes) -> TrainConfig:
    base = TrainConfig(task="linear", model=TINY, curriculum=Curriculum(3, 5, 2, 3), batch_size=8, learning_rate=1e-2, train_steps=6, log_every=2)
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
    xs, ys = sample_prompts("linear", PromptSpec(6, sigma_ab=3.0), 16, generator(0))
    for predictor in (evaluate.least_squares, evaluate.bayes_linear):
        predictions = predictor(xs, ys)
        torch.testing.assert_close(predictions[:, 2:], ys[:, 2:], rtol=1e-4, atol=1e-4)
    assert torch.all(evaluate.zero_predictor(xs, ys) == 0)


def test_prompt_metric_counts_a_prompt_wrong_from_point_three_on():
    errors = torch.tensor([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    assert evaluate.prompt_error("every", errors) == 0.5  # first prompt's errors come before point 3
    assert evaluate.prompt_error("linear", errors) == pytest.approx(0.25)


def test_quantification_baselines():
    xs, ys = sample_prompts("some", PromptSpec(10, sigma_x=7.0), 64, generator(1))
    assert evaluate.evaluate(evaluate.exact_rule("some"), "some", PromptSpec(10, sigma_x=7.0), 64, 1)["prompt_error"] == 0.0
    majority = evaluate.majority_class("some")(xs, ys)
    assert torch.all(majority == 1)


def test_injected_value_lands_at_its_position():
    xs, _ = sample_prompts("every", PromptSpec(8, inject_position=3, inject_value=10.0), 4, generator(0))
    assert torch.all(xs[:, 3] == 10.0)


def test_smoke_training_lowers_the_loss():
    trained = train(tiny_config(train_steps=60, curriculum=Curriculum(5, 5, 1, 100), log_every=10), checkpoint=False, progress=False)
    losses = [loss for _, loss in trained.history]
    assert losses[-1] < 0.8 * losses[0]


@pytest.mark.parametrize("scorer", ["softmax", "ssa"])
def test_resume_gives_identical_weights(tmp_path, scorer):
    config = tiny_config(model=dataclasses.replace(TINY, scorer=scorer))
    whole = train(config, checkpoint=tmp_path / "a.pt", checkpoint_every=100, progress=False)
    train(config, checkpoint=tmp_path / "b.pt", checkpoint_every=2, stop_at=3, progress=False)  # "killed" after step 3
    resumed = train(config, checkpoint=tmp_path / "b.pt", checkpoint_every=2, progress=False)
    assert resumed.steps == whole.steps == config.train_steps
    for (name, a), (_, b) in zip(whole.model.state_dict().items(), resumed.model.state_dict().items()):
        assert torch.equal(a, b), name
    assert resumed.history == whole.history


def test_checkpoint_of_another_config_is_not_reused(tmp_path):
    path = tmp_path / "c.pt"
    train(tiny_config(seed=1), checkpoint=path, progress=False)
    again = train(tiny_config(seed=2), checkpoint=path, stop_at=2, progress=False)
    assert again.steps == 2  # started over instead of loading seed 1's finished model


def test_cache_is_reused_only_for_an_identical_config(tmp_path, monkeypatch):
    calls = []

    def fake_run(experiment, **kwargs):
        calls.append(experiment.train.seed)
        return {"seed": experiment.train.seed}

    monkeypatch.setattr(experiments, "run", fake_run)
    first = experiments.experiment_config("every", "ssa", "smoke", seed=0)
    for config in (first, first, experiments.experiment_config("every", "ssa", "smoke", seed=1),
                   experiments.experiment_config("every", "ssa", "smoke", seed=0, n=2.0), first):
        experiments.cached_run(config, profile="smoke", results_dir=tmp_path)
    assert calls == [0, 1, 0]
    # An entry written by another result version is recomputed, never reused.
    monkeypatch.setattr(experiments, "RESULT_VERSION", 99)
    newer = dataclasses.replace(first, version=99)
    experiments.cached_run(newer, profile="smoke", results_dir=tmp_path)
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
    injected, _ = sample_prompts("some", spec, 4, generator(5))
    clean, _ = sample_prompts("some", dataclasses.replace(spec, inject_position=None), 4, generator(5))
    changed = (injected != clean).any(dim=0)
    assert changed.tolist() == [False, False, False, True, False, False, False, False]


def test_verdict_thresholds():
    from ssa.icl import verdicts

    clear = verdicts.grows("c", np.array([0.1, 0.1, 0.12]), np.array([0.5, 0.55, 0.6]), "x")
    assert clear.verdict == "reproduced"
    small_but_clear = verdicts.grows("c", np.array([0.1, 0.1, 0.1]), np.array([0.12, 0.13, 0.12]), "x")
    assert small_but_clear.verdict == "partly reproduced"
    small_and_unclear = verdicts.grows("c", np.array([0.1, 0.2, 0.0]), np.array([0.12, 0.0, 0.2]), "x")
    assert small_and_unclear.verdict == "not reproduced at this scale"
    reversed_ = verdicts.lower("c", np.array([0.2, 0.2, 0.2]), np.array([0.3, 0.3, 0.3]), "x")
    assert reversed_.verdict == "not reproduced at this scale"
    nothing_to_reduce = verdicts.lower("c", np.array([-0.1, 0.0, -0.05]), np.array([-0.3, -0.2, -0.4]), "x")
    assert nothing_to_reduce.verdict == "not reproduced at this scale"
    assert verdicts.lower("c", np.array([0.8, 0.9, 0.85]), np.array([0.1, 0.2, 0.1]), "x").verdict == "reproduced"


def test_logit_spread_has_one_value_per_layer_and_head():
    from ssa.icl import diagnostics

    model = InContextLearner(dataclasses.replace(TINY, n_layer=2, scorer="ssa"))
    generator = torch.Generator().manual_seed(0)
    spreads = diagnostics.logit_ranges(model, torch.randn(3, 6, generator=generator), torch.randn(3, 6, generator=generator))
    assert np.array(spreads).shape == (2, 2) and np.all(np.array(spreads) >= 0)
