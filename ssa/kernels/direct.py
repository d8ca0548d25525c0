r"""SSA attention for short sequences: the whole matrix at once, with a hand-written backward.

For short sequences (the in-context-learning models: tens of tokens) the attention matrix is
small and a kernel's per-call overhead dominates: streaming over tiles or ``torch.compile``'s
dynamic-shape kernels cost more than they save. This path materialises the matrix like the
reference path but runs fewer passes over it, eagerly (no compilation).

Write :math:`\alpha = b \cdot \text{scale}` and :math:`y = (\alpha q) \cdot k = b x`, so that the
score is :math:`s = \operatorname{sgn}(y)\, n \log(1 + |y|)`: folding :math:`b` into the queries
costs one pass over ``(B, H, Q, D)`` instead of one over the ``(B, H, Q, K)`` matrix. With
:math:`g = \partial L / \partial s` (the softmax backward),

.. math::
    \frac{\partial L}{\partial y} = \frac{n\, g}{1 + |y|},\qquad
    \frac{\partial L}{\partial n} = \sum \frac{g\, s}{n},\qquad
    \frac{\partial L}{\partial b} = \text{scale} \sum_{i, d} q_{id}\,
        \Big(\frac{\partial L}{\partial (\alpha q)}\Big)_{id},

the last because :math:`\partial L/\partial \alpha = \sum_{ij} (\partial L/\partial y_{ij})\,
y_{ij} / \alpha` and :math:`\sum_j (\partial L/\partial y_{ij})\, k_j` is the gradient of the
scaled query: the ``b`` gradient needs no pass over the matrix. The factor :math:`n` of
:math:`\partial L/\partial y` is applied to the ``(B, H, T, D)`` products, not to the matrix.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ssa.kernels.blockwise import SAFE_SHIFT_RANGE, prepare_inputs

__all__ = ["DirectSSAAttention", "direct_ssa_attention"]

MASKED_SCORE = -1e30  # far below any SSA score, |s| <= n log(1 + b max|x|)


def _masked_softmax(scores: Tensor, denominator: Tensor, n: Tensor, mask: Tensor | None, out: Tensor) -> Tensor:
    """``softmax(scores, -1)`` over the visible keys (0 elsewhere), shifted by one bound for the
    whole tensor instead of each row's maximum.

    SSA scores are bounded, :math:`|s| \\le M = \\max n \\cdot \\log \\max(1 + b|x|)`, so
    :math:`e^{s - M}` neither overflows nor, while :math:`2M \\le 80`, underflows. That skips
    the per-row maximum, which dominates ``torch.softmax`` on short rows (tens of keys: 10 times
    as long as this at 10 keys on one CPU thread), and a multiplicative mask keeps ``exp`` off
    huge negative inputs (its slow path). Beyond that range (an extreme ``n`` or logits) it is
    ``torch.softmax`` with masked scores at :data:`MASKED_SCORE`. ``scores`` is left unmasked
    and finite: masked entries get weight 0, hence gradient 0. ``out``: where the weights go."""
    shift = n.max() * torch.log(denominator.max())
    if 2 * shift.item() > SAFE_SHIFT_RANGE:
        return torch.softmax(scores if mask is None else scores.masked_fill(~mask, MASKED_SCORE), dim=-1)
    weights = torch.sub(scores, shift, out=out).exp_()
    if mask is not None:
        weights.mul_(mask)
    return weights.div_(weights.sum(-1, keepdim=True))


class DirectSSAAttention(torch.autograd.Function):
    """``(q, k, v, b, n, mask, scale, rows_may_be_empty) -> output``; ``q``, ``k``, ``v`` ``(B, H, T, D)`` with the
    same heads, ``b``, ``n`` ``(H, 1, 1)``, ``mask`` boolean broadcastable to ``(B, H, Q, K)`` or
    ``None``."""

    @staticmethod
    def forward(ctx, q, k, v, b, n, mask, scale, rows_may_be_empty):
        ctx.key_strides = k.stride()
        k, v = k.contiguous(), v.contiguous()  # used twice each: one copy, not one per matmul
        # Contiguous even when q is a transposed view (as from a (B, T, H, D) projection): an
        # element-wise op keeps its input's layout, and each matmul would copy it again.
        scaled_q = torch.mul(q, b * scale, out=torch.empty(q.shape, dtype=q.dtype, device=q.device))  # (B, H, Q, D)
        y = torch.matmul(scaled_q, k.transpose(-2, -1))  # b x: (B, H, Q, K)
        denominator = y.abs().add_(1.0)  # 1 + b|x|
        scores = torch.log(denominator).mul_(n).copysign_(y)  # sgn(x) n log(1 + b|x|)
        weights = _masked_softmax(scores, denominator, n, mask, out=y)  # y's memory: one allocation fewer
        if rows_may_be_empty:  # a row with no visible key would be uniform: 0, as the reference
            weights.masked_fill_(~mask.any(-1, keepdim=True), 0.0)
        ctx.save_for_backward(q, scaled_q, k, v, b, n, denominator, scores, weights)
        ctx.scale = scale
        return torch.matmul(weights, v)  # (B, H, Q, K) @ (B, H, K, Dv)

    @staticmethod
    def backward(ctx, grad_output):
        q, scaled_q, k, v, b, n, denominator, scores, weights = ctx.saved_tensors
        grad_output = grad_output.contiguous()
        grad_v = torch.matmul(weights.transpose(-2, -1), grad_output)
        grad_weights = torch.matmul(grad_output, v.transpose(-2, -1))
        # The softmax backward, w (g - <g, w>), in place, and one scratch matrix for both
        # products: on a CPU a new (B, H, Q, K) tensor costs more than a pass over it (fresh pages).
        products = torch.mul(grad_weights, weights)
        grad_scores = grad_weights.sub_(products.sum(-1, keepdim=True)).mul_(weights)
        # Masked entries have weight 0, hence grad_scores 0; scores stay finite there.
        grad_n = torch.mul(grad_scores, scores, out=products).sum((0, 2, 3)) / n.reshape(-1)  # d s / d n = s / n
        del products
        grad_y_over_n = grad_scores.div_(denominator)  # d loss / d y, without its factor n
        grad_scaled_q = torch.matmul(grad_y_over_n, k).mul_(n)  # (B, H, Q, D)
        grad_b = ctx.scale * (q * grad_scaled_q).sum((0, 2, 3))  # d loss / d alpha, times d alpha / d b
        # The last multiplications write the gradients in their inputs' layouts (empty_like keeps
        # strides): a transposed view's gradient then needs no copy upstream.
        grad_q = torch.mul(grad_scaled_q, b * ctx.scale, out=torch.empty_like(q))
        grad_k = torch.mul(torch.matmul(grad_y_over_n.transpose(-2, -1), scaled_q), n,
                           out=torch.empty_strided(k.shape, ctx.key_strides, dtype=k.dtype, device=k.device))
        return grad_q, grad_k, grad_v, grad_b.reshape(b.shape), grad_n.reshape(n.shape), None, None, None


def direct_ssa_attention(q: Tensor, k: Tensor, v: Tensor, b: Tensor, n: Tensor, *, mask: Tensor | None = None,
                         causal: bool = False, scale: float | None = None) -> Tensor:
    """SSA attention ``(B, H, Q, Dv)``; same arguments as :func:`ssa.kernels.blockwise.blockwise_ssa_attention`."""
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
