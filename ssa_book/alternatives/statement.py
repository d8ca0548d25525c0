"""Each alternative scorer against softmax by the book's one rule, and the paper's statement that
none of the alternatives it tried is consistently better than softmax, judged from them."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ssa_book.verdicts.words import (
    BETTER,
    DOES_NOT_HOLD,
    HOLDS,
    HOLDS_IN_PART,
    MIXED,
    NEGLIGIBLE,
    NOT_LEARNED,
    NOT_TESTED,
    OPEN,
    OUTCOMES,
    PREMISE_NOT_SHOWN,
    UNDECIDED,
    WORSE,
    claim_word,
    outcome_words,
)
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.claim import Claim, MIN_PAIRS, no_effect_pairs
from ssa_book.verdicts.rule import MAX_SEEDS
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge, learning_failure, not_learned, pair_by_seed
from ssa_book.verdicts.families import combine, control_false_discoveries, false_discoveries
from ssa_book.verdicts.robustness import rests_on_words, seeds_it_rests_on
from ssa_book.verdicts.power import power
from ssa_book.icl import verdicts as icl_data  # its data accessors only (error_curve, learned, ...)
from ssa_book.icl.records import ICLRun
from ssa_book.icl.tasks import get_task
from ssa_book.plotting import scorer_label
from ssa_book.alternatives.comparison import PAPER_ALTERNATIVES, panel_label


# --- each scorer against softmax, and the paper's statement ------------------------------------
#
# One rule for the whole book (ssa_book.verdicts): on each panel, the scorer's and softmax's errors are
# paired by seed (seed i trains both on the same batches and tests both on the same prompts), and
# the claim "the scorer's error is lower" is judged on the paired differences.

THRESHOLD = 0.1
THRESHOLD_REASON = (
    "a tenth of the error scale (a tenth of the test prompts for quantification, a tenth of the zero predictor's "
    "squared error for linear functions): the smallest effect the In-context learning chapters count, declared "
    "there before any result of this chapter was computed"
)
# The columns of a frame of comparisons with softmax, one row per scorer and panel (versus_softmax here,
# the leaderboard's comparison of its in-context cells).
COMPARISON_COLUMNS = (
    "scorer",
    "task",
    "shift",
    "panel",
    "paper",
    "learned",
    "softmax",
    "error",
    "outcome",
    "effect",
    "low",
    "high",
    "pairs",
    "seeds_to_resolve",
    "seeds",
    "differences",
    "verdict",
)
STATEMENT = "None of the alternatives the paper tried is consistently better than softmax"
POWER_SEEDS = (10, 20)  # seed counts at which the chapter states the power, besides its own
UNITS = {"quantification": "prompt error", "linear": "normalised squared error"}


def claim(scorer: str, task: str, shift: str) -> Claim:
    """The comparison on one panel: ``scorer``'s mean error over the shifted sigmas (> 1) is lower
    than softmax's (direction -1: an error), by at least :data:`THRESHOLD`. A prompt error lies in
    [0, 1] and flips from seed to seed (a learner generalises or fails), so it is decided from
    :func:`ssa_book.verdicts.claim.no_effect_pairs` pairs, as in every other chapter."""
    prompt_error = get_task(task).claim == "quantification"
    return Claim(
        f"{scorer_label(scorer)} has lower error than softmax on {panel_label(task, shift)}",
        direction=-1,
        threshold=THRESHOLD,
        units=UNITS[get_task(task).claim],
        reason=THRESHOLD_REASON,
        treatment=scorer_label(scorer),
        bound=1.0 if prompt_error else None,
        largest_flip=icl_data.PROMPT_ERROR_FLIP if prompt_error else None,
    )


def _shifted_error(seeds: list[ICLRun], task: str, shift: str) -> np.ndarray:
    """Per-seed mean error over the shifted sigmas (> 1)."""
    curve = icl_data.error_curve(seeds, task, shift)
    sigmas = np.array(seeds[0].sweep(shift).values, dtype=float)
    return curve[:, sigmas > 1].mean(axis=1)


def _by_seed(seed_runs: list[ICLRun], task: str, shift: str) -> dict[int, float]:
    seeds = [run.seed for run in seed_runs]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"a seed appears twice among the runs of one scorer: {seeds}")
    return dict(zip(seeds, _shifted_error(seed_runs, task, shift).tolist()))


def paired(
    treatment: list[ICLRun], control: list[ICLRun], task: str, shift: str
) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    """``(seeds, treatment errors, control errors)``: the mean error over the shifted sigmas of
    the runs of both scorers that share a seed, in seed order (a seed only one of them has is
    left out: it has no pair)."""
    return pair_by_seed(_by_seed(treatment, task, shift), _by_seed(control, task, shift))


# Outcomes of a panel that tests nothing: softmax did not learn the task, no pair, no premise.
TESTS_NOTHING = (NOT_LEARNED, PREMISE_NOT_SHOWN, NOT_TESTED)


def _softmax_unlearned(by_scorer: dict[str, list[ICLRun]], task: str) -> str:
    baseline = icl_data.trivial_baseline(task)
    model = icl_data.error_curve(by_scorer["softmax"], task, "sigma_x")[:, 0].mean()
    trivial = icl_data.error_curve(by_scorer["softmax"], task, "sigma_x", baseline)[:, 0].mean()
    return learning_failure(
        {"softmax": False},
        (
            f"{task!r} in distribution: its error at σ = 1 is {model:.3g}, not below {icl_data.LEARNED_FRACTION:g} times the "
            f"{baseline} predictor's {trivial:.3g}, so no shift tests anything"
        ),
    )


def versus_softmax(runs: dict[str, dict[str, list[ICLRun]]]):
    """One row per scorer (other than softmax) and panel: the scorer's error against softmax's,
    judged by :func:`ssa_book.verdicts.judge.judge` on the claim of :func:`claim`, with the runs paired by
    their seed, and false discoveries controlled over every row together
    (:func:`ssa_book.verdicts.families.control_false_discoveries`). Columns: ``scorer, task, shift, panel, paper`` (the paper tried it), ``learned``
    (the scorer learned the task in distribution), ``softmax, error`` (mean error over the
    shifted sigmas and seeds), ``outcome, effect, low, high, pairs, seeds_to_resolve`` (the
    verdict's; the effect is softmax's error minus the scorer's, positive when the scorer is
    better), ``seeds``, ``differences`` (one per seed, same sign) and ``verdict`` (the
    :class:`ssa_book.verdicts.verdict.Verdict`). A panel where softmax did not learn the task is "not
    learned": a shift then tests nothing."""
    import pandas as pd

    rows = []
    for task, by_scorer in runs.items():
        if "softmax" not in by_scorer:
            continue
        learned = icl_data.learned(by_scorer, task)
        for shift in by_scorer["softmax"][0].shifts:
            for scorer, seed_runs in by_scorer.items():
                if scorer == "softmax":
                    continue
                seeds, error, softmax = paired(seed_runs, by_scorer["softmax"], task, shift)
                comparison = claim(scorer, task, shift)
                verdict = (
                    judge(comparison, error, softmax)
                    if learned["softmax"]
                    else not_learned(comparison, _softmax_unlearned(by_scorer, task))
                )
                low, high = verdict.interval if verdict.interval is not None else (np.nan, np.nan)
                rows.append(
                    {
                        "scorer": scorer,
                        "task": task,
                        "shift": shift,
                        "panel": panel_label(task, shift),
                        "paper": scorer in PAPER_ALTERNATIVES,
                        "learned": learned[scorer],
                        "softmax": float(softmax.mean()) if len(seeds) else np.nan,
                        "error": float(error.mean()) if len(seeds) else np.nan,
                        "outcome": verdict.outcome,
                        "effect": np.nan if verdict.effect is None else verdict.effect,
                        "low": low,
                        "high": high,
                        "pairs": verdict.pairs,
                        "seeds_to_resolve": verdict.seeds_to_resolve,
                        "seeds": seeds,
                        "differences": verdict.differences,
                        "verdict": verdict,
                    }
                )
    # Every comparison of the chapter is one family: a direction must survive control of false
    # discoveries over all of them.
    for row, controlled in zip(rows, control_false_discoveries([row["verdict"] for row in rows])):
        row.update(verdict=controlled, outcome=controlled.outcome)
    return pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))


