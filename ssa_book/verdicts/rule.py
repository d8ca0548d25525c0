"""The verdict rule on paired differences: which outcome an interval, an estimate and the
signed-rank test decide (:func:`decide`, one row per study, so that a simulated study is judged by
the code that judges a real one), the Wilcoxon signed-rank p-values, and how many pairs would decide
an open comparison (:func:`seeds_to_resolve`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ssa_book.verdicts.claim import MIN_PAIRS, Claim, no_effect_pairs
from ssa_book.verdicts.intervals import CONFIDENCE, all_equal, binary_interval, paired_proportion_interval, t_interval
from ssa_book.verdicts.words import BETTER, NEGLIGIBLE, TOO_FEW_SEEDS, UNDECIDED, WORSE


METHOD = "paired t interval (scipy.stats.ttest_rel), 95%; Wilcoxon signed-rank at 5% for a direction; at least 6 pairs"
METHOD_BINARY = (
    "Tango's score interval for paired proportions, 95%; Wilcoxon signed-rank at 5% for a direction; at least 6 pairs"
)
MAX_SEEDS = 10_000  # seeds_to_resolve searches up to this many pairs


def paired_differences(claim: Claim, treatment: Sequence[float], control: Sequence[float]) -> np.ndarray:
    treatment, control = np.asarray(treatment, dtype=float), np.asarray(control, dtype=float)
    if treatment.ndim != 1 or treatment.shape != control.shape:
        raise ValueError(
            f"treatment and control must be 1-D with one outcome per seed, paired; got shapes "
            f"{treatment.shape} and {control.shape}"
        )
    if not (np.isfinite(treatment).all() and np.isfinite(control).all()):
        raise ValueError("treatment and control must be finite")
    if claim.binary and not (np.isin(treatment, (0, 1)).all() and np.isin(control, (0, 1)).all()):
        raise ValueError(f"treatment and control must be 0 or 1 per seed: the claim {claim.name!r} is binary")
    return claim.direction * (treatment - control)


def no_effect(low, high, threshold: float, pairs, no_effect_from: int):
    """The interval lies within the threshold, from ``no_effect_from`` pairs on."""
    return (-threshold < low) & (high < threshold) & (pairs >= no_effect_from)


def _decided(low, high, effect, threshold: float, pairs, no_effect_from: int):
    """Whether an interval decides: better, worse, or no difference that matters (any of them only from
    ``no_effect_from`` pairs on: :func:`~ssa_book.verdicts.claim.no_effect_pairs`)."""
    directional = _better(low, effect, threshold) | _worse(high, effect, threshold)
    return (directional & (pairs >= no_effect_from)) | no_effect(low, high, threshold, pairs, no_effect_from)


def _better(low, effect, threshold: float):
    """The interval excludes zero on the paper's side and the estimate reaches the threshold."""
    return (low > 0) & (effect >= threshold)


def _worse(high, effect, threshold: float):
    """The mirror image of :func:`_better`: the interval excludes zero on the other side and the
    estimate reaches the threshold there."""
    return (high < 0) & (effect <= -threshold)


