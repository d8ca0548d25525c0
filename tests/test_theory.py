"""The Theory chapter's derivations (ssa_book.theory) against closed forms, numerics and ssa.scoring."""

import numpy as np
import pytest
import sympy as sp
import torch

from ssa_book import theory

from ssa import scoring
from ssa_book.theory import LAMBDA, B, N

M = sp.Symbol("M", real=True)
DELTA, DELTA2 = sp.symbols("Delta delta", positive=True)
P1, P2, Q = sp.symbols("p1 p2 q", positive=True)
Y1, Y2 = sp.symbols("y1 y2", positive=True)


def same(a, b) -> bool:
    """Symbolic equality: the difference simplifies to zero (or sympy proves it is zero)."""
    difference = sp.sympify(a) - sp.sympify(b)
    return sp.simplify(sp.expand(difference)) == 0 or difference.equals(0) is True


# ----------------------------------------------------------------------------------------------
# Theorem 1, softmax: hardmax limit, gap, constant m / k.


@pytest.mark.parametrize(
    "logits, limits, gap, constant",
    [
        # one maximum, runner-up tied twice: C = 2 / 1
        ([M, M - DELTA, M - DELTA, M - DELTA - DELTA2], (1, 0, 0, 0), DELTA, 2),
        # two tied maxima, one runner-up: C = 1 / 2
        ([M, M - DELTA, M], (sp.S.Half, 0, sp.S.Half), DELTA, sp.S.Half),
        ([1, 0.5, -2, 3, 2.5], (0, 0, 0, 1, 0), sp.S.Half, 1),
    ],
)
def test_softmax_magnification_matches_closed_form(logits, limits, gap, constant):
    result = theory.softmax_magnification(logits)
    assert all(same(a, b) for a, b in zip(result.limit_weights, limits))
    assert same(result.gap, gap)
    assert same(result.constant, constant)
    assert same(result.asymptotic, constant * sp.exp(-LAMBDA * gap))


# ----------------------------------------------------------------------------------------------
# Theorem 1, SSA: limits x_i^n / sum x_j^n, rates n and 2n with their constants.


@pytest.fixture(scope="module")
def ssa_symbolic():
    return theory.ssa_magnification([P1, P2, 0, -Q])


def test_ssa_magnification_symbolic_closed_forms(ssa_symbolic):
    total = P1**N + P2**N
    assert same(ssa_symbolic.limit_weights[0], P1**N / total)
    assert same(ssa_symbolic.limit_weights[1], P2**N / total)
    assert ssa_symbolic.limit_weights[2:] == (0, 0)
    assert all(same(r, e) for r, e in zip(ssa_symbolic.rates, (0, 0, N, 2 * N)))
    assert same(ssa_symbolic.constants[2], 1 / (B**N * total))
    assert same(ssa_symbolic.constants[3], 1 / (B ** (2 * N) * Q**N * total))


def test_ssa_magnification_numeric_direct_limits_agree():
    # With numbers for b and n sympy's limit works on the raw weights: it must agree.
    result = theory.ssa_magnification(
        [sp.Rational(1, 2), 2, 0, -1], b=sp.Rational(3, 2), n=sp.Rational(3, 2), cross_check=True
    )
    assert all(d is not None and same(d, c) for d, c in zip(result.direct, result.constants))
    assert result.direct_rates[:2] == (None, None)  # positive logits do not decay
    assert all(same(d, r) for d, r in zip(result.direct_rates[2:], result.rates[2:]))
    assert same(
        result.contextual_mass,
        1 - 2 ** sp.Rational(3, 2) / (2 ** sp.Rational(3, 2) + sp.Rational(1, 2) ** sp.Rational(3, 2)),
    )


def test_ssa_single_positive_logit_has_no_contextual_mass_in_the_limit():
    result = theory.ssa_magnification([2, 0, -1], b=1, n=2)
    assert result.limit_weights == (1, 0, 0)
    assert result.contextual_mass == 0
    assert same(result.constants[1], sp.Rational(1, 4))  # 1 / (b^n x^n)


# ----------------------------------------------------------------------------------------------
# Theorem 2: inner disproportion.


def test_inner_disproportion_closed_forms():
    others = [Y1, -Y2, 0]
    softmax = theory.softmax_inner_disproportion(others)
    assert same(softmax.constant, sp.exp(Y1) + sp.exp(-Y2) + 1)
    assert same(softmax.decay, sp.exp(-theory.T))
    ssa = theory.ssa_inner_disproportion(others)
    expected = B ** (-N) * ((1 + B * Y1) ** N + (1 + B * Y2) ** (-N) + 1)
    assert same(ssa.constant, expected)
    assert same(ssa.decay, theory.T ** (-N))


