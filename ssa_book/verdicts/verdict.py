"""A verdict (:class:`Verdict`): the outcome of one claim with the evidence behind it, and how a
page says it (its words, estimate and sentence; each direction word logged where
:data:`DIRECTION_LOG_ENV` names a file), the signed-rank p a direction needs, and why a verdict
withholds a direction (:func:`withheld_direction`)."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np

from ssa_book.verdicts.claim import MIN_PAIRS
from ssa_book.verdicts.intervals import METHOD_BOUNDED
from ssa_book.verdicts.rule import FALSE_DISCOVERY_RATE, MAX_SEEDS, METHOD, METHOD_BINARY, decide, signed_rank_p_values
from ssa_book.verdicts.words import (
    BETTER,
    MIXED,
    NEGLIGIBLE,
    NOT_LEARNED,
    NOT_TESTED,
    OPEN,
    OUTCOMES,
    PREMISE_NOT_SHOWN,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
    claim_phrase,
    counted_words,
    outcome_words,
)


def _number(value: float, spec: str) -> str:
    """``value`` formatted by ``spec``, a value that rounds to zero without a minus sign (PEP 682's
    "z"): "-0.000" would read as a direction the number does not have."""
    spec = spec.replace("+", "+z", 1) if "+" in spec else "z" + spec
    return format(value, spec)


# Where each direction word a verdict produces is logged (one JSON line each), when set: the book
# runner points it at a file per notebook, so that the built pages' direction words can be checked
# against the verdicts that said them (ssa_book.page_check.unbacked_directions).
DIRECTION_LOG_ENV = "SSA_DIRECTION_LOG"


def _said(words: str, verdict: "Verdict") -> str:
    """``words``, a direction ``verdict`` gives, logged with what the rule lacks for it (if
    anything) and the estimate it stands on, where :data:`DIRECTION_LOG_ENV` names a file."""
    path = os.environ.get(DIRECTION_LOG_ENV)
    if path:
        small = verdict.outcome == NEGLIGIBLE
        problems = () if small else verdict.direction_problems()
        entry = {
            "words": words,
            "problems": list(problems),
            "effect": verdict.effect,
            "interval": list(verdict.interval) if verdict.interval is not None else None,
        }
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry) + "\n")
    return words


def _interval_end(value: float, spec: str) -> str:
    """An interval's end formatted by ``spec`` with its sign kept where it rounds to zero: an end of
    -0.002 reads "-0.00", so that an interval that reaches below zero never reads as excluding it."""
    return format(value, spec) if value != 0 else _number(value, spec)


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The outcome of one claim, with the evidence behind it."""

    claim: str
    outcome: str
    effect: float | None = None  # mean paired difference, in the paper's direction
    interval: tuple[float, float] | None = None
    pairs: int = 0
    threshold: float | None = None
    units: str = ""
    method: str = METHOD
    differences: tuple[float, ...] = ()  # one per seed, in the paper's direction
    seeds_to_resolve: int | None = None  # undecided or too few seeds only; None if more than MAX_SEEDS
    no_effect_pairs: int = MIN_PAIRS  # the fewest pairs that may decide (no_effect_pairs of the claim)
    detail: str = ""  # premise not shown, not learned: the measurement; a combined verdict: the parts
    parts: tuple[tuple[str, "Verdict"], ...] = ()
    treatment: str = "SSA"  # the claim's treatment, named by :meth:`words`
    directions: tuple[str, str] = ()  # the claim's words for its two directions (Claim.directions)
    # Set by control_false_discoveries: the Benjamini-Hochberg adjusted p over the family judged
    # together, and the family's size (0: judged alone).
    adjusted_p: float | None = None
    family_size: int = 0
    uncontrolled: str | None = None  # the direction false-discovery control turned undecided (None: it changed nothing)

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}; got {self.outcome!r}")

    def evidence(self) -> str:
        """The evidence in words, without the claim or the outcome: the effect, its interval and
        pairs, and for an open verdict the pairs that would decide it; the measurement
        (premise not shown) or the parts' outcomes (a combined verdict) otherwise."""
        if self.interval is None or self.effect is None:
            return self.detail or "no paired seeds"
        low, high = self.interval
        units = f" {self.units}" if self.units else ""
        text = (
            f"effect {self.effect:+.3g}{units} in the paper's direction, 95% interval [{low:+.3g}, {high:+.3g}] "
            f"over {self.pairs} paired seed{'' if self.pairs == 1 else 's'}, threshold {self.threshold:.3g}"
        )
        if self.outcome == TOO_FEW_SEEDS:
            minimum = max(MIN_PAIRS, self.no_effect_pairs)
            text += f"; exploratory: the rule decides from {minimum} pairs on"
            if self.seeds_to_resolve and self.seeds_to_resolve > minimum:
                text += f", and about {self.seeds_to_resolve:,} would decide it at the observed spread"
        elif self.uncontrolled is not None:
            text += (
                f"; its direction does not survive false-discovery control over the {self.family_size} comparisons "
                f"judged with it (adjusted p = {self.adjusted_p:.2g})"
            )
        elif self.outcome == UNDECIDED:
            if self.pairs < 2:
                text += f"; one pair has no spread, and the rule needs {MIN_PAIRS}"
            elif self.seeds_to_resolve:
                text += f"; about {self.seeds_to_resolve:,} pairs would decide it at the observed spread"
            else:
                text += f"; more than {MAX_SEEDS:,} pairs would be needed at the observed spread"
        return text

    def estimate(self, spec: str = "+.2f") -> str:
        """The effect with its 95% interval, each formatted by ``spec``: "+0.17 [-0.27, -0.07]"
        ("" when there is no paired evidence)."""
        if self.interval is None or self.effect is None:
            return ""
        return f"{_number(self.effect, spec)} [{_interval_end(self.interval[0], spec)}, {_interval_end(self.interval[1], spec)}]"

    def words(self) -> str:
        """The outcome in the book's words, direction explicit: "SSA better", "SSA worse", "no
        difference that matters", "undecided (about 14 seeds would decide)", "too few seeds to
        decide (the rule needs 36)", "premise not shown", "not learned", "not tested"; a claim of
        several parts: "holds in part", "does not hold"."""
        text = self.label()
        if self.uncontrolled is not None:
            text += f" (its direction does not survive false-discovery control: adjusted p = {self.adjusted_p:.2g})"
        elif self.outcome == UNDECIDED and self.interval is not None and (needed := self.pairs_to_decide()):
            text += (
                f" (about {needed} seeds would decide)" if needed[0].isdigit() else f" ({needed} seeds would decide)"
            )
        elif self.outcome == TOO_FEW_SEEDS and not self.parts:
            text = text.removesuffix(")") + f"; the rule decides from {max(MIN_PAIRS, self.no_effect_pairs)})"
        elif self.outcome == MIXED and self.parts:
            text += f" ({self.tally()})"
        return text

    def label(self) -> str:
        """The outcome in the book's words without what would decide it ("SSA better", "too few
        seeds to decide"), for a table that has a column of that."""
        text = self.word()
        if self.outcome == TOO_FEW_SEEDS and not self.parts:
            text += f" ({self.pairs} pair{'' if self.pairs == 1 else 's'})"
        small = self.small_direction()
        return f"{text}; {small}" if small else text

    def with_evidence(self) -> str:
        """The outcome's word (and a small direction) with its :meth:`evidence`, which says the pairs,
        and for an open verdict what would decide it, once: "exploratory (effect +0.5 points in the
        paper's direction, 95% interval [...] over 8 paired seeds, ...; exploratory: the rule decides
        from 40 pairs on)"."""
        small = self.small_direction()
        return f"{self.word()}{f'; {small}' if small else ''} ({self.evidence()})"

    def word(self) -> str:
        """The outcome's word alone ("SSA worse", "no difference that matters", "exploratory"), as
        tallies count it."""
        if self.directions and self.outcome in (BETTER, WORSE):
            return _said(self.directions[self.outcome == WORSE], self)
        word = outcome_words(self.outcome, self.treatment)
        return _said(word, self) if self.outcome in (BETTER, WORSE) and self.treatment else word

    def direction_problems(self) -> tuple[str, ...]:
        """What the rule lacks for this verdict's direction ("better" or "worse"), re-applied to the
        verdict's own paired differences: empty when the rule gives that direction again and, where
        the verdict was judged in a family, the direction survives false-discovery control; for a
        claim of several parts, when every part is such a direction. The check that every
        direction word a page shows stands on a decided verdict (ssa_book.page_check) reads it."""
        if self.outcome not in (BETTER, WORSE):
            return (f"its outcome is {self.outcome!r}, not a direction",)
        if self.parts:
            return tuple(f"{name}: {problem}" for name, part in self.parts for problem in part.direction_problems())
        if self.interval is None or self.threshold is None or len(self.differences) < MIN_PAIRS:
            return (f"no paired differences the rule decides from ({len(self.differences)} pairs)",)
        differences = np.asarray([self.differences], dtype=float)
        outcome = str(decide(differences, self.threshold, self.method == METHOD_BINARY, self.no_effect_pairs)[3][0])
        problems = (
            []
            if outcome == self.outcome
            else [f"the rule re-applied to its {len(self.differences)} pairs says {outcome!r}"]
        )
        if self.adjusted_p is not None and self.adjusted_p >= FALSE_DISCOVERY_RATE:
            problems.append(f"its adjusted p {self.adjusted_p:.2g} does not survive false-discovery control")
        return tuple(problems)

    def small_direction(self) -> str:
        """For "no difference that matters" whose interval also excludes zero: the small decided
        direction ("SSA slightly worse"); "" otherwise."""
        if self.outcome != NEGLIGIBLE or self.interval is None or self.interval[0] <= 0 <= self.interval[1]:
            return ""
        # the tests a direction word needs: the signed-rank test, and control of false discoveries
        # where the verdict was judged in a family
        p = self.adjusted_p if self.adjusted_p is not None else signed_rank_p(self)
        if p is None or p >= FALSE_DISCOVERY_RATE:
            return ""
        worse = self.interval[1] < 0
        if self.directions:
            return f"slightly: {_said(self.directions[worse], self)}"
        return _said(f"{self.treatment} slightly {'worse' if worse else 'better'}", self) if self.treatment else ""

    def pairs_to_decide(self) -> str:
        """For a table: the pairs that would decide an open verdict (undecided, or too few seeds
        to decide) at the observed spread ("" when it is decided)."""
        if self.outcome not in OPEN or self.uncontrolled is not None or self.method == METHOD_BOUNDED:
            return ""  # decided; open by false-discovery control, not for want of pairs; or not estimated
        if self.pairs < 2:
            return f"≥ {MIN_PAIRS}"
        return f"{self.seeds_to_resolve:,}" if self.seeds_to_resolve is not None else f"> {MAX_SEEDS:,}"

    def tally(self) -> str:
        """The parts' outcomes counted in the book's words, most frequent first: "SSA worse on 2 of
        5, no difference that matters on 2, undecided on 1" ("" for a verdict without parts)."""
        return counted_words([(part.outcome, part.word()) for _, part in self.parts])

    def sentence(self) -> str:
        """One plain sentence: the outcome and the evidence, the pairs said once (:meth:`with_evidence`)."""
        if self.outcome in (NOT_TESTED, NOT_LEARNED):
            return f"{self.claim}: {self.outcome}" + (f" ({self.detail})." if self.detail else ".")
        if self.outcome == PREMISE_NOT_SHOWN:
            return f"{self.claim}: {PREMISE_NOT_SHOWN} ({self.detail})."
        if self.parts:
            evidence = f"; {self.evidence()}" if self.interval is not None else ""
            return f"{self.claim}: {claim_phrase(self.outcome)} ({self.tally()}){evidence}."
        if self.interval is None:
            return f"{self.claim}: {self.words()}" + (f" ({self.detail})." if self.detail else ".")
        return f"{self.claim}: {self.with_evidence()}."


