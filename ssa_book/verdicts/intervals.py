"""The 95% intervals the rule and its checks use: the paired t interval, Tango's score interval
for paired proportions, the interval of a rate (Clopper-Pearson or Wilson), and the betting interval
for a bounded mean (Waudby-Smith and Ramdas)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


CONFIDENCE = 0.95


def all_equal(differences: np.ndarray) -> np.ndarray:
    """Whether the differences (along the last axis) are one value up to rounding: the t interval
    is then that point, and scipy would warn of cancellation."""
    return np.ptp(differences, axis=-1) <= 1e-12 * np.maximum(1.0, np.abs(differences).max(axis=-1))


def t_interval(differences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paired t interval (``scipy.stats.ttest_rel``) along the last axis."""
    from scipy import stats

    interval = stats.ttest_rel(differences, np.zeros_like(differences), axis=-1).confidence_interval(
        confidence_level=CONFIDENCE
    )
    return interval.low, interval.high


def _tango_score(gains: np.ndarray, losses: np.ndarray, pairs: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Tango's score statistic for a paired difference ``delta`` of proportions, with ``gains``
    pairs where only the treatment succeeds and ``losses`` where only the control does (counts
    may be fractional: :func:`~ssa_book.verdicts.rule._binary_pairs_to_resolve` scales them); decreasing in ``delta``."""
    a = 2 * pairs
    b = -gains - losses + (2 * pairs - gains + losses) * delta
    c = -losses * delta * (1 - delta)
    with np.errstate(invalid="ignore", divide="ignore"):
        restricted = (-b + np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))) / (2 * a)
        numerator = gains - losses - pairs * delta
        score = numerator / np.sqrt(pairs * np.maximum(2 * restricted + delta * (1 - delta), 0.0))
    return np.where(numerator == 0, 0.0, score)  # 0 / 0 where the estimate is delta and no pair differs


def paired_proportion_interval(gains, losses, pairs) -> tuple[np.ndarray, np.ndarray]:
    """Tango's score interval for the paired difference of proportions (at :data:`CONFIDENCE`),
    with ``gains`` pairs where only the treatment succeeds and ``losses`` where only the control
    does, out of ``pairs`` (arrays broadcast elementwise; counts may be fractional): the ``delta``
    in [-1, 1] whose score lies within the normal quantile, found by bisection (the score is
    monotone in ``delta``, with the estimate ``(gains - losses) / pairs`` inside)."""
    from scipy import stats

    gains, losses, pairs = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (gains, losses, pairs)))
    if not (np.isfinite(pairs).all() and (pairs > 0).all()):
        raise ValueError(f"pairs must be finite and > 0; got {pairs}")
    for name, count in (("gains", gains), ("losses", losses)):
        if not (np.isfinite(count).all() and (count >= 0).all()):
            raise ValueError(f"{name} must be finite and >= 0; got {count}")
    if (gains + losses > pairs).any():
        raise ValueError(f"gains + losses must be at most pairs; got {gains} + {losses} of {pairs}")
    z = stats.norm.ppf(0.5 + CONFIDENCE / 2)
    estimate = (gains - losses) / pairs
    bounds = []
    for outside, inside, sign in (
        (np.full_like(estimate, -1.0), estimate, 1),
        (np.full_like(estimate, 1.0), estimate, -1),
    ):
        beyond = sign * _tango_score(gains, losses, pairs, outside) <= z  # the interval reaches -1 (or 1)
        for _ in range(60):  # 2^-60: below double precision on [-1, 1]
            middle = (outside + inside) / 2
            excluded = sign * _tango_score(gains, losses, pairs, middle) > z
            outside, inside = np.where(excluded, middle, outside), np.where(excluded, inside, middle)
        bounds.append(np.where(beyond, -sign * 1.0, inside))
    return bounds[0], bounds[1]


def binary_interval(differences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tango's interval for each row of 0/+1/-1 paired differences."""
    return paired_proportion_interval(
        (differences > 0).sum(axis=-1), (differences < 0).sum(axis=-1), differences.shape[-1]
    )


BOUNDED_ORDERS = 100  # seeded orders of the pairs whose wealth bounded_mean_interval averages
BOUNDED_GRID = 4001  # candidate means on [-bound, bound]: endpoints to within bound / 2000
BOUNDED_TRUNCATION = 0.5  # the largest share of its wealth a bet may stake (the authors' code's default)
METHOD_BOUNDED = (
    f"betting interval for a bounded mean (Waudby-Smith and Ramdas 2024), 95%, wealth averaged over "
    f"{BOUNDED_ORDERS} seeded orders of the pairs"
)


def bounded_mean_interval(differences: Sequence[float], bound: float) -> tuple[float, float]:
    r"""A 95% interval for the mean of paired differences known to lie in ``[-bound, bound]``,
    valid at every sample size and for every distribution there (no normality, no large-N
    approximation): the betting interval of Waudby-Smith and Ramdas ("Estimating means of bounded
    random variables by betting", JRSS-B 86:1, 2024), hedged, with their predictable plug-in bets
    for a fixed sample size.

    With :math:`x_i = (d_i + B) / 2B \in [0, 1]`, a candidate mean :math:`m` is rejected when the
    wealth of betting against it reaches :math:`1/\alpha`:

    .. math:: K(m) = \max\Big(\tfrac12 \prod_i \big(1 + \lambda_i^+ (x_i - m)\big),\;
              \tfrac12 \prod_i \big(1 - \lambda_i^- (x_i - m)\big)\Big),
              \qquad \lambda_i = \sqrt{\frac{2 \log(2/\alpha)}{N \hat\sigma_{i-1}^2}},

    :math:`\lambda_i^+ = \min(\lambda_i, c/m)`, :math:`\lambda_i^- = \min(\lambda_i, c/(1-m))`,
    :math:`c` = :data:`BOUNDED_TRUNCATION`, and :math:`\hat\sigma_{i-1}^2` the running variance of
    the pairs before :math:`i` (started at :math:`1/4` with one pseudo-pair at :math:`1/2`). At the
    true mean each product is a nonnegative martingale of mean 1, so :math:`E\,K(m) \le 1` and
    Markov's inequality gives :math:`P(K(m) \ge 1/\alpha) \le \alpha`. The bets depend on the order
    of the pairs, which a batch of seeds does not have, so :math:`K` is averaged over
    :data:`BOUNDED_ORDERS` random orders of the sorted pairs, drawn by fixed generators independently
    of the data (each keeps the pairs exchangeable, and an average of such wealths keeps mean at
    most 1): the same pairs in any order give the same interval.
    Each endpoint is the nearest rejected candidate on a grid of :data:`BOUNDED_GRID` (conservative
    by at most one step)."""
    d = np.asarray(differences, dtype=float)
    if not (isinstance(bound, (int, float)) and math.isfinite(bound) and bound > 0):
        raise ValueError(f"bound must be a finite number > 0; got {bound!r}")
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"differences must be a flat sequence of at least 2 pairs; got shape {d.shape}")
    if not np.isfinite(d).all() or (np.abs(d) > bound).any():
        raise ValueError(
            f"differences must be finite and within [-bound, bound] = [{-bound:g}, {bound:g}]; "
            f"got values from {np.nanmin(d):g} to {np.nanmax(d):g}"
        )
    n, alpha = len(d), 1 - CONFIDENCE
    x = (np.sort(d) + bound) / (2 * bound)
    # Random orders only: a permutation drawn independently of the data leaves the pairs exchangeable,
    # as the martingale argument needs; the sorted order itself would not.
    orders = np.stack([np.random.default_rng(seed).permutation(x) for seed in range(BOUNDED_ORDERS)])  # (orders, n)
    seen = np.arange(1, n + 1)
    running_mean = (0.5 + np.cumsum(orders, axis=1)) / (seen + 1)  # after pair i, with the pseudo-pair
    squares = np.cumsum((orders - running_mean) ** 2, axis=1)
    variance_before = (0.25 + np.concatenate([np.zeros((len(orders), 1)), squares[:, :-1]], axis=1)) / seen
    bets = np.sqrt(2 * math.log(2 / alpha) / (n * variance_before))  # (orders, n)
    candidates = np.linspace(0.0, 1.0, BOUNDED_GRID)[1:-1]
    wealth = np.zeros(len(candidates))
    for order, bet in zip(orders, bets):  # one order at a time keeps memory at (n, candidates)
        gap = order[:, None] - candidates[None, :]
        up = np.prod(1 + np.minimum(bet[:, None], BOUNDED_TRUNCATION / candidates) * gap, axis=0)
        down = np.prod(1 - np.minimum(bet[:, None], BOUNDED_TRUNCATION / (1 - candidates)) * gap, axis=0)
        wealth += np.maximum(up, down) / 2
    kept = np.flatnonzero(wealth / len(orders) < 1 / alpha)
    if not len(kept):  # cannot happen for a valid sample (the sample mean is never rejected), kept for safety
        raise ArithmeticError("bounded_mean_interval rejected every candidate mean")
    grid = np.linspace(0.0, 1.0, BOUNDED_GRID)
    low, high = grid[kept[0]], grid[kept[-1] + 2]  # the rejected neighbours: grid index = candidate index + 1
    return float(low * 2 * bound - bound), float(high * 2 * bound - bound)


def rate_interval(successes: int, trials: int, method: str = "exact") -> tuple[float, float, float]:
    """A rate (e.g. of seeds that generalise) with its 95% interval (``scipy.stats.binomtest``):
    ``(rate, low, high)``. ``method``: "exact" (Clopper-Pearson: at least 95% coverage at every
    rate, wide) or "wilson" (the score interval: close to 95% on average, narrower)."""
    from scipy import stats

    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials >= 1; got {successes} of {trials}")
    if method not in ("exact", "wilson"):
        raise ValueError(f"method must be exact or wilson; got {method!r}")
    interval = stats.binomtest(successes, trials).proportion_ci(confidence_level=CONFIDENCE, method=method)
    return successes / trials, float(interval.low), float(interval.high)
