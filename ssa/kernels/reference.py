"""The reference SSA computation as one function of tensors, and what the fast paths do with it.

:func:`reference_ssa_attention` is what the ``compiled`` path compiles. It is also where the
direct and blockwise paths turn for second derivatives: their backward passes are hand-written
sequences of in-place kernels, exact as first derivatives but with no derivative of their own
(autograd would record the kernels' operations as if they were the function and differentiate
them into wrong numbers). So when a backward through them is asked for a graph
(``create_graph=True``, as ``torch.autograd.grad`` of a gradient needs), they return
:func:`reference_gradients` instead, the reference computation's gradients with its graph; the
paths that cannot do that refuse, through :func:`first_derivatives_only`, with
:func:`second_derivative_refusal`'s message.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

from ssa.scoring import _ssa_weights

__all__ = [
    "attention_without_keys",
    "first_derivatives_only",
    "nothing_to_attend",
    "reference_gradients",
    "reference_ssa_attention",
    "second_derivative_refusal",
    "visible_keys",
]


def visible_keys(n_queries: int, n_keys: int, mask: Tensor | None, causal_offset: int | None, device) -> Tensor | None:
    """The boolean mask of visible keys: ``mask`` and, with a ``causal_offset``, keys
    ``j <= i + causal_offset``."""
    if causal_offset is None:
        return mask
    causal = (
        torch.arange(n_keys, device=device)[None, :] <= torch.arange(n_queries, device=device)[:, None] + causal_offset
    )
    return causal if mask is None else mask & causal


def reference_ssa_attention(q, k, v, b, n, mask, causal_offset, scale):
    """SSA attention as :meth:`ssa.scoring.Scorer.weights_from_qk` then ``weights @ v``; ``b``, ``n``
    of shape ``()``, ``(H,)`` or ``(H, 1, 1)``."""

    heads = q.shape[1]
    if k.shape[1] != heads:
        k = k.repeat_interleave(heads // k.shape[1], dim=1)  # (B, H_kv, K, D) -> (B, H, K, D)
        v = v.repeat_interleave(heads // v.shape[1], dim=1)
    mask = visible_keys(q.shape[-2], k.shape[-2], mask, causal_offset, q.device)
    per_head = lambda value: value[:, None, None] if value.dim() == 1 else value  # (H,) -> (H, 1, 1)
    weights = _ssa_weights((q @ k.transpose(-2, -1)) * scale, per_head(b), per_head(n), mask=mask)  # (B, H, Q, K)
    return weights @ v


def reference_gradients(
    inputs: Sequence[Tensor],
    needs_grad: Sequence[bool],
    grad_output: Tensor,
    mask: Tensor | None,
    causal_offset: int | None,
    scale: float,
) -> list[Tensor | None]:
    """The gradients of :func:`reference_ssa_attention` at ``inputs`` (``q, k, v, b, n``) with
    respect to those that ``needs_grad``, as differentiable tensors (``None`` for the others):
    what a fast path's backward returns under ``create_graph=True``."""
    wanted = [tensor for tensor, needed in zip(inputs, needs_grad) if needed]
    with torch.enable_grad():
        output = reference_ssa_attention(*inputs, mask, causal_offset, scale)
    found = iter(torch.autograd.grad(output, wanted, grad_output, create_graph=True, allow_unused=True))
    return [next(found) if needed else None for needed in needs_grad]


def nothing_to_attend(query: Tensor, key: Tensor) -> bool:
    """Whether the attention weights ``(B, H, Q, K)`` have no entry: an empty batch, no heads, no
    queries or no keys. Every path then returns :func:`attention_without_keys` (the tiled and
    row-wise kernels need at least one tile and one key)."""
    batch, heads, n_queries, _ = query.shape
    return batch * heads * n_queries * key.shape[-2] == 0


class _AttentionWithoutKeys(torch.autograd.Function):
    """Zeros ``(B, H, Q, D_v)`` whose gradients with respect to ``q, k, v`` are zeros."""

    @staticmethod
    def forward(ctx, query, key, value):
        ctx.inputs = [(tensor.shape, tensor.dtype, tensor.device) for tensor in (query, key, value)]
        return query.new_zeros(*query.shape[:-1], value.shape[-1])

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(torch.zeros(shape, dtype=dtype, device=device) for shape, dtype, device in ctx.inputs)


def attention_without_keys(query: Tensor, key: Tensor, value: Tensor) -> Tensor:
    """The output where :func:`nothing_to_attend`, as softmax attention
    (``scaled_dot_product_attention``) returns it: empty, unless only the keys are missing, when
    each query gets zeros (a query with no key to attend is a fully masked row); the gradients
    of ``query``, ``key`` and ``value`` are zeros of their shapes."""
    return _AttentionWithoutKeys.apply(query, key, value)


def second_derivative_refusal(
    path: str,
    what: str | None = None,
    others: str = (", or on a CPU path='direct' or 'blockwise', which differentiate the reference computation then"),
) -> str:
    """The one message with which a path that cannot differentiate its backward refuses a backward
    with ``create_graph=True``: ``what`` refuses (SSA attention's ``path`` path unless given), and
    ``path='reference'`` (then ``others``) computes the second derivatives."""
    what = f"SSA attention's {path} path" if what is None else what
    return (
        f"{what} does not support second derivatives (a backward with create_graph=True through it); "
        "use path='reference' (ssa.attention.attention_path('reference') or SSA_ATTENTION_PATH=reference)"
        f"{others}"
    )


class _FirstDerivativesOnly(torch.autograd.Function):
    """The identity (a copy), whose backward refuses to build a graph for a second derivative."""

    @staticmethod
    def forward(ctx, output, path):
        ctx.path = path
        return output.clone()  # a copy, not a view: the caller may write into the result

    @staticmethod
    def backward(ctx, grad_output):
        if torch.is_grad_enabled():  # create_graph=True: the gradients below would be differentiated
            raise RuntimeError(second_derivative_refusal(ctx.path))
        return grad_output, None


def first_derivatives_only(output: Tensor, path: str) -> Tensor:
    """``output``, whose backward with ``create_graph=True`` raises :func:`second_derivative_refusal`
    before the backward of ``path`` runs: for paths whose backward has no correct derivative."""
    if not (torch.is_grad_enabled() and output.requires_grad):
        return output
    return _FirstDerivativesOnly.apply(output, path)
