"""What verdicts read together say: whether a scorer's difference from softmax goes with its
starting slope or its form (:func:`form_or_slope`), and where a published effect lies against the
intervals (:func:`published_effect_sentence`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.words import NEGLIGIBLE, TOO_FEW_SEEDS, UNDECIDED, WORSE, BETTER


# What :func:`form_or_slope` can say of a scorer's difference from softmax.
SLOPE, FORM, NOT_SEPARATED, NO_DIFFERENCE = "its starting slope", "its form", "not separated", "no difference"


def form_or_slope(
    difference: Verdict, sharper: Verdict, versus_sharper: Verdict, gentler: Verdict | None = None
) -> str:
    """Whether a scorer's difference from softmax goes with its slope at zero at initialisation
    (a softmax of that slope is a softmax of sharper logits) or with its functional form, from
    paired verdicts: ``difference`` (the scorer vs softmax), ``sharper`` (a softmax with the
    scorer's starting slope vs softmax), ``versus_sharper`` (the scorer vs that sharper softmax),
    and optionally ``gentler`` (the scorer started at a smaller slope vs softmax).

    Each reading rests only on decided comparisons. :data:`SLOPE` when the facts a slope would
    produce all hold and are decided: the difference is decided (better or worse), the sharper
    softmax differs from softmax in the same way, the scorer is decided not to differ from the
    sharper softmax ("no difference that matters"), and, if given, the gentler start is decided not
    to differ from softmax. :data:`FORM` when the sharper softmax is decided not to differ from
    softmax and the scorer differs from it as it does from softmax. :data:`NO_DIFFERENCE` when the
    difference is neither better nor worse, and :data:`NOT_SEPARATED` otherwise: an open comparison
    never carries an attribution."""
    if difference.outcome not in (BETTER, WORSE):
        return NO_DIFFERENCE
    if (
        sharper.outcome == difference.outcome
        and versus_sharper.outcome == NEGLIGIBLE
        and (gentler is None or gentler.outcome == NEGLIGIBLE)
    ):
        return SLOPE
    if sharper.outcome == NEGLIGIBLE and versus_sharper.outcome == difference.outcome:
        return FORM
    return NOT_SEPARATED


def slope_sentence(
    reading: str,
    difference: Verdict,
    name: str = "SSA",
    gentler: str = "",
    open_facts: str = "",
    *,
    past: bool = False,
) -> str:
    """:func:`form_or_slope`'s ``reading`` of ``name``'s ``difference`` from softmax in one
    sentence; ``gentler``: what the gentler start showed, in words, when it was given;
    ``open_facts``: for a reading that does not separate them, the comparisons left open, with
    their numbers. ``past``: the reading an earlier rule gave, said as what that rule read ("the
    rule read SSA's deficit as going with its form, ..."), never as a mechanism today's rule
    states."""
    word = "deficit" if difference.outcome == WORSE else "advantage"
    if reading == SLOPE:
        if past:
            return (
                f"the rule read {name}'s {word} as going with its starting slope, not its form: a softmax with that "
                f"slope read the same" + (f", and {gentler}." if gentler else ".")
            )
        return (
            f"{name}'s {word} goes with its starting slope, not its form: a softmax with that slope does the same"
            + (f", and {gentler}." if gentler else ".")
        )
    if reading == FORM:
        # the sharper softmax's verdict in its own words: a difference below the threshold, not equality
        if past:
            return (
                f"the rule read {name}'s {word} as going with its form: a softmax with that slope read {NEGLIGIBLE} "
                f"from softmax, and {name} differed from it as from softmax."
            )
        return (
            f"{name}'s {word} goes with its form, not its starting slope: a softmax with that slope shows {NEGLIGIBLE} "
            f"from softmax, and {name} differs from it as it does from softmax."
        )
    if reading == NO_DIFFERENCE:
        said = ""
        if difference.interval is not None and difference.effect is not None:
            # the estimate in the paper's direction, and whose way its whole interval lies where it excludes 0
            side = "against" if difference.interval[1] < 0 else "for" if difference.interval[0] > 0 else ""
            said = f" ({difference.estimate()}" + (f", interval {side} {name}" if side else "") + ")"
        # the outcome in the glossary's words, never a softer synonym of "open"
        if difference.outcome == NEGLIGIBLE:
            return f"{name} {'read' if past else 'shows'} {NEGLIGIBLE} from softmax{said}: nothing to attribute."
        return f"{name}'s difference from softmax {'read' if past else 'is'} {difference.outcome}{said}: nothing to attribute."
    if reading == NOT_SEPARATED:
        return f"These comparisons {'did' if past else 'do'} not separate {name}'s form from its starting slope" + (
            f": {open_facts}." if open_facts else "."
        )
    raise ValueError(
        f"reading must be one of {SLOPE!r}, {FORM!r}, {NOT_SEPARATED!r}, {NO_DIFFERENCE!r}; got {reading!r}"
    )


def effect_placement(verdict: Verdict, effect: float) -> str | None:
    """Where a true ``effect`` (in the claim's direction, such as a published one) lies against
    ``verdict``'s interval: "above" (the interval excludes it), "inside" or "below"; None without
    an interval, or for an exploratory one (fewer pairs than the rule decides from: its interval
    decides nothing, this included)."""
    if verdict.interval is None or verdict.outcome == TOO_FEW_SEEDS:
        return None
    low, high = verdict.interval
    return "above" if effect > high else "below" if effect < low else "inside"


def published_effect_sentence(
    items: Mapping[str, tuple[Verdict, float]], units: str, effect: str = "the paper's gain", spec: str = "+.3f"
) -> str:
    """Where a published ``effect`` lies against each interval of ``items`` (``{name on the page:
    (verdict, the published effect)}``): above it (the interval excludes an effect of the
    published size), inside it, or below it; "" when no verdict has an interval."""
    placed: dict[str, list[str]] = {"above": [], "inside": [], "below": []}
    for name, (verdict, published) in items.items():
        where = effect_placement(verdict, published)
        if where is not None:
            low, high = verdict.interval
            placed[where].append(
                f"{name}: interval [{low:{spec}}, {high:{spec}}], the paper's {published:{spec.lstrip('+')}}"
            )
    parts = []
    if placed["above"]:
        parts.append(
            f"{effect} lies above our interval ({'; '.join(placed['above'])} {units}): at this scale the 95% interval "
            f"excludes an effect of the paper's size, not one of the threshold's"
        )
    if placed["inside"]:
        parts.append(f"{effect} lies inside our interval ({'; '.join(placed['inside'])} {units})")
    if placed["below"]:
        parts.append(f"our interval lies above {effect} ({'; '.join(placed['below'])} {units})")
    return "; ".join(parts)


def exploratory_effect_sentence(
    items: Mapping[str, tuple[Verdict, float]], units: str, effect: str = "the paper's gain"
) -> str:
    """Where a published ``effect`` lies against the intervals of ``items`` (``{name on the page:
    (verdict, the published effect)}``) when every one is exploratory (:func:`effect_placement`
    places none): the intervals decide nothing, so the placement is an estimate's, said as such.
    "" when an item is not exploratory or has no interval (:func:`published_effect_sentence` says those)."""
    if not items or any(verdict.outcome != TOO_FEW_SEEDS or verdict.interval is None for verdict, _ in items.values()):
        return ""
    where = {
        name: effect_placement(dataclasses.replace(verdict, outcome=UNDECIDED), published)
        for name, (verdict, published) in items.items()
    }
    name, (verdict, published) = next(iter(items.items()))
    counted = {place: sum(found == place for found in where.values()) for place in ("above", "inside", "below")}
    said = ", ".join(f"{place} {count} of the {len(items)} intervals" for place, count in counted.items() if count)
    pairs = sorted({found.pairs for found, _ in items.values()})
    return (
        f"every interval is exploratory ({'/'.join(map(str, pairs))} pairs), so none decides against {effect}; as estimates, "
        f"{effect} lies {said} ({name}: [{verdict.interval[0]:+.2f}, {verdict.interval[1]:+.2f}] {units}, the paper's "
        f"{published:.2f})"
    )
