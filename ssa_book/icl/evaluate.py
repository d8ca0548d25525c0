"""Evaluation under distribution shift, and confidence bands over seeds.

Everything that predicts is a *predictor*: ``predictor(xs, ys) -> predictions`` with ``xs`` and
``ys`` of shape ``(B, N)``, where prediction ``i`` may use ``x_1..x_i`` and ``y_1..y_{i-1}`` only.
A trained model (through :func:`model_predictor`) and every baseline of its task
(:meth:`ssa_book.icl.tasks.Task.baselines`) share that signature, so each metric below is computed the
same way for all of them, on the same prompts. The metrics are the task's
(:meth:`~ssa_book.icl.tasks.Task.pointwise_error`, :meth:`~ssa_book.icl.tasks.Task.prompt_error`: the
paper's, with the details of the authors' public code).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from ssa_book.icl.baselines import Predictor
from ssa_book.icl.samplers import PromptSpec, generator, sample_prompts
from ssa_book.icl.tasks import Task


def model_predictor(model: torch.nn.Module, device: str = "cpu") -> Predictor:
    def predict(xs: Tensor, ys: Tensor) -> Tensor:
        with torch.no_grad():
            return model(xs.to(device), ys.to(device)).float().cpu()

    return predict


# --- metrics -----------------------------------------------------------------------------------


def pointwise_errors(
    predictor: Predictor, task: Task, spec: PromptSpec, prompts: int, seed: int, batch_size: int = 64
) -> Tensor:
    """Error of every prediction ``(prompts, spec.points)`` on prompts drawn from ``spec`` with ``seed``."""
    rng = generator(seed)
    errors = []
    for start in range(0, prompts, batch_size):
        xs, ys = sample_prompts(task, spec, min(batch_size, prompts - start), rng)
        errors.append(task.pointwise_error(predictor(xs, ys), ys))
    return torch.cat(errors)


def evaluate(predictor: Predictor, task: Task, spec: PromptSpec, prompts: int, seed: int) -> dict:
    """``{"prompt_error": float, "per_position": [N floats]}`` for one predictor on one prompt distribution."""
    errors = pointwise_errors(predictor, task, spec, prompts, seed)
    return {"prompt_error": task.prompt_error(errors), "per_position": errors.mean(dim=0).tolist()}


def sweep(predictor: Predictor, task: Task, specs: Sequence[PromptSpec], prompts: int, seed: int) -> list[dict]:
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


__all__ = ["Predictor", "bootstrap_band", "evaluate", "model_predictor", "pointwise_errors", "sweep"]
