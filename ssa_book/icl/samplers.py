"""Prompt samplers: the training distribution N(0, 1) and the paper's shifts.

A :class:`PromptSpec` says how to draw one batch of prompts: how many points, the scale ``sigma_x``
of the inputs (``x ~ N(0, sigma_x^2)``), for the linear task the scale ``sigma_ab`` of the function
parameters (``a, b ~ N(0, sigma_ab^2)``), and optionally one extreme input ``inject_value`` put at
point ``inject_position`` (0-based): the failure the paper describes, where one large value
dominates softmax attention. Training draws ``PromptSpec(points)``; every shift is a field away.
Drawing is seeded by a ``torch.Generator``, so a batch is a pure function of (spec, seed).
"""

from __future__ import annotations

import dataclasses
import math

import torch
from torch import Tensor

from ssa_book.icl.tasks import Task


@dataclasses.dataclass(frozen=True)
class PromptSpec:
    points: int  # (x, y) pairs in the prompt
    sigma_x: float = 1.0  # x ~ N(0, sigma_x^2)
    sigma_ab: float = 1.0  # linear task: a, b ~ N(0, sigma_ab^2)
    inject_position: int | None = None  # 0-based point whose x is replaced by inject_value
    inject_value: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.points, int) or self.points < 1:
            raise ValueError(f"points must be an int >= 1; got {self.points!r}")
        for name in ("sigma_x", "sigma_ab"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
        if self.inject_position is not None and not 0 <= self.inject_position < self.points:
            raise ValueError(f"inject_position must be in 0..{self.points - 1} (or None); got {self.inject_position!r}")


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def sample_prompts(task: Task, spec: PromptSpec, batch_size: int, rng: torch.Generator) -> tuple[Tensor, Tensor]:
    """One batch ``(xs, ys)`` of ``task`` (:func:`ssa_book.icl.tasks.get_task` of its name), each
    ``(batch_size, spec.points)``, float32 on the CPU."""
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task (ssa_book.icl.tasks.get_task of its name); got {task!r}")
    xs = spec.sigma_x * torch.randn(batch_size, spec.points, generator=rng)
    if spec.inject_position is not None:
        xs[:, spec.inject_position] = spec.inject_value
    return xs, task.labels(xs, spec, rng)