def outcome_counts(comparison):
    """Scorer x outcome: on how many panels the rule gives each outcome of :data:`ssa_book.verdicts.words.OUTCOMES`
    to "the scorer's error is lower than softmax's", a direction with its subject ("scorer worse
    than softmax")."""
    counts = comparison.pivot_table(
        index="scorer", columns="outcome", values="task", aggfunc="count", fill_value=0, sort=False
    )
    counts = counts.reindex(columns=[o for o in OUTCOMES if o in counts.columns], fill_value=0)
    counts.index = [scorer_label(scorer) for scorer in counts.index]
    counts.columns = [
        outcome_words(outcome, "scorer") + (" than softmax" if outcome in (BETTER, WORSE) else "")
        for outcome in counts.columns
    ]
    return counts


def verdict_table(comparison, digits: int = 3):
    """The comparisons as the chapter shows them: scorer, panel, outcome, effect (softmax's error
    minus the scorer's: positive when the scorer is better), its 95% interval, pairs, the seeds
    that would decide an open one, the signed-rank test's p raw and adjusted for false discoveries
    over all the comparisons (:func:`ssa_book.verdicts.families.false_discoveries`), and each seed's paired
    difference."""
    import pandas as pd

    seeds = sorted({seed for row in comparison["seeds"] for seed in row})
    # every comparison of the chapter is one family of tests, adjusted together
    tested = false_discoveries(list(comparison["verdict"]))
    rows = []
    for (_, row), found in zip(comparison.iterrows(), tested):
        by_seed = dict(zip(row["seeds"], row["differences"]))
        rows.append(
            {
                "scorer": scorer_label(row["scorer"]),
                "panel": row["panel"],
                "tried by the paper": "yes" if row["paper"] else "no",
                "outcome": row["verdict"].label(),
                "effect": round(row["effect"], digits),
                "95% interval": ""
                if np.isnan(row["low"])
                else f"[{row['low']:+.{digits}f}, {row['high']:+.{digits}f}]",
                "pairs": row["pairs"],
                "seeds to decide": row["verdict"].pairs_to_decide(),
                "leaving one seed out": _rests_on(row["verdict"], row["seeds"]),
                "p": "" if found is None else f"{found['p']:.2g}",
                "adjusted p": "" if found is None else f"{found['adjusted p']:.2g}",
                **{f"seed {seed}": round(by_seed[seed], digits) if seed in by_seed else np.nan for seed in seeds},
            }
        )
    return pd.DataFrame(rows)


