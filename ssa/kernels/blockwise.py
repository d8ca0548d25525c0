r"""Memory-efficient SSA attention for the CPU: a FlashAttention-style custom autograd function.

SSA is a softmax of the transformed logits :math:`s = \operatorname{sgn}(x)\, n \log(1+b|x|)`,
so the streaming softmax of FlashAttention applies to :math:`s` unchanged. The forward pass
walks over tiles of (query block, key block), keeps per query row a running sum :math:`\ell`
of :math:`e^{s-m}` and a running output, and stores only the output and the row log-sum-exp
:math:`L = m + \log \ell`. Unlike softmax logits, SSA scores are bounded in advance: by
Cauchy–Schwarz :math:`|x_{ij}| \le \text{scale}\, \|q_i\| \max_j \|k_j\|`, so the shift
:math:`m_i = n \log(1 + b\, \text{scale}\, \|q_i\| \max_j \|k_j\|)` is known before the first
tile and :math:`e^{s - m}` lies in :math:`[e^{-2m}, 1]`. While :math:`2m \le 80` (far from
float32 underflow) the forward pass uses it and needs neither a running maximum nor the
rescaling of the running sums; beyond that (extreme ``n`` or logits) it falls back to the
running maximum of the online softmax. The backward pass recomputes each tile's
probabilities :math:`p = e^{s-L}` and uses, with :math:`\Delta_i = \sum_d dO_{id} O_{id}` and
:math:`ds = p\,(dO\,V^\top - \Delta)`,

.. math::
    \frac{\partial s}{\partial x} = \frac{n b}{1+b|x|},\qquad
    \frac{\partial L}{\partial n} = \sum_{ij} \frac{ds_{ij}\, s_{ij}}{n},\qquad
    \frac{\partial L}{\partial b} = \frac{1}{b} \sum_{i,d} q_{id}\, \frac{\partial L}{\partial q_{id}},

the last because :math:`\partial s/\partial b = x\, (\partial s/\partial x) / b` and
:math:`\sum_j (\partial L/\partial x_{ij})\, x_{ij} = \text{scale}\; q_i \cdot \sum_j
(\partial L/\partial x_{ij})\, k_j`: it costs one pass over ``q``, none over the tiles.

Peak memory is a few tiles instead of the ``(B, H, Q, K)`` matrix, and causal attention skips
the tiles above the diagonal. The per-tile element-wise arithmetic lives in :func:`forward_scores` (fixed
shift), :func:`online_forward_scores` (running maximum) and :func:`backward_scores`;
:class:`TileKernels` runs them between the tile's matrix products, eagerly or through
``torch.compile`` (which fuses them into one loop per tile), falling back to eager if
compilation is unavailable. On a CPU, :class:`NativeTileKernels` does the same work in the C++
kernels of :mod:`ssa.kernels.native` instead (for float32 vectorised with the CPU's AVX2 or
AVX-512 instructions): one pass per tile, in place, without the guards that every call of a
compiled function checks.
"""

from __future__ import annotations

import functools
import warnings

import torch
from torch import Tensor

from ssa.kernels.reference import attention_without_keys, nothing_to_attend, reference_gradients
from ssa.scoring import default_scale

__all__ = [
    "NativeTileKernels",
    "TileKernels",
    "blockwise_ssa_attention",
    "forward_scores",
    "online_forward_scores",
    "backward_scores",
    "ssa_scores",
]

SAFE_SHIFT_RANGE = 80.0  # largest 2m for the fixed shift: e^-80 ~ 1.8e-35, far above float32's tiny (1.2e-38)


def ssa_scores(logits: Tensor, b: Tensor, n: Tensor) -> Tensor:
    """:math:`\\operatorname{sgn}(x)\\, n \\log(1 + b|x|)`; ``copysign`` makes it one fused op.
    ``log(1 + .)`` rather than ``log1p``: a fraction of the cost, and its absolute error (what a
    softmax sees) stays at float32 resolution."""
    return torch.copysign(n * torch.log(1.0 + b * logits.abs()), logits)


def _visible(scores: Tensor, mask: Tensor | None, causal_shift: Tensor | None) -> Tensor | None:
    """Which entries of the tile may be attended (``None``: all). ``causal_shift``: key ``c`` of
    the tile is visible to query ``r`` of the tile iff ``c <= r + causal_shift`` (built here so
    that it fuses)."""
    if causal_shift is not None:
        rows, cols = scores.shape[-2:]
        visible = (
            torch.arange(cols, device=scores.device)[None, :]
            <= torch.arange(rows, device=scores.device)[:, None] + causal_shift
        )
        mask = visible if mask is None else mask & visible
    return mask