def decide(
    differences: np.ndarray, threshold: float, binary: bool = False, no_effect_from: int = MIN_PAIRS
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rule on a stack of studies, one per row of ``differences`` (studies, pairs), each with
    at least :data:`~ssa_book.verdicts.claim.MIN_PAIRS` pairs: ``(effect, low, high, outcome)``, one entry per study.
    ``binary``: the outcomes are 0 or 1 per seed, and the interval is Tango's; ``no_effect_from``:
    the fewest pairs that may decide anything (:func:`~ssa_book.verdicts.claim.no_effect_pairs`).

    :func:`~ssa_book.verdicts.judge.judge` calls it with one row and the simulations with thousands, so that a simulated
    study is judged by the very code that judges the real one."""
    effect = differences.mean(axis=1)
    if binary:
        low, high = binary_interval(differences)
    else:
        identical = all_equal(differences)
        low, high = effect.copy(), effect.copy()
        if not identical.all():
            low[~identical], high[~identical] = t_interval(differences[~identical])
    # The three conditions exclude each other (a direction needs the estimate beyond the threshold,
    # "no difference" the whole interval within it), so no word takes precedence over another.
    outcome = np.full(len(effect), UNDECIDED, dtype=object)
    outcome[no_effect(low, high, threshold, differences.shape[1], no_effect_from)] = NEGLIGIBLE
    outcome[_worse(high, effect, threshold)] = WORSE
    outcome[_better(low, effect, threshold)] = BETTER
    if differences.shape[1] < no_effect_from:
        # Outcomes that flip from seed to seed: "better" or "worse" needs as many pairs as "no
        # difference" does. With fewer, a seed that flips decides the sign, and under nulls
        # resampled from the book's own flip-prone outcomes the t interval then gave a false
        # direction up to 30% of the time (resampled_null_rates).
        outcome[:] = TOO_FEW_SEEDS
    directional = np.flatnonzero((outcome == BETTER) | (outcome == WORSE))
    if len(directional):
        chance = signed_rank_p_values(differences[directional]) >= 1 - CONFIDENCE
        outcome[directional[chance]] = UNDECIDED  # the signs and ranks alone do not exclude chance
    return effect, low, high, outcome


FALSE_DISCOVERY_RATE = 0.05  # the share of false directions a family's adjusted decisions allow


def signed_rank_p_values(differences: np.ndarray) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-values (``scipy.stats.wilcoxon``; zero differences
    dropped), one per row. scipy picks its method (exact, or a permutation test when magnitudes
    tie or a difference is zero) for a whole batch at once, so rows with ties or zeros are tested
    apart: each row gets the p-value it would get alone (:func:`_sign_flip_p` computes scipy's
    sign-flip test for all of them at once)."""
    from scipy import stats

    p = np.ones(len(differences))
    magnitudes = np.sort(np.abs(differences), axis=1)
    nonzero = magnitudes[:, -1] > 0
    tied = (magnitudes[:, 0] == 0) | np.any(np.diff(magnitudes, axis=1) == 0, axis=1)
    plain = np.flatnonzero(nonzero & ~tied)
    if len(plain):
        p[plain] = stats.wilcoxon(differences[plain], axis=1).pvalue
    tied_rows = np.flatnonzero(nonzero & tied)
    if differences.shape[1] <= _SIGN_FLIPS_UP_TO:
        for start in range(0, len(tied_rows), _SIGN_FLIP_BATCH):
            rows = tied_rows[start : start + _SIGN_FLIP_BATCH]
            p[rows] = _sign_flip_p(differences[rows])
    else:
        for row in tied_rows:
            p[row] = stats.wilcoxon(differences[row]).pvalue
    return p


# scipy.stats.wilcoxon (method "auto") tests a row with ties or zeros by flipping signs exactly when
# it has at most 13 entries (2**13 flips are fewer than its 9999 resamples), asymptotically beyond.
_SIGN_FLIPS_UP_TO = 13
_SIGN_FLIP_BATCH = 256  # rows per batch: 2**13 x 256 float64 statistics are 16 MiB


def _sign_flip_p(differences: np.ndarray) -> np.ndarray:
    """The two-sided p-value that ``scipy.stats.wilcoxon`` gives each row (rows, n) with n <= 13 when
    it runs its exact sign-flip permutation test, computed for all rows at once: the statistic is
    the sum of the midranks of |d| over the positive differences (zeros dropped), its null
    distribution the statistic under each of the 2**n sign flips, and the p-value twice the smaller
    tail, with scipy's relative tolerance (100 machine epsilons) for ties in the null distribution.
    Midranks are multiples of 1/2, so every statistic is exact and the p-values equal scipy's."""
    from scipy import stats

    n = differences.shape[1]
    ranks = stats.rankdata(np.where(differences == 0, np.inf, np.abs(differences)), axis=1)  # zeros rank last, unused
    positive = np.where(differences > 0, ranks, 0.0)  # (rows, n)
    negative = np.where(differences < 0, ranks, 0.0)
    kept = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1  # (2**n, n): 1 keeps a sign, 0 flips it
    null = kept @ positive.T + (1 - kept) @ negative.T  # (2**n, rows)
    observed = positive.sum(axis=1)
    gamma = np.abs(np.finfo(float).eps * 100 * observed)
    less = np.count_nonzero(null <= observed + gamma, axis=0) / 2**n
    greater = np.count_nonzero(null >= observed - gamma, axis=0) / 2**n
    return np.clip(np.minimum(less, greater) * 2, 0.0, 1.0)


def seeds_to_resolve(
    effect: float, spread: float, threshold: float, max_seeds: int = MAX_SEEDS, no_effect_from: int = MIN_PAIRS
) -> int | None:
    """The fewest pairs whose interval, with this mean and standard deviation of the paired
    differences, would no longer be undecided ("no difference" only from ``no_effect_from`` pairs
    on); ``None`` beyond ``max_seeds``."""
    from scipy import stats

    pairs = np.arange(MIN_PAIRS, max_seeds + 1)
    half_width = stats.t.ppf(0.5 + CONFIDENCE / 2, pairs - 1) * spread / np.sqrt(pairs)
    decided = _decided(effect - half_width, effect + half_width, effect, threshold, pairs, no_effect_from)
    return int(pairs[decided.argmax()]) if decided.any() else None


def _binary_pairs_to_resolve(
    differences: np.ndarray, threshold: float, max_seeds: int = MAX_SEEDS, no_effect_from: int = MIN_PAIRS
) -> int | None:
    """:func:`seeds_to_resolve` for a binary claim: the fewest pairs whose Tango interval would no
    longer be undecided if the observed shares of gains and losses held; ``None`` beyond
    ``max_seeds``."""
    pairs = np.arange(MIN_PAIRS, max_seeds + 1, dtype=float)
    gains, losses = np.mean(differences > 0) * pairs, np.mean(differences < 0) * pairs
    effect = float(differences.mean())
    low, high = paired_proportion_interval(gains, losses, pairs)
    decided = _decided(low, high, effect, threshold, pairs, no_effect_from)
    return int(pairs[decided.argmax()]) if decided.any() else None


def pairs_to_resolve(claim: Claim, differences: np.ndarray) -> int | None:
    if claim.binary:
        return _binary_pairs_to_resolve(differences, claim.threshold, no_effect_from=no_effect_pairs(claim))
    return seeds_to_resolve(
        float(differences.mean()),
        float(differences.std(ddof=1)),
        claim.threshold,
        no_effect_from=no_effect_pairs(claim),
    )
