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
    "blockwise/native": lambda q, k, v, b, n, **masks: blockwise_ssa_attention(q, k, v, b, n, block_q=2, block_k=3,
                                                                               kernels=_native_tiles(), **masks),
    "blockwise/eager": lambda q, k, v, b, n, **masks: blockwise_ssa_attention(q, k, v, b, n, block_q=2, block_k=3,
                                                                              kernels=EAGER_KERNELS, **masks),
    "compiled, eager": lambda q, k, v, b, n, **masks: kernels_module._fast_ssa_attention(
        q, k, v, b, n, path="compiled", compile=False, scale=None, mask=masks.get("mask"), causal=masks.get("causal", False)),
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
            first, = grad(attention(x, k, v, "ssa", causal=True).square().sum(), x, create_graph=True)
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
        return kernels_module.reference_ssa_attention(q, k, v, b, n, mask, k.shape[-2] - q.shape[-2] if causal else None, scale)

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
