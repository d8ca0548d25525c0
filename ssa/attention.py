r"""Scaled dot-product attention with any scorer from :mod:`ssa.scoring`.

.. math:: \operatorname{Attention}(Q, K, V) = \operatorname{score}\!\big(\tfrac{QK^\top}{\sqrt{d}},\ \text{mask}\big)\, V

Softmax without returned weights goes through ``torch.nn.functional.scaled_dot_product_attention``
(the fused kernels). SSA without returned weights and without dropout goes through a fast path
of :mod:`ssa.kernels` (FlexAttention on CUDA, a memory-efficient blockwise kernel on CPUs for
all but tiny problems). Every other scorer, and any scorer when the weights are asked for,
goes through the readable reference path below. ``tests/test_attention.py`` and
``tests/test_kernels.py`` check that the paths agree.

To force a path for SSA (tests, agreement checks, benchmarks)::

    with ssa.attention.attention_path("reference"):
        ...

or set the environment variable ``SSA_ATTENTION_PATH`` (one of :data:`ssa.kernels.PATHS`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os

import torch
import torch.nn.functional as F
from torch import Tensor

from ssa.scoring import SSA, Scorer, Softmax, make_scorer

__all__ = ["attention", "attention_path", "causal_mask", "combine_masks", "current_path"]

PATH_ENV = "SSA_ATTENTION_PATH"
_forced_path: contextvars.ContextVar[str | None] = contextvars.ContextVar("ssa_attention_path", default=None)


def current_path() -> str:
    """The SSA attention path in force: :func:`attention_path`, else ``$SSA_ATTENTION_PATH``,
    else ``"auto"``."""
    from ssa.kernels import check_path

    return check_path(_forced_path.get() or os.environ.get(PATH_ENV, "auto"))


@contextlib.contextmanager
def attention_path(path: str):
    """Within the block, SSA attention takes ``path`` (``"reference"``, ``"blockwise"``, ...)."""
    from ssa.kernels import check_path

    token = _forced_path.set(check_path(path))
    try:
        yield
    finally:
        _forced_path.reset(token)



def causal_mask(n_queries: int, n_keys: int, device=None) -> Tensor:
    """``(Q, K)`` boolean mask, queries aligned to the last ``Q`` key positions (as in decoding
    with a cache): query ``i`` sees keys ``j <= i + K - Q``."""
    query_pos = torch.arange(n_keys - n_queries, n_keys, device=device)
    return torch.arange(n_keys, device=device)[None, :] <= query_pos[:, None]


def combine_masks(mask: Tensor | None, causal: bool, n_queries: int, n_keys: int, device=None) -> Tensor | None:
    """One boolean mask (True = attend) from an optional key mask and the causal flag."""
    if mask is not None and mask.dtype != torch.bool:
        raise ValueError(f"mask must be a boolean tensor (True = key may be attended), got dtype {mask.dtype}")
    if not causal:
        return mask
    causal_part = causal_mask(n_queries, n_keys, device)
    return causal_part if mask is None else mask & causal_part


def _check_shapes(query: Tensor, key: Tensor, value: Tensor) -> int:
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError(
            "query, key and value must be (batch, heads, tokens, head_dim); got shapes "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    heads, kv_heads = query.shape[1], key.shape[1]
    if value.shape[1] != kv_heads or heads % kv_heads:
        raise ValueError(
            f"key/value heads ({kv_heads}, {value.shape[1]}) must be equal and divide query heads ({heads})"
        )
    return heads // kv_heads


def attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    scorer: str | Scorer = "softmax",
    *,
    mask: Tensor | None = None,
    causal: bool = False,
    scale: float | None = None,
    dropout_p: float = 0.0,
    return_weights: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Attention output ``(B, H, Q, D_v)``, and the weights ``(B, H, Q, K)`` if ``return_weights``.

    ``query`` is ``(B, H, Q, D)``; ``key`` and ``value`` are ``(B, H_kv, K, D)`` with ``H_kv``
    dividing ``H`` (grouped-query attention shares each key/value head among ``H / H_kv``
    query heads). ``mask`` is boolean, True where a key may be attended, broadcastable to
    ``(B, H, Q, K)``. ``scale`` defaults to ``1/sqrt(D)``.
    """
    group = _check_shapes(query, key, value)
    scorer = make_scorer(scorer)
    n_queries, n_keys = query.shape[-2], key.shape[-2]
    if isinstance(scorer, SSA) and not return_weights and dropout_p == 0:
        from ssa.kernels import choose_path, fast_ssa_attention

        path = choose_path(query, key, current_path())
        if path != "reference":
            combine_masks(mask, False, n_queries, n_keys)  # validates the mask
            return fast_ssa_attention(query, key, value, scorer, mask=mask, causal=causal, scale=scale, path=path)
    full_mask = combine_masks(mask, causal, n_queries, n_keys, query.device)

    if isinstance(scorer, Softmax) and not return_weights:
        # SDPA's is_causal aligns queries to the first keys; pass our mask unless the two agree.
        use_is_causal = causal and mask is None and n_queries == n_keys
        return F.scaled_dot_product_attention(
            query,
            key,
            value,
            attn_mask=None if use_is_causal else full_mask,
            dropout_p=dropout_p,
            is_causal=use_is_causal,
            scale=scale,
            enable_gqa=group > 1,
        )

    if group > 1:
        key = key.repeat_interleave(group, dim=1)  # (B, H_kv, K, D) -> (B, H, K, D)
        value = value.repeat_interleave(group, dim=1)
    scale = query.shape[-1] ** -0.5 if scale is None else scale
    weights = scorer.weights_from_qk(query, key, full_mask, scale)  # (B, H, Q, K)
    dropped = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    output = dropped @ value  # (B, H, Q, K) @ (B, H, K, D_v) -> (B, H, Q, D_v)
    return (output, weights) if return_weights else output
