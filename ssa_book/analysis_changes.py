"""Every change to the verdict rule, a threshold or a study plan made after results were read,
with the readings it changed: the book's record of its own post hoc decisions, beside the plan
steps taken before the runs they govern (:data:`PLAN_STEPS`; :func:`declared_sentence` counts both).

Each :class:`AnalysisChange` names its commit, what changed and why; the readings it changed are
computed from the cache, never typed in (:mod:`ssa_book.changed_readings`, and here the rule versions):

* the four versions of :func:`ssa_book.verdicts.families.combine` (how a claim of several parts gets one word)
  are applied to the parts of every front-page claim (:func:`combine_versions`);
* the two amendments to the rule for outcomes that flip from seed to seed are the study's own
  comparison of its verdicts with the rule as first planned
  (:func:`ssa_book.icl.study.rule_amendment_changes`);
* the seed amendments compare each amended comparison's verdicts on its first
  :data:`ssa_book.icl.study.ABLATION_SEEDS` seeds (what was read) with its verdicts at the amended
  count, once that is cached (:func:`ssa_book.changed_readings.seed_amendment_changes`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING


from ssa_book import claims
from ssa_book.verdicts.words import (
    BETTER,
    DOES_NOT_HOLD,
    HOLDS_IN_PART,
    NEGLIGIBLE,
    NOT_LEARNED,
    NOT_TESTED,
    PREMISE_NOT_SHOWN,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
    counted_words,
    outcome_words,
)
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.families import combine

if TYPE_CHECKING:
    import pandas as pd


@dataclasses.dataclass(frozen=True)
class AnalysisChange:
    commit: str  # the commit that made the change
    date: str
    kind: str  # "rule", "plan", "threshold" or "words" (what a verdict is called, no decision changed)
    change: str
    reason: str
    after_reading: bool  # made after the results it bears on were read


# ----------------------------------------------------------------------------------------------
# The versions of combine: outcomes of the parts -> the claim's outcome.


def _first_present(outcomes: set[str], order: Iterable[str]) -> str:
    return next(found for found in order if found in outcomes)


def as_then(outcome: str) -> str:
    """``outcome`` as the earlier rules knew it: "too few seeds to decide" was one with
    "undecided", and "not learned" one with "not tested", until the words were split."""
    return {TOO_FEW_SEEDS: UNDECIDED, NOT_LEARNED: NOT_TESTED}.get(outcome, outcome)


def combine_as_planned(outcomes: Sequence[str]) -> str:
    """Parts that differ read "holds in part"."""
    found = set(outcomes)
    return found.pop() if len(found) == 1 else HOLDS_IN_PART


def combine_undecided_apart(outcomes: Sequence[str]) -> str:
    """Parts that differ read "holds in part", unless none is decided: then "undecided" (or "premise
    absent")."""
    found = set(outcomes)
    if len(found) == 1:
        return found.pop()
    if found & {BETTER, HOLDS_IN_PART, NEGLIGIBLE, WORSE, DOES_NOT_HOLD}:
        return HOLDS_IN_PART
    return _first_present(found, (UNDECIDED, PREMISE_NOT_SHOWN, NOT_TESTED))


def combine_weakest_against(outcomes: Sequence[str]) -> str:
    """ "Partly" only with a part that supports the claim; else the weakest outcome decided against
    it ("no difference that matters", else "worse"); else "undecided" (or "premise absent")."""
    found = set(outcomes)
    if len(found) == 1:
        return found.pop()
    if found & {BETTER, HOLDS_IN_PART}:
        return HOLDS_IN_PART
    return _first_present(found, (NEGLIGIBLE, WORSE, UNDECIDED, PREMISE_NOT_SHOWN, NOT_TESTED))


def combine_against_named(outcomes: Sequence[str]) -> str:
    """ "Holds in part" with a part that supports the claim, whatever else; else "does not hold" with
    a part decided against it; else the open or untested outcome."""
    found = set(outcomes)
    if len(found) == 1:
        return found.pop()
    if found & {BETTER, HOLDS_IN_PART}:
        return HOLDS_IN_PART
    if found & {NEGLIGIBLE, WORSE, DOES_NOT_HOLD}:
        return DOES_NOT_HOLD
    return _first_present(found, (UNDECIDED, TOO_FEW_SEEDS, PREMISE_NOT_SHOWN, NOT_LEARNED, NOT_TESTED))


def combine_now(outcomes: Sequence[str]) -> str:
    """:func:`ssa_book.verdicts.families.combine` as it is."""
    return combine("claim", {str(i): Verdict("claim", o) for i, o in enumerate(outcomes)}).outcome


CHANGES: tuple[AnalysisChange, ...] = (
    AnalysisChange(
        "c6476ad",
        "2026-11-30",
        "rule",
        "in-context chapters: a verdict also needs an absolute gain of at least 0.02, besides the relative one",
        "added an hour after the chapter's first results were read, where a large relative gain on a tiny error "
        "read as support; superseded the next day by the one rule (f0ea705), so it moves no reading now",
        True,
    ),
    AnalysisChange(
        "f0ea705",
        "2026-12-01",
        "rule",
        "one rule for every claim: the paired t interval against a declared threshold, the signed-rank guard and "
        "at least 6 pairs, replacing each chapter's own test (the decoder's \"gain larger than the seed "
        'spread", the encoder\'s "at least 2 points on all four paradigms")',
        "the chapters' own tests had no error rate and no threshold declared before their results; made after "
        "decoder seeds 0-1 and encoder seeds 0-2 had been read; the readings the superseded tests give on "
        "today's runs are in the table of superseded rules below",
        True,
    ),
    AnalysisChange(
        "7e238a6",
        "2026-12-01",
        "threshold",
        "the decoder's thresholds: 0.02 nats per token on perplexity, 1.0 point on BLiMP; the encoder's: a t "
        "interval per paradigm and a new headline part, the mean gain over the paper's four paradigms",
        "set when every chapter moved to the one rule (f0ea705), after decoder seeds 0-1 and encoder seeds 0-2 "
        "had been read; see the table of superseded rules below",
        True,
    ),
    AnalysisChange(
        "7e238a6",
        "2026-12-01",
        "threshold",
        "the in-context chapters and the alternatives: one absolute threshold of 0.1 for every claim, the "
        "value the in-context chapters had named as the smallest effect that counts before their first results",
        "set as each claim's threshold of the one rule when every chapter moved to it (f0ea705), after the "
        "in-context chapters' and the alternatives' first results had been read; the value itself predates "
        "them (d872801)",
        True,
    ),
    AnalysisChange(
        "7e238a6",
        "2026-12-01",
        "threshold",
        "the collapse premise: a head collapses onto a token when it puts at least half its attention on "
        "it (COLLAPSE_SHARE = 0.5), the share taken for the most affected head",
        "declared when every verdict moved to one rule, after the chapters' results had been read, from what "
        "collapse onto one token means (the token outweighs all the other keys together), not from the data",
        True,
    ),
    AnalysisChange(
        "f176caf",
        "2026-12-02",
        "rule",
        "combine: parts that differ with none decided read inconclusive (or premise absent), not partly",
        '"partly" reads as partial support, and undecided parts give none',
        True,
    ),
    AnalysisChange(
        "fe04d15",
        "2026-12-03",
        "plan",
        "max retrieval: the mechanism endpoint becomes the share of the head's absolute weight on the top item, "
        "not its raw weight",
        "after three seeds had been read, where SA-softmax's raw weight ran far above 1 and turned negative at "
        'large logits, so "more weight" had no fixed meaning; the raw weight is not in the cache (the runs '
        "were recomputed with the new endpoint), so its readings cannot be shown beside the new ones",
        True,
    ),
    AnalysisChange(
        "cf6b8be",
        "2026-12-03",
        "rule",
        "a distribution-free check (a betting interval for a bounded mean) decides each prompt-error verdict of "
        "the study again, beside the rule, never instead of it",
        "added after the study's verdicts were read, as a robustness check: it is post hoc, and the front page "
        "says so where it quotes it, naming the verdicts it does not keep",
        True,
    ),
    AnalysisChange(
        "c43f143",
        "2026-12-03",
        "rule",
        "an outcome that is 0 or 1 per seed (a run generalises or not) is judged with Tango's interval for "
        "paired proportions, not the paired t interval",
        "the t interval of ten agreeing 0/1 pairs is the point 0 and read them as no effect at any threshold",
        True,
    ),
    AnalysisChange(
        "47a4544",
        "2026-12-03",
        "rule",
        "an outcome that flips from seed to seed needs the pairs of no_effect_pairs before it can read no effect",
        "pairs that show no flip cannot rule out flips frequent enough to matter",
        True,
    ),
    AnalysisChange(
        "70fbf62",
        "2026-12-03",
        "plan",
        "the three starting-point comparisons go from 10 to the primary question's 40 seeds",
        "with the previous change, ten pairs can never call a prompt error no effect, which the reading of "
        "SSA's deficit needs",
        True,
    ),
    AnalysisChange(
        "c05e175",
        "2026-12-03",
        "rule",
        "combine: parts that differ with none reproduced read the weakest outcome decided against the claim",
        '"partly" read as partial support where no part gave any',
        True,
    ),
    AnalysisChange(
        "dd6a276",
        "2026-12-04",
        "plan",
        "the learning-rate (1e-4, 10 x steps) and warm-up + cosine comparisons go from 10 to the primary "
        "question's 40 seeds",
        "at ten pairs their prompt errors cannot read no effect, and the primary answer must be set against "
        "the regime it holds in",
        True,
    ),
    AnalysisChange(
        "fe32bcd",
        "2026-12-04",
        "rule",
        "combine: parts that differ with none reproduced and one at least decided against the claim read "
        '"does not hold", with the parts counted',
        "the weakest outcome against the claim hid adverse parts under a milder word (SSA worse on two kinds "
        "of shift read no effect) and folded undecided parts into it",
        True,
    ),
    AnalysisChange(
        "4e737d3",
        "2026-12-04",
        "rule",
        "an outcome that flips from seed to seed is decided in either direction only from the pairs that "
        '"no effect" needs (36 for a prompt error)',
        "under nulls resampled from the study's own per-seed outcomes, the rule gave a false 'better' or "
        "'worse' up to 30% of the time at 6 to 10 pairs, against at most 5% from 36 on",
        True,
    ),
    AnalysisChange(
        "ddac37e",
        "2026-12-04",
        "rule",
        "the rule's false direction rate is measured under nulls resampled from each study's own per-seed "
        "differences, beside the normal-theory simulations",
        "added after reading, to check the rule on the outcomes it actually judges; it changes no verdict by "
        "itself (the change of 4e737d3 acted on what it found)",
        True,
    ),
    AnalysisChange(
        "0ef9865",
        "2026-12-04",
        "words",
        "the verdicts' words: reproduced becomes 'SSA better' (the treatment named), opposite 'SSA worse', "
        "no effect at this scale 'no difference that matters', inconclusive 'undecided' or, below the pairs "
        "the rule decides from, 'too few seeds to decide', partly 'holds in part', and not tested 'not "
        "learned' where a model did not learn its task; each claim then holds, does not hold, holds in part "
        "or is undecided",
        "the old words hid a result's direction (opposite read as support where an alternative was worse) "
        "and made a seed count too small to decide sound like a finding; no decision changed. The same commit "
        "added the study's false-discovery families (its primary comparisons, and all the others) and the table "
        "of verdicts under other cut-offs, both after the study's results had been read, shown as checks "
        "until the symmetric rule (below) brought the families into the words",
        True,
    ),
    AnalysisChange(
        "75a550b",
        "2026-12-04",
        "threshold",
        "max retrieval: adaptive temperature is also judged as a replication, its mean accuracy over 512, "
        "1,024 and 2,048 items against softmax's, with the smallest gain its authors report there (0.024) as "
        "the threshold; the chapter's claim for every scorer (0.05 over every shifted size) stays",
        "a replication of published work is judged against the effect its authors report, and every gain they "
        "report is below the chapter's threshold, so that threshold could only ever call their effect no "
        "difference",
        True,
    ),
    AnalysisChange(
        "2ffd060",
        "2026-12-05",
        "plan",
        "decoder: softmax and SSA go from 2 to 6 paired seeds (seeds 0 to 5 at the cpu profile)",
        "two pairs are below the rule's minimum of 6, so the chapter could only say too few seeds to decide; "
        "raised after the two seeds' results had been read, with the endpoints and thresholds unchanged",
        True,
    ),
    AnalysisChange(
        "c256e95",
        "2026-12-05",
        "plan",
        "encoder: every variant goes from 3 to 8 seeds (seeds 0 to 7 at the cpu profile), softmax paired with the "
        "SSA variant the paper reports for each paradigm as before",
        "three pairs are below the rule's minimum of 6, so no part could be decided; raised after the three seeds' "
        "results had been read, with the endpoints and thresholds unchanged",
        True,
    ),
    AnalysisChange(
        "b085584",
        "2026-12-05",
        "plan",
        "max retrieval: a second setup, the original's (training sets of 5 to 16 items, a query computed from "
        "the set, AdamW with weight decay 0.01, 30,000 steps at a constant learning rate of 3e-4, tests to "
        "16,384 items), with softmax, adaptive temperature and SSA at the chapter's 10 seeds; adaptive "
        "temperature's replication is judged there too. Length and learning rate were chosen on softmax "
        "alone, from pilot runs not in the book, as the first setting whose softmax came near the original's "
        "accuracy in distribution and at 256 items; same endpoints, thresholds and gate; no seed is dropped",
        "the short setup differs from the original in four ways and its softmax is weaker than the original's, "
        "so it could not judge a replication of the original; added after the short setup's results had been "
        "read, before any run of the original setup but softmax's pilots",
        True,
    ),
    AnalysisChange(
        "4f6b8b1",
        "2026-12-06",
        "plan",
        "max retrieval: every registered scorer runs in the original setup too, at the chapter's 10 seeds, and the "
        "leaderboard gains a column for it (the share of test sets named wrong at 256 items, the same point, "
        "threshold and gate as the short setup's column, which stays)",
        "the original setup is where the paper's source ran max retrieval, so the leaderboard's reading of set-size "
        "shift should not rest on the short setup alone; added after the original setup's runs of softmax, "
        "adaptive temperature and SSA had been read, before any run of the other eleven scorers there",
        True,
    ),
    AnalysisChange(
        "88cbc2c",
        "2026-12-06",
        "plan",
        "max retrieval, original setup: the two variants of the short setup's starting-point comparisons (a softmax "
        "with SSA's starting slope, SSA from the authors' start) run there too, at the chapter's 10 seeds, and SSA's "
        "difference from softmax there is read by the same comparisons, rule and thresholds",
        "SSA is worse than softmax in the original setup, and that could come from its start rather than its form; "
        "added after SSA's and softmax's runs there had been read, before any run of the variants there",
        True,
    ),
    AnalysisChange(
        "7c88c2d",
        "2026-12-07",
        "plan",
        "encoder: a confirmatory test on fresh seeds 8 to 23 (16 pairs), its endpoint the mean Zorro accuracy over "
        "every paradigm, learned SSA against softmax (primary) and SSA with n = 2 against softmax (secondary), the "
        "chapter's 2.0-point threshold, a symmetric rule with Benjamini-Hochberg control over the two; the "
        "chapter's declared endpoint (the paper's four paradigms) and its verdict stay as they were",
        "learned SSA's gain on that mean (positive on each of seeds 0 to 7) was found after the results were "
        "read, from several endpoints, so it is exploratory; the plan was committed before any of its runs, and "
        "changes no reading: it adds a test",
        True,
    ),
    AnalysisChange(
        "550efa7",
        "2026-12-07",
        "rule",
        'one symmetric rule: "worse" needs the estimate to reach the threshold as "better" does, and '
        "no word takes precedence over another; a direction must survive Benjamini-Hochberg control of false "
        "discoveries within its chapter's family (the study: its primary comparisons, and all the others; the "
        "leaderboard: every cell; the alternatives: every comparison; the encoder and the decoder: the parts "
        "of their claim; max retrieval: the scorers compared on one endpoint and setup, and the starting-point "
        'comparisons; the in-context claims: their parts); parts decided both ways read "mixed"; an '
        "attribution (form or starting slope) only from decided comparisons; fewer pairs than the rule decides "
        'from read "exploratory (N pairs)"',
        'a small decided deficit read "SSA worse" where the mirror-image gain read "undecided", so the '
        "rule leaned against the treatment; the false-discovery adjustment was computed but did not reach the "
        'words; "holds in part" stood over parts decided against the claim; every verdict the change moved '
        "is listed below, old word and new",
        True,
    ),
    AnalysisChange(
        "3db5f6e",
        "2026-12-07",
        "plan",
        "the comparisons of 3 x the steps and of 4 x the parameters go from 10 to the primary question's 40 seeds; "
        "10 x the steps stays at 10 and reads exploratory",
        "at ten pairs their prompt errors could never be decided (the rule needs 36 on outcomes that flip), so the "
        "regime map could only show estimates there; raised after their ten-seed estimates had been read, with "
        "endpoints, thresholds and rule unchanged",
        True,
    ),
    AnalysisChange(
        "550efa7",
        "2026-12-07",
        "plan",
        "the fewest pairs a chapter decides from: 20 in max retrieval (both setups) and in the leaderboard's "
        "column of its short setup, 40 in the encoder and in the leaderboard's column of max retrieval's "
        "original setup; 6 (or 36 for prompt errors that flip) elsewhere, as before",
        "under nulls made of each chapter's own per-seed differences recentred to no effect, the rule named a "
        "false direction more than 5% of the time at the seeds those chapters have (one seed far from the "
        "others, as a softmax that fails, fools the t interval); the fewest pairs of 6, 10, 20 and 40 at which "
        "each stays at or below 5% are taken; the verdicts this moved are listed below, and the reproducing page "
        "shows every chapter's rates",
        True,
    ),
    AnalysisChange(
        "7f61dbb",
        "2026-12-07",
        "rule",
        "the alternative scorers' chapter decides a prompt error, which flips from seed to seed, only from the pairs "
        'its flips need (36), as the study and the leaderboard did; a small decided direction beside "no difference '
        'that matters" is said only where the signed-rank test and false-discovery control agree',
        "found by a sceptical reading of the pages after the symmetric rule: the chapter had kept the rule's default "
        "of 6 pairs for prompt errors, and the small direction was said from the t interval alone; at the cpu "
        "profile the chapter's 3 seeds were exploratory before and after, so no verdict of the chapter moved, and the "
        "small directions the second part removed are those whose adjusted p is 0.05 or more",
        True,
    ),
    AnalysisChange(
        "fd73d91",
        "2026-12-07",
        "words",
        "the collapse claim's word when softmax's measured share of attention on the injected value stays below "
        'the cut in every seed: "premise absent" becomes "premise not shown", and where softmax\'s logit '
        "spread did grow (the mechanism's first step) the measurement says so",
        'a sceptical reading found "absent" stronger than its test: a cut set after reading, three seeds, and on '
        'linear functions a logit spread that grew in every seed; the collapse verdicts on "every", "some" '
        'and linear functions, and over the three tasks, read "premise not shown" where they read "premise '
        'absent"; no decision changed',
        True,
    ),
    AnalysisChange(
        "576a7bb",
        "2026-12-07",
        "rule",
        'the distribution-free check of decided prompt-error verdicts: its "worse" needs the estimate to reach '
        "the threshold, as the rule's does since the symmetric rule (550efa7), which had missed this check",
        "found by a sceptical reading of the pages; the check's verdicts on the four decided prompt-error "
        "verdicts all have estimates beyond the threshold, so none of its readings moved",
        True,
    ),
    AnalysisChange(
        "b567f14",
        "2026-12-07",
        "rule",
        'the collapse chapter decides the harm of an injected extreme value on "every" and "some", a prompt '
        "error, which flips from seed to seed, only from the pairs its flips need (36), as the chapters' other "
        "prompt errors are",
        "found by a sceptical reading of the pages: the claim had kept the rule's default of 6 pairs, so that its "
        "power read positive below the pairs the rule decides a prompt error from; at the chapter's 3 seeds both "
        "harm verdicts read exploratory before and after, so no reading moved",
        True,
    ),
    AnalysisChange(
        "05e486f",
        "2026-12-07",
        "rule",
        "the alternatives: each alternative's claim to be better than softmax on every panel, and the paper's "
        "statement that none is, tallied by the book's one rule for a claim of several parts: an alternative "
        "decided against on one panel at least counts for the statement, whatever its open panels",
        "the statement had a tally of its own, which stayed undecided while any panel was open; made after the "
        "leaderboard's ten seeds had been read, it moved the front page's alternative scorers from undecided to "
        "holds: every alternative the paper tried reads no difference that matters on the linear-function "
        "panels, while its prompt-error panels stay exploratory; found by a sceptical reading of the pages",
        True,
    ),
    AnalysisChange(
        "3274b35",
        "2026-12-07",
        "rule",
        'the rule\'s rate of a false "no difference that matters", with the true effect at the threshold, '
        "measured per chapter on its own paired differences and said beside the rate of false directions",
        'a sceptical reading found the front page\'s only "holds" resting on eleven "no difference that '
        'matters" verdicts whose false rate was not computed; a check added after the results were read, it '
        "changes no verdict (the largest rate is the leaderboard's and the alternatives', the chapters behind that \"holds\")",
        True,
    ),
    AnalysisChange(
        "2fe99e1",
        "2026-12-07",
        "rule",
        "the rule's false direction rates without the pair minimums set after reading (the rule's own 6 pairs, and "
        'no prompt-error minimum for a direction), beside the rates as applied, and the largest false "no '
        'difference that matters" rate set beside the rate a 95% interval aims at',
        "a sceptical reading found the table's rates at 6 and 10 pairs computed under those minimums, so that "
        "they read about zero where the minimums had been set because the rule erred; a check added after the "
        "results were read, it changes no verdict",
        True,
    ),
)


@dataclasses.dataclass(frozen=True)
class PlanStep:
    """A step of the powered study's plan taken before any run it bears on existed, and how to find
    it in the history: the commit that first added ``marker`` to ``path``."""

    commit: str
    what: str
    path: str
    marker: str


# The plans of the powered study and of the encoder's confirmation, and what was added to them
# before the runs they govern (the changes made
# after a reading are in CHANGES, with the same kind of marker in PLAN_CHANGE_MARKERS). A path names
# the file as it stood at its commit, where the history finds the marker (the plan's code is in
# ssa_book/icl/study/design.py).
PLAN_STEPS: tuple[PlanStep, ...] = (
    PlanStep(
        "5389975",
        "the plan: comparisons, seeds, endpoints and rule, fixed before any run of the study",
        "ssa/icl/study.py",
        "",
    ),
    PlanStep(
        "ae22e28",
        "the contingency on training length: 30 x the steps if SSA's difference still moves from 3 x to 10 x",
        "ssa/icl/study.py",
        "LONGER_TRAINING = Comparison(",
    ),
    PlanStep(
        "e41f7ef",
        'the learning-rate comparison (1e-4, 10 x steps) read on "some" as well as "every"',
        "ssa/icl/study.py",
        '"ssa_lr1e-4", "softmax_lr1e-4", _Q,',
    ),
    PlanStep(
        "7c88c2d",
        "the encoder's confirmatory test: endpoint, comparisons, fresh seeds 8-23, threshold and rule, "
        "fixed before any of its runs",
        "ssa_book/encoder/confirmation.py",
        "",
    ),
)

# The study's changes made after a reading (commits of CHANGES) and the text each first added to
# its file, so that a test can find the commit in the history.
PLAN_CHANGE_MARKERS: dict[str, tuple[str, str]] = {
    "c43f143": ("ssa/icl/study.py", 'one seed in five more that generalises", binary=True)'),
    "47a4544": ("ssa/icl/study.py", '"prompt error", _TENTH, largest_flip=PROMPT_ERROR_FLIP)'),
    "70fbf62": ("ssa/icl/study.py", '"ssa_b1", "softmax", _Q, STARTING_POINT_SEEDS,'),
    "dd6a276": ("ssa/icl/study.py", '"ssa_lr1e-4", "softmax_lr1e-4", _Q, REGIME_SEEDS,'),
    "3db5f6e": ("ssa_book/icl/study/design.py", "LENGTH_AND_SIZE_SEEDS = PRIMARY_SEEDS"),
}


def plan_steps_frame() -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame([{"commit": step.commit, "step": step.what} for step in PLAN_STEPS])


# The versions of combine in the order they held, each with the change that ended it.
COMBINE_VERSIONS: tuple[tuple[str, Callable[[Sequence[str]], str]], ...] = (
    ("as planned", combine_as_planned),
    ("after f176caf", combine_undecided_apart),
    ("after c05e175", combine_weakest_against),
    ("after fe32bcd", combine_against_named),
    ("now: parts decided both ways read mixed", combine_now),
)


def combine_versions(rows) -> "pd.DataFrame":
    """For every front-page row whose verdict combines parts that differ
    (:attr:`ssa_book.claims.LedgerRow.parts`): its parts counted, and the outcome each version of
    combine gives them."""
    import pandas as pd

    records = []
    for row in rows:
        if len(set(row.parts)) < 2:
            continue
        treatment = "SSA" if row.key in claims.SSA_ROWS else ""
        record = {
            "claim": row.claim,
            "parts": counted_words([(outcome, outcome_words(outcome, treatment)) for outcome in row.parts]),
        }
        then = [as_then(outcome) for outcome in row.parts]
        record.update(
            {
                name: outcome_words(version(row.parts if name == COMBINE_VERSIONS[-1][0] else then), treatment)
                for name, version in COMBINE_VERSIONS
            }
        )
        records.append(record)
    return pd.DataFrame(records, columns=["claim", "parts", *(name for name, _ in COMBINE_VERSIONS)])


# What each kind of change changed, in a reader's words.
KIND_WORDS = {"rule": "the rule", "threshold": "thresholds", "plan": "study plans", "words": "verdict words"}


def declared_sentence(changes: Sequence[AnalysisChange] = CHANGES, steps: Sequence[PlanStep] = PLAN_STEPS) -> str:
    """What was declared before the results it judges were read and what after, counted: the plan
    steps taken before their runs (and any change made before reading), then the changes made
    after reading by kind, as the page's overview says it."""
    after = [change for change in changes if change.after_reading]
    before = len(changes) - len(after)
    kinds = [
        f"{KIND_WORDS[kind]} ({sum(change.kind == kind for change in after)})"
        for kind in KIND_WORDS
        if any(change.kind == kind for change in after)
    ]
    listed = ", ".join(kinds[:-1]) + f" and {kinds[-1]}" if len(kinds) > 1 else "".join(kinds)
    text = (
        f"Declared before the results they judge were read: the {len(steps)} plan steps listed last on this page"
        + (f" and {before} of the changes below" if before else "")
        + ". "
    )
    if not after:
        return text + "No change was made after results were read."
    counted = f"{'all ' if not before and len(after) > 1 else ''}{len(after)} change{'' if len(after) == 1 else 's'}"
    return (
        text + f"Made after results were read: {counted} listed below, to {listed}, each with the readings it changed."
    )


def changes_frame() -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "commit": c.commit,
                "date": c.date,
                "kind": c.kind,
                "change": c.change,
                "why": c.reason,
                "after results were read": "yes" if c.after_reading else "no",
            }
            for c in CHANGES
        ]
    )


__all__ = [
    "AnalysisChange",
    "CHANGES",
    "KIND_WORDS",
    "declared_sentence",
    "COMBINE_VERSIONS",
    "combine_versions",
    "changes_frame",
    "PlanStep",
    "PLAN_STEPS",
    "PLAN_CHANGE_MARKERS",
    "plan_steps_frame",
    "combine_as_planned",
    "combine_undecided_apart",
    "combine_weakest_against",
    "combine_now",
]