# ----------------------------------------------------------------------------------------------
# Numerics: the asymptotics hold at large lambda; slopes match the rates.

SCALES = np.logspace(0, 6, 25)


def test_ssa_asymptotics_numerically():
    result = theory.ssa_magnification([0.5, 2, 0, -1], b=1.5, n=1.5)
    for i in range(4):
        # The next term is O(1/lambda) relative: 1e-5 leaves a margin at lambda = 1e6.
        assert theory.relative_errors(result.weights[i], result.asymptotic(i), LAMBDA, [1e6])[0] < 1e-5
    large = SCALES >= 1e3
    for i in (2, 3):
        slope = theory.fitted_slope(np.log(SCALES[large]), theory.log_values(result.weights[i], LAMBDA, SCALES)[large])
        assert slope == pytest.approx(-float(result.rates[i]), rel=1e-3)


def test_softmax_asymptotics_numerically():
    result = theory.softmax_magnification([0.5, 2, 0, -1, 1.5])
    assert theory.relative_errors(result.non_max_mass, result.asymptotic, LAMBDA, [1e6])[0] < 1e-40
    slope = theory.fitted_slope(SCALES, theory.log_values(result.non_max_mass, LAMBDA, SCALES))
    assert slope == pytest.approx(-0.5, rel=1e-6)


# ----------------------------------------------------------------------------------------------
# Tie to the code.


@pytest.mark.parametrize("b, n", [(1.0, 1.0), (1.0, 1.5), (0.5, 2.0), (2.72, 3.0)])
def test_lambdified_ssa_equals_scoring(b, n):
    logits = np.random.default_rng(0).normal(0.0, 3.0, (200, 7))
    logits[0, 2] = 0.0  # SSA's score at exactly zero
    symbolic = theory.lambdified_weights("ssa", 7)(logits, b=b, n=n)
    package = scoring.ssa(torch.from_numpy(logits), b, n).numpy()
    assert np.abs(symbolic - package).max() < 1e-14


def test_lambdified_softmax_equals_scoring():
    logits = np.random.default_rng(1).normal(0.0, 3.0, (200, 5))
    symbolic = theory.lambdified_weights("softmax", 5)(logits)
    assert np.abs(symbolic - scoring.softmax(torch.from_numpy(logits)).numpy()).max() < 1e-14


@pytest.mark.parametrize(
    "alpha, scorer, threshold", [(2, scoring.sparsemax, 1), (sp.Rational(3, 2), scoring.entmax15, 2)]
)
def test_entmax_threshold_closed_form_and_package(alpha, scorer, threshold):
    result = theory.entmax_hardmax_threshold(DELTA, alpha)
    assert same(result.threshold, threshold / DELTA)
    logits = [1.0, 0.8, -0.5]  # gap 0.2
    star = float(result.threshold.subs(DELTA, sp.Rational(1, 5)))
    below, above = theory.contextual_mass_curve(scorer, logits, [star * 0.99, star * 1.01])
    assert below > 0 and above == 0


def test_contextual_mass_of_sigmoid_divides_by_row_total():
    weights = torch.tensor([[0.5, 0.5, 1.0]], dtype=torch.float64)
    assert theory.contextual_mass(weights).item() == pytest.approx(0.5)


# ----------------------------------------------------------------------------------------------
# Invalid inputs.


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: theory.ssa_magnification([0, -1, -2]), "at least one positive logit"),
        (lambda: theory.ssa_magnification([1, 2], n=0.5), "n must be"),
        (lambda: theory.ssa_magnification([1, 2], b=0), "b must be"),
        (lambda: theory.ssa_magnification([sp.Symbol("x", real=True), 1]), "cannot decide the sign"),
        (lambda: theory.ssa_inner_disproportion([1], n=sp.Rational(1, 2)), "n must be"),
        (lambda: theory.ssa_inner_disproportion([]), "at least 1"),
        (lambda: theory.softmax_magnification([1, 1, 1]), "must not all be equal"),
        (lambda: theory.softmax_magnification([sp.Symbol("x", real=True), 1]), "cannot order"),
        (lambda: theory.softmax_magnification("12"), "sequence"),
        (lambda: theory.entmax_hardmax_threshold(alpha=1), "alpha must be > 1"),
        (lambda: theory.lambdified_weights("sparsemax", 3), "kind must be"),
        (lambda: theory.lambdified_weights("ssa", 2)(np.zeros((1, 2)), b=1.0, n=0.5), "n must be"),
        (lambda: theory.lambdified_weights("ssa", 2)(np.zeros((1, 2)), b=1.0), "parameters must be"),
        (lambda: theory.ssa_weights([1, float("nan")]), "finite real"),
    ],
)
def test_invalid_inputs_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
