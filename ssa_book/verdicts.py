r"""One verdict rule for every claim of the paper the book tests.

A claim is tested by a paired design: seed :math:`i` trains both models (SSA and softmax, say)
on the same batches, and gives one outcome each, :math:`t_i` and :math:`c_i`. The effect is the
mean paired difference in the paper's direction,

.. math:: d_i = s\,(t_i - c_i), \qquad \hat\delta = \frac1N \sum_i d_i,

with :math:`s = +1` when the paper says the outcome grows (accuracy) and :math:`s = -1` when it
says it shrinks (an error). Its 95% interval is the paired :math:`t` interval
(``scipy.stats.ttest_rel``), :math:`\hat\delta \pm t_{N-1,\,0.975}\, \hat\sigma_d / \sqrt N`.
Outcomes that are all-or-nothing per seed (an in-context learner generalises or fails) are far
from normal, and with few pairs the :math:`t` interval is then overconfident, so two guards
hold: no claim is decided by fewer than :data:`MIN_PAIRS` pairs, and "better" or
"worse" also needs the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``) at 5%.
An outcome that is 0 or 1 per seed (a seed generalises or it does not) is declared binary
(``Claim(binary=True)``), and its interval is Tango's score interval for a difference of paired
proportions (Tango, Statistics in Medicine 17:891, 1998), one of the intervals Fagerland, Lydersen
and Laake recommend (Statistics in Medicine 33:2850, 2014): with :math:`g` pairs where only the
treatment succeeds and :math:`l` where only the control does, it holds the :math:`\delta` with

.. math:: \left| \frac{g - l - N\delta}{\sqrt{N\,(2\tilde p_l + \delta(1 - \delta))}} \right| \le z_{0.975},

where :math:`\tilde p_l` is the maximum-likelihood rate of control-only successes given
:math:`\delta`. The :math:`t` interval of 0/1 differences is a point when every pair agrees,
and would call ten agreeing pairs "no difference" at any threshold; Tango's is then
:math:`\pm z^2 / (N + z^2)`, :math:`\pm 0.28` with ten pairs.
A claim whose outcome can flip from seed to seed (an in-context learner generalises or fails)
declares the largest paired difference one flip can make, :math:`F` (``Claim(largest_flip=1)`` for
an error in [0, 1]). Pairs that show no flip give a narrow :math:`t` interval, yet flips in a share
:math:`\tau / F` of the seeds, enough to move the mean by the threshold, go unseen in all
:math:`N` pairs with probability :math:`(1 - \tau/F)^N`; so "no difference that matters" also needs
:math:`(1 - \tau/F)^N \le 0.025` (:func:`no_effect_pairs`: 36 pairs for :math:`\tau = 0.1`,
:math:`F = 1`), and with fewer pairs such a claim has too few seeds to decide. The same pairs are
needed for "better" and "worse": with fewer, whether one seed flips decides the sign, and
under nulls resampled from the book's own flip-prone outcomes (:func:`resampled_null_rates`) the
:math:`t` interval gave a false direction up to 30% of the time at 6 to 10 pairs, against at most
5% from 36 pairs on. Both directions and "no difference" thus share one pair minimum.
Each claim declares, before any result is read, a practical threshold :math:`\tau > 0`: the
smallest effect that would matter, with the reason for its size. A comparison of a treatment X
(SSA, say) with its control (softmax) then reads, in the book's one vocabulary:

===========================  ===================================================================
X better                     the interval excludes 0 on the paper's side and :math:`\hat\delta \ge \tau`
X worse                      the interval excludes 0 on the other side and :math:`\hat\delta \le -\tau`
no difference that matters   the interval lies within :math:`(-\tau, \tau)`; when it also excludes 0,
                             the small decided direction is said beside it ("X slightly worse")
undecided                    anything else; :attr:`Verdict.seeds_to_resolve` says about how many
                             pairs would decide it if the observed mean and spread held
too few seeds to decide      fewer pairs than the rule decides from (:data:`MIN_PAIRS`, or
                             :func:`no_effect_pairs` for outcomes that flip); the estimate is shown,
                             never a word that sounds like a finding
premise not shown            the measurement of the mechanism stayed below its cut in every seed
not learned                  a model of the comparison did not learn the task, so it tests nothing
not tested                   no paired outcomes
===========================  ===================================================================

(for outcomes that flip, every decision needs :func:`no_effect_pairs` pairs). The rule is
symmetric: "better" and "worse" each need the interval to exclude 0 and the estimate to reach the
threshold on their side, and the three decided words exclude each other, so no word takes
precedence over another. A direction word also needs the signed-rank test, and, where a chapter
judges a family of comparisons together, its Benjamini-Hochberg adjusted p-value below
:data:`FALSE_DISCOVERY_RATE` (:func:`control_false_discoveries`); a direction that fails either
reads "undecided".

What each outcome says of the paper's claim (:func:`claim_word`): "X better" says it **holds**;
"X worse" and "no difference that matters" say it **does not hold**; "undecided" and "too few seeds
to decide" leave it **undecided**. A claim of several parts (:func:`combine`) **holds in part** when
its parts differ and one at least supports it; it **does not hold** when they differ, none supports
it and one at least is decided against it: an adverse part is never folded into a milder word, and
an open part never into "no difference that matters". Parts that differ with none decided leave it
undecided (or premise not shown, not learned, not tested, in that order).

The :math:`t` interval stays an approximation for bounded, skewed differences. As a check that
assumes nothing about their distribution, :func:`bounded_check` decides a verdict again with
:func:`bounded_mean_interval`, an interval valid at any number of pairs for differences known to
lie in :math:`[-B, B]` (Waudby-Smith and Ramdas's betting interval); its price is width: 40 pairs
that agree exactly give about :math:`\pm 0.16\,B`. It is a robustness check, not the rule.

:func:`false_reproduction_rate` and :func:`power` measure the rule by simulation: with no
effect, "better" comes out at most 2.5% of the time for normal differences (one side of a
95% interval), and the tests check it stays under 5% for the all-or-nothing outcomes that
in-context learners give (a seed generalises or it does not).

Both draw the two arms from one distribution chosen by the caller. :func:`resampled_null_rates`
draws the null from a study's own paired differences instead, so that it keeps their shape (skew,
bounds, seeds that flip): with observed differences :math:`d_1, \dots, d_n` in the paper's
direction, recentred to :math:`e_i = d_i - \bar d` (mean exactly 0, the observed spread and shape),
each of :math:`S` simulated studies draws :math:`N` pairs :math:`D^*_1, \dots, D^*_N` independently
and uniformly from :math:`\{e_1, \dots, e_n\}` (resampling with replacement) and is judged by
:func:`_decide`, the code that judges the real study. The false "better" rate is the share of
the :math:`S` studies called "better" (the treatment better where it is not), the false
"worse" rate the share called "worse", and their sum the rate of a false directional
decision, about 5% for normal differences (2.5% each side of a 95% interval). Each rate :math:`r`
has Monte Carlo standard error :math:`\sqrt{r(1-r)/S} \le 0.011` at :data:`SIMULATIONS`. A sample
of :math:`n` differences shows flips at most at its own share of them: the measurement is only as
flip-prone as the sample it resamples.
For a binary claim the differences are :math:`-1, 0, +1`, and recentring would leave values that
no paired 0/1 outcomes give (Tango's interval counts gains and losses); the null keeps instead the
observed share :math:`p` of discordant pairs (those that differ) and makes a gain and a loss equally
likely, :math:`P(D^* = +1) = P(D^* = -1) = p/2`, :math:`P(D^* = 0) = 1 - p`: McNemar's null at the
observed discordance. :func:`resampled_null_table` measures a sequence of verdicts this way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
from collections.abc import Mapping, Sequence

import numpy as np

from ssa_book.collectors import Collector

__all__ = [
    "OUTCOMES", "AGAINST", "OPEN", "DOES_NOT_HOLD", "VOCABULARY", "NOT_RUN_YET", "not_run_yet", "RETIRED_WORDS", "claim_word", "claim_phrase", "outcome_words", "counted_words", "Claim", "Verdict", "judge", "pair_by_seed", "premise_not_shown", "learning_failure", "not_learned", "not_tested", "combine",
    "rate_interval", "SIMULATIONS", "power", "power_table", "false_reproduction_rate", "resampled_null_rates",
    "resampled_null_table", "seeds_to_resolve", "MEANINGS", "glossary_frame", "signed_rank_p", "false_discoveries",
    "FALSE_DISCOVERY_RATE", "control_false_discoveries", "DIRECTION_LOG_ENV", "MIXED", "FOR", "judged", "Judged", "seeds_it_rests_on", "rests_on_words",
    "form_or_slope", "slope_sentence", "exploratory_effect_sentence", "withheld_direction", "paired_proportion_interval", "no_effect_pairs", "bounded_mean_interval", "bounded_check", "SLOPE", "FORM", "NOT_SEPARATED", "NO_DIFFERENCE",
]

# The outcomes of one comparison of a treatment with its control (SSA with softmax, say), in the
# words a page shows, the treatment named where the word has a direction (:meth:`Verdict.words`).
BETTER = "better"
WORSE = "worse"
NEGLIGIBLE = "no difference that matters"
UNDECIDED = "undecided"
TOO_FEW_SEEDS = "exploratory"  # fewer pairs than the rule decides from: an estimate, not a verdict
PREMISE_NOT_SHOWN = "premise not shown"
NOT_LEARNED = "not learned"
NOT_TESTED = "not tested"
# The outcomes only a claim of several parts has (:func:`combine`).
HOLDS_IN_PART = "holds in part"
DOES_NOT_HOLD = "does not hold"
MIXED = "mixed"  # parts decided both ways: one at least for the claim, one at least against it
OUTCOMES = (BETTER, WORSE, NEGLIGIBLE, UNDECIDED, TOO_FEW_SEEDS, PREMISE_NOT_SHOWN, NOT_LEARNED, NOT_TESTED, HOLDS_IN_PART,
            DOES_NOT_HOLD, MIXED)  # the order counts of them are listed in, after the counts themselves
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
    BETTER: HOLDS, NEGLIGIBLE: DOES_NOT_HOLD, WORSE: DOES_NOT_HOLD, DOES_NOT_HOLD: DOES_NOT_HOLD,
    HOLDS_IN_PART: HOLDS_IN_PART, MIXED: MIXED, UNDECIDED: UNDECIDED, TOO_FEW_SEEDS: UNDECIDED, PREMISE_NOT_SHOWN: PREMISE_NOT_SHOWN,
    NOT_LEARNED: NOT_TESTED, NOT_TESTED: NOT_TESTED,
}
# The state of a comparison some of whose runs are not cached yet (:func:`not_run_yet`): no verdict
# is read from a part of its runs, and the page says how many there are.
NOT_RUN_YET = "not run yet"
# Every word a page may use for a verdict or a state (the glossary page defines each).
VOCABULARY = tuple(dict.fromkeys((*OUTCOMES, HOLDS, NOT_RUN_YET)))
# The words this book once used for verdicts; a page that shows one has a verdict outside the
# vocabulary (ssa_book.page_check).
RETIRED_WORDS = ("no effect at this scale", "inconclusive", "partly reproduced", "reproduced", "opposite",
                 "too few seeds to decide", "premise absent")


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
                "direction is said beside it where the signed-rank test and control of false discoveries agree: \"no "
                "difference that matters; SSA slightly worse\".",
    UNDECIDED: "Enough pairs to decide, but the interval neither excludes zero nor lies within the threshold; the number "
               "beside it is about how many paired seeds would decide, if the observed mean and spread held.",
    TOO_FEW_SEEDS: "Fewer pairs than the rule decides from ({min_pairs}, or for outcomes that flip from seed to seed the number "
                   "that would reveal flips frequent enough to matter): the estimate and its interval are shown with the "
                   "pairs, \"exploratory (10 pairs)\", and no verdict word.",
    PREMISE_NOT_SHOWN: "The chapter's measurement of the mechanism the claim is about stayed below its cut in every "
                       "seed, so the claim was not put to the test; the measurement, the cut and the seeds are given. "
                       "With few seeds and a cut chosen after reading, this says the mechanism was not shown, not that "
                       "it cannot occur.",
    NOT_LEARNED: "A model of the comparison did not learn the task in distribution, so a shift tests nothing.",
    NOT_TESTED: "No paired outcomes: the experiment was never run at this profile, or none of its results is in the cache.",
    NOT_RUN_YET: "Some of the runs a comparison needs are not in the cache yet, so nothing is judged from the others; "
                 "the count says how far it is: \"not run yet: 34 of 80 runs\".",
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
        rows.append({"word": word, "the paper's claim": claim,
                     "meaning": meaning.format(min_pairs=MIN_PAIRS)})
    return pd.DataFrame(rows)


def counted_words(labelled: Sequence[tuple[str, str]], of: str = "") -> str:
    """``(outcome, words)`` pairs (the words of :meth:`Verdict.label`) counted, most frequent first
    (ties in :data:`OUTCOMES` order): "SSA worse on 2 of 5{of}, no difference that matters on 2,
    undecided on 1"."""
    counts: dict[tuple[str, str], int] = {}
    for outcome, words in labelled:
        counts[(outcome, words)] = counts.get((outcome, words), 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], OUTCOMES.index(item[0][0])))
    return ", ".join(f"{words} on {n}{f' of {len(labelled)}{of}' if i == 0 else ''}"
                     for i, ((_, words), n) in enumerate(ordered))


