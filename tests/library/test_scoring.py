"""The scorers' mathematical contract, checked for every registered scorer."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ssa import scoring
from ssa.scoring import SSA, CosFormer, make_scorer, scorer_names

ALL = scorer_names()
LOGIT_SCORERS = [name for name in ALL if name != "cosformer"]  # scorers of dot products alone
HEAD_DIM = 8


def qk_weights(name, queries, keys, mask=None, dtype=torch.float32):
    scorer = make_scorer(name).to(dtype)
    return scorer.weights_from_qk(queries.to(dtype), keys.to(dtype), mask)


def random_qk(batch_shape, n_queries, n_keys, generator, scale=1.0):
    queries = torch.randn(*batch_shape, n_queries, HEAD_DIM, generator=generator) * scale
    keys = torch.randn(*batch_shape, n_keys, HEAD_DIM, generator=generator) * scale
    return queries, keys


def random_key_mask(batch_shape, n_queries, n_keys, generator, keep=0.6):
    mask = torch.rand(*batch_shape, n_queries, n_keys, generator=generator) < keep
    mask[..., 0] = True  # at least one key per row; fully masked rows are tested separately
    return mask


def test_registry_lists_the_paper_scorers_and_the_newer_ones():
    expected = {
        "softmax",
        "ssa",
        "ssa_n1.5",
        "ssa_n2",
        "temperature_softmax",
        "sparsemax",
        "entmax15",
        "sa_softmax",
        "sa_softmax_normalized",
        "cosformer",
        "ssmax",
        "sigmoid",
        "adaptive_temperature",
        "stick_breaking",
    }
    assert expected <= set(ALL)
    assert scoring.SCORER_NAMES == ALL


def test_unknown_scorer_names_the_valid_ones():
    with pytest.raises(ValueError, match="scorer must be one of .*softmax.*ssa"):
        make_scorer("softermax")


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("batch_shape", [(), (3,), (2, 4)])
def test_weights_are_what_the_scorer_declares(name, batch_shape):
    generator = torch.Generator().manual_seed(0)
    queries, keys = random_qk(batch_shape, 5, 7, generator)
    mask = random_key_mask(batch_shape, 5, 7, generator)
    weights = qk_weights(name, queries, keys, mask)
    scorer = make_scorer(name)
    assert weights.shape == (*batch_shape, 5, 7)
    assert torch.isfinite(weights).all()
    assert (weights[~mask] == 0).all(), "masked keys must get exactly zero weight"
    if scorer.nonnegative:
        assert (weights >= 0).all()
    if scorer.normalized:
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]), atol=1e-5, rtol=0)


@pytest.mark.parametrize("name", ALL)
def test_fully_masked_rows_are_zero_not_nan(name):
    generator = torch.Generator().manual_seed(1)
    queries, keys = random_qk((2,), 3, 4, generator)
    mask = torch.ones(2, 3, 4, dtype=torch.bool)
    mask[1, 2] = False
    weights = qk_weights(name, queries, keys, mask)
    assert torch.equal(weights[1, 2], torch.zeros(4))
    assert torch.isfinite(weights).all()


@pytest.mark.parametrize("name", ALL)
def test_padding_mask_equals_truncating_the_sequence(name):
    generator = torch.Generator().manual_seed(2)
    queries, keys = random_qk((2, 3), 9, 9, generator)
    kept = 6
    mask = torch.arange(9) < kept
    masked = qk_weights(name, queries, keys, mask)
    truncated = qk_weights(name, queries[..., :kept, :], keys[..., :kept, :])
    torch.testing.assert_close(masked[..., :kept, :kept], truncated, atol=1e-6, rtol=1e-5)
    assert (masked[..., kept:] == 0).all()


@pytest.mark.parametrize("name", [name for name in LOGIT_SCORERS if make_scorer(name).order_free])
def test_permuting_keys_permutes_weights(name):
    generator = torch.Generator().manual_seed(3)
    logits = torch.randn(2, 3, 5, 8, generator=generator)
    mask = random_key_mask((2, 3), 5, 8, generator)
    permutation = torch.randperm(8, generator=generator)
    scorer = make_scorer(name)
    torch.testing.assert_close(
        scorer(logits, mask)[..., permutation], scorer(logits[..., permutation], mask[..., permutation])
    )


def test_cosformer_rows_with_any_feature_overlap_sum_to_one():
    generator = torch.Generator().manual_seed(9)
    queries, keys = random_qk((4,), 6, 6, generator)
    weights = qk_weights("cosformer", queries, keys, torch.ones(6, 6, dtype=torch.bool).tril())
    totals = weights.sum(-1)
    alive = totals > 0
    assert alive.float().mean() > 0.8
    torch.testing.assert_close(totals[alive], torch.ones_like(totals[alive]))


def test_cosformer_is_the_one_positional_scorer():
    # cosFormer re-weights by relative position by design, so it is not permutation equivariant.
    generator = torch.Generator().manual_seed(4)
    queries, keys = random_qk((), 4, 6, generator)
    permutation = torch.tensor([5, 4, 3, 2, 1, 0])
    cos = CosFormer()
    assert not torch.allclose(
        cos.weights_from_qk(queries, keys)[:, permutation], cos.weights_from_qk(queries, keys[permutation])
    )
    with pytest.raises(TypeError, match="weights_from_qk"):
        cos(torch.zeros(2, 2))


EXTREMES = [
    (torch.float32, 1e4),
    (torch.float32, 1e30),
    (torch.bfloat16, 1e4),
    (torch.bfloat16, 1e30),
    (torch.float16, 1e4),
    (torch.float16, 65504.0),
]


@pytest.mark.parametrize("dtype,magnitude", EXTREMES)
@pytest.mark.parametrize("name", LOGIT_SCORERS)
def test_extreme_logits_give_finite_weights(name, dtype, magnitude):
    logits = torch.tensor([[magnitude, -magnitude, 0.5, magnitude, -0.25], [-magnitude] * 5], dtype=dtype)
    mask = torch.tensor([[True, True, True, True, False], [True] * 5])
    weights = make_scorer(name).to(dtype)(logits, mask)
    assert weights.dtype == dtype
    assert torch.isfinite(weights).all(), weights


@pytest.mark.parametrize("dtype,magnitude", EXTREMES)
def test_extreme_cosformer_features_give_finite_weights(dtype, magnitude):
    generator = torch.Generator().manual_seed(5)
    queries, keys = random_qk((2,), 3, 4, generator)
    weights = qk_weights("cosformer", queries.sign() * magnitude, keys.sign() * magnitude, dtype=dtype)
    assert torch.isfinite(weights).all()


@pytest.mark.parametrize("name", LOGIT_SCORERS)
@pytest.mark.parametrize(
    "shape,dim",
    [((4, 6, 5), 0), ((4, 6, 5), 1), ((4, 6, 5), -1), ((2, 3, 4, 5), 1), ((2, 3, 4, 5), 2), ((2, 3, 4, 5), -2)],
)
def test_any_dim_equals_moving_that_axis_last(name, shape, dim):
    # entmax's own dim handling is unreliable on 3-D and 4-D inputs; these are exactly those shapes.
    generator = torch.Generator().manual_seed(6)
    logits = torch.randn(*shape, generator=generator)
    scorer = make_scorer(name)
    expected = scorer(logits.movedim(dim, -1)).movedim(-1, dim)
    torch.testing.assert_close(scorer(logits, dim=dim), expected)


class _WeightsFromQK(torch.nn.Module):
    """Lets ``functional_call`` substitute a scorer's parameters in ``weights_from_qk``."""

    def __init__(self, scorer, mask):
        super().__init__()
        self.scorer, self.mask = scorer, mask

    def forward(self, queries, keys):
        return self.scorer.weights_from_qk(queries, keys, self.mask)


