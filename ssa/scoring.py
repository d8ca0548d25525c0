r"""Attention scoring functions: the map from attention logits to attention weights.

Every scorer takes logits of shape ``(..., queries, keys)`` and an optional boolean key mask
(``True`` = the key may be attended; any shape that broadcasts to the logits) and returns
weights of the logits' shape and dtype. Masked keys get exactly zero weight, and a row whose
keys are all masked gets zeros, never NaN. Half-precision inputs are computed in float32 and
cast back, so the dtype's extreme finite values neither overflow nor produce NaN.

Non-finite logits mean the same to every scorer that reads logits (all but ``cosformer``, which
reads queries and keys):

* :math:`x_i = -\infty` is a masked key, the convention of additive attention masks: the scorer
  gives exactly what it gives with ``mask`` False there (weight exactly 0, and the key does not
  count in :math:`N`), and the gradients with respect to every logit and to the scorer's
  parameters are finite (0 at the :math:`-\infty` logit). A row of :math:`-\infty` is a fully
  masked row: zeros.
* NaN or :math:`+\infty` at a key that is not masked (by ``mask`` or by :math:`-\infty`) makes
  every weight of its row NaN, as a NaN makes ``torch.softmax``'s row NaN (:math:`+\infty` has no
  weight a scorer could give it: :math:`\infty - \infty` is undefined); other rows and their
  gradients are unaffected. No error is raised: a check would wait for the values on a GPU,
  and break ``torch.compile``'s graph, at every call. At a masked key, any value is never read.

The scorers, with :math:`x` the logits of one query row over its :math:`N` unmasked keys:

========================  =========================================================================
``softmax``               :math:`w_i = e^{x_i} / \sum_j e^{x_j}`
``ssa``                   Scaled Signed Averaging (the paper):
                          :math:`w_i = (1+b|x_i|)^{\operatorname{sgn}(x_i)\,n} / \sum_j (1+b|x_j|)^{\operatorname{sgn}(x_j)\,n}`,
                          computed as :math:`\operatorname{softmax}(\operatorname{sgn}(x)\, n \log(1+b|x|))`.
                          Trainable :math:`b = \operatorname{softplus}(\beta) > 0` and
                          :math:`n = 1 + \operatorname{softplus}(\nu) \ge 1`.
``ssa_n1.5``, ``ssa_n2``  SSA with :math:`n` fixed (the paper's encoder runs), :math:`b` trainable.
``temperature_softmax``   :math:`\operatorname{softmax}(x / T)`, :math:`T` fixed or trainable.
``sparsemax``             Martins & Astudillo (2016), through the ``entmax`` package.
``entmax15``              1.5-entmax, Peters et al. (2019), through the ``entmax`` package.
``sa_softmax``            Self-Adjusting softmax: :math:`w_i = x_i \operatorname{softmax}(x)_i`.
``sa_softmax_normalized`` :math:`w_i = \frac{x_i - \min(x_{\min},0)}{\max(x_{\max},0) - \min(x_{\min},0)} \operatorname{softmax}(x)_i`.
``cosformer``             cosFormer in explicit-weight form:
                          :math:`s_{ij} = \operatorname{relu}(q_i)\cdot\operatorname{relu}(k_j)\,
                          \cos\!\big(\tfrac{\pi}{2}\tfrac{i-j}{M}\big)`, :math:`w_{ij} = s_{ij}/\sum_j s_{ij}`.
``ssmax``                 Scalable-Softmax: :math:`\operatorname{softmax}(s \log N \cdot x)`, :math:`s` trainable.
``sigmoid``               Sigmoid attention: :math:`w_i = \sigma(x_i - \log N)`.
``adaptive_temperature``  Adaptive-temperature softmax (Veličković et al. 2025): at inference,
                          :math:`\operatorname{softmax}(\beta x)` with :math:`\beta = \max(p(H), 1)` when the
                          entropy :math:`H` of :math:`\operatorname{softmax}(x)` exceeds 0.5 nats, else 1;
                          :math:`p` the paper's fitted quartic. Plain softmax while training.
``stick_breaking``        Stick-breaking attention (Tan et al. 2024): :math:`\beta_i = \sigma(x_i)`,
                          :math:`w_i = \beta_i \prod_{k > i} (1 - \beta_k)` over the unmasked keys in
                          order, the stick broken from the last one back; computed in log space.
========================  =========================================================================

Not every scorer is a probability distribution: ``sa_softmax`` can give negative weights, and
``sa_softmax``, ``sa_softmax_normalized``, ``sigmoid`` and ``stick_breaking`` rows need not sum to one (nor do
``cosformer`` rows whose ReLU features share no support with any key: those rows are zero). Each
scorer class says so in its ``normalized``, ``nonnegative`` and ``order_free`` attributes, and the
tests check exactly what each one declares.

``cosformer`` depends on queries and keys separately, not only on their dot products: call
:meth:`Scorer.weights_from_qk` (which :func:`ssa.attention.attention` does for every scorer).
Its :math:`M` is one more than the row's largest distance to an unmasked key, so masking keys
equals removing them, and it is not permutation equivariant: it weighs keys by position.
``stick_breaking`` is not either: it reads the keys in their order, nearest (last) first.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ssa.optional import require

__all__ = [
    "SCORER_NAMES",  # noqa: F822 (the module __getattr__ below reads it from the registry)
    "Scorer",
    "make_scorer",
    "register_scorer",
    "masked_softmax",
    "softmax",
    "ssa",
    "ssa_logits",
    "temperature_softmax",
    "sparsemax",
    "entmax15",
    "sa_softmax",
    "cosformer_weights",
    "ssmax",
    "sigmoid_attention",
    "adaptive_temperature_softmax",
    "stick_breaking",
    "default_scale",
]

_HALF_DTYPES = (torch.float16, torch.bfloat16)


# ----------------------------------------------------------------------------------------------
# Shared plumbing: mask checks, moving the key axis last, half precision.


def _check_mask(shape: torch.Size, mask: Tensor | None) -> Tensor | None:
    if mask is None:
        return None
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        raise ValueError(
            f"mask must be a boolean tensor (True = key may be attended), got "
            f"{type(mask).__name__} of dtype {getattr(mask, 'dtype', None)}"
        )
    try:
        return torch.broadcast_to(mask, shape)
    except RuntimeError:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to logits of shape {tuple(shape)}"
        ) from None


def _check_floating(name: str, tensor) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise TypeError(
            f"{name} must be a floating-point tensor (float16, bfloat16, float32 or float64), got {tensor.dtype}"
        )
    return tensor


def hide_absent_keys(keys: Tensor, mask: Tensor | None, *others: Tensor) -> tuple[Tensor, ...]:
    """``keys`` ``(..., K, D)`` (and each of ``others``, e.g. the values) with zeros for every
    key that no query may attend (``mask`` broadcastable to ``(..., Q, K)``; under grouped-query
    attention its head axis, -3, may be a multiple of the keys').

    Masked means absent: a non-finite value at such a key would otherwise reach every output
    and gradient through the matrix products (``0 * nan = nan``). Its gradient is zero."""
    if mask is None:
        return (keys, *others)
    seen = mask.any(-2)  # (..., K): some query may attend the key
    if keys.dim() >= 3 and seen.dim() >= 2 and seen.shape[-2] not in (1, keys.shape[-3]):
        kv_heads = keys.shape[-3]  # grouped-query attention: a key head serves a group of query heads
        seen = seen.unflatten(-2, (kv_heads, seen.shape[-2] // kv_heads)).any(-2)
    absent = ~seen[..., None]  # (..., K, 1)
    return tuple(torch.where(absent, torch.zeros((), dtype=t.dtype, device=t.device), t) for t in (keys, *others))


def _key_axis_last(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Run a last-axis scorer kernel along any ``dim``, with the mask checked, half precision
    computed in float32, and non-finite logits read as the module docstring says: the kernel
    gets finite logits and a mask that also masks the ``-inf`` ones (never ``None``)."""

    def wrapper(logits: Tensor, *args, mask: Tensor | None = None, dim: int = -1, **kwargs) -> Tensor:
        _check_floating("logits", logits)
        mask = _check_mask(logits.shape, mask)
        if logits.numel() == 0:  # no key, or no row: no weight to compute (the kernels' row maxima need a key)
            return logits * 0
        x = logits.float() if logits.dtype in _HALF_DTYPES else logits
        if mask is not None:  # masked means absent: whatever a masked logit holds (NaN, inf) is never read
            x = torch.where(mask, x, float("-inf"))
        # The kernels read finite logits only: -inf is a masked key (additive masks), so it goes
        # through the very code a boolean mask takes; NaN and +inf poison their row afterwards.
        # (A row's max is NaN or +inf exactly when it holds one: a cheaper test than isfinite.)
        poisoned_rows = ~(x.detach().amax(dim, keepdim=True) < float("inf"))
        readable = x.abs() < float("inf")
        x = torch.where(readable, x, 0.0).movedim(dim, -1)
        readable = readable.movedim(dim, -1)
        if mask is not None:
            # The memory layout sets the order of the sums, hence their last bits: given a mask,
            # the kernels have always summed over contiguous keys (what masked_fill returns);
            # given none, over the logits as laid out. _fill_masked keeps each case as it was.
            x, readable = x.contiguous(), readable.contiguous()
        weights = fn(x, *args, mask=readable, **kwargs).movedim(-1, dim)
        return torch.where(poisoned_rows, float("nan"), weights).to(logits.dtype)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


class _FillMasked(torch.autograd.Function):
    """``masked_fill`` that keeps the memory layout of its input, and of the gradient it passes
    back (``masked_fill`` returns contiguous tensors)."""

    @staticmethod
    def forward(ctx, tensor, mask, value):
        ctx.save_for_backward(mask)
        return tensor.clone().masked_fill_(~mask, value)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad.clone().masked_fill_(~mask, 0.0), None, None


def _fill_masked(tensor: Tensor, mask: Tensor, value: float) -> Tensor:
    """``tensor`` with ``value`` where ``mask`` is False.

    The memory layout sets the order of the sums that follow, hence their last bits. A contiguous
    mask (every mask a caller gives, see :func:`_key_axis_last`, and that of contiguous logits)
    comes with a contiguous ``tensor`` and is filled as ``masked_fill`` fills, as the kernels have
    always done with a mask. A mask that is not contiguous only masks the ``-inf`` logits of a
    caller who gave no mask and whose keys are not contiguous (another ``dim``, a transposed
    view): the kernels had no fill there, and this one leaves the layouts, forward and
    backward, as they were."""
    if mask.is_contiguous():
        return torch.where(mask, tensor, value)  # masked_fill's numbers and layouts here, in a third of its time
    return _FillMasked.apply(tensor, mask, value)


def _valid_key_count(x: Tensor, mask: Tensor | None) -> Tensor:
    """Number of unmasked keys per row, shape ``(..., 1)``, at least 1."""
    if mask is None:
        return torch.full_like(x[..., :1], x.shape[-1])
    return mask.sum(-1, keepdim=True).clamp_min(1).to(x.dtype)


def _masked_softmax_last(scores: Tensor, mask: Tensor | None) -> Tensor:
    if mask is not None:
        scores = _fill_masked(scores, mask, float("-inf"))
    row_max = scores.amax(-1, keepdim=True)
    # A fully masked row has max -inf; shifting by 0 instead keeps exp() at exactly 0.
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max)).detach()
    unnormalised = torch.exp(scores - row_max)
    total = unnormalised.sum(-1, keepdim=True)
    return unnormalised / total.clamp_min(torch.finfo(total.dtype).tiny)


