"""The attention function: the fused softmax path agrees with the reference path."""

import pytest
import torch

from ssa.attention import attention, causal_mask
from ssa.scoring import make_scorer, scorer_names


def qkv(batch=2, heads=4, kv_heads=4, n_queries=6, n_keys=6, dim=8, seed=0):
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, n_queries, dim, generator=generator)
    k = torch.randn(batch, kv_heads, n_keys, dim, generator=generator)
    v = torch.randn(batch, kv_heads, n_keys, dim, generator=generator)
    return q, k, v


def padding_mask(lengths, n_keys):
    return (torch.arange(n_keys)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :]  # (B, 1, 1, K)


CASES = {
    "plain": dict(),
    "causal": dict(causal=True),
    "padding": dict(mask=padding_mask([6, 4], 6)),
    "causal+padding": dict(causal=True, mask=padding_mask([6, 4], 6)),
    "scaled": dict(scale=0.3),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_fused_softmax_equals_reference_path(case, kv_heads):
    q, k, v = qkv(kv_heads=kv_heads)
    fused = attention(q, k, v, "softmax", **CASES[case])
    reference, weights = attention(q, k, v, "softmax", return_weights=True, **CASES[case])
    torch.testing.assert_close(fused, reference, atol=1e-5, rtol=1e-5)
    assert weights.shape == (2, 4, 6, 6)


def test_decoding_queries_align_with_the_last_keys():
    q, k, v = qkv(n_queries=6, n_keys=6)
    full = attention(q, k, v, "ssa", causal=True)
    last_two = attention(q[:, :, -2:], k, v, "ssa", causal=True)
    torch.testing.assert_close(last_two, full[:, :, -2:])
    fused_last_two = attention(q[:, :, -2:], k, v, "softmax", causal=True)
    torch.testing.assert_close(
        fused_last_two, attention(q, k, v, "softmax", causal=True)[:, :, -2:], atol=1e-6, rtol=1e-5
    )


def test_causal_mask_shape_and_alignment():
    assert causal_mask(2, 4).tolist() == [[True, True, True, False], [True, True, True, True]]


@pytest.mark.parametrize("name", scorer_names())
def test_reference_path_is_weights_times_values(name):
    q, k, v = qkv(kv_heads=2)
    mask = padding_mask([6, 3], 6)
    output, weights = attention(q, k, v, name, mask=mask, causal=True, return_weights=True)
    expected = weights @ v.repeat_interleave(2, dim=1)
    torch.testing.assert_close(output, expected)
    assert torch.isfinite(output).all()


def test_scorer_instances_and_their_gradients():
    q, k, v = qkv()
    scorer = make_scorer("ssa", num_heads=4)
    attention(q, k, v, scorer, causal=True).square().sum().backward()
    assert scorer.b_param.raw.grad.abs().min() > 0 and scorer.n_param.raw.grad.abs().min() > 0


def test_bad_shapes_and_masks_are_rejected():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="query, key and value must be"):
        attention(q[0], k, v)
    with pytest.raises(ValueError, match="must be equal and divide"):
        attention(q, k[:, :3], v[:, :3])
    with pytest.raises(ValueError, match="mask must be a boolean"):
        attention(q, k, v, "ssa", mask=torch.zeros(6, 6))
    with pytest.raises(ValueError, match="scorer must be one of"):
        attention(q, k, v, "nope")


@pytest.mark.parametrize("name", ["softmax", "ssa", "sigmoid"])
def test_a_bias_and_soft_capping_enter_the_logits_before_the_scorer(name):
    """Gemma 2's order: soft-cap the scaled logits, add the bias (T5's position bias), then score."""
    q, k, v = qkv(kv_heads=2)
    bias = torch.randn(1, 4, 6, 6, generator=torch.Generator().manual_seed(3))
    bias[..., 0] = float("-inf")  # -inf in the bias hides a key, as the mask does
    got = attention(q, k, v, name, causal=True, bias=bias, softcap=2.0)
    logits = 2.0 * torch.tanh((q @ k.repeat_interleave(2, dim=1).transpose(-2, -1)) * q.shape[-1] ** -0.5 / 2.0) + bias
    weights = make_scorer(name)(logits, causal_mask(6, 6))
    torch.testing.assert_close(got, weights @ v.repeat_interleave(2, dim=1))
    assert (weights[..., 0] == 0).all()


def test_a_bad_bias_or_softcap_is_refused_by_name():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"bias of shape \(3, 6\) does not broadcast"):
        attention(q, k, v, bias=torch.zeros(3, 6))
    with pytest.raises(ValueError, match="bias must be None or a floating-point tensor"):
        attention(q, k, v, bias=torch.zeros(6, 6, dtype=torch.bool))
    with pytest.raises(ValueError, match="softcap must be None or a finite number > 0, got 0"):
        attention(q, k, v, softcap=0)
    with pytest.raises(ValueError, match="scorer 'cosformer' does not read"):
        attention(q, k, v, "cosformer", bias=torch.zeros(6, 6))
