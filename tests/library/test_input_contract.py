"""One input contract for every attention path and every scorer: the same inputs get the same
answer or the same error, whichever path runs, in float32, bfloat16 and float16; nothing at a
masked key reaches an output or a gradient."""

import pytest
import torch

from ssa.attention import attention, attention_path
from ssa.scoring import SSA, make_scorer, scorer_names, ssa

SSA_PATHS = ["reference", "direct", "blockwise", "compiled"]
# SSA through each of its CPU paths; every other scorer through its one path.
SCORER_PATHS = [("ssa", path) for path in SSA_PATHS] + [(name, "auto") for name in scorer_names() if name != "ssa"]
LOGIT_SCORERS = [name for name in scorer_names() if name != "cosformer"]  # cosformer scores queries and keys
DTYPES = [torch.float32, torch.bfloat16, torch.float16]
N_KEYS = 100  # over the direct path's 96 keys: "auto" would take the blockwise path for SSA


@pytest.fixture(autouse=True)
def eager_kernels(monkeypatch):
    monkeypatch.setenv("SSA_ATTENTION_COMPILE", "0")  # the same algorithms, without minutes of compiling


def qkv(batch=(2, 2, 2), heads=4, kv_heads=2, n_queries=5, n_keys=N_KEYS, dim=8, dtype=torch.float32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(batch[0], heads, n_queries, dim, generator=generator)
    k = torch.randn(batch[1], kv_heads, n_keys, dim, generator=generator)
    v = torch.randn(batch[2], kv_heads, n_keys, dim, generator=generator)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def run(name, path, q, k, v, **kwargs):
    scorer = kwargs.pop("scorer", None) or make_scorer(name)
    if q.dtype != torch.float32 and hasattr(scorer, "to"):
        scorer = scorer.to(q.dtype if q.is_floating_point() else torch.float32)
    with attention_path(path if path != "auto" else "auto"):
        return attention(q, k, v, scorer, **kwargs)


def tolerance(dtype):
    return {"atol": 1e-5, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-2}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, path", SCORER_PATHS)
def test_a_batch_of_one_broadcasts_on_every_path(name, path, dtype):
    q, k, v = qkv(batch=(1, 2, 2), dtype=dtype)
    output = run(name, path, q, k, v, causal=True)
    expected = run(name, path, q.expand(2, -1, -1, -1), k, v, causal=True)
    assert output.shape == (2, 4, 5, 8) and output.dtype == dtype
    torch.testing.assert_close(output, expected, **tolerance(dtype))
    assert not torch.equal(output[0], output[1])  # each item saw its own keys


BAD_INPUTS = {
    "value has one more token": (
        lambda q, k, v: dict(q=q, k=k, v=torch.cat([v, v[:, :, :1]], 2)),
        ValueError,
        "same number of tokens",
    ),
    "query has another head dimension": (
        lambda q, k, v: dict(q=torch.cat([q, q[..., :1]], -1), k=k, v=v),
        ValueError,
        "head dimension",
    ),
    "batch sizes 2 and 3": (
        lambda q, k, v: dict(q=q, k=torch.cat([k, k[:1]]), v=torch.cat([v, v[:1]])),
        ValueError,
        "batch sizes",
    ),
    "a mask of the wrong shape": (
        lambda q, k, v: dict(q=q, k=k, v=v, mask=torch.ones(2, 1, 5, N_KEYS + 1, dtype=torch.bool)),
        ValueError,
        "mask of shape",
    ),
    "a mask of five dimensions": (
        lambda q, k, v: dict(q=q, k=k, v=v, mask=torch.ones(1, 2, 1, 5, N_KEYS, dtype=torch.bool)),
        ValueError,
        "mask of shape",
    ),
    "an integer mask": (
        lambda q, k, v: dict(q=q, k=k, v=v, mask=torch.ones(N_KEYS, dtype=torch.long)),
        ValueError,
        "mask must be a boolean",
    ),
    "key and value in float64": (lambda q, k, v: dict(q=q, k=k.double(), v=v.double()), TypeError, "one dtype"),
    "integer tensors": (
        lambda q, k, v: dict(q=q.long(), k=k.long(), v=v.long()),
        TypeError,
        "query must be a floating-point",
    ),
    "three-dimensional query": (
        lambda q, k, v: dict(q=q[0], k=k, v=v),
        ValueError,
        "must be \\(batch, heads, tokens, head_dim\\)",
    ),
    "scale NaN": (lambda q, k, v: dict(q=q, k=k, v=v, scale=float("nan")), ValueError, "scale must be"),
    "dropout_p 1": (lambda q, k, v: dict(q=q, k=k, v=v, dropout_p=1.0), ValueError, "dropout_p must be"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", BAD_INPUTS)
@pytest.mark.parametrize("name, path", SCORER_PATHS)
def test_bad_inputs_get_the_same_error_naming_the_argument_on_every_path(name, path, bad, dtype):
    make, error, message = BAD_INPUTS[bad]
    arguments = make(*qkv(dtype=dtype))
    q, k, v = arguments.pop("q"), arguments.pop("k"), arguments.pop("v")
    with pytest.raises(error, match=message):
        run(name, path, q, k, v, **arguments)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, path", SCORER_PATHS)
def test_a_one_dimensional_key_mask_works_on_every_path(name, path, dtype):
    q, k, v = qkv(dtype=dtype)
    key_mask = torch.arange(N_KEYS) < 60
    output = run(name, path, q, k, v, mask=key_mask)
    torch.testing.assert_close(output, run(name, path, q, k, v, mask=key_mask[None, None, None, :]))
    if name != "cosformer":  # it weighs keys by position: removing keys moves the queries
        torch.testing.assert_close(output, run(name, path, q, k[:, :, :60], v[:, :, :60]), **tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("poison", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("name, path", SCORER_PATHS)
def test_nothing_at_a_masked_key_reaches_an_output_or_a_gradient(name, path, poison, dtype):
    """Padding: the second item's last 40 keys are masked and hold NaN or inf in k and v. The
    output and every gradient (q, k, v, the scorer's parameters) are finite, the output equals
    that with zeros there, and the masked keys get zero gradient."""
    q, k, v = qkv(dtype=dtype)
    mask = (torch.arange(N_KEYS)[None, :] < torch.tensor([N_KEYS, 60])[:, None])[:, None, None, :]  # (B, 1, 1, K)
    k, v = k.clone(), v.clone()
    k[1, :, 60:], v[1, :, 60:] = poison, poison
    inputs = [t.detach().requires_grad_() for t in (q, k, v)]
    scorer = make_scorer(name)
    output = run(name, path, *inputs, mask=mask, causal=False, scorer=scorer)
    parameters = [p for p in scorer.parameters()]
    grads = torch.autograd.grad(output.float().square().sum(), inputs + parameters)
    assert torch.isfinite(output).all()
    for grad in grads:
        assert torch.isfinite(grad).all()
    assert (grads[1][1, :, 60:] == 0).all() and (grads[2][1, :, 60:] == 0).all()
    k[1, :, 60:], v[1, :, 60:] = 0.0, 0.0
    clean = run(name, path, q, k, v, mask=mask, scorer=scorer)
    torch.testing.assert_close(output, clean, **tolerance(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("poison", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("name", LOGIT_SCORERS)
def test_nothing_at_a_masked_logit_reaches_the_weights_or_their_gradient(name, poison, dtype):
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3, 6, generator=generator).to(dtype)
    mask = torch.tensor([True, True, True, True, False, False])
    poisoned = logits.clone()
    poisoned[..., 4:] = poison
    poisoned.requires_grad_()
    scorer = make_scorer(name)
    weights = scorer(poisoned, mask)
    (grad,) = torch.autograd.grad(weights.square().sum(), [poisoned])
    assert torch.isfinite(weights).all() and torch.isfinite(grad).all()
    assert (weights[..., 4:] == 0).all() and (grad[..., 4:] == 0).all()
    torch.testing.assert_close(weights[..., :4], scorer(logits[..., :4]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", LOGIT_SCORERS)
def test_a_row_of_minus_infinity_gets_zero_weights(name, dtype):
    logits = torch.tensor([[0.5, -1.0, 2.0], [-float("inf")] * 3], dtype=dtype, requires_grad=True)
    scorer = make_scorer(name)
    weights = scorer(logits)
    assert torch.isfinite(weights).all() and (weights[1] == 0).all()
    grads = torch.autograd.grad(weights.float().square().sum(), [logits, *scorer.parameters()])
    assert all(torch.isfinite(grad).all() for grad in grads) and (grads[0][1] == 0).all()
    fully_masked = make_scorer(name)(
        torch.randn(2, 3, generator=torch.Generator().manual_seed(0)), torch.tensor([[True] * 3, [False] * 3])
    )
    assert (fully_masked[1] == 0).all()


def minus_infinity_case(dtype, seed=0):
    """Logits ``(2, 3, 4, 6)`` with -inf at random keys (one row all -inf, one with a single key
    left), and a boolean mask of other keys."""
    generator = torch.Generator().manual_seed(seed)
    logits = (torch.randn(2, 3, 4, 6, generator=generator) * 2).to(dtype)
    absent = torch.rand(2, 3, 4, 6, generator=generator) < 0.3
    absent[0, 0, 0] = True
    absent[0, 0, 1] = torch.tensor([True] * 5 + [False])
    mask = torch.rand(2, 3, 4, 6, generator=generator) < 0.8
    return logits, absent, mask


def weights_and_grads(scorer, logits, mask=None):
    logits = logits.detach().requires_grad_()
    weights = scorer(logits, mask)
    probe = torch.randn(weights.shape, generator=torch.Generator().manual_seed(1))
    return (weights, *torch.autograd.grad((weights.float() * probe).sum(), [logits, *scorer.parameters()]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", LOGIT_SCORERS)
def test_a_minus_infinity_logit_is_a_masked_key(name, dtype):
    """An additive mask (-inf at some keys) gives exactly what the boolean mask gives (the same
    code runs): the weights, the gradients with respect to the logits (0 at the -inf ones) and
    to the scorer's parameters, all finite; with a boolean mask as well, the two combine."""
    logits, absent, mask = minus_infinity_case(dtype)
    scorer = make_scorer(name)
    additive = weights_and_grads(scorer, logits.masked_fill(absent, -float("inf")))
    boolean = weights_and_grads(scorer, logits, ~absent)
    for got, expected in zip(additive, boolean):
        assert torch.isfinite(got).all()
        assert torch.equal(got, expected)
    assert (additive[0][absent] == 0).all() and (additive[0][0, 0, 0] == 0).all()
    both = weights_and_grads(scorer, logits.masked_fill(absent, -float("inf")), mask)
    for got, expected in zip(both, weights_and_grads(scorer, logits, mask & ~absent)):
        assert torch.isfinite(got).all()
        assert torch.equal(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("poison", [float("nan"), float("inf")])
@pytest.mark.parametrize("name", LOGIT_SCORERS)
def test_nan_or_plus_infinity_at_a_key_makes_its_row_nan_and_no_other(name, poison, dtype):
    """The module docstring's choice: NaN or +inf at a key that counts makes every weight of its
    row NaN; the other rows, and the gradients with respect to their logits, are as without it,
    every gradient is finite, and at a masked key (by the mask or by -inf) the value is never read."""
    logits, absent, _ = minus_infinity_case(dtype)
    logits = logits.masked_fill(absent, -float("inf"))
    poisoned = logits.clone()
    poisoned[1, 2, 3, 4] = poison  # a key that counts
    poisoned[0, 1, 2, 5] = poison  # ... masked by the mask below
    mask = torch.ones(6, dtype=torch.bool).expand(2, 3, 4, 6).clone()
    mask[0, 1, 2, 5] = False
    scorer = make_scorer(name)
    weights, *grads = weights_and_grads(scorer, poisoned, mask)
    assert torch.isnan(weights[1, 2, 3]).all()
    rows = torch.ones(2, 3, 4, dtype=torch.bool)
    rows[1, 2, 3] = False
    clean_weights, *clean_grads = weights_and_grads(scorer, logits.masked_fill(~rows[..., None], 0.0), mask)
    assert torch.equal(weights[rows], clean_weights[rows])
    assert all(torch.isfinite(grad).all() for grad in grads)
    assert torch.equal(grads[0][rows], clean_grads[0][rows])


@pytest.mark.parametrize("name", scorer_names())
def test_integer_logits_are_refused(name):
    scorer = make_scorer(name)
    logits = torch.ones(2, 3, dtype=torch.long)
    with pytest.raises(TypeError, match="floating-point"):
        if name == "cosformer":
            scorer.weights_from_qk(torch.ones(3, 4, dtype=torch.long), torch.ones(3, 4, dtype=torch.long))
        else:
            scorer(logits)


@pytest.mark.parametrize(
    "b, n, parameter",
    [
        (-1.0, 1.5, "b"),
        (0.0, 1.5, "b"),
        (float("nan"), 1.5, "b"),
        (1.0, 0.5, "n"),
        (1.0, float("inf"), "n"),
        (torch.tensor([1.0, -2.0]), 1.5, "b"),
        (1.0, torch.tensor(0.9), "n"),
    ],
)
def test_the_functional_ssa_checks_b_and_n_as_the_module_does(b, n, parameter):
    with pytest.raises(ValueError, match=f"^{parameter} must be"):
        ssa(torch.zeros(2, 3), b, n)
    if not isinstance(b, torch.Tensor) and not isinstance(n, torch.Tensor):
        with pytest.raises(ValueError, match=f"^{parameter} must be"):
            SSA(b=b, n=n)


@pytest.mark.parametrize("n", [1, 1.0, 1.5, 2.0])
def test_a_fixed_value_is_stored_as_given(n):
    scorer = SSA(b=0.8, n=n, learn_b=False, learn_n=False)
    assert scorer.n.item() == n and scorer.b.item() == torch.tensor(0.8).item()  # float32, as a parameter is
    assert list(scorer.parameters()) == []
    torch.testing.assert_close(scorer(torch.tensor([0.3, -1.0, 2.0])), ssa(torch.tensor([0.3, -1.0, 2.0]), 0.8, n))


@pytest.mark.parametrize("name, path", SCORER_PATHS)
def test_under_autocast_mixed_dtypes_are_cast_as_autocast_casts_sdpa(name, path):
    # Nemotron's rotary embedding upcasts query and key under autocast while value stays bfloat16.
    q, k, v = qkv()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = run(name, path, q, k, v.bfloat16(), causal=True)
        uniform = run(name, path, q.bfloat16(), k.bfloat16(), v.bfloat16(), causal=True)
        reference = run(name, "reference" if name == "ssa" else path, q, k, v, causal=True)
    assert mixed.dtype == torch.bfloat16
    torch.testing.assert_close(mixed, uniform, atol=0, rtol=0)
    torch.testing.assert_close(mixed, reference, **tolerance(torch.bfloat16))
    with pytest.raises(TypeError, match="one dtype"):  # outside autocast, mixed dtypes stay an error
        run(name, path, q, k, v.bfloat16())
