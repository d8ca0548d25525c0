"""Reference predictors of the in-context tasks, with the model's call signature.

Every predictor is ``predictor(xs, ys) -> predictions`` with ``xs`` and ``ys`` of shape
``(B, N)``, where prediction ``i`` may use ``x_1..x_i`` and ``y_1..y_{i-1}`` only; each task
(:mod:`ssa_book.icl.tasks`) names its own.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

Predictor = Callable[[Tensor, Tensor], Tensor]
QUANTIFIER_NAMES = ("every", "some")


def quantification_labels(xs: Tensor, quantifier: str) -> Tensor:
    """+1 / -1 labels ``(B, N)``: is every (``"every"``) / some (``"some"``) ``x_1..x_i`` > 0?"""
    if quantifier not in QUANTIFIER_NAMES:
        raise ValueError(f"quantifier must be one of {', '.join(QUANTIFIER_NAMES)}; got {quantifier!r}")
    positive = (xs > 0).to(torch.int64)
    # cummin of 0/1 is a running AND, cummax a running OR.
    running = positive.cummin(dim=1).values if quantifier == "every" else positive.cummax(dim=1).values
    return (2 * running - 1).to(xs.dtype)


def exact_rule(quantifier: str) -> Predictor:
    """The quantifier itself, applied to the inputs seen so far: error 0 by construction."""
    return lambda xs, ys: quantification_labels(xs, quantifier)


def majority_class(quantifier: str) -> Predictor:
    """The most frequent label at each point under symmetric inputs: P(every x_1..x_i > 0) = 2^-i,
    so "every" is mostly -1 and "some" mostly +1 (point 1 is a tie, broken towards the same label)."""
    label = -1.0 if quantifier == "every" else 1.0
    return lambda xs, ys: torch.full_like(xs, label)


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
