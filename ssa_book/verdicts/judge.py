"""Judging a claim: the verdict from outcomes paired by seed (:func:`judge`), the verdicts that
need no pairs (premise not shown, not learned, not tested), and the :func:`judged` blocks that record
every verdict judged within them."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from ssa_book.collectors import Collector
from ssa_book.verdicts.claim import MIN_PAIRS, Claim, no_effect_pairs
from ssa_book.verdicts.intervals import all_equal, binary_interval, t_interval
from ssa_book.verdicts.rule import METHOD, METHOD_BINARY, decide, paired_differences, pairs_to_resolve, seeds_to_resolve
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.words import NOT_LEARNED, NOT_TESTED, OPEN, PREMISE_NOT_SHOWN, TOO_FEW_SEEDS


def pair_by_seed(
    treatment: Mapping[int, float], control: Mapping[int, float]
) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    """``(seeds, treatment values, control values)`` for the seeds both sides have, in increasing
    order: the inputs of :func:`judge`. A seed only one side has has no pair and is left out."""
    seeds = tuple(sorted(set(treatment) & set(control)))
    return (
        seeds,
        np.array([treatment[s] for s in seeds], dtype=float),
        np.array([control[s] for s in seeds], dtype=float),
    )


@dataclasses.dataclass(frozen=True)
class Judged:
    """One record of a :func:`judged` block: ``kind`` "judged" (a verdict :func:`judge` gave, with
    its ``claim``) or "controlled" (a verdict :func:`~ssa_book.verdicts.families.control_false_discoveries` judged within its
    family, and ``after``, the verdict as the family reads it: a direction that does not survive
    turned undecided, the adjusted p set)."""

    kind: str
    verdict: Verdict
    claim: Claim | None = None
    after: Verdict | None = None


_JUDGED: Collector[Judged] = Collector()


def judged() -> contextlib.AbstractContextManager[list[Judged]]:
    """Within: every verdict :func:`judge` gives, and every verdict
    :func:`~ssa_book.verdicts.families.control_false_discoveries` judges within a family, is appended as a :class:`Judged`, so that a
    page can list what a change of the rule moved (ssa_book.analysis_changes) or measure the rule
    on what a chapter judged (ssa_book.error_rates)."""
    return _JUDGED.collecting()


record = _JUDGED.add


def judge(claim: Claim, treatment: Sequence[float], control: Sequence[float], *, resolve: bool = True) -> Verdict:
    """The verdict on ``claim`` from outcomes paired by seed (``treatment[i]`` and ``control[i]``
    from seed ``i``); recorded in every open :func:`judged` block."""
    verdict = judge_unrecorded(claim, treatment, control, resolve=resolve)
    if verdict.differences:
        record(Judged("judged", verdict, claim=claim))
    return verdict


def judge_unrecorded(
    claim: Claim, treatment: Sequence[float], control: Sequence[float], *, resolve: bool = True
) -> Verdict:
    """The verdict on ``claim`` from outcomes paired by seed (``treatment[i]`` and ``control[i]``
    from seed ``i``). Fewer than :data:`~ssa_book.verdicts.claim.MIN_PAIRS` pairs: too few seeds to decide (the interval, if any, is
    reported).
    ``resolve=False`` skips :func:`~ssa_book.verdicts.rule.seeds_to_resolve` (simulations)."""
    differences = paired_differences(claim, treatment, control)
    common = dict(
        claim=claim.name,
        pairs=len(differences),
        threshold=claim.threshold,
        units=claim.units,
        differences=tuple(float(d) for d in differences),
        method=METHOD_BINARY if claim.binary else METHOD,
        no_effect_pairs=no_effect_pairs(claim),
        treatment=claim.treatment,
        directions=claim.directions,
    )
    if len(differences) == 0:
        return not_tested(claim)
    if len(differences) < MIN_PAIRS:
        effect = float(differences.mean())
        if claim.binary:
            interval = tuple(float(end[0]) for end in binary_interval(differences[None, :]))
            needed = pairs_to_resolve(claim, differences) if resolve else MIN_PAIRS
            return Verdict(outcome=TOO_FEW_SEEDS, effect=effect, interval=interval, seeds_to_resolve=needed, **common)
        spread = float(differences.std(ddof=1)) if len(differences) > 1 and not all_equal(differences) else 0.0
        interval = (
            _within_bound(claim, *(float(end) for end in t_interval(differences)))
            if spread > 0
            else (-math.inf, math.inf)
        )
        needed = (
            seeds_to_resolve(effect, spread, claim.threshold, no_effect_from=no_effect_pairs(claim))
            if spread > 0 and resolve
            else MIN_PAIRS
        )
        return Verdict(outcome=TOO_FEW_SEEDS, effect=effect, interval=interval, seeds_to_resolve=needed, **common)
    effects, lows, highs, outcomes = decide(differences[None, :], claim.threshold, claim.binary, no_effect_pairs(claim))
    effect, outcome = float(effects[0]), str(outcomes[0])
    needed = pairs_to_resolve(claim, differences) if outcome in OPEN and resolve else None
    return Verdict(
        outcome=outcome,
        effect=effect,
        interval=_within_bound(claim, float(lows[0]), float(highs[0])),
        seeds_to_resolve=needed,
        **common,
    )


def _within_bound(claim: Claim, low: float, high: float) -> tuple[float, float]:
    """``(low, high)`` intersected with the differences ``claim`` allows (:attr:`~ssa_book.verdicts.claim.Claim.bound`); the
    decision is taken before, and no decision changes: an end beyond the bound decides nothing."""
    if claim.bound is None:
        return low, high
    return max(low, -claim.bound), min(high, claim.bound)


def premise_not_shown(claim: Claim, measurement: str) -> Verdict:
    """The chapter's measurement did not show the mechanism ``claim`` is about in any seed;
    ``measurement`` says what was measured, against what cut, and what was found."""
    if not measurement.strip():
        raise ValueError("measurement must say what was measured and what it found")
    return Verdict(
        claim.name,
        PREMISE_NOT_SHOWN,
        threshold=claim.threshold,
        units=claim.units,
        detail=measurement,
        treatment=claim.treatment,
    )


def learning_failure(learned: Mapping[str, bool], evidence: str) -> str | None:
    """Why a comparison tests nothing, when a model of it did not learn its task: "softmax and SSA
    did not learn the task (``evidence``)"; ``None`` when every model in ``learned`` (name ->
    whether it learned) did. Every chapter decides "not learned" through this and
    :func:`not_learned`; what counts as learning (``evidence``) is the chapter's."""
    if not learned:
        raise ValueError("learned must name at least one model")
    if not evidence.strip():
        raise ValueError("evidence must say what shows whether a model learned")
    failed = [name for name, ok in learned.items() if not ok]
    if not failed:
        return None
    names = failed[0] if len(failed) == 1 else ", ".join(failed[:-1]) + " and " + failed[-1]
    return f"{names} did not learn the task ({evidence})"


def not_learned(claim: Claim, reason: str) -> Verdict:
    """A model of the comparison did not learn the task, so the comparison tests nothing;
    ``reason`` says which, and what showed it."""
    if not reason.strip():
        raise ValueError("reason must say which model did not learn, and what showed it")
    return Verdict(
        claim.name, NOT_LEARNED, threshold=claim.threshold, units=claim.units, detail=reason, treatment=claim.treatment
    )


def not_tested(claim: Claim) -> Verdict:
    return Verdict(claim.name, NOT_TESTED, threshold=claim.threshold, units=claim.units, treatment=claim.treatment)