def _rests_on(verdict: Verdict, seeds) -> str:
    """For a decided verdict: "survives" leaving any one seed out, or the seeds it rests on; "" for an open one."""
    if verdict.outcome not in (BETTER, WORSE, NEGLIGIBLE):
        return ""
    return rests_on_words(seeds_it_rests_on(verdict, seeds)) or "survives"


def observed_spread(comparison, scorers=None) -> float | None:
    """The standard deviation of the paired differences, pooled over the comparisons of
    ``scorers`` (all by default) that have two pairs or more (root mean of their variances);
    ``None`` without any."""
    rows = comparison if scorers is None else comparison[comparison["scorer"].isin(scorers)]
    variances = [np.var(d, ddof=1) for d in rows["differences"] if len(d) > 1]
    return float(np.sqrt(np.mean(variances))) if variances else None


@functools.lru_cache(maxsize=64)
def _power(pairs: int, effect: float, spread: float) -> float:
    power_claim = Claim(
        "an alternative scorer has lower error than softmax",
        direction=-1,
        threshold=THRESHOLD,
        units="error",
        reason=THRESHOLD_REASON,
    )
    return power(power_claim, pairs, effect, spread)


def power_table(spread: float | None, pairs=(3, *POWER_SEEDS), effects=(THRESHOLD, 2 * THRESHOLD)):
    """Rate at which the rule finds a scorer better than softmax ("better") when it truly is
    better by each of ``effects`` and the paired differences are normal with standard deviation
    ``spread`` (:func:`ssa_book.verdicts.power.power`, 2000 simulated experiments): ``pairs`` x ``effects``.
    ``None`` when the spread is unknown (one seed)."""
    import pandas as pd

    if spread is None:
        return None
    table = pd.DataFrame(
        {
            f"scorer better by {effect:g}": [_power(int(n), float(effect), float(spread)) for n in pairs]
            for effect in effects
        },
        index=pd.Index([int(n) for n in pairs], name="paired seeds"),
    )
    return table


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _distinct(texts) -> str:
    """The distinct ``texts`` (in first-seen order), joined by semicolons."""
    return "; ".join(dict.fromkeys(text for text in texts if text))


