r"""SSA attention for short sequences: the whole matrix at once, with a hand-written backward.

For short sequences (the in-context-learning models: tens of tokens) the attention matrix is
small and a kernel's per-call overhead dominates: streaming over tiles or ``torch.compile``'s
dynamic-shape kernels cost more than they save. This path materialises the matrix like the
reference path but runs about half as many kernels: the SSA map in place, one fused
``softmax``, and a backward written out by hand (the chain rule of :mod:`ssa.kernels.blockwise`
on the whole matrix, with the softmax backward fused by PyTorch) instead of autograd's
graph of every intermediate. It runs eagerly (no compilation).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["DirectSSAAttention", "direct_ssa_attention"]

MASKED_SCORE = -1e30  # far below any SSA score, |s| <= n log(1 + b max|x|)


class DirectSSAAttention(torch.autograd.Function):
    """``(q, k, v, b, n, mask, scale, rows_may_be_empty) -> output``; ``q``, ``k``, ``v`` ``(B, H, T, D)`` with the
    same heads, ``b``, ``n`` ``(H, 1, 1)``, ``mask`` boolean broadcastable to ``(B, H, Q, K)`` or
    ``None``."""

    @staticmethod
    def forward(ctx, q, k, v, b, n, mask, scale, rows_may_be_empty):
        logits = torch.matmul(q, k.transpose(-2, -1)).mul_(scale)  # (B, H, Q, K)
        scores = logits.abs().mul_(b).log1p_().mul_(n)
        scores = torch.copysign(scores, logits, out=scores)  # sgn(x) n log(1 + b|x|)
        if mask is not None:
            # Finite, so that a masked key's exp() is exactly 0 and its grad_scores * scores is 0, not NaN.
            scores.masked_fill_(~mask, MASKED_SCORE)
        weights = torch.softmax(scores, dim=-1)
        if rows_may_be_empty:  # a row with no visible key would be uniform: 0, as the reference
            weights.masked_fill_(~mask.any(-1, keepdim=True), 0.0)
        ctx.save_for_backward(q, k, v, b, n, logits, scores, weights)
        ctx.scale = scale
        return torch.matmul(weights, v)  # (B, H, Q, K) @ (B, H, K, Dv)

    @staticmethod
    def backward(ctx, grad_output):
        q, k, v, b, n, logits, scores, weights = ctx.saved_tensors
        grad_v = torch.matmul(weights.transpose(-2, -1), grad_output)
        grad_weights = torch.matmul(grad_output, v.transpose(-2, -1))
        grad_scores = torch._softmax_backward_data(grad_weights, weights, -1, weights.dtype)
        # Masked entries have weight 0, hence grad_scores 0; scores stay finite there.
        grad_n = (grad_scores * scores).sum((0, 2, 3)) / n.reshape(-1)  # d s / d n = s / n
        per_unit_slope = logits.abs().mul_(b).add_(1.0)
        per_unit_slope = torch.div(grad_scores, per_unit_slope, out=per_unit_slope)  # ds / (1 + b|x|)
        grad_b = n.reshape(-1) * (per_unit_slope * logits).sum((0, 2, 3))  # d s / d b = n x / (1 + b|x|)
        grad_dot_products = per_unit_slope.mul_(n * b * ctx.scale)  # d loss / d (q . k)
        grad_q = torch.matmul(grad_dot_products, k)
        grad_k = torch.matmul(grad_dot_products.transpose(-2, -1), q)
        return grad_q, grad_k, grad_v, grad_b.reshape(b.shape), grad_n.reshape(n.shape), None, None, None


def direct_ssa_attention(q: Tensor, k: Tensor, v: Tensor, b: Tensor, n: Tensor, *, mask: Tensor | None = None,
                         causal: bool = False, scale: float | None = None) -> Tensor:
    """SSA attention ``(B, H, Q, Dv)``; same arguments as :func:`ssa.kernels.blockwise.blockwise_ssa_attention`."""
    from ssa.kernels.blockwise import prepare_inputs

    q, k, v, b, n, dtype = prepare_inputs(q, k, v, b, n)
    heads = q.shape[1]
    b_heads = b.to(q.dtype).expand(heads).reshape(heads, 1, 1)
    n_heads = n.to(q.dtype).expand(heads).reshape(heads, 1, 1)
    n_queries, n_keys = q.shape[-2], k.shape[-2]
    rows_may_be_empty = mask is not None or (causal and n_queries > n_keys)
    if causal:
        visible = torch.arange(n_keys, device=q.device)[None, :] <= torch.arange(n_keys - n_queries, n_keys, device=q.device)[:, None]
        mask = visible if mask is None else mask & visible
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    output = DirectSSAAttention.apply(q, k, v, b_heads, n_heads, mask, scale, rows_may_be_empty)
    return output.to(dtype)
