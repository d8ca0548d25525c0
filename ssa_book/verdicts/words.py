"""The book's words for verdicts: each outcome of a comparison, what it says of the paper's claim,
the words a page may use (and those it once used), and the one way each is written out ("SSA worse",
"the claim holds", "not run yet: 34 of 80 runs done", outcomes counted)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


# The outcomes of one comparison of a treatment with its control (SSA with softmax, say), in the
# words a page shows, the treatment named where the word has a direction (:meth:`~ssa_book.verdicts.verdict.Verdict.words`).
BETTER = "better"
WORSE = "worse"
NEGLIGIBLE = "no difference that matters"
UNDECIDED = "undecided"
TOO_FEW_SEEDS = "exploratory"  # fewer pairs than the rule decides from: an estimate, not a verdict
PREMISE_NOT_SHOWN = "premise not shown"
NOT_LEARNED = "not learned"
NOT_TESTED = "not tested"
# The outcomes only a claim of several parts has (:func:`~ssa_book.verdicts.families.combine`).
HOLDS_IN_PART = "holds in part"
DOES_NOT_HOLD = "does not hold"
MIXED = "mixed"  # parts decided both ways: one at least for the claim, one at least against it
OUTCOMES = (
    BETTER,
    WORSE,
    NEGLIGIBLE,
    UNDECIDED,
    TOO_FEW_SEEDS,
    PREMISE_NOT_SHOWN,
    NOT_LEARNED,
    NOT_TESTED,
    HOLDS_IN_PART,
    DOES_NOT_HOLD,
    MIXED,
)  # the order counts of them are listed in, after the counts themselves
# The outcomes that decide a part against the claim: the effect is absent or reversed.
AGAINST = (NEGLIGIBLE, WORSE, DOES_NOT_HOLD)
# The outcomes that decide a part for the claim.
FOR = (BETTER, HOLDS_IN_PART)
# The outcomes that decide nothing yet: more seeds would.
OPEN = (UNDECIDED, TOO_FEW_SEEDS)

# What each outcome says of the paper's claim (:func:`claim_word`): the claim holds, does not hold,
# holds in part, or is undecided; the comparison's own words stay beside it.
HOLDS = "holds"
CLAIM_WORDS = {
    BETTER: HOLDS,
    NEGLIGIBLE: DOES_NOT_HOLD,
    WORSE: DOES_NOT_HOLD,
    DOES_NOT_HOLD: DOES_NOT_HOLD,
    HOLDS_IN_PART: HOLDS_IN_PART,
    MIXED: MIXED,
    UNDECIDED: UNDECIDED,
    TOO_FEW_SEEDS: UNDECIDED,
    PREMISE_NOT_SHOWN: PREMISE_NOT_SHOWN,
    NOT_LEARNED: NOT_TESTED,
    NOT_TESTED: NOT_TESTED,
}
# The state of a comparison some of whose runs are not cached yet (:func:`not_run_yet`): no verdict
# is read from a part of its runs, and the page says how many there are.
NOT_RUN_YET = "not run yet"
# Every word a page may use for a verdict or a state (the glossary page defines each).
VOCABULARY = tuple(dict.fromkeys((*OUTCOMES, HOLDS, NOT_RUN_YET)))
# The words this book once used for verdicts; a page that shows one has a verdict outside the
# vocabulary (ssa_book.page_check).
RETIRED_WORDS = (
    "no effect at this scale",
    "inconclusive",
    "partly reproduced",
    "reproduced",
    "opposite",
    "too few seeds to decide",
    "premise absent",
)


def counted_words(labelled: Sequence[tuple[str, str]], of: str = "") -> str:
    """``(outcome, words)`` pairs (the words of :meth:`~ssa_book.verdicts.verdict.Verdict.label`) counted, most frequent first
    (ties in :data:`OUTCOMES` order): "SSA worse on 2 of 5{of}, no difference that matters on 2,
    undecided on 1"."""
    counts: dict[tuple[str, str], int] = {}
    for outcome, words in labelled:
        counts[(outcome, words)] = counts.get((outcome, words), 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], OUTCOMES.index(item[0][0])))
    return ", ".join(
        f"{words} on {n}{f' of {len(labelled)}{of}' if i == 0 else ''}" for i, ((_, words), n) in enumerate(ordered)
    )


def not_run_yet(cached: int, planned: int) -> str:
    """The one way a page says how far a comparison whose runs are not all cached is: "not run yet:
    34 of 80 runs" (``cached`` of the ``planned`` runs are in the cache)."""
    for name, value in (("cached", cached), ("planned", planned)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if planned == 0 or cached > planned:  # cached == planned: the comparison still lacks its control's runs
        raise ValueError(f"cached must lie between 0 and planned, and planned be at least 1; got {cached} of {planned}")
    return f"{NOT_RUN_YET}: {cached} of {planned} run{'' if planned == 1 else 's'} done"


def claim_word(outcome: str) -> str:
    """What ``outcome`` says of the paper's claim: "holds", "does not hold", "holds in part",
    "undecided", "premise not shown" or "not tested"."""
    if outcome not in CLAIM_WORDS:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}")
    return CLAIM_WORDS[outcome]


def claim_phrase(outcome: str) -> str:
    """:func:`claim_word` as a phrase a sentence can carry: "the claim holds", "the claim does not
    hold", "the claim holds in part"; the other words ("undecided", "premise not shown") as they are."""
    word = claim_word(outcome)
    return f"the claim {word}" if word in (HOLDS, DOES_NOT_HOLD, HOLDS_IN_PART) else word


def outcome_words(outcome: str, treatment: str = "SSA") -> str:
    """``outcome`` in the book's words, the direction explicit: "SSA better", "SSA worse", and the
    outcome itself otherwise. Without a ``treatment`` the verdict is on a statement rather than a
    comparison, and "better" and "worse" say whether it holds (:func:`claim_word`)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}")
    if outcome in (BETTER, WORSE):
        return f"{treatment} {outcome}" if treatment else claim_word(outcome)
    return outcome