# ----------------------------------------------------------------------------------------------
# Functional forms.


@_key_axis_last
def masked_softmax(scores: Tensor, *, mask: Tensor | None = None) -> Tensor:
    """Softmax over ``dim`` with masked keys at exactly 0 and fully masked rows at 0."""
    return _masked_softmax_last(scores, mask)


softmax = masked_softmax


def ssa_logits(logits: Tensor, b: Tensor | float, n: Tensor | float) -> Tensor:
    r"""The SSA score in log space, :math:`\operatorname{sgn}(x)\, n \log(1 + b|x|)`.

    The sign is taken as +1 at :math:`x = 0` and :math:`|x|` is written as a ``where`` so that
    autograd gives the true derivative :math:`nb` at zero (``abs`` would give 0 there)."""
    positive = logits >= 0
    magnitude = torch.where(positive, logits, -logits)
    sign = torch.where(positive, 1.0, -1.0).to(logits.dtype)
    return sign * n * torch.log1p(b * magnitude)


@_key_axis_last
def _ssa_weights(logits: Tensor, b: Tensor | float, n: Tensor | float, *, mask: Tensor | None = None) -> Tensor:
    return _masked_softmax_last(ssa_logits(logits, b, n), mask)


def check_ssa_values(b, n) -> None:
    """``ValueError`` unless every ``b`` is finite and > 0 and every ``n`` finite and >= 1 (numbers
    or tensors)."""
    for name, value, lowest, inclusive in (("b", b, 0.0, False), ("n", n, 1.0, True)):
        values = torch.as_tensor(value).detach()
        if not (values.is_floating_point() or values.dtype in (torch.int32, torch.int64)):
            raise TypeError(f"{name} must be a real number or a real tensor, got {values.dtype}")
        values = values.double()
        in_domain = values >= lowest if inclusive else values > lowest
        if not bool((in_domain & torch.isfinite(values)).all()):
            bound = ">= 1" if inclusive else "> 0"
            raise ValueError(f"{name} must be finite and {bound}; got {value!r}")


