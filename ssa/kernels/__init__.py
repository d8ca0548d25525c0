"""Fast SSA attention: the paths, and the rule that picks one.

=============  ===============================================================================
path           what it is
=============  ===============================================================================
``reference``  :meth:`ssa.scoring.Scorer.weights_from_qk` then ``weights @ v`` (readable; stores
               the ``(B, H, Q, K)`` matrix and every intermediate for autograd)
``direct``     :mod:`ssa.kernels.direct`: the matrix at once with a hand-written backward
               (short sequences); on a CPU its element-wise steps run in C++ row kernels
               (:mod:`ssa.kernels.native`, built on first use; ``SSA_NATIVE=0`` turns them off)
``compiled``   the reference computation through ``torch.compile`` (fused element-wise work;
               still stores the matrix)
``blockwise``  :mod:`ssa.kernels.blockwise`: FlashAttention-style custom autograd function,
               memory linear in the sequence length; each tile's element-wise work in C++ on a
               CPU (:mod:`ssa.kernels.native`; float32 tiles vectorised with AVX2 or AVX-512
               where the CPU has them), else fused by ``torch.compile`` (eager where
               compilation is unavailable)
``flex``       :mod:`ssa.kernels.flex`: FlexAttention ``score_mod`` (CUDA)
=============  ===============================================================================

Second derivatives (``create_graph=True``): ``reference`` by autograd; ``direct`` and
``blockwise`` by differentiating the reference computation in their backward
(:mod:`ssa.kernels.reference`); ``compiled`` (when compiled) and ``flex`` refuse with a
``RuntimeError`` that names the path and ``path='reference'``. Every scorer, softmax's fused
kernels included: :func:`ssa.attention.attention`'s table.

``auto`` (the default of :func:`ssa.attention.attention`) takes ``flex`` on CUDA; on other
devices ``direct`` for short rows (up to :data:`DIRECT_MAX_KEYS` keys) while the attention
matrix stays small (up to :data:`DIRECT_MAX_ELEMENTS` entries), ``blockwise`` otherwise (the sizes where each was measured fastest, ``python -m ssa_book bench``). Every path agrees with ``reference`` to float32 tolerance (``tests/test_kernels.py``).
"""

from __future__ import annotations

import functools

import torch
from torch import Tensor

import os

from ssa.kernels.blockwise import (
    EAGER_KERNELS,
    NativeTileKernels,
    TileKernels,
    blockwise_ssa_attention,
    compile_with_fallback,
)
from ssa.kernels.direct import direct_ssa_attention
from ssa.kernels.flex import flex_available, flex_ssa_attention
from ssa.kernels.native import cpu_kernels, vector_tile_kernels
from ssa.kernels.reference import (
    attention_without_keys,
    first_derivatives_only,
    nothing_to_attend,
    reference_ssa_attention,
)
from ssa.scoring import default_scale

__all__ = ["PATHS", "DIRECT_MAX_KEYS", "DIRECT_MAX_ELEMENTS", "choose_path", "fast_ssa_attention", "ssa_values"]

PATHS = ("auto", "reference", "direct", "compiled", "blockwise", "flex")

# Rows of up to this many keys are faster through the direct path on a CPU (the in-context-
# learning models: 10 to 82 tokens): per row, the blockwise kernels' overhead outweighs what
# streaming saves. Above about 128 keys blockwise is faster (python -m ssa_book bench).
DIRECT_MAX_KEYS = 96
# ... as long as the matrices it stores (three of B * H * Q * K entries) stay small.
DIRECT_MAX_ELEMENTS = 2**24


def check_path(path: str) -> str:
    if path not in PATHS:
        raise ValueError(f"attention path must be one of {', '.join(PATHS)}; got {path!r}")
    return path


def choose_path(query: Tensor, key: Tensor, requested: str = "auto") -> str:
    """The path ``auto`` resolves to for these inputs (an explicit path is returned as is)."""
    if check_path(requested) != "auto":
        return requested
    if query.is_cuda and flex_available():
        return "flex"
    batch, heads, n_queries, _ = query.shape
    n_keys = key.shape[-2]
    if n_keys <= DIRECT_MAX_KEYS and batch * heads * n_queries * n_keys <= DIRECT_MAX_ELEMENTS:
        return "direct"
    return "blockwise"


