"""Every change to the verdict rule, a threshold or a study plan made after results were read,
with the readings it changed: the book's record of its own post hoc decisions.

A pre-declared analysis is only as good as its record of departures. Each :class:`AnalysisChange`
names its commit, what changed and why; the readings it changed are computed here from the
cache, never typed in:

* the four versions of :func:`ssa_book.verdicts.combine` (how a claim of several parts gets one word)
  are applied to the parts of every front-page claim (:func:`combine_versions`);
* the two amendments to the rule for outcomes that flip from seed to seed are the study's own
  comparison of its verdicts with the rule as first planned
  (:func:`ssa_book.icl.study.rule_amendment_changes`);
* the seed amendments compare each amended comparison's verdicts on its first
  :data:`ssa_book.icl.study.ABLATION_SEEDS` seeds (what was read) with its verdicts at the amended
  count, once that is cached (:func:`seed_amendment_changes`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ssa_book import claims, verdicts
from ssa_book.icl import study
from ssa_book.icl.tasks import get_task
from ssa_book.results import CacheMissError
from ssa_book.retrieval import analysis as retrieval
from ssa_book.verdicts import (DOES_NOT_HOLD, UNDECIDED, NEGLIGIBLE, NOT_TESTED, WORSE, HOLDS_IN_PART,
                               PREMISE_ABSENT, BETTER)


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
    return {verdicts.TOO_FEW_SEEDS: UNDECIDED, verdicts.NOT_LEARNED: NOT_TESTED}.get(outcome, outcome)


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
    return _first_present(found, (UNDECIDED, PREMISE_ABSENT, NOT_TESTED))


def combine_weakest_against(outcomes: Sequence[str]) -> str:
    """"Partly" only with a part that supports the claim; else the weakest outcome decided against
    it ("no difference that matters", else "worse"); else "undecided" (or "premise absent")."""
    found = set(outcomes)
    if len(found) == 1:
        return found.pop()
    if found & {BETTER, HOLDS_IN_PART}:
        return HOLDS_IN_PART
    return _first_present(found, (NEGLIGIBLE, WORSE, UNDECIDED, PREMISE_ABSENT, NOT_TESTED))


def combine_now(outcomes: Sequence[str]) -> str:
    """:func:`ssa_book.verdicts.combine` as it is."""
    return verdicts.combine("claim", {str(i): verdicts.Verdict("claim", o) for i, o in enumerate(outcomes)}).outcome


CHANGES: tuple[AnalysisChange, ...] = (
    AnalysisChange("7e238a6", "2026-12-01", "threshold",
                   "the collapse premise: a head collapses onto a token when it puts at least half its attention on "
                   "it (COLLAPSE_SHARE = 0.5), the share taken for the most affected head",
                   "declared when every verdict moved to one rule, after the chapters' results had been read, from what "
                   "collapse onto one token means (the token outweighs all the other keys together), not from the data",
                   True),
    AnalysisChange("f176caf", "2026-12-02", "rule",
                   "combine: parts that differ with none decided read inconclusive (or premise absent), not partly",
                   "\"partly\" reads as partial support, and undecided parts give none", True),
    AnalysisChange("c43f143", "2026-12-03", "rule",
                   "an outcome that is 0 or 1 per seed (a run generalises or not) is judged with Tango's interval for "
                   "paired proportions, not the paired t interval",
                   "the t interval of ten agreeing 0/1 pairs is the point 0 and read them as no effect at any threshold", True),
    AnalysisChange("47a4544", "2026-12-03", "rule",
                   "an outcome that flips from seed to seed needs the pairs of verdicts.no_effect_pairs before it can read "
                   "no effect",
                   "pairs that show no flip cannot rule out flips frequent enough to matter", True),
    AnalysisChange("70fbf62", "2026-12-03", "plan",
                   "the three starting-point comparisons go from 10 to the primary question's 40 seeds",
                   "with the previous change, ten pairs can never call a prompt error no effect, which the reading of "
                   "SSA's deficit needs", True),
    AnalysisChange("c05e175", "2026-12-03", "rule",
                   "combine: parts that differ with none reproduced read the weakest outcome decided against the claim",
                   "\"partly\" read as partial support where no part gave any", True),
    AnalysisChange("dd6a276", "2026-12-04", "plan",
                   "the learning-rate (1e-4, 10 x steps) and warm-up + cosine comparisons go from 10 to the primary "
                   "question's 40 seeds",
                   "at ten pairs their prompt errors cannot read no effect, and the primary answer must be set against "
                   "the regime it holds in", True),
    AnalysisChange("fe32bcd", "2026-12-04", "rule",
                   "combine: parts that differ with none reproduced and one at least decided against the claim read "
                   "\"does not hold\", with the parts counted",
                   "the weakest outcome against the claim hid adverse parts under a milder word (SSA worse on two kinds "
                   "of shift read no effect) and folded undecided parts into it", True),
    AnalysisChange("4e737d3", "2026-12-04", "rule",
                   "an outcome that flips from seed to seed is decided in either direction only from the pairs that "
                   "\"no effect\" needs (36 for a prompt error)",
                   "under nulls resampled from the study's own per-seed outcomes, the rule gave a false 'better' or "
                   "'worse' up to 30% of the time at 6 to 10 pairs, against at most 5% from 36 on", True),
    AnalysisChange("0ef9865", "2026-12-04", "words",
                   "the verdicts' words: reproduced becomes 'SSA better' (the treatment named), opposite 'SSA worse', "
                   "no effect at this scale 'no difference that matters', inconclusive 'undecided' or, below the pairs "
                   "the rule decides from, 'too few seeds to decide', partly 'holds in part', and not tested 'not "
                   "learned' where a model did not learn its task; each claim then holds, does not hold, holds in part "
                   "or is undecided",
                   "the old words hid a result's direction (opposite read as support where an alternative was worse) "
                   "and made a seed count too small to decide sound like a finding; no decision changed", True),
    AnalysisChange("75a550b", "2026-12-04", "threshold",
                   "max retrieval: adaptive temperature is also judged as a replication, its mean accuracy over 512, "
                   "1,024 and 2,048 items against softmax's, with the smallest gain its authors report there (0.024) as "
                   "the threshold; the chapter's claim for every scorer (0.05 over every shifted size) stays",
                   "a replication of published work is judged against the effect its authors report, and every gain they "
                   "report is below the chapter's threshold, so that threshold could only ever call their effect no "
                   "difference", True),
    AnalysisChange("2ffd060", "2026-12-05", "plan",
                   "decoder: softmax and SSA go from 2 to 6 paired seeds (seeds 0 to 5 at the cpu profile)",
                   "two pairs are below the rule's minimum of 6, so the chapter could only say too few seeds to decide; "
                   "raised after the two seeds' results had been read, with the endpoints and thresholds unchanged", True),
    AnalysisChange("c256e95", "2026-12-05", "plan",
                   "encoder: every variant goes from 3 to 8 seeds (seeds 0 to 7 at the cpu profile), softmax paired with the "
                   "SSA variant the paper reports for each paradigm as before",
                   "three pairs are below the rule's minimum of 6, so no part could be decided; raised after the three seeds' "
                   "results had been read, with the endpoints and thresholds unchanged", True),
    AnalysisChange("b085584", "2026-12-05", "plan",
                   "max retrieval: a second setup, the original's (training sets of 5 to 16 items, a query computed from "
                   "the set, AdamW with weight decay 0.01, 30,000 steps at a constant learning rate of 3e-4, tests to "
                   "16,384 items), with softmax, adaptive temperature and SSA at the chapter's 10 seeds; adaptive "
                   "temperature's replication is judged there too. Length and learning rate were chosen on softmax "
                   "alone, from pilot runs not in the book, as the first setting whose softmax came near the original's "
                   "accuracy in distribution and at 256 items; same endpoints, thresholds and gate; no seed is dropped",
                   "the short setup differs from the original in four ways and its softmax is weaker than the original's, "
                   "so it could not judge a replication of the original; added after the short setup's results had been "
                   "read, before any run of the original setup but softmax's pilots", True),
    AnalysisChange("4f6b8b1", "2026-12-06", "plan",
                   "max retrieval: every registered scorer runs in the original setup too, at the chapter's 10 seeds, and the "
                   "leaderboard gains a column for it (the share of test sets named wrong at 256 items, the same point, "
                   "threshold and gate as the short setup's column, which stays)",
                   "the original setup is where the paper's source ran max retrieval, so the leaderboard's reading of set-size "
                   "shift should not rest on the short setup alone; added after the original setup's runs of softmax, "
                   "adaptive temperature and SSA had been read, before any run of the other eleven scorers there", True),
    AnalysisChange("88cbc2c", "2026-12-06", "plan",
                   "max retrieval, original setup: the two variants of the short setup's starting-point comparisons (a softmax "
                   "with SSA's starting slope, SSA from the authors' start) run there too, at the chapter's 10 seeds, and SSA's "
                   "difference from softmax there is read by the same comparisons, rule and thresholds",
                   "SSA is worse than softmax in the original setup, and that could come from its start rather than its form; "
                   "added after SSA's and softmax's runs there had been read, before any run of the variants there", True),
    AnalysisChange("7c88c2d", "2026-12-07", "plan",
                   "encoder: a confirmatory test on fresh seeds 8 to 23 (16 pairs), its endpoint the mean Zorro accuracy over "
                   "every paradigm, learned SSA against softmax (primary) and SSA with n = 2 against softmax (secondary), the "
                   "chapter's 2.0-point threshold, a symmetric rule with Benjamini-Hochberg control over the two; the "
                   "chapter's declared endpoint (the paper's four paradigms) and its verdict stay as they were",
                   "learned SSA's gain on that mean (+2.29 points on seeds 0 to 7, positive on each) was found after the "
                   "results were read, from several endpoints, so it is exploratory; the plan was committed before any of "
                   "its runs, and changes no reading: it adds a test", True),
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
    PlanStep("5389975", "the plan: comparisons, seeds, endpoints and rule, fixed before any run of the study",
             "ssa/icl/study.py", ""),
    PlanStep("ae22e28", "the contingency on training length: 30 x the steps if SSA's difference still moves from 3 x to 10 x",
             "ssa/icl/study.py", "LONGER_TRAINING = Comparison("),
    PlanStep("e41f7ef", "the learning-rate comparison (1e-4, 10 x steps) read on \"some\" as well as \"every\"",
             "ssa/icl/study.py", '"ssa_lr1e-4", "softmax_lr1e-4", _Q,'),
    PlanStep("7c88c2d", "the encoder's confirmatory test: endpoint, comparisons, fresh seeds 8-23, threshold and rule, "
             "fixed before any of its runs", "ssa_book/encoder/confirmation.py", ""),
)

# The study's changes made after a reading (commits of CHANGES) and the text each first added to
# its file, so that a test can find the commit in the history.
PLAN_CHANGE_MARKERS: dict[str, tuple[str, str]] = {
    "c43f143": ("ssa/icl/study.py", 'one seed in five more that generalises", binary=True)'),
    "47a4544": ("ssa/icl/study.py", '"prompt error", _TENTH, largest_flip=PROMPT_ERROR_FLIP)'),
    "70fbf62": ("ssa/icl/study.py", '"ssa_b1", "softmax", _Q, STARTING_POINT_SEEDS,'),
    "dd6a276": ("ssa/icl/study.py", '"ssa_lr1e-4", "softmax_lr1e-4", _Q, REGIME_SEEDS,'),
}


def plan_steps_frame() -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame([{"commit": step.commit, "step": step.what} for step in PLAN_STEPS])


# The versions of combine in the order they held, each with the change that ended it.
COMBINE_VERSIONS: tuple[tuple[str, Callable[[Sequence[str]], str]], ...] = (
    ("as planned", combine_as_planned),
    ("after f176caf", combine_undecided_apart),
    ("after c05e175", combine_weakest_against),
    ("after fe32bcd (now)", combine_now),
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
        record = {"claim": row.claim, "parts": verdicts.counted_words([(outcome, verdicts.outcome_words(outcome, treatment)) for outcome in row.parts])}
        then = [as_then(outcome) for outcome in row.parts]
        record.update({name: verdicts.outcome_words(version(row.parts if name == COMBINE_VERSIONS[-1][0] else then), treatment)
                       for name, version in COMBINE_VERSIONS})
        records.append(record)
    return pd.DataFrame(records, columns=["claim", "parts", *(name for name, _ in COMBINE_VERSIONS)])


def seed_amendment_changes(cache, names: Sequence[str], read_at: int) -> "pd.DataFrame":
    """The comparisons ``names`` of the powered study, judged on their first ``read_at`` seeds
    (what was read before the amendment) and at their amended count (once cached on a task; else
    how many runs are): one row per comparison, task and prompt-error endpoint whose verdict the
    amendment changed or has not yet decided."""
    import pandas as pd


    records = []
    for name in names:
        compared = study.comparison(name, cache.profile)
        if compared is None:
            continue
        before = dataclasses.replace(compared, seeds=min(read_at, compared.seeds))
        for task in compared.tasks:
            if not cache.complete(before, task):
                continue
            complete = cache.complete(compared, task)
            for endpoint in compared.endpoints:
                read = study.judge(before, task, endpoint, cache)
                if complete:
                    now = study.judge(compared, task, endpoint, cache)
                    if now.outcome == read.outcome:
                        continue
                    after = f"{now.words()} {now.estimate()} ({now.pairs} pairs)"
                else:
                    after = f"pending: {cache.cached(compared, task)} of {study.needed(compared, task)} runs cached"
                records.append({"comparison": name, "task": get_task(task).title, "endpoint": endpoint,
                                "as read": f"{read.words()} {read.estimate()} ({read.pairs} pairs)", "amended": after})
    return pd.DataFrame(records, columns=["comparison", "task", "endpoint", "as read", "amended"])


def _before_pair_minimum(claim: verdicts.Claim, differences: Sequence[float]) -> str:
    """The outcome the rule gave before 4e737d3: a direction from MIN_PAIRS pairs on, "no effect"
    on a flip-prone outcome only from no_effect_pairs."""
    if len(differences) < verdicts.MIN_PAIRS:
        return UNDECIDED
    outcome = str(verdicts._decide(np.asarray([differences], dtype=float), claim.threshold, claim.binary)[3][0])
    return UNDECIDED if outcome == NEGLIGIBLE and len(differences) < verdicts.no_effect_pairs(claim) else outcome


def pair_minimum_changes(cache) -> "pd.DataFrame":
    """The powered study's verdicts that the pair minimum for directions on flip-prone outcomes
    (4e737d3) changed: one row per comparison, task and endpoint, before and after."""
    import pandas as pd


    records = []
    for row in study.verdict_rows(study.plan(cache.profile, cache=cache), cache):
        verdict, claim = row["verdict"], study.ENDPOINTS[row["endpoint"]].claim
        if verdict.outcome == NOT_TESTED or not verdict.differences:
            continue
        before = _before_pair_minimum(claim, verdict.differences)
        if before != as_then(verdict.outcome):
            records.append({"comparison": row["comparison"], "task": get_task(row["task"]).title, "endpoint": row["endpoint"],
                            "pairs": verdict.pairs, "before": f"{verdicts.outcome_words(before)} {verdict.estimate()}",
                            "now": verdict.words()})
    return pd.DataFrame(records, columns=["comparison", "task", "endpoint", "pairs", "before", "now"])


def replication_changes(profile: str) -> "pd.DataFrame":
    """Adaptive temperature on max retrieval before and after it was judged as a replication
    (75a550b): the chapter's claim for every scorer, and the replication claim; empty where the
    runs are not cached at ``profile``."""
    import pandas as pd


    columns = ["claim", "threshold", "verdict"]
    try:
        runs = retrieval.load_runs(profile, ("softmax", "adaptive_temperature"))
    except CacheMissError:
        return pd.DataFrame(columns=columns)
    train_items = retrieval.train_items(profile)
    judged = (retrieval.versus(runs, "adaptive_temperature", "softmax", retrieval.SHIFTED_ACCURACY, "accuracy", train_items),
              retrieval.adaptive_temperature_replication(runs, train_items))
    claims = ("the chapter's, for every scorer: " + retrieval.SHIFTED_ACCURACY.name,
              "the replication's: " + retrieval.ADAPTIVE_TEMPERATURE_REPLICATION.name)
    return pd.DataFrame([{"claim": claim, "threshold": f"{verdict.threshold:g} {verdict.units}",
                          "verdict": " ".join(filter(None, (verdict.words(), verdict.estimate("+.3f"),
                                                            f"({verdict.pairs} pairs)" if verdict.pairs else "")))}
                         for claim, verdict in zip(claims, judged)], columns=columns)


def changes_frame() -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame([{"commit": c.commit, "date": c.date, "kind": c.kind, "change": c.change, "why": c.reason,
                          "after results were read": "yes" if c.after_reading else "no"} for c in CHANGES])


__all__ = ["AnalysisChange", "CHANGES", "COMBINE_VERSIONS", "combine_versions", "seed_amendment_changes", "replication_changes", "changes_frame",
           "PlanStep", "PLAN_STEPS", "PLAN_CHANGE_MARKERS", "plan_steps_frame",
           "combine_as_planned", "combine_undecided_apart", "combine_weakest_against", "combine_now", "pair_minimum_changes"]