def ssa(
    logits: Tensor, b: Tensor | float = 1.0, n: Tensor | float = 1.5, *, mask: Tensor | None = None, dim: int = -1
) -> Tensor:
    r"""Scaled Signed Averaging weights :math:`(1+b|x|)^{\operatorname{sgn}(x) n}` normalised
    over the keys. ``b`` and ``n`` broadcast against the logits with the key axis last.

    ``b > 0`` and ``n >= 1`` are checked (``ValueError``), as the :class:`SSA` module's are; for
    tensors on a GPU the check waits for their values. The module, whose parameterisation keeps
    them in their domain, skips it."""
    check_ssa_values(b, n)
    return _ssa_weights(logits, b, n, mask=mask, dim=dim)


@_key_axis_last
def temperature_softmax(logits: Tensor, temperature: Tensor | float = 1.0, *, mask: Tensor | None = None) -> Tensor:
    """Softmax of ``logits / temperature``."""
    return _masked_softmax_last(logits / temperature, mask)


def _shift_for_sparse(x: Tensor, mask: Tensor | None, gap: float) -> Tensor:
    """Shift each row so its largest unmasked logit is 0 and put masked keys ``gap`` below it.

    For sparsemax a logit at least 1 below the row maximum gets weight 0, for 1.5-entmax at
    least 2 below; ``gap`` beyond that makes masked keys drop out of the support exactly, so
    masking equals removing them. Shifting first keeps the gap representable at any magnitude.
    """
    row_max = (x if mask is None else x.masked_fill(~mask, float("-inf"))).amax(-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max)).detach()
    shifted = x - row_max
    if mask is not None:
        shifted = shifted.masked_fill(~mask, -gap)
    return shifted


