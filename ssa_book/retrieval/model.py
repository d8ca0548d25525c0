"""The max retriever: item encoder, one attention head, readout.

    features (B, N, F) --MLP--> items (B, N, W) --keys, values--> one head, query q
    --scorer weights (B, N)--> pooled (B, W) --MLP--> class logits (B, C)

The query is one of :data:`QUERIES`: by default one learned vector, the same for every set, which
reads the set through the keys, so that the only way to find the item of highest priority is to
put the attention on it; or one computed from the set itself, as "softmax is not enough" derives
its query from the input. Any scorer of :mod:`ssa.scoring` is one argument away; weights are those
of :func:`ssa.attention.attention`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import torch
from torch import Tensor, nn

from ssa.attention import attention
from ssa_book.results.keys import added_field
from ssa.scoring import make_scorer, scorer_names

# "learned": one learned vector for every set; "input": a linear map of the mean of the set's
# encoded items, a query that depends on the set but not on the order or the number of its items.
QUERIES = ("learned", "input")


@dataclasses.dataclass(frozen=True)
class RetrieverConfig:
    classes: int = 10  # classes an item can have
    width: int = 128  # the items' and the head's width
    depth: int = 3  # hidden layers of the item encoder and of the readout, each
    scorer: str = "softmax"  # any name of ssa.scoring.scorer_names()
    scorer_kwargs: tuple[tuple[str, Any], ...] = ()  # a tuple keeps the config hashable
    query: str = added_field("learned")  # one of QUERIES

    def __post_init__(self) -> None:
        if self.scorer not in scorer_names():
            raise ValueError(f"scorer must be one of {', '.join(scorer_names())}; got {self.scorer!r}")
        if self.query not in QUERIES:
            raise ValueError(f"query must be one of {', '.join(QUERIES)}; got {self.query!r}")
        for name, least in (("classes", 2), ("width", 1), ("depth", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an int >= {least}; got {value!r}")

    @property
    def features(self) -> int:
        return 1 + self.classes  # the priority, then the class one-hot


def _mlp(inputs: int, width: int, depth: int, outputs: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for index in range(depth):
        layers += [nn.Linear(inputs if index == 0 else width, width), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(width, outputs))


class MaxRetriever(nn.Module):
    def __init__(self, config: RetrieverConfig):
        super().__init__()
        self.config = config
        self.encoder = _mlp(config.features, config.width, config.depth, config.width)
        # Created in this order so that a learned query's model draws the same initial weights as always.
        if config.query == "learned":
            self.query = nn.Parameter(torch.randn(config.width) / math.sqrt(config.width))
        else:
            self.query_from_items = nn.Linear(config.width, config.width)
        self.key = nn.Linear(config.width, config.width)
        self.value = nn.Linear(config.width, config.width)
        self.scorer = make_scorer(config.scorer, **dict(config.scorer_kwargs))
        self.readout = _mlp(config.width, config.width, config.depth, config.classes)

    def forward(self, features: Tensor, *, return_weights: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """Class logits ``(B, C)``, and with ``return_weights`` the head's weights ``(B, N)``."""
        if features.dim() != 3 or features.shape[-1] != self.config.features:
            raise ValueError(f"features must be (sets, items, {self.config.features}); got {tuple(features.shape)}")
        items = self.encoder(features)  # (B, N, W)
        keys, values = self.key(items)[:, None], self.value(items)[:, None]  # (B, 1, N, W): one head
        if self.config.query == "learned":
            query = self.query.expand(features.shape[0], 1, 1, -1)  # (B, 1, 1, W)
        else:
            query = self.query_from_items(items.mean(1))[:, None, None]  # (B, 1, 1, W)
        pooled, weights = attention(query, keys, values, self.scorer, return_weights=True)  # (B, 1, 1, W), (B, 1, 1, N)
        logits = self.readout(pooled[:, 0, 0])  # (B, C)
        return (logits, weights[:, 0, 0]) if return_weights else logits