@pytest.mark.parametrize("name", ALL)
def test_gradients_match_finite_differences_in_float64(name):
    generator = torch.Generator().manual_seed(7)
    queries, keys = random_qk((2,), 3, 4, generator)
    call = _WeightsFromQK(make_scorer(name).double(), mask=torch.tensor([True, True, True, False]))
    names = [n for n, p in call.named_parameters() if p.requires_grad]

    def weights(q, k, *params):
        return torch.func.functional_call(call, dict(zip(names, params)), (q, k))

    inputs = [queries.double(), keys.double()] + [call.get_parameter(n).detach().clone() for n in names]
    assert torch.autograd.gradcheck(weights, tuple(t.requires_grad_() for t in inputs), eps=1e-6, atol=1e-5)


def test_ssa_gradients_for_b_and_n_through_the_functional_form():
    generator = torch.Generator().manual_seed(8)
    logits = torch.randn(3, 6, generator=generator, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    n = torch.tensor(1.8, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, b, n: scoring.ssa(x, b, n), (logits, b, n))


def test_ssa_derivative_at_zero_is_nb():
    x = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    scoring.ssa_logits(x, 0.5, 2.0).sum().backward()
    assert x.grad.item() == pytest.approx(1.0)


def test_ssa_is_the_papers_map_normalised():
    logits = torch.tensor([2.0, -1.0, 0.0, 0.5], dtype=torch.float64)
    b, n = 0.8, 1.7
    scores = (1 + b * logits.abs()) ** (torch.sign(logits) * n)
    torch.testing.assert_close(scoring.ssa(logits, b, n), scores / scores.sum())


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=2, max_size=8))
def test_ssa_approaches_softmax_as_m_grows(values):
    logits = torch.tensor(values, dtype=torch.float64)
    target = torch.softmax(logits, -1)
    errors = [(scoring.ssa(logits, 1 / m, m) - target).abs().max().item() for m in (10, 100, 1000, 10000)]
    assert errors[-1] < 1e-3
    assert all(later <= earlier + 1e-12 for earlier, later in zip(errors, errors[1:]))


