"""The fast SSA paths agree with the reference path, forward and backward, with masks and GQA.

The direct and blockwise paths are tested with each implementation of their element-wise steps:
the C++ kernels (:mod:`ssa.kernels.native`: the direct path's ``native`` rows, the blockwise
path's ``scalar`` tiles and their float32 versions vectorised for each instruction set this CPU
executes, ``avx2`` and ``avx512``) and PyTorch operations (``torch rows`` for the direct path,
``eager`` tile kernels for the blockwise one).

The blockwise and compiled paths run here without ``torch.compile`` (the same algorithm, eager;
compilation takes minutes on a busy CPU): ``python -m ssa_book bench`` checks the compiled kernels'
agreement at the benchmark sizes, and ``SSA_TEST_COMPILE=1`` runs the compiled test below.
FlexAttention has no backward on CPUs: its forward is tested here, forward and backward on CUDA.
"""

import os
import shutil
import subprocess
import sys

import pytest
import torch

from ssa.attention import attention, attention_path, current_path
from ssa.kernels import PATHS, choose_path, fast_ssa_attention, ssa_values
import ssa.kernels as kernels_module
from ssa.kernels.blockwise import (
    BlockwiseSSAAttention,
    EAGER_KERNELS,
    NativeTileKernels,
    _item_dot_products,
    blockwise_ssa_attention,
)
from ssa.kernels import blockwise as blockwise_module, direct as direct_module, native as native_module
from ssa.kernels.direct import direct_ssa_attention
from ssa.kernels.flex import flex_ssa_attention
from ssa.kernels.native import native_enabled, cpu_kernels
from ssa.scoring import SSA

from ssa_error_bounds import assert_within_bounds, ssa_truth_and_bounds, tile_truth_and_bounds

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def inputs(batch=2, heads=4, kv_heads=2, n_queries=19, n_keys=19, dim=8, dtype=torch.float32, device="cpu", seed=0):
    generator = torch.Generator().manual_seed(seed)
    shapes = [(batch, heads, n_queries, dim), (batch, kv_heads, n_keys, dim), (batch, kv_heads, n_keys, dim)]
    # Logits of order 1-10, where SSA's log map is far from linear.
    return [(3 * torch.randn(shape, generator=generator, dtype=dtype)).to(device).requires_grad_() for shape in shapes]


def padding_mask(lengths, n_keys, device="cpu"):
    return (torch.arange(n_keys)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :].to(device)  # (B, 1, 1, K)


CASES = {
    "plain": dict(),
    "causal": dict(causal=True),
    "padding": dict(mask=padding_mask([19, 7], 19)),
    # The second item's first query rows see no key at all: output 0, gradients 0, no NaN.
    "causal+left padding": dict(causal=True, mask=~padding_mask([0, 5], 19)),
    "full mask": dict(mask=torch.rand(2, 4, 19, 19, generator=torch.Generator().manual_seed(1)) > 0.3),
}


def scorer_for(per_head, dtype=torch.float32, device="cpu"):
    return SSA(b=0.7, n=1.8, num_heads=4 if per_head else None).to(dtype=dtype, device=device)


DIRECT_ROWS = ["native", "torch rows"]
VECTOR_TILES = [variant.lower() for variant in native_module.TILE_VARIANTS]  # avx2, avx512
TILE_KERNELS = ["scalar", *VECTOR_TILES, "eager"]
BLOCKWISE_PATHS = [f"blockwise/{tiles}" for tiles in TILE_KERNELS]


def native_kernels():
    if cpu_kernels() is None:
        pytest.skip("the C++ kernels are not available (no compiler, or SSA_NATIVE=0)")
    return cpu_kernels()


def use_rows(rows, monkeypatch):
    """Makes the direct path use one implementation of its element-wise steps."""
    if rows == "native":
        native = native_kernels()
        monkeypatch.setattr(direct_module, "row_implementation", lambda device, dtype: direct_module.NativeRows(native))
    else:
        monkeypatch.setattr(direct_module, "row_implementation", lambda device, dtype: direct_module.TorchRows())


def vector_tiles(name):
    """The vectorised tile kernels for instruction set ``name`` (``"avx2"``, ...); the test is
    skipped where the CPU cannot execute them (importing them would kill the process)."""
    variant = native_module.TILE_VARIANTS[name.upper()]
    if not variant.runs_here():
        missing = sorted(set(variant.cpu_flags) - native_module.cpu_flags())
        pytest.skip(f"this CPU lacks {', '.join(missing)}: the {variant.capability} tiles cannot run here")
    native_kernels()
    module = native_module.load_tile_variant(variant)
    assert module is not None, f"the {variant.capability} tiles failed to build where the scalar kernels built"
    return module


