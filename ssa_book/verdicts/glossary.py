"""What each verdict word means, for the glossary page: one meaning per word of
:data:`~ssa_book.verdicts.words.VOCABULARY`, and the glossary as a table."""

from __future__ import annotations

from ssa_book.verdicts.claim import MIN_PAIRS
from ssa_book.verdicts.words import (
    BETTER,
    DOES_NOT_HOLD,
    HOLDS,
    HOLDS_IN_PART,
    MIXED,
    NEGLIGIBLE,
    NOT_LEARNED,
    NOT_RUN_YET,
    NOT_TESTED,
    OUTCOMES,
    PREMISE_NOT_SHOWN,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
    claim_word,
)


# What each word means, for the glossary page: the comparison's words, then the claim's.
MEANINGS = {
    f"X {BETTER}": "The 95% interval of the paired difference excludes zero on X's side, the Wilcoxon signed-rank test "
    "agrees at 5%, the mean gain reaches the claim's threshold, and, where the chapter judges a family "
    "of comparisons, the direction survives Benjamini-Hochberg control of false discoveries at 5%.",
    f"X {WORSE}": "The mirror image of X better: the 95% interval excludes zero on the control's side, the Wilcoxon "
    "signed-rank test agrees at 5%, the mean loss reaches the claim's threshold, and the direction "
    "survives the same control of false discoveries.",
    NEGLIGIBLE: "The 95% interval lies within plus or minus the threshold: whatever the sign of the difference, it is "
    "smaller than the smallest effect that would matter. Where the interval also excludes zero, the small "
    'direction is said beside it where the signed-rank test and control of false discoveries agree: "no '
    'difference that matters; SSA slightly worse".',
    UNDECIDED: "Enough pairs to decide, but the interval neither excludes zero nor lies within the threshold; the number "
    "beside it is about how many paired seeds would decide, if the observed mean and spread held.",
    TOO_FEW_SEEDS: "Fewer pairs than the rule decides from ({min_pairs}, or for outcomes that flip from seed to seed the number "
    "that would reveal flips frequent enough to matter): the estimate and its interval are shown with the "
    'pairs, "exploratory (10 pairs)", and no verdict word.',
    PREMISE_NOT_SHOWN: "The chapter's measurement of the mechanism the claim is about stayed below its cut in every "
    "seed, so the claim was not put to the test; the measurement, the cut and the seeds are given. "
    "With few seeds and a cut chosen after reading, this says the mechanism was not shown, not that "
    "it cannot occur.",
    NOT_LEARNED: "A model of the comparison did not learn the task in distribution, so a shift tests nothing.",
    NOT_TESTED: "No paired outcomes: the experiment was never run at this profile, or none of its results is in the cache.",
    NOT_RUN_YET: "Some of the runs a comparison needs are not in the cache yet, so nothing is judged from the others; "
    'the count says how far it is: "not run yet: 34 of 80 runs done".',
    HOLDS: "What the book found of the paper's claim: X better (on every part of a claim of several parts).",
    DOES_NOT_HOLD: "X worse, or no difference that matters; for a claim of several parts, one part at least decided "
    "against the claim and none for it.",
    HOLDS_IN_PART: "A claim of several parts whose parts differ, one at least with X better and none decided against "
    "the claim (the others open).",
    MIXED: "A claim of several parts decided both ways: one part at least with X better, one at least decided against "
    "the claim; the parts are counted beside the word.",
}


def glossary_frame():
    """The glossary as a table: each word, what it says of the paper's claim, and what it means."""
    import pandas as pd

    rows = []
    for word, meaning in MEANINGS.items():
        outcome = word.removeprefix("X ")
        claim = claim_word(outcome) if outcome in OUTCOMES else NOT_TESTED if outcome == NOT_RUN_YET else word
        rows.append({"word": word, "the paper's claim": claim, "meaning": meaning.format(min_pairs=MIN_PAIRS)})
    return pd.DataFrame(rows)
