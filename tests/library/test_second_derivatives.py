"""Second derivatives through SSA attention: exact on the paths that support them (the reference,
direct, blockwise and eager compiled paths), one clear refusal on the others (compiled by
torch.compile, FlexAttention), never a wrong number.

The direct and blockwise backward passes are exact first derivatives with no derivative of their
own; under create_graph=True they return the reference computation's gradients and graph
(ssa.kernels.reference). Before that, autograd differentiated the kernels' operations as if they
were the function: 2099.97 instead of 9.38 for the second derivative below."""

import pytest
import torch
from torch.autograd import grad, gradcheck, gradgradcheck
from torch.nn.attention import SDPBackend, sdpa_kernel

import ssa
import ssa.kernels as kernels_module
from ssa.attention import attention, attention_path
from ssa.kernels import native as native_module
from ssa.kernels import fast_ssa_attention
from ssa.kernels.blockwise import EAGER_KERNELS, NativeTileKernels, blockwise_ssa_attention
from ssa.kernels.direct import direct_ssa_attention
from ssa.scoring import SSA

REFUSAL = r"SSA attention's {} path does not support second derivatives .*; use path='reference'"


def _inputs(shape=(1, 2, 5, 3), seed=0):
    """q, k, v of ``shape``, a per-layer b and per-head n, float64, all requiring gradients."""
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(shape, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(3))
    b = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    n = torch.tensor([1.3, 2.1][: shape[1]], dtype=torch.float64, requires_grad=True)
    return q, k, v, b, n


def _padding(n_keys: int) -> torch.Tensor:
    return (torch.arange(n_keys) < n_keys - 1)[None, None, None, :]  # the last key hidden


def _native_tiles():
    kernels = native_module.cpu_kernels()
    if kernels is None:
        pytest.skip("the C++ kernels are not available here")
    return NativeTileKernels(kernels, native_module.vector_tile_kernels())


PATHS = {
    "direct/native": lambda q, k, v, b, n, **masks: direct_ssa_attention(q, k, v, b, n, **masks),
    "blockwise/native": lambda q, k, v, b, n, **masks: blockwise_ssa_attention(
        q, k, v, b, n, block_q=2, block_k=3, kernels=_native_tiles(), **masks
    ),
    "blockwise/eager": lambda q, k, v, b, n, **masks: blockwise_ssa_attention(
        q, k, v, b, n, block_q=2, block_k=3, kernels=EAGER_KERNELS, **masks
    ),
    "compiled, eager": lambda q, k, v, b, n, **masks: kernels_module._fast_ssa_attention(
        q,
        k,
        v,
        b,
        n,
        path="compiled",
        compile=False,
        scale=None,
        mask=masks.get("mask"),
        causal=masks.get("causal", False),
    ),
}


@pytest.mark.parametrize("masks", [{"causal": True}, {"mask": _padding(5)}], ids=["causal", "padding"])
@pytest.mark.parametrize("path", PATHS)
def test_second_derivatives_are_exact_on_the_supporting_paths(path, masks):
    inputs = _inputs()
    assert gradcheck(lambda *tensors: PATHS[path](*tensors, **masks), inputs)
    assert gradgradcheck(lambda *tensors: PATHS[path](*tensors, **masks), inputs)


@pytest.mark.parametrize("path, n_keys", [("auto", 120), ("blockwise", 120), ("direct", 40), ("auto", 40)])
def test_a_second_derivative_through_the_default_paths_is_the_reference_path_s(path, n_keys):
    """The issue's case: d/dx sum(d/dx sum(attention(x, k, v)^2)), causal; at 120 keys auto takes
    the blockwise path, at 40 the direct one."""
    x, k, v, _, _ = _inputs((1, 1, n_keys, 3))

    def second_derivative(chosen):
        with attention_path(chosen):
            (first,) = grad(attention(x, k, v, "ssa", causal=True).square().sum(), x, create_graph=True)
            return first, grad(first.sum(), x)[0]

    first, second = second_derivative(path)
    reference_first, reference_second = second_derivative("reference")
    torch.testing.assert_close(first, reference_first)
    torch.testing.assert_close(second, reference_second)


