"""The sets of max retrieval: ``items`` ``(B, N, 1 + C)`` and the class to retrieve ``(B,)``.

Each item has a priority drawn uniformly from [0, 1) and a class drawn uniformly from ``C``; its
features are the priority followed by the class one-hot. The target is the class of the item of
highest priority (ties have probability zero). A set is a pure function of ``(seed, stream,
index)``: training batch ``step`` of a run and evaluation set ``i`` of a size are the same on
every machine and for every scorer, so runs pair by seed and every scorer meets the same test sets.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ssa_book.training import stream_seed

TRAIN_STREAM = "train"  # generator streams: training batches and test sets never share a draw
EVAL_STREAM = "test"


def generator(seed: int, stream: str, index: int) -> torch.Generator:
    """A CPU generator for draw ``index`` of ``stream`` under ``seed`` (:func:`ssa_book.training.stream_seed`)."""
    for name, value in (("seed", seed), ("index", index)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an int >= 0; got {value!r}")
    if stream not in (TRAIN_STREAM, EVAL_STREAM):
        raise ValueError(f"stream must be {TRAIN_STREAM!r} or {EVAL_STREAM!r}; got {stream!r}")
    return torch.Generator().manual_seed(stream_seed(seed, stream, index))


def sample_sets(batch: int, items: int, classes: int, rng: torch.Generator) -> tuple[Tensor, Tensor]:
    """``batch`` sets of ``items`` items over ``classes`` classes: ``(features (B, N, 1 + C), target (B,))``."""
    for name, value, least in (("batch", batch, 1), ("items", items, 1), ("classes", classes, 2)):
        if not isinstance(value, int) or value < least:
            raise ValueError(f"{name} must be an int >= {least}; got {value!r}")
    priority = torch.rand(batch, items, generator=rng)  # (B, N)
    label = torch.randint(classes, (batch, items), generator=rng)  # (B, N)
    features = torch.cat([priority[..., None], torch.nn.functional.one_hot(label, classes).float()], dim=-1)
    target = label.gather(1, priority.argmax(1, keepdim=True))[:, 0]  # (B,)
    return features, target


def top_item(features: Tensor) -> Tensor:
    """The index of each set's item of highest priority, ``(B,)``."""
    return features[..., 0].argmax(-1)
