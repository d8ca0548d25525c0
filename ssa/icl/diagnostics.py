"""Diagnostics of attention collapse: how concentrated each head's attention is, and where it goes.

The paper's mechanism: with large inputs, softmax attention puts (almost) all its weight on the
largest-magnitude token, so the prediction is made from that token alone; SSA keeps spreading
weight. We measure, for every layer and head, at the query tokens the predictions are read from
(the ``x`` tokens from point 3 on):

* the **normalised entropy** of the attention row, ``H(w) / log(keys)``: 1 = uniform over the
  visible keys, 0 = all weight on one key (collapse);
* the **maximum weight** of the row: 1 = collapse.

Scorers whose rows are not probability distributions (``sigmoid``, ``sa_softmax``) are measured on
``|w| / sum |w|``, the share of the row's total absolute weight each key gets.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ssa.icl.evaluate import FIRST_SCORED
from ssa.icl.samplers import PromptSpec, generator, sample_prompts


def attention_weights(model: torch.nn.Module, xs: Tensor, ys: Tensor, device: str = "cpu") -> Tensor:
    """All attention weights ``(layers, B, heads, 2N, 2N)`` of ``model`` on the prompts."""
    with torch.no_grad():
        _, attentions = model(xs.to(device), ys.to(device), output_attentions=True)
    return torch.stack([weights.float().cpu() for weights in attentions])


def _scored_rows(weights: Tensor) -> Tensor:
    """Rows of the x tokens from point FIRST_SCORED on, as shares of absolute weight: (L, B, H, Q, K)."""
    rows = weights[..., 2 * FIRST_SCORED :: 2, :].abs()
    return rows / rows.sum(dim=-1, keepdim=True).clamp_min(1e-30)


def concentration(weights: Tensor) -> dict[str, list]:
    """Mean normalised entropy and mean maximum weight per layer and head: ``[layer][head]`` lists."""
    rows = _scored_rows(weights)  # (L, B, H, Q, K)
    query_tokens = torch.arange(2 * FIRST_SCORED, weights.shape[-2], 2)
    visible = (query_tokens + 1).to(rows.dtype)  # causal: token t sees t + 1 keys
    entropy = -(rows * rows.clamp_min(1e-30).log()).sum(dim=-1) / visible.log()  # (L, B, H, Q)
    return {
        "entropy": entropy.mean(dim=(1, 3)).tolist(),
        "max_weight": rows.amax(dim=-1).mean(dim=(1, 3)).tolist(),
    }


def concentration_sweep(model, task: str, specs: list[PromptSpec], prompts: int, seed: int, device: str = "cpu") -> dict[str, list]:
    """:func:`concentration` for each spec: ``{"entropy": [spec][layer][head], "max_weight": ...}``."""
    sweep = {"entropy": [], "max_weight": []}
    for index, spec in enumerate(specs):
        xs, ys = sample_prompts(task, spec, prompts, generator(seed + index))
        for name, value in concentration(attention_weights(model, xs, ys, device)).items():
            sweep[name].append(value)
    return sweep


def injected_token_mass(weights: Tensor, position: int) -> list:
    """Share of attention that the x tokens after an injected extreme ``x`` (point ``position``) put
    on its token, per layer and head: ``[layer][head]``. Uniform attention would give 1/keys."""
    token = 2 * position
    rows = weights[..., token + 2 :: 2, :].abs()  # x tokens after the injected one
    rows = rows / rows.sum(dim=-1, keepdim=True).clamp_min(1e-30)
    return rows[..., token].mean(dim=(1, 3)).tolist()


def attention_map(weights: Tensor, prompt: int = 0, decimals: int = 4) -> list:
    """Head-averaged attention of one prompt per layer, ``[layer][query][key]``, rounded for storage."""
    maps = weights[:, prompt].mean(dim=1)  # (L, 2N, 2N)
    scale = 10.0**decimals
    return (torch.round(maps * scale) / scale).tolist()


def uniform_entropy_reference(points: int) -> float:
    """Normalised entropy is 1 for uniform rows by construction; this returns log(keys) at the last
    scored query for readers who want unnormalised values."""
    return math.log(2 * points - 1)
