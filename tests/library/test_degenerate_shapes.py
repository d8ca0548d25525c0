"""Degenerate shapes: an empty batch, no heads, no queries, no keys, a head dimension of 0. Every
scorer on every path returns what softmax attention (torch's scaled_dot_product_attention)
returns, forward and backward: empty tensors where the output is empty, zeros (and zero
gradients) for queries without keys, and for a head dimension of 0 (all logits exactly 0) each
scorer's weights of zero logits. They once raised StopIteration, ZeroDivisionError or IndexError
from inside the kernels."""

import pytest
import torch
import torch.nn.functional as F

from ssa import scoring
from ssa.attention import attention, attention_path
from ssa.kernels import blockwise_ssa_attention, direct_ssa_attention
from ssa.scoring import make_scorer, scorer_names

# name: (batch, heads, key/value heads, queries, keys, head dim, value head dim)
SHAPES = {
    "empty batch": (0, 2, 2, 5, 5, 4, 4),
    "no heads": (2, 0, 0, 5, 5, 4, 4),
    "no queries": (2, 2, 2, 0, 5, 4, 4),
    "no keys": (2, 2, 2, 5, 0, 4, 4),
    "no keys, grouped heads": (2, 4, 2, 5, 0, 4, 4),
    "head dimension 0": (2, 2, 2, 5, 5, 0, 4),
    "value head dimension 0": (2, 2, 2, 5, 5, 4, 0),
    "both head dimensions 0": (2, 2, 2, 5, 5, 0, 0),
}
SSA_PATHS = ("reference", "auto", "direct", "blockwise", "compiled")


def _inputs(shape, seed=0):
    batch, heads, kv_heads, n_queries, n_keys, head_dim, value_dim = shape
    generator = torch.Generator().manual_seed(seed)
    draw = lambda *size: torch.randn(size, generator=generator).requires_grad_()
    return (
        draw(batch, heads, n_queries, head_dim),
        draw(batch, kv_heads, n_keys, head_dim),
        draw(batch, kv_heads, n_keys, value_dim),
    )


def _padding(shape):
    """Every item's last key hidden, (B, 1, 1, K)."""
    batch, n_keys = shape[0], shape[4]
    return (torch.arange(n_keys) < n_keys - 1).expand(batch, 1, 1, n_keys).clone()


def _zero_logit_weights(name, shape, mask):
    """What scorer ``name`` gives a row of zero logits (a head dimension of 0), ``(B, H, Q, K)``."""
    batch, heads, _, n_queries, n_keys, _, _ = shape
    if name == "cosformer":  # no ReLU feature at all: every similarity 0, rows of zeros
        return torch.zeros(batch, heads, n_queries, n_keys)
    return make_scorer(name)(torch.zeros(batch, heads, n_queries, n_keys), mask)


def _expected(name, shape, q, k, v, mask, causal):
    """Softmax attention's output where the scorer cannot matter, else the scorer's own weights
    of zero logits times the values."""
    group = q.shape[1] // max(k.shape[1], 1)
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    full_mask = mask
    if causal:
        n_queries, n_keys = q.shape[-2], k.shape[-2]
        causal_part = torch.ones(n_queries, n_keys, dtype=torch.bool).tril(n_keys - n_queries)
        full_mask = causal_part if mask is None else mask & causal_part
    if q.shape[-1] == 0 and q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] > 0:
        return _zero_logit_weights(name, shape, full_mask) @ v
    return F.scaled_dot_product_attention(q, k, v, attn_mask=full_mask)