def not_run_yet(cached: int, planned: int) -> str:
    """The one way a page says how far a comparison whose runs are not all cached is: "not run yet:
    34 of 80 runs" (``cached`` of the ``planned`` runs are in the cache)."""
    for name, value in (("cached", cached), ("planned", planned)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if planned == 0 or cached > planned:  # cached == planned: the comparison still lacks its control's runs
        raise ValueError(f"cached must lie between 0 and planned, and planned be at least 1; got {cached} of {planned}")
    return f"{NOT_RUN_YET}: {cached} of {planned} run{'' if planned == 1 else 's'}"


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


CONFIDENCE = 0.95
METHOD = "paired t interval (scipy.stats.ttest_rel), 95%; Wilcoxon signed-rank at 5% for a direction; at least 6 pairs"
METHOD_BINARY = ("Tango's score interval for paired proportions, 95%; Wilcoxon signed-rank at 5% for a direction; "
                 "at least 6 pairs")
MAX_SEEDS = 10_000  # seeds_to_resolve searches up to this many pairs
# Simulated studies per power estimate: its Monte Carlo standard error is at most
# sqrt(0.25 / 2000) = 0.011, small beside the gaps between seed counts a power table compares.
SIMULATIONS = 2000
# The fewest pairs that may decide a claim: with fewer, no exact two-sided test on the signs or
# signed ranks of the differences can reach 5% (2 / 2^5 > 0.05), and outcomes that are
# all-or-nothing per seed make the t interval overconfident.
MIN_PAIRS = 6


@dataclasses.dataclass(frozen=True)
class Claim:
    """A claim of the paper, declared before its results are read.

    ``direction`` is +1 if the paper says the outcome of the treatment (SSA) is larger than the
    control's (accuracy), -1 if smaller (an error); ``threshold`` is the smallest paired
    difference, in ``units``, that would matter, and ``reason`` says why."""

    name: str
    direction: int
    threshold: float
    units: str
    reason: str
    binary: bool = False  # the outcome is 0 or 1 per seed: Tango's interval, not the t interval
    largest_flip: float | None = None  # outcomes that flip from seed to seed: the largest difference one flip makes
    # The largest paired difference the outcome allows (1 for an error rate, an accuracy or a share
    # in [0, 1]); None: unbounded. The interval is intersected with [-bound, bound]: the mean lies
    # there, so the intersection covers it whenever the interval does, and no estimate reads wider
    # than the scale (a t interval of three seeds can).
    bound: float | None = None
    treatment: str = "SSA"  # what the verdict's words name: "SSA better"
    control: str = "softmax"
    # A claim about a trend rather than a treatment against a control (softmax's error grows with
    # sigma): its words for the two decided directions, as the paper says and the other way.
    directions: tuple[str, str] = ()
    # The fewest pairs from which the rule decides anything on this claim: MIN_PAIRS, or more where
    # the chapter's own data show the rule naming a false direction more than 5% of the time with
    # fewer (ssa_book.error_rates).
    min_pairs: int = MIN_PAIRS

    def __post_init__(self):
        if not isinstance(self.binary, bool):
            raise ValueError(f"binary must be True or False, got {self.binary!r}")
        if self.largest_flip is not None and not (isinstance(self.largest_flip, (int, float)) and math.isfinite(self.largest_flip)
                                                  and self.largest_flip > 0):
            raise ValueError(f"largest_flip must be None or a finite number > 0, got {self.largest_flip!r}")
        if self.bound is not None and not (isinstance(self.bound, (int, float)) and math.isfinite(self.bound) and self.bound > 0):
            raise ValueError(f"bound must be None or a finite number > 0, got {self.bound!r}")
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {self.direction!r}")
        if not (isinstance(self.threshold, (int, float)) and math.isfinite(self.threshold) and self.threshold > 0):
            raise ValueError(f"threshold must be a finite number > 0, got {self.threshold!r}")
        if not self.reason.strip():
            raise ValueError("reason must say why the threshold has its size")
        if isinstance(self.min_pairs, bool) or not isinstance(self.min_pairs, int) or self.min_pairs < MIN_PAIRS:
            raise ValueError(f"min_pairs must be a whole number >= {MIN_PAIRS}, got {self.min_pairs!r}")
        if self.directions and (len(self.directions) != 2 or not all(isinstance(w, str) and w.strip() for w in self.directions)):
            raise ValueError(f"directions must be two phrases (as the paper says, the other way), got {self.directions!r}")



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
        entry = {"words": words, "problems": list(problems), "effect": verdict.effect,
                 "interval": list(verdict.interval) if verdict.interval is not None else None}
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
        text = (f"effect {self.effect:+.3g}{units} in the paper's direction, 95% interval [{low:+.3g}, {high:+.3g}] "
                f"over {self.pairs} paired seed{'' if self.pairs == 1 else 's'}, threshold {self.threshold:.3g}")
        if self.outcome == TOO_FEW_SEEDS:
            minimum = max(MIN_PAIRS, self.no_effect_pairs)
            text += f"; exploratory: the rule decides from {minimum} pairs on"
            if self.seeds_to_resolve and self.seeds_to_resolve > minimum:
                text += f", and about {self.seeds_to_resolve:,} would decide it at the observed spread"
        elif self.uncontrolled is not None:
            text += (f"; its direction does not survive false-discovery control over the {self.family_size} comparisons "
                     f"judged with it (adjusted p = {self.adjusted_p:.2g})")
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
            text += f" (about {needed} seeds would decide)" if needed[0].isdigit() else f" ({needed} seeds would decide)"
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
        outcome = str(_decide(differences, self.threshold, self.method == METHOD_BINARY, self.no_effect_pairs)[3][0])
        problems = [] if outcome == self.outcome else [f"the rule re-applied to its {len(self.differences)} pairs says {outcome!r}"]
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
        """One plain sentence: the outcome and the evidence."""
        if self.outcome in (NOT_TESTED, NOT_LEARNED):
            return f"{self.claim}: {self.outcome}" + (f" ({self.detail})." if self.detail else ".")
        if self.outcome == PREMISE_NOT_SHOWN:
            return f"{self.claim}: {PREMISE_NOT_SHOWN} ({self.detail})."
        if self.parts:
            evidence = f"; {self.evidence()}" if self.interval is not None else ""
            return f"{self.claim}: {claim_phrase(self.outcome)} ({self.tally()}){evidence}."
        if self.interval is None:
            return f"{self.claim}: {self.words()}" + (f" ({self.detail})." if self.detail else ".")
        return f"{self.claim}: {self.label()}; {self.evidence()}."


def withheld_direction(verdict: Verdict) -> str:
    """Why ``verdict`` says no direction although its interval excludes 0: the step of the rule its
    own numbers fail. For "undecided": its estimate short of the threshold, the signed-rank test, or
    control of false discoveries over the comparisons judged with it; for "no difference that
    matters", the tests a small direction needs (:meth:`Verdict.small_direction`). "" for any other
    verdict, one whose interval reaches 0, or one that says a direction."""
    if (verdict.outcome not in (UNDECIDED, NEGLIGIBLE) or verdict.interval is None or verdict.effect is None
            or verdict.interval[0] <= 0 <= verdict.interval[1] or verdict.small_direction()):
        return ""
    raw = signed_rank_p(verdict)
    if verdict.outcome == NEGLIGIBLE:
        if verdict.adjusted_p is not None and raw is not None and raw < FALSE_DISCOVERY_RATE:
            return (f"its interval excludes 0, but no direction is said: signed-rank p = {raw:.2g}, adjusted p = "
                    f"{verdict.adjusted_p:.2g} over the {verdict.family_size} comparisons judged with it, and a direction needs "
                    f"both below {FALSE_DISCOVERY_RATE:g}")
        return (f"its interval excludes 0, but no direction is said: signed-rank p = {raw:.2g}, and a direction needs it below "
                f"{FALSE_DISCOVERY_RATE:g}")
    if abs(verdict.effect) < verdict.threshold:
        return f"its interval excludes 0, but its estimate {verdict.effect:+.3g} is short of the threshold {verdict.threshold:g}"
    reached = "its interval excludes 0 and its estimate reaches the threshold, but"
    if verdict.uncontrolled is not None:
        return (f"{reached} the direction fails false-discovery control: adjusted p = {verdict.adjusted_p:.2g} over the "
                f"{verdict.family_size} comparisons judged with it, and a direction needs it below {FALSE_DISCOVERY_RATE:g}")
    return f"{reached} the signed-rank test does not agree: p = {raw:.2g}, and a direction needs it below {FALSE_DISCOVERY_RATE:g}"


def pair_by_seed(treatment: Mapping[int, float], control: Mapping[int, float]) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    """``(seeds, treatment values, control values)`` for the seeds both sides have, in increasing
    order: the inputs of :func:`judge`. A seed only one side has has no pair and is left out."""
    seeds = tuple(sorted(set(treatment) & set(control)))
    return seeds, np.array([treatment[s] for s in seeds], dtype=float), np.array([control[s] for s in seeds], dtype=float)


def _paired_differences(claim: Claim, treatment: Sequence[float], control: Sequence[float]) -> np.ndarray:
    treatment, control = np.asarray(treatment, dtype=float), np.asarray(control, dtype=float)
    if treatment.ndim != 1 or treatment.shape != control.shape:
        raise ValueError(f"treatment and control must be 1-D with one outcome per seed, paired; got shapes "
                         f"{treatment.shape} and {control.shape}")
    if not (np.isfinite(treatment).all() and np.isfinite(control).all()):
        raise ValueError("treatment and control must be finite")
    if claim.binary and not (np.isin(treatment, (0, 1)).all() and np.isin(control, (0, 1)).all()):
        raise ValueError(f"treatment and control must be 0 or 1 per seed: the claim {claim.name!r} is binary")
    return claim.direction * (treatment - control)


def _identical(differences: np.ndarray) -> np.ndarray:
    """Whether the differences (along the last axis) are one value up to rounding: the t interval
    is then that point, and scipy would warn of cancellation."""
    return np.ptp(differences, axis=-1) <= 1e-12 * np.maximum(1.0, np.abs(differences).max(axis=-1))


def _t_interval(differences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paired t interval (``scipy.stats.ttest_rel``) along the last axis."""
    from scipy import stats

    interval = stats.ttest_rel(differences, np.zeros_like(differences), axis=-1).confidence_interval(confidence_level=CONFIDENCE)
    return interval.low, interval.high


def _tango_score(gains: np.ndarray, losses: np.ndarray, pairs: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Tango's score statistic for a paired difference ``delta`` of proportions, with ``gains``
    pairs where only the treatment succeeds and ``losses`` where only the control does (counts
    may be fractional: :func:`_binary_pairs_to_resolve` scales them); decreasing in ``delta``."""
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
    for outside, inside, sign in ((np.full_like(estimate, -1.0), estimate, 1), (np.full_like(estimate, 1.0), estimate, -1)):
        beyond = sign * _tango_score(gains, losses, pairs, outside) <= z  # the interval reaches -1 (or 1)
        for _ in range(60):  # 2^-60: below double precision on [-1, 1]
            middle = (outside + inside) / 2
            excluded = sign * _tango_score(gains, losses, pairs, middle) > z
            outside, inside = np.where(excluded, middle, outside), np.where(excluded, inside, middle)
        bounds.append(np.where(beyond, -sign * 1.0, inside))
    return bounds[0], bounds[1]


def _binary_interval(differences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tango's interval for each row of 0/+1/-1 paired differences."""
    return paired_proportion_interval((differences > 0).sum(axis=-1), (differences < 0).sum(axis=-1), differences.shape[-1])


def no_effect_pairs(claim: Claim) -> int:
    """The fewest pairs from which the rule may call ``claim`` "no difference that matters": for an
    outcome that flips (``claim.largest_flip``), the fewest N with
    (1 - threshold / largest_flip)^N <= (1 - 0.95) / 2, so that flips frequent enough to move the
    mean by the threshold would have shown in some pair; and never fewer than the claim's own
    minimum (:attr:`Claim.min_pairs`)."""
    if claim.largest_flip is None or claim.threshold >= claim.largest_flip:
        return claim.min_pairs
    unseen = math.log((1 - CONFIDENCE) / 2) / math.log(1 - claim.threshold / claim.largest_flip)
    return max(claim.min_pairs, math.ceil(unseen))


BOUNDED_ORDERS = 100  # seeded orders of the pairs whose wealth bounded_mean_interval averages
BOUNDED_GRID = 4001  # candidate means on [-bound, bound]: endpoints to within bound / 2000
BOUNDED_TRUNCATION = 0.5  # the largest share of its wealth a bet may stake (the authors' code's default)
METHOD_BOUNDED = (f"betting interval for a bounded mean (Waudby-Smith and Ramdas 2024), 95%, wealth averaged over "
                  f"{BOUNDED_ORDERS} seeded orders of the pairs")


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
        raise ValueError(f"differences must be finite and within [-bound, bound] = [{-bound:g}, {bound:g}]; "
                         f"got values from {np.nanmin(d):g} to {np.nanmax(d):g}")
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


def bounded_check(verdict: Verdict, bound: float) -> Verdict:
    """``verdict`` decided again with :func:`bounded_mean_interval` in place of its own interval,
    for a robustness check of verdicts on outcomes bounded by ``bound``: better, worse, no
    difference that matters or undecided by the thresholds of the table above, with no further
    guard (the interval holds at any sample size). A verdict without paired differences, or with
    fewer than :data:`MIN_PAIRS`, is returned as it is."""
    if verdict.interval is None or len(verdict.differences) < MIN_PAIRS:
        return verdict
    low, high = bounded_mean_interval(verdict.differences, bound)
    effect, threshold = verdict.effect, verdict.threshold
    outcome = (BETTER if low > 0 and effect >= threshold else WORSE if high < 0 and effect <= -threshold
               else NEGLIGIBLE if _no_effect(low, high, threshold, len(verdict.differences), MIN_PAIRS) else UNDECIDED)
    return dataclasses.replace(verdict, outcome=outcome, interval=(low, high), method=METHOD_BOUNDED, seeds_to_resolve=None,
                               no_effect_pairs=MIN_PAIRS)


def _no_effect(low, high, threshold: float, pairs, no_effect_from: int):
    """The interval lies within the threshold, from ``no_effect_from`` pairs on."""
    return (-threshold < low) & (high < threshold) & (pairs >= no_effect_from)


def _decided(low, high, effect, threshold: float, pairs, no_effect_from: int):
    """Whether an interval decides: better, worse, or no difference that matters (any of them only from
    ``no_effect_from`` pairs on: :func:`no_effect_pairs`)."""
    directional = _better(low, effect, threshold) | _worse(high, effect, threshold)
    return (directional & (pairs >= no_effect_from)) | _no_effect(low, high, threshold, pairs, no_effect_from)


def _better(low, effect, threshold: float):
    """The interval excludes zero on the paper's side and the estimate reaches the threshold."""
    return (low > 0) & (effect >= threshold)


def _worse(high, effect, threshold: float):
    """The mirror image of :func:`_better`: the interval excludes zero on the other side and the
    estimate reaches the threshold there."""
    return (high < 0) & (effect <= -threshold)


def _decide(differences: np.ndarray, threshold: float, binary: bool = False,
            no_effect_from: int = MIN_PAIRS) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The rule on a stack of studies, one per row of ``differences`` (studies, pairs), each with
    at least :data:`MIN_PAIRS` pairs: ``(effect, low, high, outcome)``, one entry per study.
    ``binary``: the outcomes are 0 or 1 per seed, and the interval is Tango's; ``no_effect_from``:
    the fewest pairs that may decide anything (:func:`no_effect_pairs`).

    :func:`judge` calls it with one row and the simulations with thousands, so that a simulated
    study is judged by the very code that judges the real one."""
    effect = differences.mean(axis=1)
    if binary:
        low, high = _binary_interval(differences)
    else:
        identical = _identical(differences)
        low, high = effect.copy(), effect.copy()
        if not identical.all():
            low[~identical], high[~identical] = _t_interval(differences[~identical])
    # The three conditions exclude each other (a direction needs the estimate beyond the threshold,
    # "no difference" the whole interval within it), so no word takes precedence over another.
    outcome = np.full(len(effect), UNDECIDED, dtype=object)
    outcome[_no_effect(low, high, threshold, differences.shape[1], no_effect_from)] = NEGLIGIBLE
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
        chance = _signed_rank_p(differences[directional]) >= 1 - CONFIDENCE
        outcome[directional[chance]] = UNDECIDED  # the signs and ranks alone do not exclude chance
    return effect, low, high, outcome


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
    outcomes = _decide(left, verdict.threshold, verdict.method == METHOD_BINARY, min(verdict.no_effect_pairs, left.shape[1]))[3]
    moved = np.flatnonzero(outcomes != verdict.outcome)
    return tuple(int(seeds[i]) if seeds is not None else int(i) for i in moved)


def rests_on_words(seeds: Sequence[int]) -> str:
    """"rests on seed 104" / "rests on seeds 104 and 117" / beyond three, "leaving out any one of 26
    seeds moves it" ("" for none)."""
    if not seeds:
        return ""
    if len(seeds) > 3:
        return f"leaving out any one of {len(seeds)} seeds moves it"
    listed = str(seeds[0]) if len(seeds) == 1 else ", ".join(map(str, seeds[:-1])) + f" and {seeds[-1]}"
    return f"rests on seed{'' if len(seeds) == 1 else 's'} {listed}"


def signed_rank_p(verdict: Verdict) -> float | None:
    """The two-sided p-value of the Wilcoxon signed-rank test that the rule requires for a
    direction, on ``verdict``'s paired differences; ``None`` with fewer than :data:`MIN_PAIRS`."""
    if len(verdict.differences) < MIN_PAIRS:
        return None
    return float(_signed_rank_p(np.asarray([verdict.differences], dtype=float))[0])


FALSE_DISCOVERY_RATE = 0.05  # the share of false directions a family's adjusted decisions allow


def false_discoveries(family: Sequence[Verdict]) -> list[dict]:
    """Benjamini-Hochberg control of false discoveries over a ``family`` of verdicts judged
    together (``scipy.stats.false_discovery_control``): for each verdict with a
    :func:`signed_rank_p`, ``{"p": raw, "adjusted p": BH-adjusted within the family, "survives":
    whether a decided direction ("better" or "worse") keeps its adjusted p below
    :data:`FALSE_DISCOVERY_RATE`}``; ``None`` for a verdict without one. Every verdict of the
    family that could have been a discovery counts, decided or not; an exploratory one (fewer
    pairs than the rule decides from) could not, and is left out."""
    from scipy import stats

    raw = [signed_rank_p(verdict) if verdict.outcome != TOO_FEW_SEEDS else None for verdict in family]
    tested = [i for i, p in enumerate(raw) if p is not None]
    adjusted = stats.false_discovery_control([raw[i] for i in tested], method="bh") if tested else []
    found: list[dict | None] = [None] * len(family)
    for i, q in zip(tested, adjusted):
        found[i] = {"p": raw[i], "adjusted p": float(q),
                    "survives": family[i].outcome in (BETTER, WORSE) and float(q) < FALSE_DISCOVERY_RATE}
    return found


def control_false_discoveries(family: Sequence[Verdict]) -> list[Verdict]:
    """``family``, judged together, with false discoveries controlled in the words: a decided
    direction ("better" or "worse") whose Benjamini-Hochberg adjusted p-value within the family
    (:func:`false_discoveries`) is not below :data:`FALSE_DISCOVERY_RATE` reads "undecided", its
    estimate unchanged. Every tested verdict carries its adjusted p and the family's size
    (:attr:`Verdict.adjusted_p`); the others come back as they were."""
    controlled = []
    tested = false_discoveries(family)
    size = sum(found is not None for found in tested)
    for verdict, found in zip(family, tested):
        if found is None:
            controlled.append(verdict)
            continue
        changed = verdict.outcome in (BETTER, WORSE) and not found["survives"]
        controlled.append(dataclasses.replace(verdict, outcome=UNDECIDED if changed else verdict.outcome,
                                              adjusted_p=found["adjusted p"], family_size=size,
                                              uncontrolled=verdict.outcome if changed else None))
        # every member, changed or not: its words as the family reads them (a small direction
        # beside "no difference that matters" also needs the adjusted p)
        _record(Judged("controlled", verdict, after=controlled[-1]))
    return controlled


def _signed_rank_p(differences: np.ndarray) -> np.ndarray:
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
            rows = tied_rows[start:start + _SIGN_FLIP_BATCH]
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
    kept = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1  # (2**n, n): 1 keeps a sign, 0 flips it
    null = kept @ positive.T + (1 - kept) @ negative.T  # (2**n, rows)
    observed = positive.sum(axis=1)
    gamma = np.abs(np.finfo(float).eps * 100 * observed)
    less = np.count_nonzero(null <= observed + gamma, axis=0) / 2 ** n
    greater = np.count_nonzero(null >= observed - gamma, axis=0) / 2 ** n
    return np.clip(np.minimum(less, greater) * 2, 0.0, 1.0)


def seeds_to_resolve(effect: float, spread: float, threshold: float, max_seeds: int = MAX_SEEDS,
                     no_effect_from: int = MIN_PAIRS) -> int | None:
    """The fewest pairs whose interval, with this mean and standard deviation of the paired
    differences, would no longer be undecided ("no difference" only from ``no_effect_from`` pairs
    on); ``None`` beyond ``max_seeds``."""
    from scipy import stats

    pairs = np.arange(MIN_PAIRS, max_seeds + 1)
    half_width = stats.t.ppf(0.5 + CONFIDENCE / 2, pairs - 1) * spread / np.sqrt(pairs)
    decided = _decided(effect - half_width, effect + half_width, effect, threshold, pairs, no_effect_from)
    return int(pairs[decided.argmax()]) if decided.any() else None


def _binary_pairs_to_resolve(differences: np.ndarray, threshold: float, max_seeds: int = MAX_SEEDS,
                             no_effect_from: int = MIN_PAIRS) -> int | None:
    """:func:`seeds_to_resolve` for a binary claim: the fewest pairs whose Tango interval would no
    longer be undecided if the observed shares of gains and losses held; ``None`` beyond
    ``max_seeds``."""
    pairs = np.arange(MIN_PAIRS, max_seeds + 1, dtype=float)
    gains, losses = np.mean(differences > 0) * pairs, np.mean(differences < 0) * pairs
    effect = float(differences.mean())
    low, high = paired_proportion_interval(gains, losses, pairs)
    decided = _decided(low, high, effect, threshold, pairs, no_effect_from)
    return int(pairs[decided.argmax()]) if decided.any() else None


def _pairs_to_resolve(claim: Claim, differences: np.ndarray) -> int | None:
    if claim.binary:
        return _binary_pairs_to_resolve(differences, claim.threshold, no_effect_from=no_effect_pairs(claim))
    return seeds_to_resolve(float(differences.mean()), float(differences.std(ddof=1)), claim.threshold,
                            no_effect_from=no_effect_pairs(claim))


@dataclasses.dataclass(frozen=True)
class Judged:
    """One record of a :func:`judged` block: ``kind`` "judged" (a verdict :func:`judge` gave, with
    its ``claim``) or "controlled" (a verdict :func:`control_false_discoveries` judged within its
    family, and ``after``, the verdict as the family reads it: a direction that does not survive
    turned undecided, the adjusted p set)."""

    kind: str
    verdict: Verdict
    claim: Claim | None = None
    after: Verdict | None = None


_JUDGED: Collector[Judged] = Collector()


def judged() -> contextlib.AbstractContextManager[list[Judged]]:
    """Within: every verdict :func:`judge` gives, and every verdict
    :func:`control_false_discoveries` judges within a family, is appended as a :class:`Judged`, so that a
    page can list what a change of the rule moved (ssa_book.analysis_changes) or measure the rule
    on what a chapter judged (ssa_book.error_rates)."""
    return _JUDGED.collecting()


_record = _JUDGED.add


def judge(claim: Claim, treatment: Sequence[float], control: Sequence[float], *, resolve: bool = True) -> Verdict:
    """The verdict on ``claim`` from outcomes paired by seed (``treatment[i]`` and ``control[i]``
    from seed ``i``); recorded in every open :func:`judged` block."""
    verdict = _judge(claim, treatment, control, resolve=resolve)
    if verdict.differences:
        _record(Judged("judged", verdict, claim=claim))
    return verdict


def _judge(claim: Claim, treatment: Sequence[float], control: Sequence[float], *, resolve: bool = True) -> Verdict:
    """The verdict on ``claim`` from outcomes paired by seed (``treatment[i]`` and ``control[i]``
    from seed ``i``). Fewer than :data:`MIN_PAIRS` pairs: too few seeds to decide (the interval, if any, is
    reported).
    ``resolve=False`` skips :func:`seeds_to_resolve` (simulations)."""
    differences = _paired_differences(claim, treatment, control)
    common = dict(claim=claim.name, pairs=len(differences), threshold=claim.threshold, units=claim.units,
                  differences=tuple(float(d) for d in differences), method=METHOD_BINARY if claim.binary else METHOD,
                  no_effect_pairs=no_effect_pairs(claim), treatment=claim.treatment, directions=claim.directions)
    if len(differences) == 0:
        return not_tested(claim)
    if len(differences) < MIN_PAIRS:
        effect = float(differences.mean())
        if claim.binary:
            interval = tuple(float(end[0]) for end in _binary_interval(differences[None, :]))
            needed = _pairs_to_resolve(claim, differences) if resolve else MIN_PAIRS
            return Verdict(outcome=TOO_FEW_SEEDS, effect=effect, interval=interval, seeds_to_resolve=needed, **common)
        spread = float(differences.std(ddof=1)) if len(differences) > 1 and not _identical(differences) else 0.0
        interval = _within_bound(claim, *(float(end) for end in _t_interval(differences))) if spread > 0 else (-math.inf, math.inf)
        needed = (seeds_to_resolve(effect, spread, claim.threshold, no_effect_from=no_effect_pairs(claim)) if spread > 0 and resolve
                  else MIN_PAIRS)
        return Verdict(outcome=TOO_FEW_SEEDS, effect=effect, interval=interval, seeds_to_resolve=needed, **common)
    effects, lows, highs, outcomes = _decide(differences[None, :], claim.threshold, claim.binary, no_effect_pairs(claim))
    effect, outcome = float(effects[0]), str(outcomes[0])
    needed = _pairs_to_resolve(claim, differences) if outcome in OPEN and resolve else None
    return Verdict(outcome=outcome, effect=effect, interval=_within_bound(claim, float(lows[0]), float(highs[0])),
                   seeds_to_resolve=needed, **common)


def _within_bound(claim: Claim, low: float, high: float) -> tuple[float, float]:
    """``(low, high)`` intersected with the differences ``claim`` allows (:attr:`Claim.bound`); the
    decision is taken before, and no decision changes: an end beyond the bound decides nothing."""
    if claim.bound is None:
        return low, high
    return max(low, -claim.bound), min(high, claim.bound)


def premise_not_shown(claim: Claim, measurement: str) -> Verdict:
    """The chapter's measurement did not show the mechanism ``claim`` is about in any seed;
    ``measurement`` says what was measured, against what cut, and what was found."""
    if not measurement.strip():
        raise ValueError("measurement must say what was measured and what it found")
    return Verdict(claim.name, PREMISE_NOT_SHOWN, threshold=claim.threshold, units=claim.units, detail=measurement,
                   treatment=claim.treatment)


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
    return Verdict(claim.name, NOT_LEARNED, threshold=claim.threshold, units=claim.units, detail=reason,
                   treatment=claim.treatment)


def not_tested(claim: Claim) -> Verdict:
    return Verdict(claim.name, NOT_TESTED, threshold=claim.threshold, units=claim.units, treatment=claim.treatment)


def combine(name: str, parts: Mapping[str, Verdict]) -> Verdict:
    """One verdict for a claim of several parts, naming each part's outcome and counting them
    (:meth:`Verdict.tally`): their common outcome if they agree; else "mixed" when parts are
    decided both ways (one at least for the claim, :data:`FOR`, one at least against it,
    :data:`AGAINST`), so that an adverse part is never folded under a favourable word; else "holds
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
        outcome = next(found for found in (UNDECIDED, TOO_FEW_SEEDS, PREMISE_NOT_SHOWN, NOT_LEARNED, NOT_TESTED) if found in outcomes)
    shared = {}
    for field in ("treatment", "directions"):
        values = {getattr(verdict, field) for verdict in parts.values()}
        if len(values) == 1:
            shared[field] = values.pop()
    return Verdict(name, outcome, detail=detail, parts=tuple(parts.items()), **shared)


# What :func:`form_or_slope` can say of a scorer's difference from softmax.
SLOPE, FORM, NOT_SEPARATED, NO_DIFFERENCE = "its starting slope", "its form", "not separated", "no difference"


def form_or_slope(difference: Verdict, sharper: Verdict, versus_sharper: Verdict, gentler: Verdict | None = None) -> str:
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
    difference itself is not decided, and :data:`NOT_SEPARATED` otherwise: an open comparison
    never carries an attribution."""
    if difference.outcome not in (BETTER, WORSE):
        return NO_DIFFERENCE
    if (sharper.outcome == difference.outcome and versus_sharper.outcome == NEGLIGIBLE
            and (gentler is None or gentler.outcome == NEGLIGIBLE)):
        return SLOPE
    if sharper.outcome == NEGLIGIBLE and versus_sharper.outcome == difference.outcome:
        return FORM
    return NOT_SEPARATED


def slope_sentence(reading: str, difference: Verdict, name: str = "SSA", gentler: str = "", open_facts: str = "") -> str:
    """:func:`form_or_slope`'s ``reading`` of ``name``'s ``difference`` from softmax in one
    sentence; ``gentler``: what the gentler start showed, in words, when it was given;
    ``open_facts``: for a reading that does not separate them, the comparisons left open, with
    their numbers."""
    word = "deficit" if difference.outcome == WORSE else "advantage"
    if reading == SLOPE:
        return (f"{name}'s {word} goes with its starting slope, not its form: a softmax with that slope does the same"
                + (f", and {gentler}." if gentler else "."))
    if reading == FORM:
        return (f"{name}'s {word} goes with its form, not its starting slope: a softmax with that slope does not differ "
                f"from softmax, and {name} differs from it as it does from softmax.")
    if reading == NO_DIFFERENCE:
        said = difference.outcome
        if difference.interval is not None and difference.effect is not None:
            # the estimate in the paper's direction, and whose way its whole interval lies where it excludes 0
            side = "against" if difference.interval[1] < 0 else "for" if difference.interval[0] > 0 else ""
            said += f": {difference.estimate()}" + (f", interval {side} {name}" if side else "")
        return f"{name}'s difference from softmax is not established ({said}), so there is nothing to attribute."
    if reading == NOT_SEPARATED:
        return (f"These comparisons do not separate {name}'s form from its starting slope"
                + (f": {open_facts}." if open_facts else "."))
    raise ValueError(f"reading must be one of {SLOPE!r}, {FORM!r}, {NOT_SEPARATED!r}, {NO_DIFFERENCE!r}; got {reading!r}")


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


def _simulated_rate(claim: Claim, pairs: int, sample, simulations: int, seed: int) -> float:
    """The rate of "better" over ``simulations`` studies of ``pairs`` pairs drawn at once by
    ``sample(generator, (simulations, pairs)) -> (treatment, control)``, judged by :func:`_decide`."""
    if pairs < MIN_PAIRS:
        return 0.0  # the rule decides nothing with fewer pairs
    treatment, control = sample(np.random.default_rng(seed), (simulations, pairs))
    treatment, control = np.asarray(treatment, dtype=float), np.asarray(control, dtype=float)
    if treatment.shape != (simulations, pairs) or control.shape != (simulations, pairs):
        raise ValueError(f"sample must return outcomes of shape {(simulations, pairs)}; got {treatment.shape} and {control.shape}")
    differences = _paired_differences(claim, treatment.ravel(), control.ravel()).reshape(simulations, pairs)
    return float(np.mean(_decide(differences, claim.threshold, claim.binary, no_effect_pairs(claim))[3] == BETTER))


def power(claim: Claim, pairs: int, effect: float, spread: float, simulations: int = SIMULATIONS, seed: int = 0) -> float:
    """The rate of "better" with ``pairs`` seeds when the paired differences are normal with
    mean ``effect`` (in the paper's direction) and standard deviation ``spread``."""

    if spread == 0:  # every simulated study is the same one: judge it once
        return float(_judge(claim, claim.direction * np.full(pairs, float(effect)), np.zeros(pairs), resolve=False).outcome == BETTER)

    def sample(generator, shape):
        return claim.direction * generator.normal(effect, spread, shape), np.zeros(shape)

    return _simulated_rate(claim, pairs, sample, simulations, seed)


def power_table(verdicts: Mapping[str, Verdict] | Sequence[Verdict], pairs: Sequence[int], *,
                effects: Mapping[str, Mapping[str, float]] | None = None, multiples: Sequence[float] = (1, 2),
                simulations: int = SIMULATIONS, seed: int = 0):
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
        claim = Claim(verdict.claim, 1, verdict.threshold, verdict.units or "units", "the claim's own threshold",
                      min_pairs=max(MIN_PAIRS, verdict.no_effect_pairs))
        named = {("the threshold" if multiple == 1 else f"{multiple:g} x the threshold"): multiple * verdict.threshold
                 for multiple in multiples}
        named.update((effects or {}).get(key, {}))
        for label, effect in named.items():
            row = {"claim": verdict.claim, "true effect": label, "effect": effect, "observed spread": spread}
            for count in pairs:
                row[f"{count} seeds"] = power(claim, int(count), effect, spread, simulations=simulations, seed=seed)
            rows.append(row)
    columns = ["claim", "true effect", "effect", "observed spread", *(f"{count} seeds" for count in pairs)]
    return pd.DataFrame(rows, columns=columns).set_index(["claim", "true effect"])


def effect_placement(verdict: Verdict, effect: float) -> str | None:
    """Where a true ``effect`` (in the claim's direction, such as a published one) lies against
    ``verdict``'s interval: "above" (the interval excludes it), "inside" or "below"; None without
    an interval, or for an exploratory one (fewer pairs than the rule decides from: its interval
    decides nothing, this included)."""
    if verdict.interval is None or verdict.outcome == TOO_FEW_SEEDS:
        return None
    low, high = verdict.interval
    return "above" if effect > high else "below" if effect < low else "inside"


def published_effect_sentence(items: Mapping[str, tuple[Verdict, float]], units: str, effect: str = "the paper's gain",
                              spec: str = "+.3f") -> str:
    """Where a published ``effect`` lies against each interval of ``items`` (``{name on the page:
    (verdict, the published effect)}``): above it (the interval excludes an effect of the
    published size), inside it, or below it; "" when no verdict has an interval."""
    placed: dict[str, list[str]] = {"above": [], "inside": [], "below": []}
    for name, (verdict, published) in items.items():
        where = effect_placement(verdict, published)
        if where is not None:
            low, high = verdict.interval
            placed[where].append(f"{name}: interval [{low:{spec}}, {high:{spec}}], the paper's {published:{spec.lstrip('+')}}")
    parts = []
    if placed["above"]:
        parts.append(f"{effect} lies above our interval ({'; '.join(placed['above'])} {units}): at this scale the 95% interval "
                     f"excludes an effect of the paper's size, not one of the threshold's")
    if placed["inside"]:
        parts.append(f"{effect} lies inside our interval ({'; '.join(placed['inside'])} {units})")
    if placed["below"]:
        parts.append(f"our interval lies above {effect} ({'; '.join(placed['below'])} {units})")
    return "; ".join(parts)


def exploratory_effect_sentence(items: Mapping[str, tuple[Verdict, float]], units: str, effect: str = "the paper's gain") -> str:
    """Where a published ``effect`` lies against the intervals of ``items`` (``{name on the page:
    (verdict, the published effect)}``) when every one is exploratory (:func:`effect_placement`
    places none): the intervals decide nothing, so the placement is an estimate's, said as such.
    "" when an item is not exploratory or has no interval (:func:`published_effect_sentence` says those)."""
    if not items or any(verdict.outcome != TOO_FEW_SEEDS or verdict.interval is None for verdict, _ in items.values()):
        return ""
    where = {name: effect_placement(dataclasses.replace(verdict, outcome=UNDECIDED), published)
             for name, (verdict, published) in items.items()}
    name, (verdict, published) = next(iter(items.items()))
    counted = {place: sum(found == place for found in where.values()) for place in ("above", "inside", "below")}
    said = ", ".join(f"{place} {count} of the {len(items)} intervals" for place, count in counted.items() if count)
    pairs = sorted({found.pairs for found, _ in items.values()})
    return (f"every interval is exploratory ({'/'.join(map(str, pairs))} pairs), so none decides against {effect}; as estimates, "
            f"{effect} lies {said} ({name}: [{verdict.interval[0]:+.2f}, {verdict.interval[1]:+.2f}] {units}, the paper's "
            f"{published:.2f})")


def effect_power_sentence(table, pairs: int, effect: str, names: Mapping[str, str], units: str, treatment: str = "SSA") -> str:
    """What :func:`power_table`'s ``table`` says of one true ``effect`` (a label of its "true
    effect" level, such as the paper's gap) with ``pairs`` pairs, for the claims ``names`` maps to
    the words that name them on the page: the chance the rule says "better" for each. The table
    has rows only for claims with two paired differences or more; without any, the sentence says so."""
    if not names:
        return (f"with {pairs} paired seed{'' if pairs == 1 else 's'}, the rule's power cannot be estimated: no claim has the two "
                "paired differences a spread needs")
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
    return (f"with {pairs} paired seeds, the chance that the rule says \"{outcome_words(BETTER, treatment)}\" if the true "
            f"effect were {effect}: {listed}")


def false_reproduction_rate(claim: Claim, pairs: int, sample, simulations: int = SIMULATIONS, seed: int = 0) -> float:
    """The rate of "better" when ``sample(generator, (simulations, pairs)) -> (treatment,
    control)`` draws the outcomes of many studies with no true effect (the caller's model of the
    outcomes), one study per row."""
    return _simulated_rate(claim, pairs, sample, simulations, seed)


# The columns of resampled_null_rates' answer and of resampled_null_table.
# A rate's name quotes the word it counts: a table's header mentions "better", it says nothing is.
FALSE_REPRODUCED, FALSE_OPPOSITE, FALSE_DIRECTIONAL = 'false "better"', 'false "worse"', 'false "better" or "worse"'


def _resampled_null_differences(claim: Claim, differences: np.ndarray, shape: tuple[int, int],
                                generator: np.random.Generator) -> np.ndarray:
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


def resampled_null_rates(claim: Claim, differences: Sequence[float], pairs: int, simulations: int = SIMULATIONS,
                         seed: int = 0) -> dict[str, float]:
    """The rule's false decisions under a null resampled from a study's own paired
    ``differences`` (one per seed, in the paper's direction, as :attr:`Verdict.differences` holds
    them): ``simulations`` studies of ``pairs`` pairs, each drawn from the differences recentred to
    mean 0 (for a binary claim, from their share of discordant pairs with both signs equally
    likely: see the module's section on simulations), judged by :func:`_decide` with the claim's
    threshold, interval and :func:`no_effect_pairs`. Returns ``{FALSE_REPRODUCED: r_+,
    FALSE_OPPOSITE: r_-, FALSE_DIRECTIONAL: r_+ + r_-}``, the shares of studies called
    "better" and "worse"; all 0 with fewer than :data:`MIN_PAIRS` pairs, where the rule
    decides nothing. Seeded by ``np.random.default_rng(seed)``."""
    observed = np.asarray(differences, dtype=float)
    if observed.ndim != 1 or len(observed) < 2:
        raise ValueError(f"differences must be a flat sequence of at least 2 paired differences; got shape {observed.shape}")
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
    outcome = _decide(studies, claim.threshold, claim.binary, no_effect_pairs(claim))[3]
    reproduced, opposite = float(np.mean(outcome == BETTER)), float(np.mean(outcome == WORSE))
    return {FALSE_REPRODUCED: reproduced, FALSE_OPPOSITE: opposite, FALSE_DIRECTIONAL: reproduced + opposite}


def resampled_null_table(judged: Sequence[tuple[Claim, Verdict]], simulations: int = SIMULATIONS, seed: int = 0):
    """:func:`resampled_null_rates` for each ``(claim, verdict)`` of ``judged`` with at least two
    paired differences, at the pairs the verdict was judged with: ``(table, largest)``, the table
    indexed by the verdict's claim, in the order given, with columns ``pairs``,
    :data:`FALSE_REPRODUCED`, :data:`FALSE_OPPOSITE` and :data:`FALSE_DIRECTIONAL`, and ``largest`` the largest false
    directional rate in it (``None`` when no verdict has the differences to resample)."""
    import pandas as pd

    rows = [{"claim": verdict.claim, "pairs": verdict.pairs,
             **resampled_null_rates(claim, verdict.differences, verdict.pairs, simulations=simulations, seed=seed)}
            for claim, verdict in judged if len(verdict.differences) >= 2]
    table = pd.DataFrame(rows, columns=["claim", "pairs", FALSE_REPRODUCED, FALSE_OPPOSITE, FALSE_DIRECTIONAL]).set_index("claim")
    return table, (float(table[FALSE_DIRECTIONAL].max()) if len(table) else None)