def tile_kernels_named(name):
    if name == "eager":
        return EAGER_KERNELS
    return NativeTileKernels(native_kernels(), None if name == "scalar" else vector_tiles(name))


def use_implementation(path, monkeypatch):
    """``"direct/native"``, ``"blockwise/eager"``, ...: the path, with its element-wise steps
    forced to one implementation."""
    if "/" not in path:
        return path
    path, implementation = path.split("/")
    if path == "direct":
        use_rows(implementation, monkeypatch)
    else:
        kernels = tile_kernels_named(implementation)
        monkeypatch.setattr(kernels_module, "tile_kernels", lambda device, compile: kernels)
    return path


def outputs_and_grads(path, q, k, v, scorer, grad_output, **case):
    parameters = [q, k, v, scorer.b_param.raw, scorer.n_param.raw]
    if path == "reference":
        with attention_path("reference"):
            output = attention(q, k, v, scorer, **case)
    else:
        output = fast_ssa_attention(
            q, k, v, scorer, path=path, compile=False, scale=None, **{"mask": None, "causal": False, **case}
        )
    return output, torch.autograd.grad(output, parameters, grad_output)


def path_outputs_and_grads(path, q, k, v, b, n, grad_output, **case):
    """Output and gradients ``{output, q, k, v, b, n}`` of SSA attention on ``path`` (after
    :func:`use_implementation`), differentiated with respect to the values ``b`` and ``n``."""
    b, n = (value.detach().clone().requires_grad_() for value in (b, n))
    arguments = {"mask": None, "causal": False, **case}
    if path == "direct":
        output = direct_ssa_attention(q, k, v, b, n, **arguments)
    elif path == "blockwise":
        output = blockwise_ssa_attention(
            q, k, v, b, n, kernels=kernels_module.tile_kernels(q.device, False), **arguments
        )
    elif path == "compiled":  # the reference computation, as torch.compile gets it (here eager)
        output = fast_ssa_attention(q, k, v, FixedSSA(b, n), path="compiled", compile=False, scale=None, **arguments)
    else:
        raise ValueError(path)
    grads = torch.autograd.grad(output, [q, k, v, b, n], grad_output)
    return dict(zip(["output", "q", "k", "v", "b", "n"], [output, *grads]))


class FixedSSA(SSA):
    """An SSA scorer whose values are given tensors (differentiable), for :func:`fast_ssa_attention`."""

    def __init__(self, b, n):
        super().__init__(num_heads=b.numel() if b.dim() else None)
        self.values = (b, n)


@pytest.fixture
def fixed_values(monkeypatch):
    monkeypatch.setattr(kernels_module, "ssa_values", lambda scorer: scorer.values)


def check_against_truth(path, q, k, v, b, n, grad_output, **case):
    """The path's output and gradients lie within their float32 error bounds of the float64 truth
    (tests/ssa_error_bounds.py derives the bounds)."""
    got = path_outputs_and_grads(path, q, k, v, b, n, grad_output, **case)
    truth, bound = ssa_truth_and_bounds(
        q, k, v, b, n, grad_output=grad_output, b_gradient="autograd" if path == "compiled" else "q.dq", **case
    )
    assert_within_bounds(got, truth, bound, label=path)
    return truth, bound