@pytest.mark.parametrize("shape_name", SHAPES)
@pytest.mark.parametrize("name", scorer_names())
def test_degenerate_shapes_give_what_softmax_attention_gives(name, shape_name, monkeypatch, subtests):
    """Every path of the scorer and every masking (one subtest each): softmax attention's output
    and gradients, computed once per masking, on fresh copies of the same inputs."""
    monkeypatch.setenv("SSA_ATTENTION_COMPILE", "0")  # the compiled path's algorithm, without minutes of compiling
    shape = SHAPES[shape_name]
    inputs = _inputs(shape)
    fresh = lambda: [tensor.detach().clone().requires_grad_() for tensor in inputs]
    for masking in ("none", "causal", "padding"):
        mask = _padding(shape) if masking == "padding" and shape[4] > 0 else None
        causal = masking == "causal"
        expected_inputs = fresh()
        expected = _expected(name, shape, *expected_inputs, mask, causal)
        upstream = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1))
        (expected * upstream).sum().backward()
        expected_grads = [
            truth.grad if truth.grad is not None else torch.zeros_like(truth) for truth in expected_inputs
        ]
        for path in SSA_PATHS if name.startswith("ssa") else ("reference", "auto"):
            with subtests.test(masking=masking, path=path):
                q, k, v = fresh()
                with attention_path(path):
                    output = attention(q, k, v, name, mask=mask, causal=causal)
                assert output.shape == expected.shape == (shape[0], shape[1], shape[3], shape[6])
                torch.testing.assert_close(output, expected.detach())
                (output * upstream).sum().backward()
                for tensor, truth in zip((q, k, v), expected_grads):
                    assert tensor.grad is not None and tensor.grad.shape == tensor.shape
                    torch.testing.assert_close(tensor.grad, truth)


@pytest.mark.parametrize("shape_name", ["empty batch", "no heads", "no queries", "no keys"])
@pytest.mark.parametrize("name", scorer_names())
def test_the_weights_asked_for_are_empty_where_there_is_nothing_to_attend(name, shape_name):
    shape = SHAPES[shape_name]
    q, k, v = _inputs(shape)
    output, weights = attention(q, k, v, name, return_weights=True)
    assert weights.shape == (shape[0], shape[1], shape[3], shape[4]) and weights.numel() == 0
    assert output.shape == (shape[0], shape[1], shape[3], shape[6])
    assert torch.equal(output, torch.zeros_like(output))


@pytest.mark.parametrize("name", [name for name in scorer_names() if name != "cosformer"])
@pytest.mark.parametrize("logits_shape", [(3, 0), (0, 4), (2, 0, 5), (0, 0)])
def test_a_scorer_of_empty_logits_returns_them_empty(name, logits_shape):
    """As torch.softmax does: an empty key axis or no rows give empty weights, and a gradient."""
    logits = torch.zeros(logits_shape, requires_grad=True)
    weights = make_scorer(name)(logits)
    assert weights.shape == logits.shape
    weights.sum().backward()
    assert logits.grad.shape == logits.shape


def test_cosformer_without_keys_or_features_returns_empty_or_zero_weights():
    assert scoring.cosformer_weights(torch.randn(3, 4), torch.randn(0, 4)).shape == (3, 0)
    without_features = scoring.cosformer_weights(torch.randn(3, 0), torch.randn(5, 0))
    assert torch.equal(without_features, torch.zeros(3, 5))


@pytest.mark.parametrize("kernel", [direct_ssa_attention, blockwise_ssa_attention])
@pytest.mark.parametrize("shape_name", ["empty batch", "no heads", "no queries", "no keys"])
def test_the_kernels_called_directly_return_empty_or_zero_outputs(kernel, shape_name):
    q, k, v = _inputs(SHAPES[shape_name])
    output = kernel(q, k, v, torch.tensor(1.0), torch.tensor(1.5), causal=True)
    assert torch.equal(output, q.new_zeros(*q.shape[:-1], v.shape[-1]))
    output.sum().backward()
    assert all(torch.equal(tensor.grad, torch.zeros_like(tensor)) for tensor in (q, k, v))


def test_key_heads_that_cannot_divide_the_query_heads_are_refused():
    q, k, v = _inputs((2, 2, 2, 5, 5, 4, 4))
    with pytest.raises(ValueError, match=r"key/value heads \(0, 0\) must be equal and divide query heads \(2\)"):
        attention(q, k[:, :0], v[:, :0])
