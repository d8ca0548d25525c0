r"""Fused SSA attention on GPUs through PyTorch's FlexAttention.

FlexAttention compiles a ``score_mod`` into a FlashAttention-style Triton kernel (forward and
backward). SSA's ``score_mod`` maps the scaled logit :math:`x` to
:math:`\operatorname{sgn}(x)\, n \log(1+b|x|)`; FlexAttention's softmax of it is SSA. ``b``
and ``n`` are captured tensors indexed by head, so they may be one per layer or one per head,
and FlexAttention differentiates through them. Causal and key masks become a block mask, so
masked tiles are skipped.

On CPUs, torch 2.13's FlexAttention runs the forward pass only (its backward raises
``NotImplementedError``), and its compiled CPU kernel takes minutes to build: the CPU uses
:mod:`ssa.kernels.blockwise`; this module is exercised on the CPU only by the forward test.
"""

from __future__ import annotations

import functools

import torch
from torch import Tensor

__all__ = ["flex_ssa_attention", "ssa_score_mod", "flex_available"]


def flex_available() -> bool:
    try:
        from torch.nn.attention import flex_attention  # noqa: F401
    except ImportError:
        return False
    return True


def ssa_score_mod(b: Tensor, n: Tensor):
    """The ``score_mod`` of SSA with per-head values ``b``, ``n`` of shape ``(H,)``.

    Written like :func:`ssa.scoring.ssa_logits` (sign +1 at 0, ``|x|`` as a ``where``) so that
    its derivative at 0 is the true one, ``n b``."""

    def score_mod(score, batch, head, query_index, key_index):
        positive = score >= 0
        magnitude = torch.where(positive, score, -score)
        sign = torch.where(positive, 1.0, -1.0)
        return sign * n[head] * torch.log1p(b[head] * magnitude)

    return score_mod


def _as_4d(mask: Tensor) -> Tensor:
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    return mask


def _mask_mod(mask: Tensor | None, causal_offset: int | None):
    """The FlexAttention ``mask_mod`` of a boolean key mask (broadcastable to ``(B, H, Q, K)``)
    and/or causal masking with query ``i`` at key position ``i + causal_offset``."""
    if mask is not None:
        mask = _as_4d(mask)
        size = mask.shape

    def mask_mod(batch, head, query_index, key_index):
        visible = None
        if mask is not None:
            visible = mask[
                batch if size[0] > 1 else 0,
                head if size[1] > 1 else 0,
                query_index if size[2] > 1 else 0,
                key_index if size[3] > 1 else 0,
            ]
        if causal_offset is not None:
            causal = key_index <= query_index + causal_offset
            visible = causal if visible is None else visible & causal
        return visible

    return mask_mod


@functools.lru_cache(maxsize=32)
def _causal_block_mask(n_queries: int, n_keys: int, device: str):
    from torch.nn.attention.flex_attention import create_block_mask

    return create_block_mask(_mask_mod(None, n_keys - n_queries), None, None, n_queries, n_keys, device=device)


def _block_mask(mask: Tensor | None, causal: bool, batch: int, heads: int, n_queries: int, n_keys: int, device):
    from torch.nn.attention.flex_attention import create_block_mask

    if mask is None and not causal:
        return None
    if mask is None:
        return _causal_block_mask(n_queries, n_keys, str(device))
    mask4 = _as_4d(mask)
    return create_block_mask(
        _mask_mod(mask, n_keys - n_queries if causal else None),
        batch if mask4.shape[0] > 1 else None,
        heads if mask4.shape[1] > 1 else None,
        n_queries,
        n_keys,
        device=device,
    )


@functools.lru_cache(maxsize=1)
def _compiled_flex_attention():
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention, dynamic=None)


def flex_ssa_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    b: Tensor,
    n: Tensor,
    *,
    mask: Tensor | None = None,
    causal: bool = False,
    scale: float | None = None,
    compiled: bool = True,
) -> Tensor:
    """SSA attention ``(B, H, Q, Dv)`` through FlexAttention; ``k``/``v`` may have fewer heads
    (grouped-query attention). ``b``, ``n``: scalars or one value per query head.
    ``compiled=False`` runs FlexAttention's unfused reference (used by the CPU forward test)."""
    from torch.nn.attention.flex_attention import flex_attention

    batch, heads, n_queries, _ = q.shape
    n_keys = k.shape[-2]
    b_heads = torch.as_tensor(b, device=q.device, dtype=torch.float32).expand(heads)
    n_heads = torch.as_tensor(n, device=q.device, dtype=torch.float32).expand(heads)
    block_mask = _block_mask(mask, causal, batch, heads, n_queries, n_keys, q.device)
    attend = _compiled_flex_attention() if compiled else flex_attention
    return attend(
        q,
        k,
        v,
        score_mod=ssa_score_mod(b_heads, n_heads),
        block_mask=block_mask,
        scale=scale,
        enable_gqa=k.shape[1] != heads,
    )