def _zero_fully_masked(weights: Tensor, mask: Tensor | None) -> Tensor:
    if mask is None:
        return weights
    return _fill_masked(weights, mask, 0.0)


@_key_axis_last
def sparsemax(logits: Tensor, *, mask: Tensor | None = None) -> Tensor:
    """Sparsemax (Euclidean projection onto the simplex), via ``entmax.sparsemax``."""
    _sparsemax = require("entmax", "sparse").sparsemax

    # entmax's own handling of dim != -1 is unreliable on 3-D/4-D inputs; the wrapper always
    # hands it the key axis last. masked_fill, not _fill_masked: the sparse maps have always
    # masked their support (the keys not at -inf), so their numbers come from contiguous tensors.
    return _sparsemax(_shift_for_sparse(logits, mask, gap=4.0), dim=-1).masked_fill(~mask, 0.0)


class _Entmax15(torch.autograd.Function):
    """``entmax.entmax15`` along the last axis, with a backward whose own derivative is exact.

    entmax's backward forms its Jacobian-vector product from ``sqrt(Y)``; differentiated under
    ``create_graph=True`` (second derivatives), the infinite slope of ``sqrt`` at the weights
    that are 0 (outside the support) made them wrong. Outside the support ``sqrt(Y)`` is
    locally constant (0), so there it gets slope 0. Without ``create_graph`` the backward is
    entmax's, operation for operation: the forward and first derivatives are entmax's bit for
    bit (``tests/library/test_second_derivatives.py``)."""

    @staticmethod
    def forward(ctx, x, entmax15):
        weights = entmax15(x, dim=-1)
        ctx.save_for_backward(weights)
        return weights

    @staticmethod
    def backward(ctx, grad_weights):
        (weights,) = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph=True: this backward will be differentiated
            outside = weights == 0
            root = torch.where(outside, 0.0, torch.where(outside, 1.0, weights).sqrt())  # sqrt(Y), slope 0 at 0
        else:
            root = weights.sqrt()
        grad_x = grad_weights * root
        shift = (grad_x.sum(-1) / root.sum(-1)).unsqueeze(-1)
        grad_x -= shift * root
        return grad_x, None


@_key_axis_last
def entmax15(logits: Tensor, *, mask: Tensor | None = None) -> Tensor:
    """1.5-entmax, via ``entmax.entmax15`` (with a backward that second derivatives may differentiate)."""
    _entmax15 = require("entmax", "sparse").entmax15

    return _Entmax15.apply(_shift_for_sparse(logits, mask, gap=8.0), _entmax15).masked_fill(~mask, 0.0)


@_key_axis_last
def sa_softmax(logits: Tensor, normalized: bool = False, *, mask: Tensor | None = None) -> Tensor:
    """Self-Adjusting softmax: ``x * softmax(x)``, or with ``normalized`` the min-max scaled
    ``x`` (with 0 kept inside the range) times ``softmax(x)``."""
    probabilities = _masked_softmax_last(logits, mask)
    if not normalized:
        return _zero_fully_masked(logits * probabilities, mask)
    valid = mask if mask is not None else torch.ones_like(logits, dtype=torch.bool)
    low = _fill_masked(logits, valid, float("inf")).amin(-1, keepdim=True).clamp_max(0.0)
    high = _fill_masked(logits, valid, float("-inf")).amax(-1, keepdim=True).clamp_min(0.0)
    low = torch.where(torch.isfinite(low), low, torch.zeros_like(low))
    high = torch.where(torch.isfinite(high), high, torch.zeros_like(high))
    span = (high - low).clamp_min(torch.finfo(logits.dtype).tiny)
    return _zero_fully_masked((logits - low) / span * probabilities, mask)


@_key_axis_last
def ssmax(logits: Tensor, s: Tensor | float = 0.43, *, mask: Tensor | None = None) -> Tensor:
    """Scalable-Softmax: softmax of ``s * log(N) * x`` with ``N`` the row's unmasked keys."""
    return _masked_softmax_last(s * torch.log(_valid_key_count(logits, mask)) * logits, mask)


@_key_axis_last
def sigmoid_attention(logits: Tensor, *, mask: Tensor | None = None) -> Tensor:
    """Sigmoid attention with the ``-log N`` bias, ``N`` the row's unmasked keys."""
    weights = torch.sigmoid(logits - torch.log(_valid_key_count(logits, mask)))
    return _zero_fully_masked(weights, mask)