def test_ssa_parameters_keep_their_constraints_for_any_raw_value():
    scorer = SSA(b=0.3, n=1.2, num_heads=4)
    torch.testing.assert_close(scorer.b, torch.full((4,), 0.3))
    torch.testing.assert_close(scorer.n, torch.full((4,), 1.2))
    with torch.no_grad():
        scorer.b_param.raw.fill_(-50.0)
        scorer.n_param.raw.fill_(-50.0)
    assert (scorer.b > 0).all() and (scorer.n >= 1).all()


def test_ssa_per_head_parameters_act_per_head():
    scorer = SSA(num_heads=2)
    with torch.no_grad():
        scorer.n_param.raw.copy_(torch.tensor([-20.0, 3.0]))  # n ~ 1 and n ~ 4
    logits = torch.tensor([1.0, 0.0, -1.0]).expand(1, 2, 1, 3)
    weights = scorer(logits)
    assert weights[0, 1, 0, 0] > weights[0, 0, 0, 0]  # the larger n concentrates more
    with pytest.raises(ValueError, match="num_heads=2"):
        scorer(torch.zeros(1, 3, 1, 3))


def test_fixed_n_variants_do_not_train_n():
    for name, n in (("ssa_n1.5", 1.5), ("ssa_n2", 2.0)):
        scorer = make_scorer(name)
        assert scorer.n.item() == pytest.approx(n)
        assert [name for name, _ in scorer.named_parameters()] == ["b_param.raw"]


@pytest.mark.parametrize(
    "kwargs,parameter",
    [
        ({"b": 0.0}, "b"),
        ({"b": -1.0}, "b"),
        ({"b": math.inf}, "b"),
        ({"n": 0.5, "learn_n": False}, "n"),
        ({"n": 0.99}, "n"),
        ({"num_heads": 0}, "num_heads"),
    ],
)
def test_invalid_ssa_arguments_name_the_parameter(kwargs, parameter):
    with pytest.raises(ValueError, match=rf"^{parameter} must"):
        SSA(**kwargs)