def _most_seeds(verdicts: list[Verdict]) -> Verdict:
    """The undecided comparison that needs the most pairs (``None``: more than the rule searches)."""
    return max(verdicts, key=lambda v: math.inf if v.seeds_to_resolve is None else v.seeds_to_resolve)


def scorer_verdict(comparison, scorer: str) -> Verdict:
    """Whether ``scorer`` is better than softmax on every panel of ``comparison`` (consistently
    better, in the paper's word), stated in the direction of each panel's own claim (the scorer's
    error is lower): the panels' verdicts combined by :func:`ssa_book.verdicts.families.combine`, the book's
    one tally of a claim of several parts, so that the same parts read the same word here as in
    every other claim of the book. It does not hold once a panel is decided against it ("no
    difference that matters" or worse) and none for it, and is mixed when panels are decided both
    ways; a panel that tests nothing (softmax did not learn its task) counts with its own word.
    "not tested" without results."""
    name = f"{scorer_label(scorer)} is better than softmax on every panel"
    rows = comparison[comparison["scorer"] == scorer]
    if rows.empty:
        return Verdict(name, NOT_TESTED, threshold=THRESHOLD, treatment=scorer_label(scorer))
    return dataclasses.replace(combine(name, dict(zip(rows["panel"], rows["verdict"]))), threshold=THRESHOLD)


def scorer_words(verdict: Verdict) -> str:
    """A :func:`scorer_verdict` in the claim's words with its panels counted: "does not hold (no
    difference that matters on 2 of 4, exploratory on 2)"."""
    tally = verdict.tally()
    return claim_word(verdict.outcome) + (f" ({tally})" if tally else "")


def scorer_evidence(verdict: Verdict, spec: str = "+.3f") -> str:
    """A :func:`scorer_verdict` in one sentence, each panel's estimate beside its panel, its word
    and its units (positive: the scorer's error lower than softmax's): "sparsemax is better than
    softmax on every panel: does not hold (...): "every", σ of x = 10, exploratory (10 pairs),
    +0.329 [+0.046, +0.612] prompt error; ..."."""
    panels = "; ".join(
        f"{panel}, {part.label()}" + (f", {part.estimate(spec)} {part.units}" if part.interval is not None else "")
        for panel, part in verdict.parts
    )
    return f"{verdict.claim}: {scorer_words(verdict)}" + (f": {panels}" if panels else "")


# A scorer's claim "better than softmax on every panel" (scorer_verdict) read as a part of the paper's
# statement that no alternative is: decided against it (a panel at least) or decided both ways, the
# statement holds for that scorer; the claim holds, the statement does not; open while the claim may
# still hold (better on some panels, the others open).
_FOR_THE_STATEMENT = {
    DOES_NOT_HOLD: BETTER,
    MIXED: BETTER,
    NEGLIGIBLE: BETTER,
    WORSE: BETTER,
    BETTER: WORSE,
    HOLDS_IN_PART: UNDECIDED,
}


def _statement_part(verdict: Verdict, label: str) -> Verdict:
    """``verdict`` (:func:`scorer_verdict`) as a part of the paper's statement, "``label`` is not
    better than softmax on every panel": its outcome in the statement's direction (better: the
    statement holds for it), its panels kept as its parts."""
    return Verdict(
        f"{label} is not better than softmax on every panel",
        _FOR_THE_STATEMENT.get(verdict.outcome, verdict.outcome),
        threshold=THRESHOLD,
        detail=verdict.detail,
        parts=verdict.parts,
        treatment="",
    )


def _seeds_to_decide(undecided: list[Verdict]) -> str:
    """How many paired seeds would decide the ``undecided`` comparisons, in words."""
    spread = [v for v in undecided if v.pairs >= 2]
    known = sorted(v.seeds_to_resolve for v in spread if v.seeds_to_resolve is not None)
    beyond, single = len(spread) - len(known), len(undecided) - len(spread)
    pieces = []
    if known:
        count = f"about {known[0]}" if known[0] == known[-1] else f"about {known[0]} to {known[-1]}"
        pieces.append(
            f"{count} paired seeds would decide {'it' if len(known) == 1 else 'them'} at the observed means and spread"
        )
    if beyond:
        pieces.append(f"{_plural(beyond, 'would', 'would')} need more than {MAX_SEEDS}")
    if single:
        pieces.append(
            f"{_plural(single, 'has', 'have')} one seed, no spread to go by, and the rule decides nothing "
            f"with fewer than {MIN_PAIRS}"
        )
    return "; ".join(pieces)