# Adaptive temperature: Veličković, Perivolaropoulos, Barbero & Pascanu, "Softmax is not enough
# (for sharp size generalisation)", ICML 2025, arXiv 2410.01104v3, Figure 4 (their JAX code).
ADAPTIVE_TEMPERATURE_FIT = (-0.037, 0.481, -2.3, 4.917, -1.791)  # beta = 1/theta from the entropy, highest power first
ADAPTIVE_TEMPERATURE_MIN_ENTROPY = (
    0.5  # nats; heads at or below it are left alone ("don't overcorrect low-entropy heads")
)
ADAPTIVE_TEMPERATURE_LOG_OFFSET = 1e-9  # inside the entropy's log, as there


@_key_axis_last
def adaptive_temperature_softmax(logits: Tensor, *, mask: Tensor | None = None) -> Tensor:
    r"""Adaptive-temperature softmax: :math:`\operatorname{softmax}(\beta x)` with
    :math:`H = -\sum_i p_i \log(p_i + 10^{-9})` the entropy (nats) of :math:`p = \operatorname{softmax}(x)`
    over the unmasked keys, and :math:`\beta = \max(\operatorname{poly}(H), 1)` when
    :math:`H > 0.5`, else 1: a temperature never above 1, lowered for heads whose weights have
    dispersed. ``poly`` is the authors' quartic fit of the temperature that restores sharpness
    (:data:`ADAPTIVE_TEMPERATURE_FIT`, their Figure 4); gradients flow through :math:`\beta` as in their code.
    The fit exceeds 1 only for entropies between about 0.9 and 5.9 nats: a row more dispersed than
    that (over about 370 keys or more, near uniform) is left as softmax leaves it."""
    probabilities = _masked_softmax_last(logits, mask)
    entropy = -(probabilities * torch.log(probabilities + ADAPTIVE_TEMPERATURE_LOG_OFFSET)).sum(-1, keepdim=True)
    fitted = torch.zeros_like(entropy)
    for coefficient in ADAPTIVE_TEMPERATURE_FIT:  # Horner's rule, as numpy.polyval
        fitted = fitted * entropy + coefficient
    beta = torch.where(entropy > ADAPTIVE_TEMPERATURE_MIN_ENTROPY, fitted.clamp_min(1.0), torch.ones_like(entropy))
    return _masked_softmax_last(logits * beta, mask)


@_key_axis_last
def stick_breaking(logits: Tensor, *, mask: Tensor | None = None, attend_current: bool = True) -> Tensor:
    r"""Stick-breaking attention (Tan, Shen, Yang, Courville & Panda, arXiv 2410.17980): with
    :math:`\beta_i = \sigma(x_i)`, the last unmasked key takes :math:`\beta` of the stick, the one
    before it :math:`\beta` of what is left, and so on back to the first:
    :math:`w_i = \beta_i \prod_{k > i,\ k \text{ unmasked}} (1 - \beta_k)`, so :math:`\sum_i w_i \le 1`.
    The leftover :math:`1 - \sum_i w_i` weights no value: the output is :math:`\sum_i w_i v_i`, as if a
    zero value took the rest of the stick. Computed in log space,
    :math:`\log w_i = \log\sigma(x_i) + \sum_{k > i} \log\sigma(-x_k)`, with no subtraction of large sums.

    The keys are read by position, nearest (last) first: a recency bias that helps language and
    hinders a task whose items come in random order. ``attend_current``: under a causal mask that
    includes the query's own position, as this book's models use, its own key breaks the stick
    first (``True``, the default); ``False`` leaves out the last visible key of each row, so that a
    query reads only the tokens before it, as the authors' ``attend_current=False`` does (a row
    with one visible key then gets no weight)."""
    if not attend_current:
        mask = _without_last_visible(mask)
    log_keep = F.logsigmoid(-logits)  # log(1 - beta)
    if mask is not None:
        log_keep = _fill_masked(log_keep, mask, 0.0)  # a masked key takes none of the stick
    # sum over k > i: an exclusive cumulative sum from the last key back
    reversed_keep = log_keep.flip(-1)
    before = torch.cat([torch.zeros_like(reversed_keep[..., :1]), reversed_keep[..., :-1]], dim=-1)
    log_weights = F.logsigmoid(logits) + before.cumsum(-1).flip(-1)
    return _zero_fully_masked(torch.exp(log_weights), mask)


def _without_last_visible(mask: Tensor) -> Tensor:
    """``mask`` (keys last) without the last visible key of each row (rows with none unchanged)."""
    keys = mask.shape[-1]
    last = keys - 1 - mask.flip(-1).to(torch.uint8).argmax(-1, keepdim=True)  # (..., 1)
    dropped = torch.zeros_like(mask).scatter_(-1, last, True) & mask.any(-1, keepdim=True)
    return (mask & ~dropped).contiguous()