def ssa_values(scorer) -> tuple[Tensor, Tensor]:
    """SSA's ``b`` and ``n`` as differentiable tensors of shape ``()`` (one per layer) or ``(H,)``."""
    values = []
    for parameter in (scorer.b_param, scorer.n_param):
        value = parameter.current()
        values.append(value.reshape(()) if parameter.num_heads is None else value)
    return values[0], values[1]


@functools.lru_cache(maxsize=1)
def _compiled_reference():
    return compile_with_fallback(reference_ssa_attention)


COMPILE_ENV = "SSA_ATTENTION_COMPILE"


def compile_enabled() -> bool:
    """Whether the fast paths use ``torch.compile`` (``$SSA_ATTENTION_COMPILE``, default on;
    ``0`` runs the same algorithms eagerly, e.g. in unit tests)."""
    return os.environ.get(COMPILE_ENV, "1").strip().lower() not in {"0", "false", "no"}


@functools.lru_cache(maxsize=1)
def compiled_tile_kernels() -> TileKernels:
    return TileKernels(compiled=True)


def tile_kernels(device: torch.device, compile: bool) -> TileKernels:
    """The blockwise path's tile kernels: the C++ ones on a CPU where they are available
    (:mod:`ssa.kernels.native`; vectorised for float32 where the CPU has AVX2 or AVX-512), else
    ``torch.compile``'d ones, or eager with ``compile=False``."""
    if device.type == "cpu":
        kernels = cpu_kernels()
        if kernels is not None:
            return NativeTileKernels(kernels, vector_tile_kernels())
    return compiled_tile_kernels() if compile else EAGER_KERNELS


def fast_ssa_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    scorer,
    *,
    mask: Tensor | None,
    causal: bool,
    scale: float | None,
    path: str,
    compile: bool | None = None,
) -> Tensor:
    """SSA attention output through ``path`` (not ``reference`` or ``auto``: the caller resolves
    those). ``compile`` (default :func:`compile_enabled`) ``False`` runs the same algorithm
    without ``torch.compile``."""
    device_type = query.device.type
    if torch.is_autocast_enabled(device_type):
        # The kernels compute in the inputs' dtype (attention cast them to autocast's): b and n
        # follow, and autocast stays out of the kernels' own products.
        with torch.autocast(device_type, enabled=False):
            b, n = ssa_values(scorer)
            return _fast_ssa_attention(
                query,
                key,
                value,
                b.to(query.dtype),
                n.to(query.dtype),
                mask=mask,
                causal=causal,
                scale=scale,
                path=path,
                compile=compile,
            )
    b, n = ssa_values(scorer)
    return _fast_ssa_attention(
        query, key, value, b, n, mask=mask, causal=causal, scale=scale, path=path, compile=compile
    )


def _fast_ssa_attention(query, key, value, b, n, *, mask, causal, scale, path, compile) -> Tensor:
    if nothing_to_attend(query, key):
        return attention_without_keys(query, key, value)
    compile = compile_enabled() if compile is None else compile
    scale = default_scale(query.shape[-1]) if scale is None else scale
    if path == "flex":  # FlexAttention's backward has no derivative of its own
        return first_derivatives_only(
            flex_ssa_attention(query, key, value, b, n, mask=mask, causal=causal, scale=scale, compiled=compile), "flex"
        )
    if path == "direct":
        return direct_ssa_attention(query, key, value, b, n, mask=mask, causal=causal, scale=scale)
    if path == "blockwise":
        return blockwise_ssa_attention(
            query, key, value, b, n, mask=mask, causal=causal, scale=scale, kernels=tile_kernels(query.device, compile)
        )
    if path == "compiled":
        causal_offset = key.shape[-2] - query.shape[-2] if causal else None
        if not compile:  # the reference computation, eagerly: its second derivatives are autograd's
            return reference_ssa_attention(query, key, value, b, n, mask, causal_offset, scale)
        # A compiled backward (AOTAutograd's) cannot be differentiated again.
        return first_derivatives_only(
            _compiled_reference()(query, key, value, b, n, mask, causal_offset, scale), "compiled"
        )
    raise ValueError(f"fast_ssa_attention: path must be one of flex, direct, blockwise, compiled; got {path!r}")