def _exp_visible(exponent: Tensor, mask: Tensor | None, causal_shift: Tensor | None) -> Tensor:
    """``exp(exponent)`` where visible, exactly 0 elsewhere (``where``: an overflowing hidden entry
    cannot turn into NaN)."""
    visible = _visible(exponent, mask, causal_shift)
    probabilities = torch.exp(exponent)
    return probabilities if visible is None else torch.where(visible, probabilities, 0.0)


def forward_scores(dot_products, b, n, scale, row_shift, mask, causal_shift):
    """The element-wise part of one forward tile with the fixed per-row shift ``row_shift`` (an
    upper bound of the row's scores): ``(probabilities, their row sums)``."""
    probabilities = _exp_visible(ssa_scores(dot_products * scale, b, n) - row_shift, mask, causal_shift)
    return probabilities, probabilities.sum(-1, keepdim=True)


def online_forward_scores(dot_products, b, n, scale, row_max, mask, causal_shift):
    """The element-wise part of one tile of the online softmax (a running maximum, for scores
    too spread for a fixed shift): ``(new maximum, probabilities, rescaling of the old sums)``."""
    scores = ssa_scores(dot_products * scale, b, n)
    visible = _visible(scores, mask, causal_shift)
    if visible is not None:
        scores = scores.masked_fill(~visible, float("-inf"))
    new_max = torch.maximum(row_max, scores.amax(-1, keepdim=True))
    # A row with no visible key so far has max -inf; shifting by 0 keeps exp() at exactly 0.
    shift = torch.where(torch.isfinite(new_max), new_max, torch.zeros_like(new_max))
    return new_max, torch.exp(scores - shift), torch.exp(row_max - shift)


def backward_scores(dot_products, grad_probabilities, log_sum_exp, delta, b, n, scale, mask, causal_shift):
    """The element-wise part of one backward tile: ``(probabilities, d loss / d (q . k), d loss / d n
    per (B, H))``."""
    logits = dot_products * scale
    scores = ssa_scores(logits, b, n)
    probabilities = _exp_visible(scores - log_sum_exp, mask, causal_shift)
    grad_scores = probabilities * (grad_probabilities - delta)  # softmax backward
    # Hidden entries have p = 0, hence grad_scores = 0; scores stay finite there, so no 0 * inf.
    grad_dot_products = grad_scores * ((n * b * scale) / (1.0 + b * logits.abs()))
    grad_n = (grad_scores * scores).sum((-2, -1), dtype=torch.float64) / n.squeeze(-1).squeeze(-1)
    return probabilities, grad_dot_products, grad_n


