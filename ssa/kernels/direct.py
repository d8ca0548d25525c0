r"""SSA attention for short sequences: the whole matrix at once, with a hand-written backward.

For short sequences (the in-context-learning models: tens of tokens) the attention matrix is
small and a kernel's per-call overhead dominates: streaming over tiles or ``torch.compile``'s
dynamic-shape kernels cost more than they save. This path materialises the matrix like the
reference path but runs far fewer passes over it, without ``torch.compile``.

Write :math:`\alpha = b \cdot \text{scale}` and :math:`y = (\alpha q) \cdot k = b x`, so that the
score is :math:`s = \operatorname{sgn}(y)\, n \log(1 + |y|)`: folding :math:`b` into the queries
costs one pass over ``(B, H, Q, D)`` instead of one over the ``(B, H, Q, K)`` matrix. With
:math:`g = \partial L / \partial s` (the softmax backward),

.. math::
    \frac{\partial L}{\partial y} = \frac{n\, g}{1 + |y|},\qquad
    \frac{\partial L}{\partial n} = \sum \frac{g\, s}{n},\qquad
    \frac{\partial L}{\partial b} = \frac{1}{b} \sum_{i, d} q_{id}\,
        \Big(\frac{\partial L}{\partial q}\Big)_{id},

the last because :math:`\partial L/\partial \alpha = \sum_{ij} (\partial L/\partial y_{ij})\,
y_{ij} / \alpha` and :math:`\sum_j (\partial L/\partial y_{ij})\, k_j` is the gradient of the
scaled query, whose product with :math:`\alpha` is :math:`\partial L/\partial q`: the ``b``
gradient needs no pass over the matrix.

The element-wise work between the matrix products (score, softmax, and their derivatives) is
done row by row by the C++ kernels of :mod:`ssa.kernels.native` on a CPU: each row stays
in cache, two passes over the matrix in all. Elsewhere, or where they cannot be built, the same
steps run as PyTorch operations (:class:`TorchRows`); both are tested against the reference.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ssa.kernels.blockwise import SAFE_SHIFT_RANGE, prepare_inputs
from ssa.kernels.native import cpu_kernels
from ssa.kernels.reference import attention_without_keys, nothing_to_attend, reference_gradients, visible_keys
from ssa.scoring import default_scale

__all__ = ["DirectSSAAttention", "NativeRows", "TorchRows", "direct_ssa_attention", "row_implementation"]

MASKED_SCORE = -1e30  # far below any SSA score, |s| <= n log(1 + b max|x|)


class TorchRows:
    """The element-wise steps as PyTorch operations (any device).

    ``forward(y, n, mask, causal_offset) -> (weights, saved)`` and
    ``backward(grad_weights, weights, saved, n) -> (dL/dy, dL/dn)``; ``n`` is ``(H, 1, 1)``.
    Softmax uses one shift for the whole tensor instead of each row's maximum: SSA scores are
    bounded, :math:`|s| \\le M = \\max n \\cdot \\log \\max(1 + |y|)`, so :math:`e^{s - M}` neither
    overflows nor, while :math:`2M \\le 80`, underflows. That skips the per-row maximum, which
    dominates ``torch.softmax`` on short rows, and a multiplicative mask keeps ``exp`` off huge
    negative inputs (its slow path). Beyond that range it is ``torch.softmax`` with masked scores
    at :data:`MASKED_SCORE`. Masked entries get weight 0, hence gradient 0; scores stay finite."""

    @staticmethod
    def forward(y: Tensor, n: Tensor, mask: Tensor | None, causal_offset: int | None):
        visible = visible_keys(y.shape[-2], y.shape[-1], mask, causal_offset, y.device)
        denominator = y.abs().add_(1.0)  # 1 + b|x|
        scores = torch.log(denominator).mul_(n).copysign_(y)  # sgn(x) n log(1 + b|x|)
        shift = n.max() * torch.log(denominator.max())
        if 2 * shift.item() > SAFE_SHIFT_RANGE:
            weights = torch.softmax(scores if visible is None else scores.masked_fill(~visible, MASKED_SCORE), dim=-1)
        else:
            weights = torch.sub(scores, shift).exp_()
            if visible is not None:
                weights.mul_(visible)
            weights.div_(weights.sum(-1, keepdim=True))
        if visible is not None:  # a row with no visible key would be uniform or 0/0: 0, as the reference
            weights.masked_fill_(~visible.any(-1, keepdim=True), 0.0)
        return weights, (denominator, scores)

    @staticmethod
    def backward(grad_weights: Tensor, weights: Tensor, saved, n: Tensor):
        denominator, scores = saved
        # The softmax backward, w (g - <g, w>), in place, and one scratch matrix for both
        # products: on a CPU a new (B, H, Q, K) tensor costs more than a pass over it (fresh pages).
        products = torch.mul(grad_weights, weights)
        grad_scores = grad_weights.sub_(products.sum(-1, keepdim=True)).mul_(weights)
        # d s / d n = s / n; summed in double (the scalar gradients cancel, see grad_b below)
        grad_n = torch.mul(grad_scores, scores, out=products).sum((0, 2, 3), dtype=torch.float64) / n.reshape(-1)
        return grad_scores.div_(denominator).mul_(n), grad_n


class NativeRows:
    """The element-wise steps by the C++ row kernels (CPU; :mod:`ssa.kernels.native`):
    per row the exact softmax (shift by the row's maximum) of the scores, and in the backward
    the scores recomputed from ``y``, so only ``y`` and the weights are stored."""

    def __init__(self, kernels):
        self.kernels = kernels

    def forward(self, y: Tensor, n: Tensor, mask: Tensor | None, causal_offset: int | None):
        mask = None if mask is None else mask.expand(y.shape)  # strides 0 where broadcast: no copy
        weights = self.kernels.forward(
            y, n.reshape(-1).contiguous(), causal_offset is not None, causal_offset or 0, mask
        )
        return weights, (y, mask, causal_offset)

    def backward(self, grad_weights: Tensor, weights: Tensor, saved, n: Tensor):
        y, mask, causal_offset = saved
        grad_n_rows = self.kernels.backward(
            grad_weights, weights, y, n.reshape(-1).contiguous(), causal_offset is not None, causal_offset or 0, mask
        )
        return grad_weights, grad_n_rows.sum((0, 2))  # grad_weights now holds dL/dy; dL/dn in double


def row_implementation(device: torch.device, dtype: torch.dtype):
    """:class:`NativeRows` on a CPU for float32/float64 when the kernels are available, else :class:`TorchRows`."""
    if device.type == "cpu" and dtype in (torch.float32, torch.float64):
        kernels = cpu_kernels()
        if kernels is not None:
            return NativeRows(kernels)
    return TorchRows()


class DirectSSAAttention(torch.autograd.Function):
    """``(q, k, v, b, n, mask, causal_offset, scale) -> output``; ``q``, ``k``, ``v`` ``(B, H, T, D)``
    with the same heads, ``b``, ``n`` ``(H, 1, 1)``, ``mask`` boolean broadcastable to
    ``(B, H, Q, K)`` or ``None``, ``causal_offset`` ``None`` or the offset of causal masking
    (key ``j`` visible from query ``i`` when ``j <= i + causal_offset``).

    Its backward is exact but not itself differentiable: under ``create_graph=True`` it returns
    the reference computation's gradients instead, with their graph
    (:func:`ssa.kernels.reference.reference_gradients`)."""

    @staticmethod
    def forward(ctx, q, k, v, b, n, mask, causal_offset, scale):
        ctx.key_strides = k.stride()
        key, value = k, v  # as given: a second derivative differentiates with respect to them
        k, v = k.contiguous(), v.contiguous()  # used twice each: one copy, not one per matmul
        # Contiguous even when q is a transposed view (as from a (B, T, H, D) projection): an
        # element-wise op keeps its input's layout, and each matmul would copy it again.
        scaled_q = torch.mul(q, b * scale, out=torch.empty(q.shape, dtype=q.dtype, device=q.device))  # (B, H, Q, D)
        y = torch.matmul(scaled_q, k.transpose(-2, -1))  # b x: (B, H, Q, K)
        rows = row_implementation(q.device, q.dtype)
        weights, saved = rows.forward(y, n, mask, causal_offset)
        ctx.rows, ctx.saved_rows, ctx.scale, ctx.visibility = rows, saved, scale, (mask, causal_offset)
        # key and value are k and v themselves when contiguous: saved twice, stored once.
        ctx.save_for_backward(q, scaled_q, k, v, b, n, weights, key, value)
        return torch.matmul(weights, v)  # (B, H, Q, K) @ (B, H, K, Dv)

    @staticmethod
    def backward(ctx, grad_output):
        q, scaled_q, k, v, b, n, weights, key, value = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True: gradients that will be differentiated
            return (
                *reference_gradients(
                    (q, key, value, b, n), ctx.needs_input_grad[:5], grad_output, *ctx.visibility, ctx.scale
                ),
                None,
                None,
                None,
            )
        grad_output = grad_output.contiguous()
        grad_v = torch.matmul(weights.transpose(-2, -1), grad_output)
        grad_weights = torch.matmul(grad_output, v.transpose(-2, -1))
        grad_y, grad_n = ctx.rows.backward(grad_weights, weights, ctx.saved_rows, n)
        # The gradients are written in their inputs' layouts (empty_like keeps strides): a
        # transposed view's gradient then needs no copy upstream.
        grad_q = torch.mul(torch.matmul(grad_y, k), b * ctx.scale, out=torch.empty_like(q))  # (B, H, Q, D)
        # Summed in double: its terms cancel (most of dL/db's magnitude is sum_j dL/ds_ij = 0), so
        # float32 accumulation would add an error of the order of the terms, not of the result.
        grad_b = (q * grad_q).sum((0, 2, 3), dtype=torch.float64) / b.reshape(-1)
        grad_k = torch.empty_strided(k.shape, ctx.key_strides, dtype=k.dtype, device=k.device)
        grad_k.copy_(torch.matmul(grad_y.transpose(-2, -1), scaled_q))
        return (
            grad_q,
            grad_k,
            grad_v,
            grad_b.to(b.dtype).reshape(b.shape),
            grad_n.to(n.dtype).reshape(n.shape),
            None,
            None,
            None,
        )


def direct_ssa_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    b: Tensor,
    n: Tensor,
    *,
    mask: Tensor | None = None,
    causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """SSA attention ``(B, H, Q, Dv)``; same arguments as :func:`ssa.kernels.blockwise.blockwise_ssa_attention`."""
    if nothing_to_attend(q, k):
        return attention_without_keys(q, k, v)
    q, k, v, b, n, dtype = prepare_inputs(q, k, v, b, n)
    heads = q.shape[1]
    b_heads = b.to(q.dtype).expand(heads).reshape(heads, 1, 1)
    n_heads = n.to(q.dtype).expand(heads).reshape(heads, 1, 1)
    causal_offset = k.shape[-2] - q.shape[-2] if causal else None
    scale = default_scale(q.shape[-1]) if scale is None else scale
    output = DirectSSAAttention.apply(q, k, v, b_heads, n_heads, mask, causal_offset, scale)
    return output.to(dtype)