def withheld_direction(verdict: Verdict) -> str:
    """Why ``verdict`` says no direction although its interval excludes 0: the step of the rule its
    own numbers fail. For "undecided": its estimate short of the threshold, the signed-rank test, or
    control of false discoveries over the comparisons judged with it; for "no difference that
    matters", the tests a small direction needs (:meth:`Verdict.small_direction`). "" for any other
    verdict, one whose interval reaches 0, or one that says a direction."""
    if (
        verdict.outcome not in (UNDECIDED, NEGLIGIBLE)
        or verdict.interval is None
        or verdict.effect is None
        or verdict.interval[0] <= 0 <= verdict.interval[1]
        or verdict.small_direction()
    ):
        return ""
    raw = signed_rank_p(verdict)
    if verdict.outcome == NEGLIGIBLE:
        if verdict.adjusted_p is not None and raw is not None and raw < FALSE_DISCOVERY_RATE:
            return (
                f"its interval excludes 0, but no direction is said: signed-rank p = {raw:.2g}, adjusted p = "
                f"{verdict.adjusted_p:.2g} over the {verdict.family_size} comparisons judged with it, and a direction needs "
                f"both below {FALSE_DISCOVERY_RATE:g}"
            )
        return (
            f"its interval excludes 0, but no direction is said: signed-rank p = {raw:.2g}, and a direction needs it below "
            f"{FALSE_DISCOVERY_RATE:g}"
        )
    if abs(verdict.effect) < verdict.threshold:
        return f"its interval excludes 0, but its estimate {verdict.effect:+.3g} is short of the threshold {verdict.threshold:g}"
    reached = "its interval excludes 0 and its estimate reaches the threshold, but"
    if verdict.uncontrolled is not None:
        return (
            f"{reached} the direction fails false-discovery control: adjusted p = {verdict.adjusted_p:.2g} over the "
            f"{verdict.family_size} comparisons judged with it, and a direction needs it below {FALSE_DISCOVERY_RATE:g}"
        )
    return f"{reached} the signed-rank test does not agree: p = {raw:.2g}, and a direction needs it below {FALSE_DISCOVERY_RATE:g}"


def signed_rank_p(verdict: Verdict) -> float | None:
    """The two-sided p-value of the Wilcoxon signed-rank test that the rule requires for a
    direction, on ``verdict``'s paired differences; ``None`` with fewer than :data:`~ssa_book.verdicts.claim.MIN_PAIRS`."""
    if len(verdict.differences) < MIN_PAIRS:
        return None
    return float(signed_rank_p_values(np.asarray([verdict.differences], dtype=float))[0])