def power_sentence(comparison, scorers=None, pairs=None) -> str:
    """One sentence: how often the rule finds a scorer better than softmax when it truly is better
    by :data:`THRESHOLD`, at the spread of ``scorers``' paired differences, with ``pairs`` seeds
    (the comparisons' own count by default) and with each of :data:`POWER_SEEDS`."""
    rows = comparison if scorers is None else comparison[comparison["scorer"].isin(scorers)]
    rows = rows[~rows["outcome"].isin(TESTS_NOTHING)]
    if rows.empty:
        return "the power of the rule is not estimated: no comparison tests anything, so there is no spread to go by"
    spread = observed_spread(rows)
    pairs = int(rows["pairs"].max()) if pairs is None else pairs
    if spread is None:
        return (
            f"the power of the rule cannot be estimated from {_plural(pairs, 'seed')} (the spread of the paired "
            f"differences needs two at least)"
        )
    others = [n for n in POWER_SEEDS if n != pairs]  # the comparisons' own count is said first, once
    table = power_table(spread, (pairs, *others), (THRESHOLD,))
    rates = table.iloc[:, 0]
    flips = no_effect_pairs(claim("softmax", "every", "sigma_x"))
    return (
        f"if an alternative were truly better than softmax by the threshold ({THRESHOLD:g}), at the observed spread of the "
        f"paired differences (standard deviation {spread:.3g}) the rule would find it better on a panel whose error does not "
        f"flip from seed to seed in {rates[pairs]:.0%} of experiments with {pairs} seeds"
        + "".join(f", {rates[n]:.0%} with {n}" for n in others)
        + f"; on the prompt-error panels, where a seed's error flips, it decides nothing below {flips} pairs"
    )


def _predicate(outcome: str) -> str:
    """What the statement does, by :func:`ssa_book.verdicts.words.claim_word`: "holds", "does not hold",
    "holds in part", "is mixed", "is undecided"."""
    word = claim_word(outcome)
    return word if word in (HOLDS, DOES_NOT_HOLD, HOLDS_IN_PART) else f"is {word}"


def statement_tally(statement: Verdict, noun: str = "alternatives") -> str:
    """What :func:`judge_statement`'s ``statement`` says of each of its scorers, counted: "holds
    for 6 of the 6 alternatives", "holds for 5 of the 6 alternatives, undecided for 1"."""
    found: dict[str, int] = {}
    for _, part in statement.parts:
        found[claim_word(part.outcome)] = found.get(claim_word(part.outcome), 0) + 1
    return ", ".join(
        f"{word} for {count}" + (f" of the {len(statement.parts)} {noun}" if i == 0 else "")
        for i, (word, count) in enumerate(found.items())
    )


def statement_evidence(comparison, alternatives=PAPER_ALTERNATIVES) -> str:
    """Each of ``alternatives``' claims to be better than softmax on every panel of ``comparison``
    (:func:`versus_softmax`), one sentence each, every estimate beside its panel, its word and its
    units (:func:`scorer_evidence`); the sign said once."""
    names = [scorer for scorer in alternatives if scorer in set(comparison["scorer"])]
    said = " ".join(f"{scorer_evidence(scorer_verdict(comparison, scorer))}." for scorer in names)
    return (
        (
            f"Each estimate is softmax's error minus the alternative's (positive: the alternative's lower), with its "
            f"{CONFIDENCE:.0%} interval. {said}"
        )
        if said
        else ""
    )


