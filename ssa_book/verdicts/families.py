"""Verdicts taken together: a family of comparisons judged together, with false discoveries
controlled (Benjamini-Hochberg), and a claim of several parts given one word (:func:`combine`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from ssa_book.verdicts.judge import Judged, record
from ssa_book.verdicts.rule import FALSE_DISCOVERY_RATE
from ssa_book.verdicts.verdict import Verdict, signed_rank_p
from ssa_book.verdicts.words import (
    AGAINST,
    BETTER,
    DOES_NOT_HOLD,
    FOR,
    HOLDS_IN_PART,
    MIXED,
    NOT_LEARNED,
    NOT_TESTED,
    PREMISE_NOT_SHOWN,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
)


def false_discoveries(family: Sequence[Verdict]) -> list[dict]:
    """Benjamini-Hochberg control of false discoveries over a ``family`` of verdicts judged
    together (``scipy.stats.false_discovery_control``): for each verdict with a
    :func:`~ssa_book.verdicts.verdict.signed_rank_p`, ``{"p": raw, "adjusted p": BH-adjusted within the family, "survives":
    whether a decided direction ("better" or "worse") keeps its adjusted p below
    :data:`~ssa_book.verdicts.rule.FALSE_DISCOVERY_RATE`}``; ``None`` for a verdict without one. Every verdict of the
    family that could have been a discovery counts, decided or not; an exploratory one (fewer
    pairs than the rule decides from) could not, and is left out."""
    from scipy import stats

    raw = [signed_rank_p(verdict) if verdict.outcome != TOO_FEW_SEEDS else None for verdict in family]
    tested = [i for i, p in enumerate(raw) if p is not None]
    adjusted = stats.false_discovery_control([raw[i] for i in tested], method="bh") if tested else []
    found: list[dict | None] = [None] * len(family)
    for i, q in zip(tested, adjusted):
        found[i] = {
            "p": raw[i],
            "adjusted p": float(q),
            "survives": family[i].outcome in (BETTER, WORSE) and float(q) < FALSE_DISCOVERY_RATE,
        }
    return found


def control_false_discoveries(family: Sequence[Verdict]) -> list[Verdict]:
    """``family``, judged together, with false discoveries controlled in the words: a decided
    direction ("better" or "worse") whose Benjamini-Hochberg adjusted p-value within the family
    (:func:`false_discoveries`) is not below :data:`~ssa_book.verdicts.rule.FALSE_DISCOVERY_RATE` reads "undecided", its
    estimate unchanged. Every tested verdict carries its adjusted p and the family's size
    (:attr:`~ssa_book.verdicts.verdict.Verdict.adjusted_p`); the others come back as they were."""
    controlled = []
    tested = false_discoveries(family)
    size = sum(found is not None for found in tested)
    for verdict, found in zip(family, tested):
        if found is None:
            controlled.append(verdict)
            continue
        changed = verdict.outcome in (BETTER, WORSE) and not found["survives"]
        controlled.append(
            dataclasses.replace(
                verdict,
                outcome=UNDECIDED if changed else verdict.outcome,
                adjusted_p=found["adjusted p"],
                family_size=size,
                uncontrolled=verdict.outcome if changed else None,
            )
        )
        # every member, changed or not: its words as the family reads them (a small direction
        # beside "no difference that matters" also needs the adjusted p)
        record(Judged("controlled", verdict, after=controlled[-1]))
    return controlled


def combine(name: str, parts: Mapping[str, Verdict]) -> Verdict:
    """One verdict for a claim of several parts, naming each part's outcome and counting them
    (:meth:`~ssa_book.verdicts.verdict.Verdict.tally`): their common outcome if they agree; else "mixed" when parts are
    decided both ways (one at least for the claim, :data:`~ssa_book.verdicts.words.FOR`, one at least against it,
    :data:`~ssa_book.verdicts.words.AGAINST`), so that an adverse part is never folded under a favourable word; else "holds
    in part" when one part at least supports the claim and the others are open; else "does not
    hold" when one part at least is decided against it and none for it; else, in this order, "undecided", "too few seeds to decide", "premise
    absent", "not learned" or "not tested", whichever a part has: an open part never folds into
    "no difference that matters". The parts' treatment (and words for a trend's directions), when
    they share them, name the combined verdict's direction ("sparsemax better" where every part
    has sparsemax better)."""
    if not parts:
        raise ValueError("parts must hold at least one verdict")
    outcomes = {verdict.outcome for verdict in parts.values()}
    detail = "; ".join(f"{part}: {verdict.label()}" for part, verdict in parts.items())
    supporting, against = outcomes & set(FOR), outcomes & set(AGAINST)
    if len(outcomes) == 1:
        outcome = outcomes.pop()
    elif (supporting and against) or MIXED in outcomes:
        outcome = MIXED
    elif supporting:
        outcome = HOLDS_IN_PART
    elif against:
        outcome = DOES_NOT_HOLD
    else:
        outcome = next(
            found
            for found in (UNDECIDED, TOO_FEW_SEEDS, PREMISE_NOT_SHOWN, NOT_LEARNED, NOT_TESTED)
            if found in outcomes
        )
    shared = {}
    for field in ("treatment", "directions"):
        values = {getattr(verdict, field) for verdict in parts.values()}
        if len(values) == 1:
            shared[field] = values.pop()
    return Verdict(name, outcome, detail=detail, parts=tuple(parts.items()), **shared)