def test_with_create_graph_the_first_derivatives_stay_those_of_the_fast_path_to_rounding():
    q, k, v, b, n = _inputs((2, 2, 9, 4))
    output = direct_ssa_attention(q, k, v, b, n, causal=True)
    weights = torch.randn(output.shape, generator=torch.Generator().manual_seed(1), dtype=output.dtype)
    plain = grad((output * weights).sum(), (q, k, v, b, n), retain_graph=True)
    graphed = grad((output * weights).sum(), (q, k, v, b, n), create_graph=True)
    for fast, with_graph in zip(plain, graphed):
        torch.testing.assert_close(with_graph, fast)
        assert with_graph.requires_grad


def test_the_compiled_path_refuses_a_second_derivative(monkeypatch):
    # The refusal comes before the compiled backward; torch.compile itself is not needed to see it.
    monkeypatch.setattr(kernels_module, "_compiled_reference", lambda: kernels_module.reference_ssa_attention)
    q, k, v, _, _ = _inputs()
    scorer = SSA().double()
    output = fast_ssa_attention(q, k, v, scorer, mask=None, causal=True, scale=None, path="compiled", compile=True)
    grad(output.sum(), q, retain_graph=True)  # first derivatives as before
    with pytest.raises(RuntimeError, match=REFUSAL.format("compiled")):
        grad(output.square().sum(), q, create_graph=True)


def test_the_flex_path_refuses_a_second_derivative(monkeypatch):
    """FlexAttention runs no backward on a CPU: a differentiable stand-in takes its place, so that
    the test sees the refusal, which comes before FlexAttention's backward would run."""

    def stand_in(q, k, v, b, n, *, mask, causal, scale, compiled):
        return kernels_module.reference_ssa_attention(
            q, k, v, b, n, mask, k.shape[-2] - q.shape[-2] if causal else None, scale
        )

    monkeypatch.setattr(kernels_module, "flex_ssa_attention", stand_in)
    q, k, v, _, _ = _inputs()
    scorer = SSA().double()
    output = fast_ssa_attention(q, k, v, scorer, mask=None, causal=True, scale=None, path="flex", compile=False)
    grad(output.sum(), q, retain_graph=True)
    with pytest.raises(RuntimeError, match=REFUSAL.format("flex")):
        grad(output.square().sum(), q, create_graph=True)


def test_the_refusal_leaves_the_output_writable_and_untouched_without_gradients():
    q, k, v, _, _ = _inputs()
    with torch.no_grad():
        plain = kernels_module.first_derivatives_only(q, "flex")
    assert plain is q  # nothing to refuse without a graph
    guarded = kernels_module.first_derivatives_only(q * 1.0, "flex")
    guarded.mul_(2.0)  # a copy, not a view: writing into it is allowed
    torch.testing.assert_close(guarded, 2 * q)


# ----------------------------------------------------------------------------------------------
# Every scorer, and softmax through scaled_dot_product_attention

SOFTMAX_REFUSAL = (
    r"softmax attention through scaled_dot_product_attention's fused kernel \(ScaledDotProduct\w+, whose "
    r"backward PyTorch does not differentiate\) does not support second derivatives .*; "
    r"use path='reference' .*, which computes them for every scorer"
)


def _scorer_inputs(seed=0):
    """q (1, 2, 5, 3), k and v (1, 2, 6, 3) in float64, and a mask hiding the last key from the
    first queries: rows of several lengths, so that the sparse scorers' supports vary."""
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (
        torch.randn(1, 2, tokens, 3, generator=generator, dtype=torch.float64, requires_grad=True)
        for tokens in (5, 6, 6)
    )
    return (q, k, v), torch.ones(5, 6, dtype=torch.bool).tril(1)


