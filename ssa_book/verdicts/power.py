"""The rule measured by simulation: its power against a true effect (:func:`power`,
:func:`power_table`), and its false directions under a null of no effect, drawn by the caller or
resampled from a study's own paired differences (:func:`resampled_null_rates`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ssa_book.verdicts.claim import MIN_PAIRS, Claim, no_effect_pairs
from ssa_book.verdicts.judge import judge_unrecorded
from ssa_book.verdicts.rule import decide, paired_differences
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.words import BETTER, WORSE, outcome_words


# Simulated studies per power estimate: its Monte Carlo standard error is at most
# sqrt(0.25 / 2000) = 0.011, small beside the gaps between seed counts a power table compares.
SIMULATIONS = 2000


def _simulated_rate(claim: Claim, pairs: int, sample, simulations: int, seed: int) -> float:
    """The rate of "better" over ``simulations`` studies of ``pairs`` pairs drawn at once by
    ``sample(generator, (simulations, pairs)) -> (treatment, control)``, judged by :func:`~ssa_book.verdicts.rule.decide`."""
    if pairs < MIN_PAIRS:
        return 0.0  # the rule decides nothing with fewer pairs
    treatment, control = sample(np.random.default_rng(seed), (simulations, pairs))
    treatment, control = np.asarray(treatment, dtype=float), np.asarray(control, dtype=float)
    if treatment.shape != (simulations, pairs) or control.shape != (simulations, pairs):
        raise ValueError(
            f"sample must return outcomes of shape {(simulations, pairs)}; got {treatment.shape} and {control.shape}"
        )
    differences = paired_differences(claim, treatment.ravel(), control.ravel()).reshape(simulations, pairs)
    return float(np.mean(decide(differences, claim.threshold, claim.binary, no_effect_pairs(claim))[3] == BETTER))


def power(
    claim: Claim, pairs: int, effect: float, spread: float, simulations: int = SIMULATIONS, seed: int = 0
) -> float:
    """The rate of "better" with ``pairs`` seeds when the paired differences are normal with
    mean ``effect`` (in the paper's direction) and standard deviation ``spread``."""

    if spread == 0:  # every simulated study is the same one: judge it once
        return float(
            judge_unrecorded(
                claim, claim.direction * np.full(pairs, float(effect)), np.zeros(pairs), resolve=False
            ).outcome
            == BETTER
        )

    def sample(generator, shape):
        return claim.direction * generator.normal(effect, spread, shape), np.zeros(shape)

    return _simulated_rate(claim, pairs, sample, simulations, seed)


def power_table(
    verdicts: Mapping[str, Verdict] | Sequence[Verdict],
    pairs: Sequence[int],
    *,
    effects: Mapping[str, Mapping[str, float]] | None = None,
    multiples: Sequence[float] = (1, 2),
    simulations: int = SIMULATIONS,
    seed: int = 0,
):
    """The rule's power for each judged verdict (one with at least two paired differences): the
    rate of "better" (:func:`power`) at the spread of its observed differences, with each
    number of ``pairs``, for true effects of ``multiples`` of its threshold and, from ``effects``
    (``{key: {label: effect}}``, keyed like ``verdicts``), any others, such as the paper's.
    A pandas table indexed by (claim, true effect), with the observed spread and one column of
    power per number of pairs. With the true effect at the threshold, the estimate falls below it
    about half the time, so that power stays under about one half at any seed count."""
    import pandas as pd

    items = list(verdicts.items()) if isinstance(verdicts, Mapping) else [(v.claim, v) for v in verdicts]
    rows = []
    for key, verdict in items:
        if len(verdict.differences) < 2:
            continue
        spread = float(np.std(verdict.differences, ddof=1))
        claim = Claim(
            verdict.claim,
            1,
            verdict.threshold,
            verdict.units or "units",
            "the claim's own threshold",
            min_pairs=max(MIN_PAIRS, verdict.no_effect_pairs),
        )
        named = {
            ("the threshold" if multiple == 1 else f"{multiple:g} x the threshold"): multiple * verdict.threshold
            for multiple in multiples
        }
        named.update((effects or {}).get(key, {}))
        for label, effect in named.items():
            row = {"claim": verdict.claim, "true effect": label, "effect": effect, "observed spread": spread}
            for count in pairs:
                row[f"{count} seeds"] = power(claim, int(count), effect, spread, simulations=simulations, seed=seed)
            rows.append(row)
    columns = ["claim", "true effect", "effect", "observed spread", *(f"{count} seeds" for count in pairs)]
    return pd.DataFrame(rows, columns=columns).set_index(["claim", "true effect"])


def effect_power_sentence(
    table, pairs: int, effect: str, names: Mapping[str, str], units: str, treatment: str = "SSA"
) -> str:
    """What :func:`power_table`'s ``table`` says of one true ``effect`` (a label of its "true
    effect" level, such as the paper's gap) with ``pairs`` pairs, for the claims ``names`` maps to
    the words that name them on the page: the chance the rule says "better" for each. The table
    has rows only for claims with two paired differences or more; without any, the sentence says so."""
    if not names:
        return (
            f"with {pairs} paired seed{'' if pairs == 1 else 's'}, the rule's power cannot be estimated: no claim has the two "
            "paired differences a spread needs"
        )
    column = f"{pairs} seeds"
    if column not in table.columns:
        raise ValueError(f"pairs: the table has no column {column!r}; it has {', '.join(map(str, table.columns))}")
    parts = []
    for claim, name in names.items():
        if (claim, effect) not in table.index:
            raise ValueError(f"names: the table has no row for {claim!r} at the true effect {effect!r}")
        row = table.loc[(claim, effect)]
        parts.append(f"{name} ({row['effect']:.3g} {units}) {row[column]:.0%}")
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return (
        f'with {pairs} paired seeds, the chance that the rule says "{outcome_words(BETTER, treatment)}" if the true '
        f"effect were {effect}: {listed}"
    )


def false_reproduction_rate(claim: Claim, pairs: int, sample, simulations: int = SIMULATIONS, seed: int = 0) -> float:
    """The rate of "better" when ``sample(generator, (simulations, pairs)) -> (treatment,
    control)`` draws the outcomes of many studies with no true effect (the caller's model of the
    outcomes), one study per row."""
    return _simulated_rate(claim, pairs, sample, simulations, seed)


# The columns of resampled_null_rates' answer and of resampled_null_table.
# A rate's name quotes the word it counts: a table's header mentions "better", it says nothing is.
FALSE_REPRODUCED, FALSE_OPPOSITE, FALSE_DIRECTIONAL = 'false "better"', 'false "worse"', 'false "better" or "worse"'


def _resampled_null_differences(
    claim: Claim, differences: np.ndarray, shape: tuple[int, int], generator: np.random.Generator
) -> np.ndarray:
    """``shape`` (studies, pairs) paired differences drawn under the null of no effect from the
    observed ``differences``: resampled with replacement after recentring to mean 0; for a binary
    claim, +1 and -1 each with half the observed share of discordant pairs, else 0."""
    if claim.binary:
        # Recentred -1/0/+1 differences are no paired 0/1 outcomes, and Tango's interval counts gains
        # and losses; keeping the observed discordance with both signs equally likely is the null that
        # has no effect and the observed share of seeds where the arms differ.
        discordant = float(np.mean(differences != 0))
        draw = generator.random(shape)
        return np.where(draw < discordant / 2, 1.0, np.where(draw < discordant, -1.0, 0.0))
    recentred = differences - differences.mean()
    return recentred[generator.integers(0, len(recentred), size=shape)]


def resampled_null_rates(
    claim: Claim, differences: Sequence[float], pairs: int, simulations: int = SIMULATIONS, seed: int = 0
) -> dict[str, float]:
    """The rule's false decisions under a null resampled from a study's own paired
    ``differences`` (one per seed, in the paper's direction, as :attr:`~ssa_book.verdicts.verdict.Verdict.differences` holds
    them): ``simulations`` studies of ``pairs`` pairs, each drawn from the differences recentred to
    mean 0 (for a binary claim, from their share of discordant pairs with both signs equally
    likely: see the module's section on simulations), judged by :func:`~ssa_book.verdicts.rule.decide` with the claim's
    threshold, interval and :func:`~ssa_book.verdicts.claim.no_effect_pairs`. Returns ``{FALSE_REPRODUCED: r_+,
    FALSE_OPPOSITE: r_-, FALSE_DIRECTIONAL: r_+ + r_-}``, the shares of studies called
    "better" and "worse"; all 0 with fewer than :data:`~ssa_book.verdicts.claim.MIN_PAIRS` pairs, where the rule
    decides nothing. Seeded by ``np.random.default_rng(seed)``."""
    observed = np.asarray(differences, dtype=float)
    if observed.ndim != 1 or len(observed) < 2:
        raise ValueError(
            f"differences must be a flat sequence of at least 2 paired differences; got shape {observed.shape}"
        )
    if not np.isfinite(observed).all():
        raise ValueError("differences must be finite")
    if claim.binary and not np.isin(observed, (-1, 0, 1)).all():
        raise ValueError(f"differences must be -1, 0 or +1: the claim {claim.name!r} is binary")
    for name, count in (("pairs", pairs), ("simulations", simulations)):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"{name} must be a whole number >= 1; got {count!r}")
    if pairs < MIN_PAIRS:
        return {FALSE_REPRODUCED: 0.0, FALSE_OPPOSITE: 0.0, FALSE_DIRECTIONAL: 0.0}
    studies = _resampled_null_differences(claim, observed, (int(simulations), int(pairs)), np.random.default_rng(seed))
    outcome = decide(studies, claim.threshold, claim.binary, no_effect_pairs(claim))[3]
    reproduced, opposite = float(np.mean(outcome == BETTER)), float(np.mean(outcome == WORSE))
    return {FALSE_REPRODUCED: reproduced, FALSE_OPPOSITE: opposite, FALSE_DIRECTIONAL: reproduced + opposite}


def resampled_null_table(judged: Sequence[tuple[Claim, Verdict]], simulations: int = SIMULATIONS, seed: int = 0):
    """:func:`resampled_null_rates` for each ``(claim, verdict)`` of ``judged`` with at least two
    paired differences, at the pairs the verdict was judged with: ``(table, largest)``, the table
    indexed by the verdict's claim, in the order given, with columns ``pairs``,
    :data:`FALSE_REPRODUCED`, :data:`FALSE_OPPOSITE` and :data:`FALSE_DIRECTIONAL`, and ``largest`` the largest false
    directional rate in it (``None`` when no verdict has the differences to resample)."""
    import pandas as pd

    rows = [
        {
            "claim": verdict.claim,
            "pairs": verdict.pairs,
            **resampled_null_rates(claim, verdict.differences, verdict.pairs, simulations=simulations, seed=seed),
        }
        for claim, verdict in judged
        if len(verdict.differences) >= 2
    ]
    table = pd.DataFrame(
        rows, columns=["claim", "pairs", FALSE_REPRODUCED, FALSE_OPPOSITE, FALSE_DIRECTIONAL]
    ).set_index("claim")
    return table, (float(table[FALSE_DIRECTIONAL].max()) if len(table) else None)
