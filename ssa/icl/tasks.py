"""The two in-context-learning tasks of the paper, as label functions with their own loss.

* **Quantification** (``"every"``, ``"some"``; "linear classification" in the authors' code): the
  label of point ``i`` says whether *every* (cumulative AND) or *some* (cumulative OR) of
  ``x_1, ..., x_i`` is positive, as +1 / -1. The model's output is a logit; the loss is binary
  cross-entropy of ``sigmoid(output)`` against ``(y + 1) / 2``; a prediction is right when its
  sign is the label's.
* **Linear functions** ``f(x) = a x + b`` with one ``(a, b)`` per prompt; loss and error are the
  squared error.

A task turns a batch of inputs ``xs`` ``(B, N)`` (and, for the linear task, the function
parameters) into labels ``ys`` ``(B, N)``; :mod:`ssa.icl.samplers` draws the inputs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

TASKS = ("every", "some", "linear")
QUANTIFIERS = ("every", "some")


def check_task(task: str) -> str:
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}")
    return task


def is_classification(task: str) -> bool:
    return check_task(task) in QUANTIFIERS


def quantification_labels(xs: Tensor, quantifier: str) -> Tensor:
    """+1 / -1 labels ``(B, N)``: is every (``"every"``) / some (``"some"``) ``x_1..x_i`` > 0?"""
    if quantifier not in QUANTIFIERS:
        raise ValueError(f"quantifier must be one of {', '.join(QUANTIFIERS)}; got {quantifier!r}")
    positive = (xs > 0).to(torch.int64)
    # cummin of 0/1 is a running AND, cummax a running OR.
    running = positive.cummin(dim=1).values if quantifier == "every" else positive.cummax(dim=1).values
    return (2 * running - 1).to(xs.dtype)


def linear_labels(xs: Tensor, slope: Tensor, intercept: Tensor) -> Tensor:
    """``a x + b`` for one ``(a, b)`` per prompt: ``xs`` ``(B, N)``, ``slope``/``intercept`` ``(B,)``."""
    return slope[:, None] * xs + intercept[:, None]


def loss(task: str, predictions: Tensor, ys: Tensor) -> Tensor:
    """The training loss: BCE on the logit against ``(y+1)/2`` for quantification, MSE for linear."""
    if is_classification(task):
        return F.binary_cross_entropy_with_logits(predictions, (ys + 1) / 2)
    return F.mse_loss(predictions, ys)


def pointwise_error(task: str, predictions: Tensor, ys: Tensor) -> Tensor:
    """Error of every prediction ``(B, N)``: 0/1 (wrong sign) for quantification, squared error for linear."""
    if is_classification(task):
        return (torch.sign(predictions) != ys).to(predictions.dtype)
    return (predictions - ys) ** 2