@pytest.mark.parametrize("name", ssa.scorer_names())
def test_every_scorer_s_second_derivatives_are_exact_on_the_reference_path(name):
    """gradgradcheck in float64 (autograd's second derivatives against finite differences of its
    first ones) through attention on the reference path, for every registered scorer, its
    trainable parameters included. entmax15 once failed it: entmax's backward differentiated
    sqrt(Y) at the zero weights outside the support (ssa.scoring._Entmax15)."""
    scorer = ssa.make_scorer(name).double()
    parameters = tuple(scorer.parameters())
    (q, k, v), mask = _scorer_inputs()

    def attend(q, k, v, *values):
        with torch.nn.utils.stateless._reparametrize_module(scorer, dict(zip(dict(scorer.named_parameters()), values))):
            return attention(q, k, v, scorer, mask=mask)

    with attention_path("reference"):
        assert gradgradcheck(attend, (q, k, v, *parameters))


@pytest.mark.parametrize("name, spread", [("sparsemax", 1.0), ("entmax15", 2.0)])
def test_the_sparse_scorers_second_derivatives_are_exact_where_most_weights_are_zero(name, spread):
    """Logits spread so that most keys are outside the support (where the exact second derivative
    is 0) and rows' supports hold one to five keys; a few seeds, as the supports vary with them."""
    scorer = ssa.make_scorer(name).double()
    for seed in range(3):
        generator = torch.Generator().manual_seed(seed)
        logits = (spread * torch.randn(2, 3, 7, generator=generator, dtype=torch.float64)).requires_grad_()
        weights = scorer(logits.detach())
        assert (weights == 0).any() and (weights > 0).sum(-1).gt(1).any()  # sparse rows with supports of several keys
        assert gradgradcheck(lambda x: scorer(x) ** 2, (logits,))


def test_entmax15_s_forward_and_first_derivatives_are_entmax_s_bit_for_bit():
    entmax = pytest.importorskip("entmax")
    from ssa.scoring import _Entmax15

    generator = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        logits = (3 * torch.randn(2, 3, 9, 17, generator=generator, dtype=dtype)).requires_grad_()
        grad_weights = torch.randn(logits.shape, generator=generator, dtype=dtype)
        ours = _Entmax15.apply(logits, entmax.entmax15)
        theirs = entmax.entmax15(logits, dim=-1)
        assert torch.equal(ours, theirs)
        assert torch.equal(grad(ours, logits, grad_weights)[0], grad(theirs, logits, grad_weights)[0])


def test_softmax_through_the_fused_kernel_refuses_a_second_derivative_with_the_library_s_message():
    (q, k, v), _ = _scorer_inputs()
    output = attention(q, k[:, :, :5], v[:, :, :5], "softmax", causal=True)
    assert type(output.grad_fn).__name__.startswith("ScaledDotProduct")  # a fused kernel computed it
    (first,) = grad(output.sum(), q, retain_graph=True)  # first derivatives as before, the same numbers
    with attention_path("reference"):
        torch.testing.assert_close(
            first, grad(attention(q, k[:, :, :5], v[:, :, :5], "softmax", causal=True).sum(), q)[0]
        )
    with pytest.raises(RuntimeError, match=SOFTMAX_REFUSAL):
        grad(output.square().sum(), q, create_graph=True)


def test_softmax_s_second_derivatives_are_exact_on_the_reference_path_and_through_sdpa_s_math_kernel():
    (q, k, v), mask = _scorer_inputs()
    with attention_path("reference"):
        assert gradgradcheck(lambda q, k, v: attention(q, k, v, "softmax", mask=mask), (q, k, v))
    with sdpa_kernel(SDPBackend.MATH):  # composite operations: autograd differentiates them, nothing to refuse
        assert gradgradcheck(lambda q, k, v: attention(q, k, v, "softmax", mask=mask), (q, k, v))


def test_under_torch_func_softmax_s_first_derivatives_through_the_fused_kernel_stay_allowed():
    """torch.func's transforms run every backward with create_graph=True: a first derivative
    there is not refused (as before the refusal)."""
    (q, k, v), _ = _scorer_inputs()
    k, v = k.detach(), v.detach()
    through_func = torch.func.grad(lambda q: attention(q, k, v, "softmax").square().sum())(q.detach())
    torch.testing.assert_close(through_func, grad(attention(q, k, v, "softmax").square().sum(), q)[0])
