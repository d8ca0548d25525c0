r"""Scaled dot-product attention with any scorer from :mod:`ssa.scoring`.

.. math:: \operatorname{Attention}(Q, K, V) = \operatorname{score}\!\big(\tfrac{QK^\top}{\sqrt{d}},\ \text{mask}\big)\, V

Softmax without returned weights goes through ``torch.nn.functional.scaled_dot_product_attention``
(the fused kernels). SSA without returned weights and without dropout goes through a fast path
of :mod:`ssa.kernels` (FlexAttention on CUDA, a memory-efficient blockwise kernel on CPUs for
all but tiny problems). Every other scorer, and any scorer when the weights are asked for,
goes through the readable reference path below. ``tests/library/test_attention.py`` and
``tests/library/test_kernels.py`` check that the paths agree.

To force a path for SSA (tests, agreement checks, benchmarks)::

    with ssa.attention.attention_path("reference"):
        ...

or set the environment variable ``SSA_ATTENTION_PATH`` (one of :data:`ssa.kernels.PATHS`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import os

import torch
import torch.nn.functional as F
from torch import Tensor

from ssa.kernels import check_path, choose_path, fast_ssa_attention
from ssa.kernels.reference import attention_without_keys, nothing_to_attend, second_derivative_refusal
from ssa.scoring import SSA, Scorer, Softmax, _check_floating, default_scale, hide_absent_keys, make_scorer

__all__ = ["attention", "attention_path", "causal_mask", "combine_masks", "current_path"]

PATH_ENV = "SSA_ATTENTION_PATH"
_forced_path: contextvars.ContextVar[str | None] = contextvars.ContextVar("ssa_attention_path", default=None)


def current_path() -> str:
    """The SSA attention path in force: :func:`attention_path`, else ``$SSA_ATTENTION_PATH``,
    else ``"auto"``."""

    return check_path(_forced_path.get() or os.environ.get(PATH_ENV, "auto"))


@contextlib.contextmanager
def attention_path(path: str):
    """Within the block, SSA attention takes ``path`` (``"reference"``, ``"blockwise"``, ...).
    ``"reference"`` sends every scorer, softmax included, through its weights in full and then
    ``weights @ v``: one kind of path for all, as a like-for-like cost measurement needs."""

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


def _check_logit_terms(bias, softcap, scorer, shape, device) -> None:
    """``bias`` a floating tensor on ``device`` broadcasting to ``shape``, ``softcap`` ``None`` or a
    finite number > 0, and either only for a scorer that scores logits."""
    if bias is not None:
        if not isinstance(bias, Tensor) or not bias.is_floating_point():
            raise ValueError(
                f"bias must be None or a floating-point tensor, got {type(bias).__name__} "
                f"of dtype {getattr(bias, 'dtype', None)}"
            )
        if bias.device != device:
            raise ValueError(f"bias must be on the device of query ({device}), got {bias.device}")
        try:
            if bias.dim() > 4 or torch.broadcast_shapes(bias.shape, shape) != shape:
                raise RuntimeError
        except RuntimeError:
            raise ValueError(
                f"bias of shape {tuple(bias.shape)} does not broadcast to (batch, heads, queries, keys) = {shape}"
            ) from None
    if softcap is not None and (
        isinstance(softcap, bool) or not isinstance(softcap, (int, float)) or not math.isfinite(softcap) or softcap <= 0
    ):
        raise ValueError(f"softcap must be None or a finite number > 0, got {softcap!r}")
    if (bias is not None or softcap is not None) and type(scorer).weights_from_qk is not Scorer.weights_from_qk:
        raise ValueError(
            f"bias and softcap change the logits, which scorer {scorer.name!r} does not read "
            "(it scores queries and keys): give neither, or a scorer of logits"
        )


def _scored_weights(scorer: Scorer, query, key, mask, scale, bias, softcap) -> Tensor:
    """The weights ``(B, H, Q, K)``: the scorer of ``scale * q k^T``, soft-capped to
    ``softcap * tanh(. / softcap)`` and plus ``bias`` when given (in that order, as Gemma 2 and T5)."""
    if bias is None and softcap is None:
        return scorer.weights_from_qk(query, key, mask, scale)
    logits = (query @ key.transpose(-2, -1)) * (default_scale(query.shape[-1]) if scale is None else scale)
    if softcap is not None:
        logits = softcap * torch.tanh(logits / softcap)
    if bias is not None:
        logits = logits + bias
    return scorer(logits, mask)


def _refuse_second_derivative(kernel: str, grad: Tensor) -> None:
    if torch.is_grad_enabled():  # create_graph=True: the fused kernel's backward would be differentiated
        raise RuntimeError(
            second_derivative_refusal(
                kernel,
                f"softmax attention through scaled_dot_product_attention's fused kernel ({kernel}, whose backward "
                "PyTorch does not differentiate)",
                ", which computes them for every scorer",
            )
        )


def _first_derivatives_only_if_fused(output: Tensor) -> Tensor:
    """``output`` of ``scaled_dot_product_attention``. Its fused kernels (FlashAttention on a CPU;
    flash, memory-efficient or cuDNN attention on CUDA) have a backward without a derivative of its
    own: PyTorch builds a graph through it under ``create_graph=True`` and fails only at the next
    backward, with its own message. So a backward with ``create_graph=True`` through them raises
    :func:`ssa.kernels.reference.second_derivative_refusal`'s message at once, as the compiled and
    flex paths do, by a hook that changes no gradient (no copy, no number changes); the math
    kernel (composite operations) is exact and left alone. Under a ``torch.func`` transform, whose
    every backward has ``create_graph=True``, first derivatives stay allowed (and a second one
    fails with PyTorch's message)."""
    node = output.grad_fn
    if (
        node is not None
        and type(node).__name__.startswith("ScaledDotProduct")
        and not torch._C._functorch.is_functorch_wrapped_tensor(output)
    ):
        output.register_hook(
            functools.partial(_refuse_second_derivative, type(node).__name__.removesuffix("Backward0"))
        )
    return output


def _check_inputs(query, key, value, mask, scale, dropout_p):
    """Every argument checked once, before a path is chosen, so that every path gets the same
    inputs or the caller the same error: ``(query, key, value, mask, group)`` with the batch
    broadcast and the mask 4-D."""

    for name, tensor in (("query", query), ("key", key), ("value", value)):
        _check_floating(name, tensor)
    # Under autocast, attention is one op in the lower precision, as autocast runs SDPA: a model
    # whose rotary embedding upcasts the query and key (Nemotron's) hands over mixed dtypes.
    if torch.is_autocast_enabled(query.device.type):
        dtype = torch.get_autocast_dtype(query.device.type)
        query, key, value = query.to(dtype), key.to(dtype), value.to(dtype)
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError(
            "query, key and value must be (batch, heads, tokens, head_dim); got shapes "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    if not query.dtype == key.dtype == value.dtype:
        raise TypeError(f"query, key and value must have one dtype; got {query.dtype}, {key.dtype}, {value.dtype}")
    if not query.device == key.device == value.device:
        raise ValueError(
            f"query, key and value must be on one device; got {query.device}, {key.device}, {value.device}"
        )
    try:
        batch = torch.broadcast_shapes(query.shape[:1], key.shape[:1], value.shape[:1])[0]
    except RuntimeError:
        raise ValueError(
            f"query, key and value batch sizes must be equal or 1; got {query.shape[0]}, {key.shape[0]}, {value.shape[0]}"
        ) from None
    heads, kv_heads = query.shape[1], key.shape[1]
    # No key/value head divides no query head but 0 (and no query head is divided by any).
    if value.shape[1] != kv_heads or (heads % kv_heads if kv_heads else heads):
        raise ValueError(
            f"key/value heads ({kv_heads}, {value.shape[1]}) must be equal and divide query heads ({heads})"
        )
    if key.shape[2] != value.shape[2]:
        raise ValueError(f"key and value must have the same number of tokens; got {key.shape[2]} and {value.shape[2]}")
    if query.shape[3] != key.shape[3]:
        raise ValueError(f"query and key must have the same head dimension; got {query.shape[3]} and {key.shape[3]}")
    if scale is not None and (
        isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale)
    ):
        raise ValueError(f"scale must be None or a finite number, got {scale!r}")
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)) or not 0 <= dropout_p < 1:
        raise ValueError(f"dropout_p must be a number in [0, 1), got {dropout_p!r}")
    shape = (batch, heads, query.shape[2], key.shape[2])
    if mask is not None:
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
            raise ValueError(
                f"mask must be a boolean tensor (True = key may be attended), got "
                f"{type(mask).__name__} of dtype {getattr(mask, 'dtype', None)}"
            )
        if mask.device != query.device:
            raise ValueError(f"mask must be on the device of query ({query.device}), got {mask.device}")
        try:
            if mask.dim() > 4:
                raise RuntimeError
            mask = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))  # (K,) -> (1, 1, 1, K): a view
            if torch.broadcast_shapes(mask.shape, shape) != shape:
                raise RuntimeError
        except RuntimeError:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to (batch, heads, queries, keys) = {shape}"
            ) from None
    expand = lambda tensor: tensor if tensor.shape[0] == batch else tensor.expand(batch, *tensor.shape[1:])
    return expand(query), expand(key), expand(value), mask, heads // kv_heads if kv_heads else 1


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
    bias: Tensor | None = None,
    softcap: float | None = None,
) -> Tensor | tuple[Tensor, Tensor]:
    """Attention output ``(B, H, Q, D_v)``, and the weights ``(B, H, Q, K)`` if ``return_weights``.

    ``query`` is ``(B, H, Q, D)``; ``key`` and ``value`` are ``(B, H_kv, K, D)`` with ``H_kv``
    dividing ``H`` (grouped-query attention shares each key/value head among ``H / H_kv``
    query heads). ``mask`` is boolean, True where a key may be attended, broadcastable to
    ``(B, H, Q, K)``. ``scale`` defaults to ``1/sqrt(D)``.

    ``softcap`` (Gemma 2's logit soft-capping) maps the scaled logits ``x`` to
    ``softcap * tanh(x / softcap)``, and ``bias`` (floating, broadcastable to ``(B, H, Q, K)``: T5's
    relative position bias, ALiBi, the finite part of an additive mask) is then added to them,
    before any scorer scores them; ``-inf`` in ``bias`` hides a key, as ``mask`` does. With either,
    every scorer takes the reference path (the fused kernels read queries and keys only); a scorer
    that scores queries and keys rather than logits (``cosformer``) refuses them (``ValueError``).

    The same inputs get the same answer, or the same error, on every path: the arguments are
    checked before a path is chosen (``TypeError`` for a non-floating or mixed dtype,
    ``ValueError`` naming the argument for shapes, masks, ``scale`` and ``dropout_p``; under
    ``torch.autocast`` the three are first cast to its dtype, as autocast does for SDPA); batch
    sizes of 1 broadcast. Masked means absent: a key that no query may attend is replaced by
    zeros before any path reads it, so a NaN or inf there reaches neither the output nor a
    gradient (a key that some queries may attend is read, as it must be, by the matrix products).

    Degenerate shapes give what softmax attention (``scaled_dot_product_attention``) gives, for
    every scorer on every path, forward and backward: an empty batch, no heads or no queries, an
    empty output; no keys (``K = 0``) with queries, zeros for every query (a query without a key
    to attend is a fully masked row) and zero gradients; a head dimension of 0, logits that are
    all exactly 0 (empty sums; the default scale is then 1, not ``1/sqrt(0)``), weighted by the
    scorer as any zero logits (softmax and SSA: the mean of the visible values); a value head
    dimension of 0, an empty output. ``H_kv = 0`` key/value heads divide only ``H = 0`` query heads.

    Second derivatives (a backward with ``create_graph=True``: the gradient of a gradient, a
    gradient penalty, a Hessian-vector product) are exact or refused, never wrong:

    ==============================  ==========================================================
    SSA path                        second derivatives
    ==============================  ==========================================================
    ``reference``                   autograd's, of the readable computation
    ``direct``, ``blockwise``       exact: their backward has no derivative of its own, so under
                                    ``create_graph=True`` it returns the reference computation's
                                    gradients and graph (with its memory, the ``(B, H, Q, K)``
                                    matrix); without it, their own exact first derivatives
    ``compiled``                    refused (``RuntimeError`` naming the path; a compiled backward
                                    cannot be differentiated); exact with ``SSA_ATTENTION_COMPILE=0``
    ``flex`` (CUDA's ``auto``)      refused (``RuntimeError`` naming the path)
    ==============================  ==========================================================

    So ``auto`` computes them on a CPU and refuses them on CUDA, where
    ``attention_path("reference")`` computes them. The other scorers:

    ==============================  ==========================================================
    scorer, path                    second derivatives
    ==============================  ==========================================================
    softmax without weights on     refused when one of the fused kernels of
    any path but ``reference``     ``scaled_dot_product_attention`` computed the output
    (through PyTorch's SDPA)       (FlashAttention on a CPU; flash, memory-efficient or cuDNN
                                    attention on CUDA): ``RuntimeError`` naming the kernel and
                                    ``path='reference'`` (under a ``torch.func`` transform,
                                    PyTorch's own error at the second backward); exact when its
                                    math kernel did (``torch.nn.attention.sdpa_kernel``)
    every scorer on ``reference``   exact: autograd's, of the readable computation (``sparsemax``
    (all but SSA and softmax        and ``entmax15`` through the ``entmax`` package, whose 1.5-entmax
    always take it)                 backward is replaced by one with an exact derivative and the
                                    same first derivatives, bit for bit)
    ==============================  ==========================================================

    ``tests/library/test_second_derivatives.py`` checks every exact entry with ``gradgradcheck`` in float64
    (every registered scorer, its trainable parameters included) and every refusal.
    """
    query, key, value, mask, group = _check_inputs(query, key, value, mask, scale, dropout_p)
    scorer = make_scorer(scorer)
    n_queries, n_keys = query.shape[-2], key.shape[-2]
    _check_logit_terms(bias, softcap, scorer, (query.shape[0], query.shape[1], n_queries, n_keys), query.device)
    fused = bias is None and softcap is None  # the fused paths score q k^T as it is
    if nothing_to_attend(query, key):  # every scorer, every path: no weight to compute
        output = attention_without_keys(query, key, value)
        return (output, query.new_zeros(*query.shape[:-1], n_keys)) if return_weights else output
    if scale is None and query.shape[-1] == 0:  # logits of empty dot products: 0 at any finite scale, not 0 * inf
        scale = default_scale(0)
    key, value = hide_absent_keys(key, mask, value)
    if fused and isinstance(scorer, SSA) and not return_weights and dropout_p == 0:
        path = choose_path(query, key, current_path())
        if path != "reference":
            return fast_ssa_attention(query, key, value, scorer, mask=mask, causal=causal, scale=scale, path=path)
    full_mask = combine_masks(mask, causal, n_queries, n_keys, query.device)

    if fused and isinstance(scorer, Softmax) and not return_weights and current_path() != "reference":
        # SDPA's is_causal aligns queries to the first keys; pass our mask unless the two agree.
        use_is_causal = causal and mask is None and n_queries == n_keys
        return _first_derivatives_only_if_fused(
            F.scaled_dot_product_attention(
                query,
                key,
                value,
                attn_mask=None if use_is_causal else full_mask,
                dropout_p=dropout_p,
                is_causal=use_is_causal,
                scale=scale,
                enable_gqa=group > 1,
            )
        )

    if group > 1:
        key = key.repeat_interleave(group, dim=1)  # (B, H_kv, K, D) -> (B, H, K, D)
        value = value.repeat_interleave(group, dim=1)
    weights = _scored_weights(scorer, query, key, full_mask, scale, bias, softcap)  # (B, H, Q, K)
    dropped = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    output = dropped @ value  # (B, H, Q, K) @ (B, H, K, D_v) -> (B, H, Q, D_v)
    return (output, weights) if return_weights else output
