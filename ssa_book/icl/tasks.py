"""The in-context-learning tasks of the paper, one class per task in a registry.

A task says everything that differs between tasks: how a prompt's labels are drawn, the
training loss, the error of one prediction and of a whole prompt, the reference predictors
(baselines) and which scales the paper shifts. Every other module asks the task
(:func:`get_task`) instead of branching on its name.

* **Quantification** (``"every"``, ``"some"``; "linear classification" in the authors' code): the
  label of point ``i`` says whether *every* (cumulative AND) or *some* (cumulative OR) of
  ``x_1, ..., x_i`` is positive, as +1 / -1. The model's output is a logit; the loss is binary
  cross-entropy of ``sigmoid(output)`` against ``(y + 1) / 2``; a prediction is right when its
  sign is the label's; a prompt is wrong when any scored prediction is.
* **Linear functions** (``"linear"``) ``f(x) = a x + b`` with one ``(a, b) ~ N(0, sigma_ab^2)`` per
  prompt; loss and error are the squared error, a prompt's error their mean.

Prompts are drawn by :func:`ssa_book.icl.samplers.sample_prompts`: ``x ~ N(0, sigma_x^2)`` first, then
whatever the task draws for its labels, from the same generator.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor

from ssa_book.icl.baselines import (
    Predictor,
    exact_rule,
    least_squares,
    majority_class,
    quantification_labels,
    zero_predictor,
)

FIRST_SCORED = 2  # predictions from the 3rd point on count in the prompt-level metric


@dataclasses.dataclass(frozen=True)
class Task:
    """What the chapters need to know of a task; subclasses fill the methods."""

    name: str
    claim: ClassVar[str]  # the paper's claim the task tests (a key of the ledger and the verdicts)
    classification: ClassVar[bool]
    shifted_scales: ClassVar[tuple[str, ...]]  # the PromptSpec scales the paper shifts, one sweep each
    uninformed: ClassVar[str]  # the baseline that ignores the prompt: an error of "learned nothing"
    title: ClassVar[str]  # how the prose names it

    def labels(self, xs: Tensor, spec, rng: torch.Generator) -> Tensor:
        """Labels ``(B, N)`` for inputs ``xs`` ``(B, N)`` of a prompt drawn from ``spec``."""
        raise NotImplementedError

    def loss(self, predictions: Tensor, ys: Tensor) -> Tensor:
        """The training loss, a mean over the batch and the points."""
        raise NotImplementedError

    def pointwise_error(self, predictions: Tensor, ys: Tensor) -> Tensor:
        """Error of every prediction ``(B, N)``."""
        raise NotImplementedError

    def prompt_error(self, errors: Tensor) -> float:
        """The paper's prompt-level metric from pointwise ``errors`` ``(prompts, N)``, scored from
        point 3 on (0-based :data:`FIRST_SCORED`), averaged over prompts."""
        scored = errors[:, FIRST_SCORED:]
        if scored.shape[1] == 0:
            raise ValueError(f"prompts need more than {FIRST_SCORED} points to be scored; got {errors.shape[1]}")
        return self._prompt_error(scored)

    def _prompt_error(self, scored: Tensor) -> float:
        raise NotImplementedError

    def baselines(self) -> dict[str, Predictor]:
        """The reference predictors, by name (every one has the model's call signature)."""
        raise NotImplementedError

    def injection_sign(self) -> float:
        """The sign of the injected extreme input: one that leaves the labels' rule untouched."""
        return 1.0


@dataclasses.dataclass(frozen=True)
class Quantifier(Task):
    claim: ClassVar[str] = "quantification"
    classification: ClassVar[bool] = True
    shifted_scales: ClassVar[tuple[str, ...]] = ("sigma_x",)
    uninformed: ClassVar[str] = "majority class"

    @property
    def title(self) -> str:  # type: ignore[override]
        return f'"{self.name}"'

    def labels(self, xs: Tensor, spec, rng: torch.Generator) -> Tensor:
        return quantification_labels(xs, self.name)

    def loss(self, predictions: Tensor, ys: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(predictions, (ys + 1) / 2)

    def pointwise_error(self, predictions: Tensor, ys: Tensor) -> Tensor:
        return (torch.sign(predictions) != ys).to(predictions.dtype)

    def _prompt_error(self, scored: Tensor) -> float:
        return float((scored > 0).any(dim=1).float().mean())

    def baselines(self) -> dict[str, Predictor]:
        return {"exact rule": exact_rule(self.name), "majority class": majority_class(self.name)}

    def injection_sign(self) -> float:
        # A large positive x cannot make "every" true, a large negative one cannot make "some"
        # false: a model that copies the extreme token's sign is wrong.
        return -1.0 if self.name == "some" else 1.0


@dataclasses.dataclass(frozen=True)
class LinearFunctions(Task):
    claim: ClassVar[str] = "linear"
    classification: ClassVar[bool] = False
    shifted_scales: ClassVar[tuple[str, ...]] = ("sigma_x", "sigma_ab")
    uninformed: ClassVar[str] = "zero"
    title: ClassVar[str] = "linear functions"

    def labels(self, xs: Tensor, spec, rng: torch.Generator) -> Tensor:
        slope, intercept = spec.sigma_ab * torch.randn(2, xs.shape[0], generator=rng)
        return linear_labels(xs, slope, intercept)

    def loss(self, predictions: Tensor, ys: Tensor) -> Tensor:
        return F.mse_loss(predictions, ys)

    def pointwise_error(self, predictions: Tensor, ys: Tensor) -> Tensor:
        return (predictions - ys) ** 2

    def _prompt_error(self, scored: Tensor) -> float:
        return float(scored.mean())

    def baselines(self) -> dict[str, Predictor]:
        return {"least squares": least_squares, "zero": zero_predictor}


def linear_labels(xs: Tensor, slope: Tensor, intercept: Tensor) -> Tensor:
    """``a x + b`` for one ``(a, b)`` per prompt: ``xs`` ``(B, N)``, ``slope``/``intercept`` ``(B,)``."""
    return slope[:, None] * xs + intercept[:, None]


REGISTRY: dict[str, Task] = {
    task.name: task for task in (Quantifier("every"), Quantifier("some"), LinearFunctions("linear"))
}
TASKS: tuple[str, ...] = tuple(REGISTRY)
QUANTIFIERS: tuple[str, ...] = tuple(name for name, task in REGISTRY.items() if task.classification)


def get_task(task: str | Task) -> Task:
    """The registered task called ``task`` (a :class:`Task` is returned as it is)."""
    if isinstance(task, Task):
        return task
    if task not in REGISTRY:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}")
    return REGISTRY[task]