def judge_statement(
    comparison, alternatives=PAPER_ALTERNATIVES, *, name: str = STATEMENT, what: str = "alternatives the paper tried"
) -> Verdict:
    """The statement "none of ``alternatives`` is consistently better than softmax", from the
    comparisons of :func:`versus_softmax`, by the book's one tally (:func:`ssa_book.verdicts.families.combine`)
    twice: each alternative's claim "better than softmax on every panel" combines its panels
    (:func:`scorer_verdict`), and the statement combines those claims read in its own direction
    (:data:`_FOR_THE_STATEMENT`): it **holds** when no alternative's claim can still hold (each is
    decided against on a panel at least), **does not hold** when every alternative's claim holds,
    is **mixed** when some do and some are decided against, **holds in part** when it holds for
    some and the others are open, is **undecided** (or exploratory) while they are all open, "not
    learned" when softmax learned no task, **not tested** when none of them has results.
    ``detail`` gives the comparisons counted, each alternative's claim with its panels counted,
    the open comparisons and the power (:func:`power_sentence`); ``what`` names the group."""
    names = [scorer for scorer in alternatives if scorer in set(comparison["scorer"])]
    missing = [scorer_label(scorer) for scorer in alternatives if scorer not in names]
    if not names:
        return Verdict(name, NOT_TESTED, threshold=THRESHOLD, detail=f"none of the {what} has results", treatment="")
    claims = {scorer_label(scorer): scorer_verdict(comparison, scorer) for scorer in names}
    statement = dataclasses.replace(
        combine(name, {label: _statement_part(verdict, label) for label, verdict in claims.items()}),
        threshold=THRESHOLD,
    )
    rows = comparison[comparison["scorer"].isin(names)]
    tested = rows[~rows["outcome"].isin(TESTS_NOTHING)]
    if tested.empty:
        return dataclasses.replace(statement, detail=_distinct(verdict.detail for verdict in rows["verdict"]))
    rows = tested
    counts = rows["outcome"].value_counts()
    tally = ", ".join(
        f"{counts[o]} {'alternative ' if o in (BETTER, WORSE) else ''}{o}" for o in OUTCOMES if o in counts
    )
    panels_count = rows.groupby("scorer")["panel"].nunique()
    where = (
        f"{panels_count.max()} task-and-shift panels"
        if panels_count.min() == panels_count.max()
        else f"{panels_count.min()} to {panels_count.max()} task-and-shift panels"
    )
    head = (
        f"{len(names)} of the {len(alternatives)} {what} compared with softmax on {where}: "
        f"{_plural(len(rows), 'comparison')} of the claim that the alternative's error is lower, {tally}"
        + (f"; no results yet for {', '.join(missing)}" if missing else "")
    )
    each = "; ".join(f"{label}, {scorer_words(verdict)}" for label, verdict in claims.items())
    detail = (
        f"{head}. Each alternative's claim to be better than softmax on every panel, its panels tallied by the book's one "
        f"rule for a claim of several parts: {each}. So the statement {_predicate(statement.outcome)} "
        f"({statement_tally(statement, what.split()[0])})"
    )
    wins = rows[rows["outcome"] == BETTER].groupby("scorer").size()
    somewhere = [
        f"{scorer_label(scorer)} ({wins[scorer]} of {panels_count[scorer]})" for scorer in names if scorer in wins
    ]
    if somewhere:
        detail += f"; better than softmax on some panels: {', '.join(somewhere)}"
    undecided = [v for v in rows["verdict"] if v.outcome in OPEN]
    if undecided:
        deciding = _most_seeds(undecided)
        where_deciding = next(
            f"{scorer_label(row.scorer)} on {row.panel}" for row in rows.itertuples() if row.verdict is deciding
        )
        detail += (
            f". {_plural(len(undecided), 'comparison is', 'comparisons are')} still open (undecided or exploratory): "
            f"{_seeds_to_decide(undecided)} (the most for {where_deciding})"
        )
        statement = dataclasses.replace(statement, seeds_to_resolve=deciding.seeds_to_resolve)
    return dataclasses.replace(statement, detail=f"{detail}. Power: {power_sentence(comparison, names)}.")


def statement_verdict(
    runs: dict[str, dict[str, list[ICLRun]]],
    alternatives=PAPER_ALTERNATIVES,
    *,
    name: str = STATEMENT,
    what: str = "alternatives the paper tried",
) -> Verdict:
    """The verdict on the paper's statement from ``{task: {scorer: runs}}`` (each run with its
    ``seed``, as :func:`cached_runs` and :func:`load_runs` give them): :func:`judge_statement` of
    :func:`versus_softmax`. "not tested" when nothing is cached."""
    return judge_statement(versus_softmax(runs), alternatives, name=name, what=what)