def test_invalid_masks_are_rejected():
    logits = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="mask of shape"):
        scoring.softmax(logits, mask=torch.ones(4, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask must be a boolean"):
        scoring.ssa(logits, mask=torch.ones(2, 3))


def test_sparse_scorers_reach_exact_zeros():
    logits = torch.tensor([3.0, 0.0, -2.0])
    assert (scoring.sparsemax(logits) == torch.tensor([1.0, 0.0, 0.0])).all()
    assert scoring.entmax15(logits)[-1] == 0


def test_stick_breaking_without_the_current_key_reads_only_the_keys_before_the_query():
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3, 5, 5, generator=generator, dtype=torch.float64)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    strictly_before = torch.ones(5, 5, dtype=torch.bool).tril(-1)
    without = scoring.stick_breaking(logits, mask=causal, attend_current=False)
    torch.testing.assert_close(without, scoring.stick_breaking(logits, mask=strictly_before), rtol=0, atol=0)
    assert (without[..., 0, :] == 0).all()  # the first query has nothing before it
    scorer = make_scorer("stick_breaking", attend_current=False)
    torch.testing.assert_close(scorer(logits, mask=causal), without, rtol=0, atol=0)
    torch.testing.assert_close(
        make_scorer("stick_breaking")(logits, mask=causal), scoring.stick_breaking(logits, mask=causal), rtol=0, atol=0
    )
    # with no mask, the last key of each row is left out; along another axis, the same
    torch.testing.assert_close(
        scoring.stick_breaking(logits, attend_current=False)[..., :4],
        scoring.stick_breaking(logits[..., :4]),
        rtol=0,
        atol=0,
    )
    torch.testing.assert_close(
        scoring.stick_breaking(logits.transpose(-1, -2), attend_current=False, dim=-2),
        scoring.stick_breaking(logits, attend_current=False).transpose(-1, -2),
        rtol=0,
        atol=0,
    )
    with pytest.raises(ValueError, match="attend_current must be True or False"):
        make_scorer("stick_breaking", attend_current="no")


def test_stick_breaking_is_the_product_formula_and_a_masked_key_is_a_removed_key():
    generator = torch.Generator().manual_seed(11)
    logits = torch.randn(3, 4, 7, generator=generator, dtype=torch.float64) * 3
    beta = torch.sigmoid(logits)
    expected = torch.stack([beta[..., i] * torch.prod(1 - beta[..., i + 1 :], dim=-1) for i in range(7)], dim=-1)
    weights = scoring.stick_breaking(logits)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(weights.sum(-1), 1 - torch.prod(1 - beta, dim=-1))  # the stick left over is unspent
    assert not make_scorer("stick_breaking").normalized and not make_scorer("stick_breaking").order_free
    keep = torch.tensor([True, False, True, True, False, False, True])
    masked = scoring.stick_breaking(logits, mask=keep)
    torch.testing.assert_close(masked[..., keep], scoring.stick_breaking(logits[..., keep]))
    assert (masked[..., ~keep] == 0).all()
    # Extreme logits stay finite: a key with logit 1e30 takes the whole stick, those before it none.
    extreme = torch.tensor([[1.0, 2.0, 1e30, -1e30]], dtype=torch.float32)
    torch.testing.assert_close(scoring.stick_breaking(extreme), torch.tensor([[0.0, 0.0, 1.0, 0.0]]))


def test_adaptive_temperature_follows_the_authors_rule_at_inference_only():
    import numpy as np

    generator = torch.Generator().manual_seed(5)
    logits = torch.randn(4, 20, generator=generator, dtype=torch.float64)  # entropy near log 20 = 3.0 nats
    probabilities = torch.softmax(logits, -1)
    entropy = -(probabilities * torch.log(probabilities + 1e-9)).sum(-1, keepdim=True)
    beta = np.maximum(np.polyval(scoring.ADAPTIVE_TEMPERATURE_FIT, entropy.numpy()), 1.0)
    assert (beta > 2).all()  # the fit sharpens these rows
    torch.testing.assert_close(
        scoring.adaptive_temperature_softmax(logits), torch.softmax(logits * torch.from_numpy(beta), -1)
    )
    sharp = torch.tensor([[10.0, 0.0, 0.0]], dtype=torch.float64)  # entropy below 0.5 nats: left alone
    torch.testing.assert_close(scoring.adaptive_temperature_softmax(sharp), torch.softmax(sharp, -1))
    scorer = make_scorer("adaptive_temperature")
    torch.testing.assert_close(scorer(logits), torch.softmax(logits, -1))  # training mode: softmax
    torch.testing.assert_close(scorer.eval()(logits), scoring.adaptive_temperature_softmax(logits))
    torch.testing.assert_close(
        make_scorer("adaptive_temperature", during_training=True)(logits), scoring.adaptive_temperature_softmax(logits)
    )
    with pytest.raises(ValueError, match="during_training must be True or False"):
        make_scorer("adaptive_temperature", during_training="yes")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_adaptive_temperature_at_inference_keeps_the_scorers_contract(dtype):
    generator = torch.Generator().manual_seed(8)
    logits = (torch.randn(2, 5, 9, generator=generator) * 2).to(dtype)
    mask = random_key_mask((2,), 5, 9, generator)
    mask[1, 2] = False  # a fully masked row
    scorer = make_scorer("adaptive_temperature").eval()
    weights = scorer(logits, mask)
    assert weights.dtype == dtype and torch.isfinite(weights).all()
    assert (weights[~mask] == 0).all() and (weights[1, 2] == 0).all()
    rows = mask.any(-1)
    torch.testing.assert_close(weights.float().sum(-1)[rows], torch.ones(int(rows.sum())), atol=1e-2, rtol=0)
    poisoned = logits.masked_fill(~mask, float("nan"))  # masked means absent: never read
    torch.testing.assert_close(scorer(poisoned, mask), weights)
    extreme = torch.tensor([[torch.finfo(dtype).max, 0.0, -torch.finfo(dtype).max]], dtype=dtype)
    assert torch.isfinite(scorer(extreme)).all()


def test_adaptive_temperature_gradients_match_finite_differences():
    generator = torch.Generator().manual_seed(2)
    logits = torch.randn(3, 12, generator=generator, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(3, 12, dtype=torch.bool)
    mask[0, 5:] = False
    assert torch.autograd.gradcheck(lambda x: scoring.adaptive_temperature_softmax(x, mask=mask), (logits,))
