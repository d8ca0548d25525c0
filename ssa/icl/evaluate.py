"""Evaluation under distribution shift, baselines, and confidence bands over seeds.

Everything that predicts is a *predictor*: ``predictor(xs, ys) -> predictions`` with ``xs`` and
``ys`` of shape ``(B, N)``, where prediction ``i`` may use ``x_1..x_i`` and ``y_1..y_{i-1}`` only.
A trained model (through :func:`model_predictor`) and every baseline share that signature, so each
metric below is computed the same way for all of them, on the same prompts.

Metrics (the paper's; the details as in the authors' public code): pointwise error is a wrong
sign (quantification) or the squared error (linear). The *prompt-level* error scores predictions
from point 3 on (0-based index :data:`FIRST_SCORED` = 2): for quantification a prompt is wrong
when any of them is wrong; for the linear task it is their mean squared error. Both are averaged
over prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor

from ssa.icl.samplers import PromptSpec, generator, sample_prompts
from ssa.icl.tasks import QUANTIFIERS, check_task, is_classification, pointwise_error

Predictor = Callable[[Tensor, Tensor], Tensor]
FIRST_SCORED = 2  # predictions from the 3rd point on count in the prompt-level metric


# --- baselines ---------------------------------------------------------------------------------

def least_squares(xs: Tensor, ys: Tensor) -> Tensor:
    """Minimum-norm least squares for ``y = a x + b`` on the points seen so far (0 with none):
    exact from two distinct noiseless points on, and the Bayes-optimal predictor of this task.

    Under squared error the Bayes-optimal prediction is the posterior mean of ``a x + b``; with
    ``a, b ~ N(0, s^2)`` and observation noise ``e`` it is ``(G + r I)^+ Phi^T y``, where
    ``G = Phi^T Phi`` is the 2x2 Gram matrix of the features ``(x, 1)`` and ``r = e^2 / s^2``.
    The task is noiseless (``r = 0``), which leaves the minimum-norm least-squares fit whatever the
    prior's scale: one predictor, not two. Running sums make every prefix cost the same 2x2 solve.
    """
    features = torch.stack((xs, torch.ones_like(xs)), dim=-1).double()  # (B, N, 2)
    gram = torch.cumsum(features[..., :, None] * features[..., None, :], dim=1)  # (B, N, 2, 2), points <= i
    moment = torch.cumsum(features * ys[..., None].double(), dim=1)  # (B, N, 2)
    # Prediction i uses points < i: shift the running sums by one point (nothing seen before point 1).
    gram = torch.cat((torch.zeros_like(gram[:, :1]), gram[:, :-1]), dim=1)
    moment = torch.cat((torch.zeros_like(moment[:, :1]), moment[:, :-1]), dim=1)
    coefficients = torch.linalg.pinv(gram, hermitian=True) @ moment[..., None]  # (B, N, 2, 1)
    return (features[..., None, :] @ coefficients)[..., 0, 0].to(xs.dtype)


def zero_predictor(xs: Tensor, ys: Tensor) -> Tensor:
    """Always 0: for the linear task, the error of having learned nothing (the prior mean)."""
    return torch.zeros_like(xs)


def exact_rule(quantifier: str) -> Predictor:
    """The quantifier itself, applied to the inputs seen so far: error 0 by construction."""
    from ssa.icl.tasks import quantification_labels

    return lambda xs, ys: quantification_labels(xs, quantifier)


def majority_class(quantifier: str) -> Predictor:
    """The most frequent label at each point under symmetric inputs: P(every x_1..x_i > 0) = 2^-i,
    so "every" is mostly -1 and "some" mostly +1 (point 1 is a tie, broken towards the same label)."""
    label = -1.0 if quantifier == "every" else 1.0
    return lambda xs, ys: torch.full_like(xs, label)


def baselines(task: str) -> dict[str, Predictor]:
    """The reference predictors of ``task``, by name."""
    check_task(task)
    if is_classification(task):
        return {"exact rule": exact_rule(task), "majority class": majority_class(task)}
    return {"least squares": least_squares, "zero": zero_predictor}


def model_predictor(model: torch.nn.Module, device: str = "cpu") -> Predictor:
    def predict(xs: Tensor, ys: Tensor) -> Tensor:
        with torch.no_grad():
            return model(xs.to(device), ys.to(device)).float().cpu()

    return predict


# --- metrics -----------------------------------------------------------------------------------

def pointwise_errors(predictor: Predictor, task: str, spec: PromptSpec, prompts: int, seed: int, batch_size: int = 64) -> Tensor:
    """Error of every prediction ``(prompts, spec.points)`` on prompts drawn from ``spec`` with ``seed``."""
    rng = generator(seed)
    errors = []
    for start in range(0, prompts, batch_size):
        xs, ys = sample_prompts(task, spec, min(batch_size, prompts - start), rng)
        errors.append(pointwise_error(task, predictor(xs, ys), ys))
    return torch.cat(errors)


def prompt_error(task: str, errors: Tensor) -> float:
    """The paper's prompt-level metric from pointwise ``errors`` ``(prompts, N)``."""
    scored = errors[:, FIRST_SCORED:]
    if scored.shape[1] == 0:
        raise ValueError(f"prompts need more than {FIRST_SCORED} points to be scored; got {errors.shape[1]}")
    if is_classification(task):
        return float((scored > 0).any(dim=1).float().mean())
    return float(scored.mean())


def evaluate(predictor: Predictor, task: str, spec: PromptSpec, prompts: int, seed: int) -> dict:
    """``{"prompt_error": float, "per_position": [N floats]}`` for one predictor on one prompt distribution."""
    errors = pointwise_errors(predictor, task, spec, prompts, seed)
    return {"prompt_error": prompt_error(task, errors), "per_position": errors.mean(dim=0).tolist()}


def sweep(predictor: Predictor, task: str, specs: Sequence[PromptSpec], prompts: int, seed: int) -> list[dict]:
    """:func:`evaluate` on each spec, every spec with its own prompts drawn from ``seed``."""
    return [evaluate(predictor, task, spec, prompts, seed + index) for index, spec in enumerate(specs)]


# --- confidence bands over seeds ---------------------------------------------------------------

def bootstrap_band(values: Sequence | np.ndarray, *, level: float = 0.95, resamples: int = 2000, seed: int = 0) -> dict:
    """Mean over seeds (axis 0) with a percentile bootstrap band: resample the seeds with
    replacement, take the mean, report the ``(1-level)/2`` and ``(1+level)/2`` quantiles.

    ``values`` is ``(seeds, ...)``; returns ``{"mean", "low", "high"}`` arrays of the trailing shape.
    With few seeds the band is coarse (3 seeds give at most 10 distinct resample means): it shows
    the spread between training runs, not a precise interval.
    """
    array = np.asarray(values, dtype=float)
    if array.ndim == 0 or array.shape[0] == 0:
        raise ValueError("values must have at least one seed along axis 0")
    if not np.all(np.isfinite(array)):
        raise ValueError("values contain NaN or infinity; a figure would hide them")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, array.shape[0], size=(resamples, array.shape[0]))
    means = array[picks].mean(axis=1)  # (resamples, ...)
    return {
        "mean": array.mean(axis=0),
        "low": np.quantile(means, (1 - level) / 2, axis=0),
        "high": np.quantile(means, (1 + level) / 2, axis=0),
    }


__all__ = [
    "FIRST_SCORED", "QUANTIFIERS", "Predictor", "baselines", "bootstrap_band", "evaluate",
    "exact_rule", "least_squares", "majority_class", "model_predictor", "pointwise_errors", "prompt_error",
    "sweep", "zero_predictor",
]