def compile_with_fallback(function):
    """``torch.compile(function)``, falling back to ``function`` itself (with one warning) if
    compilation fails: no C++ compiler, an unsupported platform, ..."""
    compiled_function = torch.compile(function, dynamic=True)
    state = {"compiled": True}

    @functools.wraps(function)
    def run(*arguments):
        if state["compiled"]:
            try:
                return compiled_function(*arguments)
            except Exception as error:
                state["compiled"] = False
                warnings.warn(
                    f"torch.compile of {function.__name__} failed ({type(error).__name__}: "
                    f"{str(error)[:200]}); using the eager version",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return function(*arguments)

    return run


def _causal_tensor(causal_shift: int | None, like: Tensor) -> Tensor | None:
    """The tile's causal shift as a tensor: a Python int would be a constant of the compiled
    kernels, so each new value would compile again."""
    return None if causal_shift is None else torch.tensor(causal_shift, device=like.device)


class TileKernels:
    """One tile of the forward and backward passes. The matrix products run eagerly (BLAS takes
    the strided tiles of q, k, v as they are: no copies); the element-wise work between them runs
    eagerly or compiled by ``torch.compile``, with dynamic sizes (tiles at the sequence ends and
    other lengths reuse one compilation). Its inputs are fresh contiguous tensors, whatever the
    tile: compiling the products too would make each new pattern of tile strides a new
    compilation, and torch.compile gives up after 8."""

    def __init__(self, compiled: bool):
        self.compiled = compiled
        wrap = compile_with_fallback if compiled else (lambda function: function)
        self.forward_scores = wrap(forward_scores)
        self.online_forward_scores = wrap(online_forward_scores)
        self.backward_scores = wrap(backward_scores)

    def forward_tile(self, q, k, v, b, n, scale, row_shift, row_sum, output, mask, causal_shift):
        """Fixed shift: the updated running sum and (unnormalised) output of the query block."""
        dot_products = torch.matmul(q, k.transpose(-2, -1))  # (B, H, Bq, D) @ (B, H, D, Bk) -> (B, H, Bq, Bk)
        probabilities, tile_sum = self.forward_scores(
            dot_products, b, n, scale, row_shift, mask, _causal_tensor(causal_shift, q)
        )
        return row_sum + tile_sum, output + torch.matmul(probabilities, v)  # (B, H, Bq, Bk) @ (B, H, Bk, Dv)

    def online_forward_tile(self, q, k, v, b, n, scale, row_max, row_sum, output, mask, causal_shift):
        """Running maximum: the updated maximum, running sum and output of the query block."""
        dot_products = torch.matmul(q, k.transpose(-2, -1))
        new_max, probabilities, rescale = self.online_forward_scores(
            dot_products, b, n, scale, row_max, mask, _causal_tensor(causal_shift, q)
        )
        return (
            new_max,
            row_sum * rescale + probabilities.sum(-1, keepdim=True),
            output * rescale + torch.matmul(probabilities, v),
        )

    def backward_tile(self, q, k, v, grad_output, log_sum_exp, delta, b, n, scale, mask, causal_shift):
        """Gradients of one tile: ``(dq, dk, dv, dn)``, ``dn`` per (B, H); ``b``'s gradient comes
        from ``dq`` afterwards (see the module doc)."""
        dot_products = torch.matmul(q, k.transpose(-2, -1))  # (B, H, Bq, Bk)
        grad_probabilities = torch.matmul(grad_output, v.transpose(-2, -1))
        probabilities, grad_dot_products, grad_n = self.backward_scores(
            dot_products, grad_probabilities, log_sum_exp, delta, b, n, scale, mask, _causal_tensor(causal_shift, q)
        )
        grad_v = torch.matmul(probabilities.transpose(-2, -1), grad_output)  # (B, H, Bk, Dv)
        grad_q = torch.matmul(grad_dot_products, k)  # (B, H, Bq, D)
        grad_k = torch.matmul(grad_dot_products.transpose(-2, -1), q)  # (B, H, Bk, D)
        return grad_q, grad_k, grad_v, grad_n


class NativeTileKernels(TileKernels):
    """The forward and backward tiles with their element-wise work in the compiled C++ kernels of
    :mod:`ssa.kernels.native` (CPU): one pass per tile, written over the tile's fresh matrix
    products (no new tile tensors), and no per-call overhead of ``torch.compile``'s guards.
    float32 tiles run in ``vectorised`` (the kernels for the CPU's instruction set) when given,
    other tiles in the scalar kernels of ``kernels``. The running-maximum fallback stays in
    PyTorch operations (it is for extreme values only)."""

    def __init__(self, kernels, vectorised=None):
        super().__init__(compiled=False)
        self.kernels = kernels
        self.vectorised = vectorised

    def kernels_for(self, dtype: torch.dtype):
        return self.vectorised if self.vectorised is not None and dtype == torch.float32 else self.kernels

    def forward_tile(self, q, k, v, b, n, scale, row_shift, row_sum, output, mask, causal_shift):
        dot_products = torch.matmul(q, k.transpose(-2, -1))  # (B, H, Bq, Bk); becomes the probabilities
        tile_sum = self.kernels_for(q.dtype).tile_forward(
            dot_products,
            b.reshape(-1),
            n.reshape(-1),
            scale,
            row_shift,
            causal_shift is not None,
            causal_shift or 0,
            mask,
        )
        return row_sum.add_(tile_sum), output.add_(torch.matmul(dot_products, v))

    def backward_tile(self, q, k, v, grad_output, log_sum_exp, delta, b, n, scale, mask, causal_shift):
        probabilities = torch.matmul(q, k.transpose(-2, -1))  # q.k until the kernel overwrites it
        grad_dot_products = torch.matmul(grad_output, v.transpose(-2, -1))  # dL/dp until overwritten
        grad_n = self.kernels_for(q.dtype).tile_backward(
            probabilities,
            grad_dot_products,
            log_sum_exp,
            delta,
            b.reshape(-1),
            n.reshape(-1),
            scale,
            causal_shift is not None,
            causal_shift or 0,
            mask,
        )
        grad_v = torch.matmul(probabilities.transpose(-2, -1), grad_output)  # (B, H, Bk, Dv)
        grad_q = torch.matmul(grad_dot_products, k)  # (B, H, Bq, D)
        grad_k = torch.matmul(grad_dot_products.transpose(-2, -1), q)  # (B, H, Bk, D)
        return grad_q, grad_k, grad_v, grad_n


def _blocks(length: int, size: int) -> list[slice]:
    return [slice(start, min(start + size, length)) for start in range(0, length, size)]


class _Tiling:
    """Which tiles to visit: batch blocks x query blocks x the key blocks each query block sees.

    Query ``i`` sits at key position ``i + offset`` (``offset = K - Q``, as in decoding); with
    ``causal`` it sees keys ``j <= i + offset``, so key blocks past its last visible key are
    skipped and the causal mask of the others is built inside the tile kernel."""

    def __init__(self, batch, n_queries, n_keys, causal, block_q, block_k, batch_block, full_mask):
        self.batch, self.n_queries, self.n_keys = batch, n_queries, n_keys
        self.offset = n_keys - n_queries if causal else None
        self.block_q, self.block_k, self.batch_block = block_q, block_k, batch_block
        self.full_mask = full_mask

    @property
    def single_tile(self) -> bool:
        return self.batch_block >= self.batch and self.block_q >= self.n_queries and self.block_k >= self.n_keys > 0

    def row_blocks(self):
        for items in _blocks(self.batch, self.batch_block):
            for rows in _blocks(self.n_queries, self.block_q):
                yield items, rows

    def key_blocks(self, items: slice, rows: slice):
        """``(cols, user mask tile or None, causal shift or None)`` for the keys ``rows`` see; the
        causal shift (an int) makes key ``c`` of the tile visible to its query ``r`` iff
        ``c <= r + shift``."""
        visible_end = self.n_keys if self.offset is None else max(0, min(self.n_keys, rows.stop + self.offset))
        for cols in _blocks(visible_end, self.block_k):
            mask = None if self.full_mask is None else self.full_mask[items, :, rows, cols]
            shift = None
            if self.offset is not None and cols.stop - 1 > rows.start + self.offset:  # straddles the diagonal
                shift = rows.start + self.offset - cols.start
            yield cols, mask, shift


class BlockwiseSSAAttention(torch.autograd.Function):
    """``(q, k, v, b, n, mask, causal, scale, tiling sizes, kernels) -> output``.

    ``q`` is ``(B, H, Q, D)``, ``k``/``v`` ``(B, H, K, D)`` (grouped-query heads expanded by
    the caller), ``b``/``n`` shape ``()`` or ``(H,)``, ``mask`` boolean broadcastable to
    ``(B, H, Q, K)`` or ``None``."""

    @staticmethod
    def forward(ctx, q, k, v, b, n, mask, causal, scale, block_q, block_k, batch_block, kernels):
        batch, heads, n_queries, _ = q.shape
        n_keys = k.shape[-2]
        b_heads, n_heads = _per_head(b, heads, q), _per_head(n, heads, q)
        full_mask = None if mask is None else torch.broadcast_to(mask, (batch, heads, n_queries, n_keys))
        tiling = _Tiling(batch, n_queries, n_keys, causal, block_q, block_k, batch_block, full_mask)

        # The fixed shift m_i = n log(1 + b scale |q_i| max_j |k_j|) >= every score of row i.
        # Squared norms, one square root at the end: (x * x).sum is much faster than norm() on a CPU.
        key_norm_max = k.square().sum(-1).amax(-1)[..., None, None]  # (B, H, 1, 1)
        bound = (q.square().sum(-1, keepdim=True) * key_norm_max).sqrt_()  # |q_i| max_j |k_j|: (B, H, Q, 1)
        row_shift = n_heads * torch.log1p(b_heads * scale * bound)
        fixed_shift = 2 * row_shift.max().item() <= SAFE_SHIFT_RANGE if row_shift.numel() else True
        output = q.new_zeros(*q.shape[:-1], v.shape[-1])
        log_sum_exp = q.new_full((batch, heads, n_queries, 1), float("-inf"))
        for items, rows in tiling.row_blocks():
            shape = (items.stop - items.start, heads, rows.stop - rows.start, 1)
            row_sum = q.new_zeros(shape)
            block_output = q.new_zeros(*shape[:-1], v.shape[-1])
            block_shift = _row_tile(row_shift, items, rows) if fixed_shift else q.new_full(shape, float("-inf"))
            for cols, tile_mask, causal_shift in tiling.key_blocks(items, rows):
                tiles = (_tile(q, items, rows), _tile(k, items, cols), _tile(v, items, cols), b_heads, n_heads, scale)
                if fixed_shift:
                    row_sum, block_output = kernels.forward_tile(
                        *tiles, block_shift, row_sum, block_output, tile_mask, causal_shift
                    )
                else:  # block_shift is the running maximum
                    block_shift, row_sum, block_output = kernels.online_forward_tile(
                        *tiles, block_shift, row_sum, block_output, tile_mask, causal_shift
                    )
            # Rows that saw no key have row_sum 0: output 0 (as the reference) and L = -inf.
            output[items, :, rows] = block_output / row_sum.clamp_min(torch.finfo(row_sum.dtype).tiny)
            log_sum_exp[items, :, rows] = block_shift + torch.log(row_sum)

        ctx.save_for_backward(q, k, v, b_heads, n_heads, output, log_sum_exp, b, n)
        ctx.config = (tiling, scale, kernels, b.shape, n.shape)
        ctx.visibility = (mask, n_keys - n_queries if causal else None)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        q, k, v, b_heads, n_heads, output, log_sum_exp, b, n = ctx.saved_tensors
        tiling, scale, kernels, b_shape, n_shape = ctx.config
        if torch.is_grad_enabled():  # create_graph=True: gradients that will be differentiated
            return (
                *reference_gradients((q, k, v, b, n), ctx.needs_input_grad[:5], grad_output, *ctx.visibility, scale),
                *[None] * 7,
            )
        grad_output = grad_output.contiguous()
        delta = (grad_output * output).sum(-1, keepdim=True)  # (B, H, Q, 1)
        # Rows without any visible key: p = exp(-inf - 0) = 0 everywhere.
        log_sum_exp = torch.where(torch.isfinite(log_sum_exp), log_sum_exp, torch.zeros_like(log_sum_exp))

        def tile_gradients(items, rows, cols, tile_mask, causal_shift):
            return kernels.backward_tile(
                _tile(q, items, rows),
                _tile(k, items, cols),
                _tile(v, items, cols),
                _tile(grad_output, items, rows),
                _row_tile(log_sum_exp, items, rows),
                _row_tile(delta, items, rows),
                b_heads,
                n_heads,
                scale,
                tile_mask,
                causal_shift,
            )

        if tiling.single_tile:  # small problems: no accumulation buffers
            items, rows = next(tiling.row_blocks())
            ((cols, tile_mask, causal_shift),) = tiling.key_blocks(items, rows)
            grad_q, grad_k, grad_v, grad_n = tile_gradients(items, rows, cols, tile_mask, causal_shift)
        else:
            grad_q = torch.zeros_like(q)
            grad_k, grad_v = torch.zeros_like(k), torch.zeros_like(v)
            grad_n = q.new_zeros(q.shape[:2], dtype=torch.float64)  # (B, H); the tiles' sums are double
            for items, rows in tiling.row_blocks():
                for cols, tile_mask, causal_shift in tiling.key_blocks(items, rows):
                    tile_q, tile_k, tile_v, tile_n = tile_gradients(items, rows, cols, tile_mask, causal_shift)
                    grad_q[items, :, rows] += tile_q
                    grad_k[items, :, cols] += tile_k
                    grad_v[items, :, cols] += tile_v
                    grad_n[items] += tile_n
        # (B, H), see the module doc; in double, as dL/dn: the terms of both cancel. One batch item
        # at a time: the product and its double copy are then 3/B of q's size, not 3 times it (the
        # peak of the backward), and the sums are the same, each (item, head) reduced on its own.
        grad_b = _item_dot_products(q, grad_q) / b_heads.reshape(-1)
        return (
            grad_q,
            grad_k,
            grad_v,
            _reduce_to(grad_b, b_shape).to(q.dtype),
            _reduce_to(grad_n, n_shape).to(q.dtype),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        )


def _item_dot_products(q: Tensor, grad_q: Tensor) -> Tensor:
    """``(q * grad_q).sum((-2, -1), dtype=torch.float64)``, ``(B, H)``, one batch item at a time."""
    if q.shape[0] == 0:
        return q.new_zeros(q.shape[:2], dtype=torch.float64)
    return torch.cat(
        [
            (q_item * grad_item).sum((-2, -1), dtype=torch.float64)
            for q_item, grad_item in zip(q.split(1), grad_q.split(1))
        ]
    )


def _tile(tensor: Tensor, items: slice, positions: slice) -> Tensor:
    """A ``(batch block, H, positions, D)`` tile of q, k, v or dO: a view (the matrix products take
    its strides as they are)."""
    return tensor[items, :, positions]


def _row_tile(tensor: Tensor, items: slice, rows: slice) -> Tensor:
    """A contiguous ``(batch block, H, rows, 1)`` tile of a per-row statistic: an input of the
    compiled kernels, whose layout must not change from tile to tile (see :class:`TileKernels`)."""
    return tensor[items, :, rows].contiguous()


def _per_head(value: Tensor, heads: int, like: Tensor) -> Tensor:
    """A scalar or per-head parameter as ``(H, 1, 1)``, broadcasting against ``(B, H, Bq, Bk)``."""
    return value.to(like.dtype).expand(heads).reshape(heads, 1, 1).contiguous()


def _reduce_to(grad: Tensor, shape: torch.Size) -> Tensor:
    """Sum a ``(B, H)`` gradient down to the parameter's shape ``()`` or ``(H,)``."""
    per_head = grad.sum(0)
    return per_head.sum().reshape(shape) if shape.numel() == 1 else per_head.reshape(shape)


def prepare_inputs(q: Tensor, k: Tensor, v: Tensor, b, n):
    """Grouped-query heads expanded, half precision upcast to float32, ``b``/``n`` checked:
    ``(q, k, v, b, n, original dtype)``."""
    heads, kv_heads = q.shape[1], k.shape[1]
    if kv_heads != heads:
        k = k.repeat_interleave(heads // kv_heads, dim=1)  # (B, H_kv, K, D) -> (B, H, K, D)
        v = v.repeat_interleave(heads // kv_heads, dim=1)
    dtype = q.dtype
    if dtype in (torch.float16, torch.bfloat16):
        q, k, v = q.float(), k.float(), v.float()
    b = torch.as_tensor(b, dtype=q.dtype, device=q.device)
    n = torch.as_tensor(n, dtype=q.dtype, device=q.device)
    for name, value in (("b", b), ("n", n)):
        if value.dim() > 1 or (value.dim() == 1 and value.shape[0] not in (1, heads)):
            raise ValueError(
                f"{name} must be a scalar or have one value per query head ({heads}); got shape {tuple(value.shape)}"
            )
    return q, k, v, b, n, dtype


def blockwise_ssa_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    b: Tensor,
    n: Tensor,
    *,
    mask: Tensor | None = None,
    causal: bool = False,
    scale: float | None = None,
    block_q: int = 128,
    block_k: int = 1024,
    batch_block: int | None = None,
    kernels: TileKernels | None = None,
) -> Tensor:
    """SSA attention output ``(B, H, Q, Dv)`` without materialising the attention matrix.

    ``k``/``v`` may have fewer heads than ``q`` (grouped-query attention). ``b`` and ``n`` are
    the SSA values (not the raw parameters), scalars or one per query head; gradients flow
    to them. Half-precision inputs are computed in float32."""
    for name, size in (("block_q", block_q), ("block_k", block_k)):
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"{name} must be an int >= 1, got {size!r}")
    if nothing_to_attend(q, k):  # the tiling needs a tile
        return attention_without_keys(q, k, v)
    q, k, v, b, n, dtype = prepare_inputs(q, k, v, b, n)
    heads = q.shape[1]
    scale = default_scale(q.shape[-1]) if scale is None else scale
    kernels = kernels or EAGER_KERNELS
    if batch_block is None:  # keep one tile tensor near TILE_ELEMENTS (at most, unless one item exceeds it)
        batch_block = max(1, TILE_ELEMENTS // (heads * min(block_q, q.shape[-2]) * min(block_k, k.shape[-2])))
    output = BlockwiseSSAAttention.apply(q, k, v, b, n, mask, causal, scale, block_q, block_k, batch_block, kernels)
    return output.to(dtype)


EAGER_KERNELS = TileKernels(compiled=False)
# 4 MiB of float32 per tile tensor: at 1024 tokens (12 heads, 128 x 1024 tiles) one batch item
# per tile, which measured 12% faster than two (2**22) with the C++ tile kernels (python -m ssa_book bench).
TILE_ELEMENTS = 2**20