def cosformer_weights(queries: Tensor, keys: Tensor, mask: Tensor | None = None) -> Tensor:
    r"""cosFormer weights in explicit form from queries ``(..., Q, D)`` and keys ``(..., K, D)``.

    Query ``i`` sits at position ``i + K - Q`` (the last ``Q`` positions, as in decoding).
    A row's :math:`M` is one more than its largest distance to an unmasked key, so every
    weighted pair has a positive cosine and masking keys equals removing them. Causal attention
    is the causal mask. A row whose ReLU-feature similarities are all zero gets zero weights."""
    _check_floating("queries", queries)
    _check_floating("keys", keys)
    logits_shape = (*torch.broadcast_shapes(queries.shape[:-2], keys.shape[:-2]), queries.shape[-2], keys.shape[-2])
    mask = _check_mask(torch.Size(logits_shape), mask)
    (keys,) = hide_absent_keys(keys, mask)  # the global maximum below reads every key
    dtype = queries.dtype
    q = F.relu(queries.float() if dtype in _HALF_DTYPES else queries)
    k = F.relu(keys.float() if dtype in _HALF_DTYPES else keys)
    # Row-wise and global rescaling cancel in the normalisation; they keep q·k finite at any magnitude.
    tiny = torch.finfo(q.dtype).tiny
    if q.shape[-1] > 0 and k.shape[-2] > 0:  # else nothing to rescale: no feature (similarities 0) or no key
        q = q / q.amax(-1, keepdim=True).clamp_min(tiny)
        k = k / k.amax((-2, -1), keepdim=True).clamp_min(tiny)
    similarity = q @ k.transpose(-2, -1)  # (..., Q, K)
    n_queries, n_keys = similarity.shape[-2:]
    query_pos = torch.arange(n_keys - n_queries, n_keys, device=q.device, dtype=q.dtype)
    key_pos = torch.arange(n_keys, device=q.device, dtype=q.dtype)
    distance = (query_pos[:, None] - key_pos[None, :]).abs().expand_as(similarity)  # (..., Q, K)
    valid_distance = distance if mask is None else distance.masked_fill(~mask, 0.0)
    if n_keys == 0:  # no key: the empty weights (the row maximum below needs a key)
        return similarity.to(dtype)
    span = valid_distance.amax(-1, keepdim=True) + 1  # (..., Q, 1)
    similarity = similarity * torch.cos(0.5 * math.pi * distance / span)
    if mask is not None:
        similarity = similarity.masked_fill(~mask, 0.0)
    total = similarity.sum(-1, keepdim=True)
    return (similarity / total.clamp_min(tiny)).to(dtype)


# ----------------------------------------------------------------------------------------------
# Modules and the registry.


def default_scale(head_dim: int) -> float:
    """The logits' default scale, ``1/sqrt(head_dim)``; 1 for a head dimension of 0, whose dot
    products are all exactly 0 (empty sums): any finite scale keeps them 0, as softmax attention
    (``scaled_dot_product_attention``) has them, while ``1/sqrt(0)`` would make them ``0 * inf = NaN``."""
    return head_dim**-0.5 if head_dim else 1.0


def _inverse_softplus(value: float) -> float:
    return value + math.log(-math.expm1(-value))


