"""How firmly a verdict stands: decided again with an interval that assumes nothing of the
differences' distribution (:func:`bounded_check`), and the seeds whose pair, left out alone, moves it
(:func:`seeds_it_rests_on`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ssa_book.verdicts.claim import MIN_PAIRS
from ssa_book.verdicts.intervals import METHOD_BOUNDED, bounded_mean_interval
from ssa_book.verdicts.rule import METHOD_BINARY, decide, no_effect
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.words import BETTER, NEGLIGIBLE, UNDECIDED, WORSE


def bounded_check(verdict: Verdict, bound: float) -> Verdict:
    """``verdict`` decided again with :func:`~ssa_book.verdicts.intervals.bounded_mean_interval` in place of its own interval,
    for a robustness check of verdicts on outcomes bounded by ``bound``: better, worse, no
    difference that matters or undecided by the thresholds of the table above, with no further
    guard (the interval holds at any sample size). A verdict without paired differences, or with
    fewer than :data:`~ssa_book.verdicts.claim.MIN_PAIRS`, is returned as it is."""
    if verdict.interval is None or len(verdict.differences) < MIN_PAIRS:
        return verdict
    low, high = bounded_mean_interval(verdict.differences, bound)
    effect, threshold = verdict.effect, verdict.threshold
    outcome = (
        BETTER
        if low > 0 and effect >= threshold
        else WORSE
        if high < 0 and effect <= -threshold
        else NEGLIGIBLE
        if no_effect(low, high, threshold, len(verdict.differences), MIN_PAIRS)
        else UNDECIDED
    )
    return dataclasses.replace(
        verdict,
        outcome=outcome,
        interval=(low, high),
        method=METHOD_BOUNDED,
        seeds_to_resolve=None,
        no_effect_pairs=MIN_PAIRS,
    )


def seeds_it_rests_on(verdict: Verdict, seeds: Sequence[int] | None = None) -> tuple[int, ...]:
    """The seeds (``seeds[i]`` for pair ``i``; the pairs' positions without ``seeds``) whose pair,
    left out alone, changes a decided verdict's outcome ("better", "worse" or "no difference that
    matters"): the verdict rests on each of them. The pairs that remain are judged by the same rule
    and threshold, with the fewest pairs lowered by the one left out, so that only the seed's data
    can move the outcome, not the count; empty for an open verdict or one with too few pairs to
    leave one out."""
    differences = np.asarray(verdict.differences, dtype=float)
    if verdict.outcome not in (BETTER, WORSE, NEGLIGIBLE) or len(differences) <= MIN_PAIRS:
        return ()
    if seeds is not None and len(seeds) != len(differences):
        raise ValueError(f"seeds must name each of the {len(differences)} pairs; got {len(seeds)}")
    left = np.stack([np.delete(differences, i) for i in range(len(differences))])
    outcomes = decide(
        left, verdict.threshold, verdict.method == METHOD_BINARY, min(verdict.no_effect_pairs, left.shape[1])
    )[3]
    moved = np.flatnonzero(outcomes != verdict.outcome)
    return tuple(int(seeds[i]) if seeds is not None else int(i) for i in moved)


def rests_on_words(seeds: Sequence[int]) -> str:
    """ "rests on seed 104" / "rests on seeds 104 and 117" / beyond three, "leaving out any one of 26
    seeds moves it" ("" for none)."""
    if not seeds:
        return ""
    if len(seeds) > 3:
        return f"leaving out any one of {len(seeds)} seeds moves it"
    listed = str(seeds[0]) if len(seeds) == 1 else ", ".join(map(str, seeds[:-1])) + f" and {seeds[-1]}"
    return f"rests on seed{'' if len(seeds) == 1 else 's'} {listed}"
