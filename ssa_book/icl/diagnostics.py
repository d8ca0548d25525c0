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

from ssa_book.icl.tasks import FIRST_SCORED, Task
from ssa_book.icl.samplers import PromptSpec, generator, sample_prompts


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


def concentration_sweep(
    model, task: Task, specs: list[PromptSpec], prompts: int, seed: int, device: str = "cpu"
) -> dict[str, list]:
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


def logit_ranges(model, xs: Tensor, ys: Tensor, device: str = "cpu") -> list:
    """Spread of the attention logits ``q.k / sqrt(d)`` that each head hands its scorer, per layer
    and head: ``[layer][head]`` mean over the scored x-token rows of (largest - smallest logit
    among the visible keys). Softmax concentrates when this spread grows; the paper's mechanism
    needs large inputs to produce large logits.

    GPT-2 is pre-LN: each attention layer sees its input through a LayerNorm, so the logits need
    not grow with the inputs at all. Measured with a hook on each layer's query-key-value
    projection, so the scorer (whichever it is) is not involved.
    """
    backbone = model.backbone
    heads, captured = backbone.config.n_head, []
    hooks = [
        block.attn.c_attn.register_forward_hook(lambda module, args, output: captured.append(output.detach()))
        for block in backbone.h
    ]
    try:
        with torch.no_grad():
            model(xs.to(device), ys.to(device))
    finally:
        for hook in hooks:
            hook.remove()
    ranges = []
    for projection in captured:
        queries, keys, _ = projection.float().cpu().chunk(3, dim=-1)  # each (B, T, E)
        batch, tokens, width = queries.shape
        queries = queries.reshape(batch, tokens, heads, width // heads).transpose(1, 2)  # (B, H, T, D)
        keys = keys.reshape(batch, tokens, heads, width // heads).transpose(1, 2)
        logits = queries @ keys.transpose(-1, -2) / math.sqrt(width // heads)  # (B, H, T, T)
        visible = torch.ones(tokens, tokens, dtype=torch.bool).tril()
        high = logits.masked_fill(~visible, -math.inf).amax(dim=-1)
        low = logits.masked_fill(~visible, math.inf).amin(dim=-1)
        spread = (high - low)[..., 2 * FIRST_SCORED :: 2]  # scored x-token rows: (B, H, Q)
        ranges.append(spread.mean(dim=(0, 2)).tolist())
    return ranges