class Scorer(nn.Module):
    """Base class: ``forward(logits, mask=None, dim=-1) -> weights``.

    ``weights_from_qk`` is what attention calls: it forms ``scale * q @ k^T`` and scores it;
    scorers that need queries and keys themselves (cosFormer) override it."""

    name: str = ""
    normalized: bool = True  # rows over unmasked keys sum to one
    nonnegative: bool = True
    order_free: bool = True  # permuting the keys permutes the weights (False: it reads their order)

    def forward(self, logits: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
        raise NotImplementedError

    def weights_from_qk(
        self, queries: Tensor, keys: Tensor, mask: Tensor | None = None, scale: float | None = None
    ) -> Tensor:
        scale = default_scale(queries.shape[-1]) if scale is None else scale
        logits = (queries @ keys.transpose(-2, -1)) * scale  # (..., Q, K)
        return self(logits, mask)

    def extra_repr(self) -> str:
        return f"name={self.name!r}"


_REGISTRY: dict[str, Callable[..., Scorer]] = {}


def register_scorer(name: str, factory: Callable[..., Scorer] | None = None):
    """Register a scorer factory under ``name``; usable as a decorator."""

    def add(factory: Callable[..., Scorer]):
        if name in _REGISTRY:
            raise ValueError(f"scorer name {name!r} is already registered")
        _REGISTRY[name] = factory
        return factory

    return add(factory) if factory is not None else add


def scorer_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def make_scorer(name: str | Scorer, **kwargs) -> Scorer:
    """Build the scorer registered as ``name`` (a ``Scorer`` instance is returned as is)."""
    if isinstance(name, Scorer):
        if kwargs:
            raise ValueError("scorer: keyword arguments cannot be applied to an existing Scorer instance")
        return name
    if name not in _REGISTRY:
        raise ValueError(f"scorer must be one of {', '.join(_REGISTRY)}; got {name!r}")
    return _REGISTRY[name](**kwargs)


def _check_positive(parameter: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{parameter} must be a finite number > 0, got {value!r}")
    return float(value)


class _ScalarParameters(nn.Module):
    """A named scalar per layer (``num_heads=None``) or per head. Trainable, it is kept in its
    domain by a reparameterisation, value = ``offset + softplus(raw)`` (``raw`` the parameter);
    fixed, it is stored as given (the buffer ``fixed``)."""

    def __init__(self, init: float, trainable: bool, num_heads: int | None, offset: float = 0.0):
        super().__init__()
        if num_heads is not None and (not isinstance(num_heads, int) or num_heads < 1):
            raise ValueError(f"num_heads must be None (one value per layer) or an int >= 1, got {num_heads!r}")
        self.num_heads = num_heads
        self.offset = offset
        self.trainable = trainable
        if trainable:
            # init == offset would need raw = -inf; start a hair above the bound instead.
            self.raw = nn.Parameter(torch.full((num_heads or 1,), _inverse_softplus(max(init - offset, 1e-4))))
        else:
            self.register_buffer("fixed", torch.full((num_heads or 1,), float(init)))

    def current(self) -> Tensor:
        """The values, ``(num_heads or 1,)``, differentiable when trainable."""
        return self.offset + F.softplus(self.raw) if self.trainable else self.fixed

    def value(self, logits: Tensor) -> Tensor:
        """The values, shaped to broadcast against logits ``(..., heads, Q, K)``."""
        value = self.current()
        if self.num_heads is None:
            return value.reshape(()).to(logits.dtype)
        if logits.dim() < 3 or logits.shape[-3] != self.num_heads:
            raise ValueError(
                f"logits of shape {tuple(logits.shape)} have no head axis of size num_heads="
                f"{self.num_heads} at dim -3 (per-head parameters need (..., heads, queries, keys))"
            )
        return value.to(logits.dtype)[:, None, None]  # (H, 1, 1)


@register_scorer("softmax")
class Softmax(Scorer):
    name = "softmax"

    def forward(self, logits, mask=None, dim=-1):
        return masked_softmax(logits, mask=mask, dim=dim)


# SSA's initial values in the authors' public in-context-learning code: b = e ~ 2.72 and
# n = exp(0.4) ~ 1.49, both trained, one pair per layer shared by its heads.
AUTHORS_ICL_START: dict[str, float] = {"b": math.e, "n": math.exp(0.4)}


@register_scorer("ssa")
class SSA(Scorer):
    r"""Scaled Signed Averaging, :math:`x \mapsto (1+b|x|)^{\operatorname{sgn}(x) n}` normalised.

    Parameters: ``b`` and ``n`` initial values (defaults ``b=1``, ``n=1.5``: ``n`` as in the
    paper's decoder run; ``b`` the neutral scale of the logits; the authors' in-context runs start
    from :data:`AUTHORS_ICL_START`), ``learn_b`` / ``learn_n``
    (fixed values are buffers), ``num_heads`` (``None``: one pair per layer, shared by its heads,
    as the authors' code; an int: one pair per head, as the paper's text). Constraints hold for
    any raw value: ``b = softplus(raw_b) > 0``, ``n = 1 + softplus(raw_n) >= 1``.
    """

    name = "ssa"

    def __init__(
        self, b: float = 1.0, n: float = 1.5, learn_b: bool = True, learn_n: bool = True, num_heads: int | None = None
    ):
        super().__init__()
        _check_positive("b", b)
        if not (isinstance(n, (int, float)) and math.isfinite(n) and n >= 1):
            raise ValueError(f"n must be a finite number >= 1, got {n!r}")
        self.b_param = _ScalarParameters(b, learn_b, num_heads)
        self.n_param = _ScalarParameters(n, learn_n, num_heads, offset=1.0)

    @property
    def b(self) -> Tensor:
        return self.b_param.current().detach()

    @property
    def n(self) -> Tensor:
        return self.n_param.current().detach()

    def forward(self, logits, mask=None, dim=-1):
        return _ssa_weights(logits, self.b_param.value(logits), self.n_param.value(logits), mask=mask, dim=dim)

    def extra_repr(self):
        return f"name={self.name!r}, b={self.b.tolist()}, n={self.n.tolist()}"


register_scorer("ssa_n1.5", lambda **kw: SSA(**{"n": 1.5, "learn_n": False, **kw}))
register_scorer("ssa_n2", lambda **kw: SSA(**{"n": 2.0, "learn_n": False, **kw}))


@register_scorer("temperature_softmax")
class TemperatureSoftmax(Scorer):
    """Softmax of ``logits / T``; ``T`` fixed (``learn_temperature=False``) or trainable (> 0)."""

    name = "temperature_softmax"

    def __init__(self, temperature: float = 1.0, learn_temperature: bool = True, num_heads: int | None = None):
        super().__init__()
        _check_positive("temperature", temperature)
        self.temperature = _ScalarParameters(temperature, learn_temperature, num_heads)

    def forward(self, logits, mask=None, dim=-1):
        return temperature_softmax(logits, self.temperature.value(logits), mask=mask, dim=dim)


@register_scorer("sparsemax")
class Sparsemax(Scorer):
    name = "sparsemax"

    def forward(self, logits, mask=None, dim=-1):
        return sparsemax(logits, mask=mask, dim=dim)


@register_scorer("entmax15")
class Entmax15(Scorer):
    name = "entmax15"

    def forward(self, logits, mask=None, dim=-1):
        return entmax15(logits, mask=mask, dim=dim)


@register_scorer("sa_softmax")
class SASoftmax(Scorer):
    """Self-Adjusting softmax. ``x * softmax(x)`` can be negative and does not sum to one."""

    name = "sa_softmax"
    normalized = False
    nonnegative = False
    scaled = False

    def forward(self, logits, mask=None, dim=-1):
        return sa_softmax(logits, self.scaled, mask=mask, dim=dim)


@register_scorer("sa_softmax_normalized")
class SASoftmaxNormalized(SASoftmax):
    """Self-Adjusting softmax with min-max scaled logits: non-negative, rows sum to at most 1."""

    name = "sa_softmax_normalized"
    nonnegative = True
    scaled = True


@register_scorer("cosformer")
class CosFormer(Scorer):
    """cosFormer's re-weighted ReLU-feature attention in explicit-weight form."""

    name = "cosformer"
    normalized = False  # a row whose ReLU features meet no key's is all zeros
    order_free = False

    def forward(self, logits, mask=None, dim=-1):
        raise TypeError(
            "cosformer scores queries and keys, not their dot products: call "
            "weights_from_qk(queries, keys, mask) or ssa.attention.attention(...)"
        )

    def weights_from_qk(self, queries, keys, mask=None, scale=None):
        return cosformer_weights(queries, keys, mask)


@register_scorer("ssmax")
class SSMax(Scorer):
    """Scalable-Softmax with trainable ``s > 0`` (default 0.43, so ``s log N = 1`` near N = 10;
    our choice)."""

    name = "ssmax"

    def __init__(self, s: float = 0.43, learn_s: bool = True, num_heads: int | None = None):
        super().__init__()
        _check_positive("s", s)
        self.s = _ScalarParameters(s, learn_s, num_heads)

    def forward(self, logits, mask=None, dim=-1):
        return ssmax(logits, self.s.value(logits), mask=mask, dim=dim)


@register_scorer("sigmoid")
class SigmoidAttention(Scorer):
    """Element-wise ``sigmoid(x - log N)``; rows do not sum to one."""

    name = "sigmoid"
    normalized = False

    def forward(self, logits, mask=None, dim=-1):
        return sigmoid_attention(logits, mask=mask, dim=dim)


@register_scorer("adaptive_temperature")
class AdaptiveTemperatureSoftmax(Scorer):
    """Adaptive-temperature softmax (:func:`adaptive_temperature_softmax`) at inference, that is
    in eval mode; while the module trains, plain softmax (``during_training=True`` adapts then
    too). The temperature is chosen "at inference time", as the authors' abstract puts it."""

    name = "adaptive_temperature"

    def __init__(self, during_training: bool = False):
        super().__init__()
        if not isinstance(during_training, bool):
            raise ValueError(f"during_training must be True or False, got {during_training!r}")
        self.during_training = during_training

    def forward(self, logits, mask=None, dim=-1):
        if self.training and not self.during_training:
            return masked_softmax(logits, mask=mask, dim=dim)
        return adaptive_temperature_softmax(logits, mask=mask, dim=dim)

    def extra_repr(self):
        return f"name={self.name!r}, during_training={self.during_training}"


@register_scorer("stick_breaking")
class StickBreaking(Scorer):
    """Stick-breaking attention (:func:`stick_breaking`); rows sum to at most one, the rest weighting
    no value. ``attend_current=False``: a query does not read its own position (the authors' option)."""

    name = "stick_breaking"
    normalized = False
    order_free = False

    def __init__(self, attend_current: bool = True):
        super().__init__()
        if not isinstance(attend_current, bool):
            raise ValueError(f"attend_current must be True or False, got {attend_current!r}")
        self.attend_current = attend_current

    def forward(self, logits, mask=None, dim=-1):
        return stick_breaking(logits, mask=mask, dim=dim, attend_current=self.attend_current)

    def extra_repr(self) -> str:
        return f"attend_current={self.attend_current}"


def __getattr__(attribute: str):
    # SCORER_NAMES always reflects the registry, including scorers registered later.
    if attribute == "SCORER_NAMES":
        return scorer_names()
    raise AttributeError(attribute)