@pytest.mark.parametrize("path", ["direct/native", "direct/torch rows", *BLOCKWISE_PATHS, "compiled"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("per_head", [False, True])
@pytest.mark.parametrize("shift", ["fixed", "per row"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fast_paths_match_the_truth_forward_and_backward(path, case, per_head, shift, dtype, monkeypatch, fixed_values):
    """``shift="per row"`` forces the fallback of the direct and blockwise paths for scores too
    spread for one fixed shift (torch.softmax; the online softmax's running maximum); the
    native row kernels always shift by each row's maximum."""
    path = use_implementation(path, monkeypatch)
    if shift == "per row":
        monkeypatch.setattr(direct_module, "SAFE_SHIFT_RANGE", -1.0)
        monkeypatch.setattr(blockwise_module, "SAFE_SHIFT_RANGE", -1.0)
    q, k, v = inputs(dtype=dtype)
    b, n = ([0.7, 0.9, 1.3, 0.5], [1.8, 1.2, 2.5, 1.5]) if per_head else (0.7, 1.8)
    b, n = torch.tensor(b, dtype=dtype), torch.tensor(n, dtype=dtype)
    grad_output = torch.randn(q.shape, generator=torch.Generator().manual_seed(3), dtype=dtype)
    truth, bound = check_against_truth(path, q, k, v, b, n, grad_output, **CASES[case])
    for name in ("b", "n"):  # the bounds are informative (a head whose gradient cancels may not be, in float32)
        if dtype == torch.float64:
            assert (bound[name] < 1e-8 * truth[name].abs()).all(), name
        else:
            assert bound[name].max() < truth[name].abs().max(), name


@pytest.mark.parametrize("block_q, block_k", [(4, 4), (5, 8), (19, 6), (64, 64)])
@pytest.mark.parametrize("n_queries", [19, 6])
@pytest.mark.parametrize("tiles", TILE_KERNELS)
def test_blockwise_tiling_and_decoding_alignment(block_q, block_k, n_queries, tiles):
    """Tiles that do not divide the lengths, streaming over several key blocks, and fewer
    queries than keys (queries aligned to the last keys, as in decoding); forward and backward."""
    kernels = tile_kernels_named(tiles)
    q, k, v = inputs(n_queries=n_queries)
    b, n = torch.tensor([0.7, 0.9, 1.3, 0.5]), torch.tensor([1.8, 1.2, 2.5, 1.5])
    grad_output = torch.randn(q.shape, generator=torch.Generator().manual_seed(2))
    for case in ("plain", "causal", "causal+left padding"):
        arguments = {"causal": False, "mask": None, **CASES[case]}
        if arguments["mask"] is not None:
            arguments["mask"] = (
                arguments["mask"][..., -n_queries:, :] if arguments["mask"].shape[-2] > 1 else arguments["mask"]
            )
        values = [value.clone().requires_grad_() for value in (b, n)]
        output = blockwise_ssa_attention(
            q, k, v, *values, block_q=block_q, block_k=block_k, kernels=kernels, **arguments
        )
        got = dict(
            zip(
                ["output", "q", "k", "v", "b", "n"],
                [output, *torch.autograd.grad(output, [q, k, v, *values], grad_output)],
            )
        )
        truth, bound = ssa_truth_and_bounds(q, k, v, b, n, grad_output=grad_output, **arguments)
        assert_within_bounds(got, truth, bound, label=f"{case}, blocks {block_q} x {block_k}")


@pytest.mark.parametrize("path", ["direct/native", "direct/torch rows", *BLOCKWISE_PATHS, "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_extreme_scores_fall_back_to_a_per_row_shift(path, dtype, monkeypatch, fixed_values):
    """n = 8 and b = 1000: scores span far more than one fixed shift can hold without
    underflow; the paths detect it and stay within their error bounds, with no NaN.

    Here the scalar gradients cancel hardest: dL/db is about b |x| (10^4 to 10^5) times smaller
    than its terms, because sum_j dL/ds_ij = 0 in each row and ds/db ~ n / b for the keys that
    carry the weight. No float32 computation from float32 intermediates can bound its error
    below its value, and the derived float32 bound says so (it exceeds |dL/db|). The algorithm
    itself is checked in float64, where the same bound is informative."""
    path = use_implementation(path, monkeypatch)
    q, k, v = inputs(dtype=dtype)
    grad_output = torch.randn(q.shape, generator=torch.Generator().manual_seed(4), dtype=dtype)
    b, n = torch.tensor(1000.0, dtype=dtype), torch.tensor(8.0, dtype=dtype)
    truth, bound = check_against_truth(path, q, k, v, b, n, grad_output, causal=True)
    if dtype == torch.float64:  # informative: a wrong formula (an error of the order of the value) fails
        for name in ("b", "n"):
            assert bound[name] < 1e-3 * truth[name].abs(), name


@pytest.mark.parametrize("rows", DIRECT_ROWS)
@pytest.mark.parametrize("causal", [False, True])
def test_direct_gradcheck_float64(rows, causal, monkeypatch):
    use_rows(rows, monkeypatch)
    generator = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 2, 5, 3, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(3))
    b = torch.tensor([0.7, 1.3], dtype=torch.float64, requires_grad=True)
    n = torch.tensor([1.2, 2.0], dtype=torch.float64, requires_grad=True)

    def function(q, k, v, b, n):
        return direct_ssa_attention(q, k, v, b, n, mask=padding_mask([4, 5], 5), causal=causal, scale=0.5)

    assert torch.autograd.gradcheck(function, (q, k, v, b, n), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("tiles", TILE_KERNELS)
def test_blockwise_gradcheck_float64(tiles):
    """Numerical gradients of the custom autograd function, for q, k, v, b and n."""
    kernels = tile_kernels_named(tiles)
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 3, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(3))
    b = torch.tensor([0.7, 1.3], dtype=torch.float64, requires_grad=True)
    n = torch.tensor([1.2, 2.0], dtype=torch.float64, requires_grad=True)
    mask = padding_mask([4], 5)
    for causal, block in [(True, 2), (False, 3)]:

        def function(q, k, v, b, n):
            return BlockwiseSSAAttention.apply(q, k, v, b, n, mask, causal, 0.5, block, block, 1, kernels)

        assert torch.autograd.gradcheck(function, (q, k, v, b, n), eps=1e-6, atol=1e-6)


def test_blockwise_half_precision_and_bad_sizes():
    q, k, v = (t.detach().to(torch.bfloat16) for t in inputs())
    b, n = torch.tensor(1.0), torch.tensor(1.5)
    output = blockwise_ssa_attention(q, k, v, b, n, causal=True)
    assert output.dtype == torch.bfloat16 and torch.isfinite(output).all()
    with pytest.raises(ValueError, match="block_q must be"):
        blockwise_ssa_attention(q, k, v, b, n, block_q=0)
    with pytest.raises(ValueError, match="one value per query head"):
        blockwise_ssa_attention(q, k, v, torch.ones(3), n)


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
@pytest.mark.parametrize("case", CASES)
def test_flex_forward_matches_reference_on_cpu(case):
    q, k, v = (t.detach() for t in inputs(kv_heads=2))
    scorer = scorer_for(per_head=True)
    b, n = ssa_values(scorer)
    arguments = {"causal": False, "mask": None, **CASES[case]}
    with torch.no_grad(), attention_path("reference"):
        expected = attention(q, k, v, scorer, **arguments)
        output = flex_ssa_attention(q, k, v, b, n, compiled=False, **arguments)
    torch.testing.assert_close(output, expected, atol=2e-5, rtol=1e-4)


@cuda
@pytest.mark.parametrize("case", ["plain", "causal", "padding", "causal+left padding"])
@pytest.mark.parametrize("per_head", [False, True])
def test_flex_on_cuda_matches_reference_forward_and_backward(case, per_head):
    arguments = {
        key: (value.cuda() if isinstance(value, torch.Tensor) else value) for key, value in CASES[case].items()
    }
    q, k, v = inputs(n_queries=256, n_keys=256, dim=64, device="cuda", batch=2, heads=4, kv_heads=2)
    if "mask" in arguments:  # the cases' masks are for 19 keys: rebuild them for 256
        lengths = [256, 100] if case == "padding" else [0, 77]
        mask = padding_mask(lengths, 256, "cuda")
        arguments["mask"] = mask if case == "padding" else ~mask
    scorer = scorer_for(per_head, device="cuda")
    grad_output = torch.randn(q.shape, generator=torch.Generator().manual_seed(3)).cuda()
    expected, expected_grads = outputs_and_grads("reference", q, k, v, scorer, grad_output, **arguments)
    output, grads = outputs_and_grads("flex", q, k, v, scorer, grad_output, **arguments)
    torch.testing.assert_close(output, expected, atol=1e-4, rtol=1e-3)
    for name, got, want in zip(["q", "k", "v", "b", "n"], grads, expected_grads):
        torch.testing.assert_close(got, want, atol=1e-3, rtol=1e-3, msg=lambda m: f"d{name}: {m}")


@cuda
def test_auto_path_on_cuda_is_flex():
    q, k, _ = inputs(device="cuda")
    assert choose_path(q, k) == "flex"


@pytest.mark.skipif(
    os.environ.get("SSA_TEST_COMPILE") != "1", reason="torch.compile takes minutes; set SSA_TEST_COMPILE=1"
)
@pytest.mark.parametrize("path", ["blockwise", "compiled"])
def test_compiled_kernels_match_reference(path):
    q, k, v = inputs(batch=4, heads=4, n_queries=100, n_keys=100, dim=16)
    scorer = scorer_for(per_head=True)
    grad_output = torch.randn(q.shape, generator=torch.Generator().manual_seed(3))
    case = dict(causal=True, mask=padding_mask([100, 60, 30, 1], 100))
    expected, expected_grads = outputs_and_grads("reference", q, k, v, scorer, grad_output, **case)
    output = fast_ssa_attention(q, k, v, scorer, path=path, compile=True, scale=None, **case)
    grads = torch.autograd.grad(output, [q, k, v, scorer.b_param.raw, scorer.n_param.raw], grad_output)
    torch.testing.assert_close(output, expected, atol=2e-5, rtol=1e-4)
    for got, want in zip(grads, expected_grads):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)


def test_dispatch_by_size_and_forced_paths(monkeypatch):
    small = inputs(batch=1, heads=1, n_queries=4, n_keys=4, kv_heads=1)
    large = [torch.empty(8, 12, 1024, 64)] * 2
    assert choose_path(small[0], small[1]) == "direct"
    assert choose_path(large[0], large[1]) == "blockwise"
    assert current_path() == "auto"
    with attention_path("blockwise"):
        assert current_path() == "blockwise" and choose_path(small[0], small[1], current_path()) == "blockwise"
    monkeypatch.setenv("SSA_ATTENTION_PATH", "reference")
    assert current_path() == "reference"
    with pytest.raises(ValueError, match="attention path must be one of"):
        with attention_path("fastest"):
            pass
    assert set(PATHS) >= {"auto", "reference", "direct", "blockwise", "compiled", "flex"}


def test_attention_uses_the_fast_path_and_keeps_the_reference_for_weights(monkeypatch):
    monkeypatch.setenv("SSA_ATTENTION_COMPILE", "0")
    q, k, v = inputs()
    scorer = scorer_for(per_head=False)
    with attention_path("blockwise"):
        fast = attention(q, k, v, scorer, causal=True)
        output, weights = attention(q, k, v, scorer, causal=True, return_weights=True)
    with attention_path("reference"):
        reference = attention(q, k, v, scorer, causal=True)
    torch.testing.assert_close(fast, reference, atol=2e-5, rtol=1e-4)
    torch.testing.assert_close(output, reference)
    assert weights.shape == (2, 4, 19, 19)


@pytest.mark.skipif(
    shutil.which("c++") is None or not native_enabled(), reason="needs a C++ compiler and SSA_NATIVE on"
)
def test_native_kernels_build_and_are_the_cpu_default():
    """With a compiler the direct and blockwise paths run the C++ kernels on a CPU (a failed
    build would only warn and fall back, so this test is what notices it)."""
    assert cpu_kernels() is not None
    assert isinstance(direct_module.row_implementation(torch.device("cpu"), torch.float32), direct_module.NativeRows)
    assert isinstance(direct_module.row_implementation(torch.device("cpu"), torch.float16), direct_module.TorchRows)
    variant = native_module.tile_variant()
    for compile in (False, True):
        tiles = kernels_module.tile_kernels(torch.device("cpu"), compile)
        assert isinstance(tiles, NativeTileKernels)
        if variant is None:
            assert tiles.vectorised is None
        else:
            assert tiles.vectorised.instruction_set == variant.capability
            assert (
                tiles.kernels_for(torch.float32) is tiles.vectorised
                and tiles.kernels_for(torch.float64) is tiles.kernels
            )


def test_native_kernels_reject_bad_inputs():
    kernels = native_kernels()
    y = torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(0))
    with pytest.raises(RuntimeError, match="n must be a contiguous"):
        kernels.forward(y, torch.ones(2), False, 0, None)
    with pytest.raises(RuntimeError, match="must be contiguous"):
        kernels.forward(y.transpose(-2, -1), torch.ones(3), False, 0, None)
    with pytest.raises(RuntimeError, match="mask must be boolean"):
        kernels.forward(y, torch.ones(3), False, 0, torch.ones(2, 3, 4, 5))
    with pytest.raises(RuntimeError, match="b must be a contiguous"):
        kernels.tile_forward(y, torch.ones(2), torch.ones(3), 0.5, torch.zeros(2, 3, 4, 1), False, 0, None)
    with pytest.raises(RuntimeError, match="row statistics must be contiguous"):
        kernels.tile_forward(y, torch.ones(3), torch.ones(3), 0.5, torch.zeros(2, 3, 5, 1), False, 0, None)
    with pytest.raises(RuntimeError, match="one shape"):
        kernels.tile_backward(
            y,
            torch.zeros(2, 3, 4, 4),
            torch.zeros(2, 3, 4, 1),
            torch.zeros(2, 3, 4, 1),
            torch.ones(3),
            torch.ones(3),
            0.5,
            False,
            0,
            None,
        )


def tile_module(name):
    """The C++ module that runs float32 tiles for ``name`` (``"scalar"``, ``"avx2"``, ...)."""
    return native_kernels() if name == "scalar" else vector_tiles(name)


def tile_inputs(n_keys, mask_kind, seed):
    """Seeded float32 inputs of one (2, 3, 5, n_keys) tile: q.k of order 1-30, dL/dp, b and n per
    head, a mask of kind ``mask_kind``: ``none``, ``full`` (random, contiguous), ``strided`` (a
    view with stride 2 along the keys) or ``broadcast`` (one bit per row, stride 0 along the keys)."""
    generator = torch.Generator().manual_seed(seed)
    shape = (2, 3, 5, n_keys)
    dots = 10 * torch.randn(shape, generator=generator)
    grad = torch.randn(shape, generator=generator)
    b, n = torch.tensor([0.7, 1.3, 0.2]), torch.tensor([1.8, 0.6, 3.0])
    masks = {
        "none": None,
        "full": torch.rand(shape, generator=generator) > 0.3,
        "strided": (torch.rand(*shape[:-1], 2 * n_keys, generator=generator) > 0.3)[..., ::2],
        "broadcast": (torch.rand(*shape[:-1], 1, generator=generator) > 0.3).expand(shape),
    }
    return dots, grad, b, n, masks[mask_kind]


def visible_of(shape, mask, causal_offset):
    n_queries, n_keys = shape[-2:]
    visible = torch.ones(shape, dtype=torch.bool)
    if causal_offset is not None:
        visible = visible & (torch.arange(n_keys)[None, :] <= torch.arange(n_queries)[:, None] + causal_offset)
    return visible if mask is None else visible & mask


def run_tile(module, dots, grad, b, n, scale, row_shift, delta, mask, causal_offset):
    """Both tile kernels on copies of ``dots`` and ``grad``: ``{p, row_sums, backward p, grad_dots, grad_n}``."""
    causal = causal_offset is not None
    forward_p = dots.clone()
    row_sums = module.tile_forward(forward_p, b, n, scale, row_shift, causal, causal_offset or 0, mask)
    backward_p, grad_dots = dots.clone(), grad.clone()
    grad_n = module.tile_backward(
        backward_p, grad_dots, row_shift, delta, b, n, scale, causal, causal_offset or 0, mask
    )
    return {"p": forward_p, "row_sums": row_sums, "backward p": backward_p, "grad_dots": grad_dots, "grad_n": grad_n}


@pytest.mark.parametrize("tiles", ["scalar", *VECTOR_TILES])
@pytest.mark.parametrize("n_keys", [1, 7, 8, 9, 16, 17, 37, 100])
@pytest.mark.parametrize("mask_kind", ["none", "full", "strided", "broadcast"])
@pytest.mark.parametrize("causal_offset", [None, 3, -2])
def test_tile_kernels_match_the_truth(tiles, n_keys, mask_kind, causal_offset):
    """Each float32 tile kernel, on row lengths that leave every possible tail of a vector, within
    the derived float32 bounds of a float64 evaluation of its formulas (tests/ssa_error_bounds.py),
    forward and backward. The shift is the forward's fixed one (the Cauchy-Schwarz bound, here the
    row's largest |score|) in one batch item and 85 above it in the other, where the probabilities
    fall to float32's subnormals; ``causal_offset=-2`` leaves the first rows without a visible key."""
    module = tile_module(tiles)
    dots, grad, b, n, mask = tile_inputs(n_keys, mask_kind, seed=n_keys)
    scale = 0.125**0.5  # not a float32 number: its rounding is counted
    visible = visible_of(dots.shape, mask, causal_offset)
    y = b.double().reshape(3, 1, 1) * scale * dots.double()
    largest = (n.double().reshape(3, 1, 1) * torch.log1p(y.abs())).amax(-1, keepdim=True)
    row_shift = (largest + torch.tensor([0.0, 85.0]).reshape(2, 1, 1, 1)).float()
    delta = torch.randn(row_shift.shape, generator=torch.Generator().manual_seed(5))
    got = run_tile(module, dots, grad, b, n, scale, row_shift, delta, mask, causal_offset)
    truth, bound = tile_truth_and_bounds(dots, grad, b, n, scale, row_shift, delta, visible)
    assert torch.equal(got["backward p"], got["p"]), "the backward recomputes the forward's probabilities"
    assert_within_bounds({name: got[name] for name in truth}, truth, bound, label=f"{tiles}, {n_keys} keys")
    hidden = ~visible
    assert (got["p"][hidden] == 0).all() and (got["grad_dots"][hidden] == 0).all()
    subnormal = (got["p"][1] > 0) & (got["p"][1] < torch.finfo(torch.float32).tiny)
    assert n_keys < 16 or subnormal.any(), "the shifted item reaches float32's subnormals"


@pytest.mark.parametrize("tiles", ["scalar", *VECTOR_TILES])
@pytest.mark.parametrize("n_keys", [9, 37])
def test_tile_kernels_ignore_whatever_hidden_keys_hold(tiles, n_keys):
    """-inf, inf and NaN in q.k and dL/dp at hidden keys (masked, or past the causal diagonal)
    change no bit of any output: those keys contribute nothing, and their p and gradient are 0."""
    module = tile_module(tiles)
    dots, grad, b, n, mask = tile_inputs(n_keys, "full", seed=1)
    causal_offset = n_keys - 5 - 2
    visible = visible_of(dots.shape, mask, causal_offset)
    row_shift, delta = torch.full((2, 3, 5, 1), 40.0), torch.full((2, 3, 5, 1), 0.1)
    clean = run_tile(module, dots, grad, b, n, 0.3, row_shift, delta, mask, causal_offset)
    garbage = torch.tensor([float("-inf"), float("inf"), float("nan")]).repeat(dots.numel() // 3 + 1)[: dots.numel()]
    hidden = ~visible
    dirty_dots = torch.where(hidden, garbage.reshape(dots.shape), dots)
    dirty_grad = torch.where(hidden, garbage.roll(1).reshape(dots.shape), grad)
    dirty = run_tile(module, dirty_dots, dirty_grad, b, n, 0.3, row_shift, delta, mask, causal_offset)
    for name in clean:
        assert torch.equal(dirty[name], clean[name]), name
    assert (clean["p"][hidden] == 0).all() and (clean["grad_dots"][hidden] == 0).all()
    assert hidden.any() and visible.any()


@pytest.mark.parametrize("tiles", VECTOR_TILES)
def test_vector_tiles_reject_float64(tiles):
    module = vector_tiles(tiles)
    dots = torch.randn(1, 1, 2, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with pytest.raises(RuntimeError, match="float32"):
        module.tile_forward(
            dots,
            torch.ones(1, dtype=torch.float64),
            torch.ones(1, dtype=torch.float64),
            0.5,
            torch.zeros(1, 1, 2, 1, dtype=torch.float64),
            False,
            0,
            None,
        )


def test_tile_variant_needs_the_cpu_flags(monkeypatch):
    """A variant whose instructions the CPU lacks is neither chosen nor loaded, whatever
    PyTorch's capability says (a wrong ATEN_CPU_CAPABILITY, a CPU flag PyTorch does not check)."""
    monkeypatch.setattr(native_module, "cpu_flags", lambda: {"sse2", "avx", "avx2"})  # no fma
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX2")
    assert native_module.tile_variant() is None
    with pytest.raises(RuntimeError, match="lacks fma"):
        native_module.load_tile_variant(native_module.TILE_VARIANTS["AVX2"])
    monkeypatch.setattr(native_module, "cpu_flags", lambda: None)  # unreadable: PyTorch's word
    assert native_module.tile_variant() is native_module.TILE_VARIANTS["AVX2"]
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "DEFAULT")
    assert native_module.tile_variant() is None


@pytest.mark.skipif(
    shutil.which("c++") is None or not native_enabled(), reason="needs a C++ compiler and SSA_NATIVE on"
)
@pytest.mark.parametrize("capability", ["default", None])
def test_tile_selection_follows_aten_cpu_capability(capability):
    """``ATEN_CPU_CAPABILITY=default`` keeps the scalar tiles; unset, the CPU's own capability
    picks its variant. In a subprocess: PyTorch reads the variable once."""
    environment = {name: value for name, value in os.environ.items() if name != "ATEN_CPU_CAPABILITY"}
    if capability is not None:
        environment["ATEN_CPU_CAPABILITY"] = capability
    script = (
        "import torch\n"
        "from ssa.kernels import tile_kernels\n"
        "tiles = tile_kernels(torch.device('cpu'), False)\n"
        "print(torch.backends.cpu.get_cpu_capability(), getattr(tiles.vectorised, 'instruction_set', None))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    torch_capability, instruction_set = result.stdout.split()
    if capability == "default":
        assert (torch_capability, instruction_set) == ("DEFAULT", "None")
    else:
        variant = native_module.TILE_VARIANTS.get(torch_capability)
        expected = variant.capability if variant is not None and variant.runs_here() else "None"
        assert instruction_set == expected


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
@pytest.mark.parametrize("capability", list(native_module.TILE_VARIANTS))
def test_tile_variants_compile_where_they_cannot_run(capability, tmp_path):
    """A variant this CPU cannot execute is compiled (to an object file, never loaded), so that
    a change that breaks it shows here too; one it can execute is built and tested above."""
    import sysconfig

    from torch.utils.cpp_extension import include_paths

    variant = native_module.TILE_VARIANTS[capability]
    if variant.runs_here():
        pytest.skip(f"this CPU runs the {capability} tiles: the tests above build and load them")
    command = [
        "c++",
        f"-DTORCH_EXTENSION_NAME={variant.name}",
        "-DTORCH_API_INCLUDE_EXTENSION_H",
        *(f"-isystem{path}" for path in [*include_paths(), sysconfig.get_paths()["include"]]),
        "-fPIC",
        "-std=c++20",
        *variant.cflags,
        "-c",
        str(native_module.VECTOR_SOURCE),
        "-o",
        str(tmp_path / "tiles.o"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]


def _without_ninja(monkeypatch):
    which = shutil.which
    monkeypatch.setattr(native_module.shutil, "which", lambda name: None if name == "ninja" else which(name))
    monkeypatch.setattr(native_module, "_ninja_beside_python", lambda: None)


@pytest.mark.parametrize(
    "missing, named",
    [
        ("compiler", r"a C\+\+ compiler \('no-such-compiler-for-ssa'.*apt install g\+\+"),
        ("ninja", r"the ninja build tool \(`pip install ninja`"),
        ("header", r"the kernel source ssa_cpu\.h \(not in .*reinstall ssa-book"),
    ],
)
@pytest.mark.parametrize("source", ["rows", "vector tiles"])
def test_a_build_that_cannot_happen_names_what_is_missing_and_what_it_costs(
    missing, named, source, monkeypatch, tmp_path
):
    """No build is tried (no minute lost, no compiler traceback): one warning names the missing
    piece, how to get it, and that the numbers then differ in their last bits."""
    if missing == "compiler":
        monkeypatch.setenv("CXX", "no-such-compiler-for-ssa")
    elif missing == "ninja":
        _without_ninja(monkeypatch)
    else:
        monkeypatch.setattr(native_module, "HEADER", tmp_path / "ssa_cpu.h")
    import torch.utils.cpp_extension

    monkeypatch.setattr(torch.utils.cpp_extension, "load", lambda **kwargs: pytest.fail("a build was tried"))
    path = native_module.SOURCE if source == "rows" else native_module.VECTOR_SOURCE
    instead = "PyTorch operations .*cached results" if source == "rows" else "the scalar tile kernels"
    with pytest.warns(RuntimeWarning, match=f"cannot be built: this machine lacks {named}.*uses {instead}") as caught:
        assert native_module._build.__wrapped__(f"ssa_test_{missing}", path, ()) is None
    assert "differ in their last bits" in str(caught[0].message)


def test_the_ninja_that_pip_installs_beside_python_is_found_without_activating_its_environment(monkeypatch, tmp_path):
    _without_ninja(monkeypatch)
    assert not native_module._find_ninja()
    monkeypatch.setattr(native_module, "_ninja_beside_python", lambda: tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin")
    assert native_module._find_ninja()
    assert os.environ["PATH"].split(os.pathsep) == [str(tmp_path), "/usr/bin"]


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_nothing_the_build_needs_is_missing_where_the_kernels_build():
    assert native_module.missing_build_requirements(native_module.SOURCE) == []
    assert native_module.missing_build_requirements(native_module.VECTOR_SOURCE) == []


def test_native_build_directory_follows_torch_extensions_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    directory = native_module.build_directory()
    assert directory.parent == tmp_path
    assert torch.__version__.replace("+", "_") in directory.name


@pytest.mark.skipif(native_module.fcntl is None, reason="flock is POSIX-only")
def test_native_build_lock_survives_a_killed_build(tmp_path):
    """A build killed mid-way (CI stopped, machine restarted) leaves PyTorch's lock file behind,
    on which every later `load` would wait forever; ours is released by the OS and clears it."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import fcntl, time\n"
                f"lock = open({str(tmp_path / 'ssa_build.lock')!r}, 'a')\n"
                "fcntl.flock(lock, fcntl.LOCK_EX)\n"
                f"open({str(tmp_path / 'lock')!r}, 'w').close()\n"
                "print('held', flush=True)\n"
                "time.sleep(60)\n"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(TimeoutError, match="building"):
            with native_module.exclusive_build(tmp_path, wait_s=0.3):
                pass
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / "lock").exists()
    with native_module.exclusive_build(tmp_path, wait_s=5):
        assert not (tmp_path / "lock").exists()


@pytest.mark.parametrize("shape", [(8, 12, 1024, 64), (3, 4, 100, 16), (1, 2, 300, 8), (0, 2, 5, 4)])
def test_the_blockwise_backward_sums_dl_db_item_by_item_to_the_same_bits(shape):
    generator = torch.Generator().manual_seed(11)
    q = torch.randn(shape, generator=generator) * (1 + 10 * torch.rand(shape, generator=generator))
    grad_q = torch.randn(shape, generator=generator)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the book's runs: one thread per job
    try:
        assert torch.equal(_item_dot_products(q, grad_q), (q * grad_q).sum((-2, -1), dtype=torch.float64))
    finally:
        torch.set_num_threads(threads)
