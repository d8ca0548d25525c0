"""Every scorer side by side on the in-context-learning tasks: table, ranks, cost, collapse, verdict.

Runs are the In-context learning chapters' own experiments (:mod:`ssa_book.icl.experiments`), so the
budget and hyperparameters are theirs by construction: :func:`ssa_book.icl.experiments.experiment_config`
with the scorer's name and nothing else. Scorer-specific settings are *learned* parameters with
fixed, documented initial values, not tuned (no sweep touches any test data):

* ``temperature_softmax``: temperature ``T`` trained per layer, initialised at 1 (softmax);
* ``ssmax``: ``s`` trained per layer, initialised at 0.43 (``s log N = 1`` near ``N = 10`` keys);
* ``ssa``: ``b = e``, ``n = e^0.4`` initially, both trained (the ICL chapters' choice);
* ``ssa_n1.5``, ``ssa_n2``: ``n`` fixed, ``b`` trained from the registry's default 1;
* the others (sparsemax, 1.5-entmax, SA-softmax and its normalised form, cosFormer, sigmoid,
  stick-breaking) have no parameters; adaptive temperature has none either, and trains as softmax
  (its rule acts at inference, :class:`ssa.scoring.AdaptiveTemperatureSoftmax`).

A *panel* is one task and one sigma sweep: ``every``/``sigma_x``, ``some``/``sigma_x``,
``linear``/``sigma_x`` and ``linear``/``sigma_ab``. Errors are those of :mod:`ssa_book.icl.verdicts`
(prompt-level error for quantification, MSE normalised by the zero predictor for linear).

Verdicts follow the book's one rule, :mod:`ssa_book.verdicts`. On each panel, each scorer's mean error
over the shifted sigmas (> 1) is paired with softmax's by seed (the same seed gives both the same
batches and the same test prompts) and the claim "the scorer's error is lower" is judged
(:func:`versus_softmax`) with the threshold :data:`THRESHOLD`, declared with its reason before
any result of this chapter. The paper's statement, "none of the alternatives it tried is
consistently better than softmax", is :func:`statement_verdict`; :func:`power_table` says how
often the rule would find a truly better scorer at the observed spread.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Sequence

import numpy as np
import torch

from ssa_book.verdicts.words import (BETTER, DOES_NOT_HOLD, HOLDS, HOLDS_IN_PART, MIXED, NEGLIGIBLE, NOT_LEARNED, NOT_TESTED,
                                     OPEN, OUTCOMES, PREMISE_NOT_SHOWN, UNDECIDED, WORSE, claim_word, outcome_words)
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.claim import Claim, MIN_PAIRS, no_effect_pairs
from ssa_book.verdicts.rule import MAX_SEEDS
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge, learning_failure, not_learned, pair_by_seed
from ssa_book.verdicts.families import combine, control_false_discoveries, false_discoveries
from ssa_book.verdicts.robustness import rests_on_words, seeds_it_rests_on
from ssa_book.verdicts.power import power
from ssa.attention import attention_path
from ssa_book.measure import interleaved_medians, peak_memory_bytes
from ssa_book.chapters import Chapter, Run, RunKind, Setting
from ssa_book.icl import experiments
from ssa_book.icl import verdicts as icl_data  # its data accessors only (error_curve, learned, ...)
from ssa_book.icl.evaluate import bootstrap_band
from ssa_book.icl.records import ICLRun
from ssa_book.icl.tasks import TASKS, get_task
from ssa_book.icl.train import build_model, training_batch
from ssa_book.plotting import scorer_label
from ssa_book.profiles import check_profile, resolve_device
from ssa_book.retrieval.experiment import experiment_config as retrieval_config, training_step
from ssa.scoring import scorer_names
from ssa_book.results.store import entry_exists
from ssa_book.results.cache import require_cache_from_environment
from ssa_book.results.cache import cached

EXPERIMENT_COST = "alternatives/cost"
# The scorers the paper says it tried (its discussion of alternative scoring functions); the
# verdict on its statement is about these.
PAPER_ALTERNATIVES = ("temperature_softmax", "sparsemax", "entmax15", "sa_softmax", "sa_softmax_normalized", "cosformer")
SMOKE_SEEDS = 1  # the smoke profile only checks the code: one model per scorer and task (12 x 3 add up)
# Shift levels in the results table (the figures show every sigma).
TABLE_SIGMAS = {"quantification": (1, 5, 10, 20, 29), "linear": (1, 2, 5, 10)}
SHIFT_LABELS = {"sigma_x": "σ of x", "sigma_ab": "σ of a, b"}


def chapter_seeds(profile: str, first_seed: int = 0) -> tuple[int, ...]:
    """The seeds the chapter shows: the ICL chapters' three; one at ``smoke``."""
    seeds = experiments.chapter_seeds(first_seed)
    return seeds[:SMOKE_SEEDS] if check_profile(profile) == "smoke" else seeds


def panels(profile: str = "cpu") -> list[tuple[str, str]]:
    """``(task, shift)`` of every sigma sweep the ICL experiments evaluate."""
    return [(task, shift) for task in TASKS for shift in experiments.shifts(experiments.experiment_config(task, "softmax", profile))]


def panel_label(task: str, shift: str) -> str:
    return f'"{task}", {SHIFT_LABELS.get(shift, shift)}'


@dataclasses.dataclass(frozen=True)
class AlternativesChapter(Chapter):
    """Every registered scorer on the in-context tasks (the runs are the ICL chapters'
    experiments, scorer by scorer), and the scorers' cost."""

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        return chapter_seeds(profile)

    def published_scorers(self) -> tuple[str, ...]:
        """Every registered scorer: softmax (the reference of every comparison) and SSA first,
        then the alternatives the paper tried, then the others."""
        return tuple(dict.fromkeys((*experiments.CHAPTER_SCORERS, *PAPER_ALTERNATIVES, *scorer_names())))

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str], *, tasks: Sequence[str] | None = None,
             cost: bool = True) -> list[Run]:
        measured = [Run("cost", ("icl",), "cost of every scorer, the in-context model", exclusive=True,
                        chapters=(self.name,))] if cost else []
        return measured + experiments.icl_runs(TASKS if tasks is None else tasks, scorers, seeds, scorer_major=True, planned_by=self.name)

    def configs(self, profile: str) -> dict:
        cost = cost_config(profile, "cpu")
        return {task: {"experiment": experiments.experiment_config(task, "ssa", profile), "cost": cost} for task in TASKS}

    def settings(self) -> tuple[Setting, ...]:
        return tuple(dataclasses.replace(setting, path=f"experiment.{setting.path}") for setting in experiments.ICL_SETTINGS) + (
            Setting("cost: timing", "seconds of interleaved timing of the fastest scorer, cost measurement", "cost.min_run_time"),
            Setting("cost: task", "the task whose model and longest training batch the cost measurement times", "cost.task"),
            Setting("cost: threads", "torch threads of the cost measurement", "cost.threads"),
        )


CHAPTER = AlternativesChapter("alternative_scorers", "every registered scorer on the three in-context tasks, and their cost", jobs=2)


def regenerate_command(profile: str = "cpu", scorers=None, seeds=None) -> str:
    """The command that fills this chapter's cache (all of it, or the ``scorers`` and ``seeds``
    given when they are not all the chapter's own)."""
    return CHAPTER.command(profile, scorers=scorers, seeds=seeds)


# --- the plan of runs --------------------------------------------------------------------------

def plan(tasks=TASKS, scorers=None, seeds=(0, 1, 2)) -> list[tuple[str, str, int]]:
    """``(task, scorer, seed)`` runs in the order they should finish: task by task, and within a
    task scorer by scorer with all its seeds, so an interrupted sweep leaves whole groups."""
    scorers = scorer_names() if scorers is None else scorers
    return [(task, scorer, seed) for task in tasks for scorer in scorers for seed in seeds]


def is_cached(task: str, scorer: str, seed: int, profile: str) -> bool:
    """Whether the run and its logit-spread diagnostic (what ``ssa_book.icl``'s regenerate makes) are cached."""

    experiment = experiments.experiment_config(task, scorer, profile, seed)
    spread = experiments.logit_spread_key(experiment)
    return (entry_exists(experiment.name, experiment, profile=profile)
            and entry_exists(f"icl_logits/{task}/{scorer}", spread, profile=profile))


# --- loading -----------------------------------------------------------------------------------

def load_runs(profile: str, *, scorers=None, seeds=None, tasks=TASKS, device: str = "auto") -> dict[str, dict[str, list[ICLRun]]]:
    """``{task: {scorer: [result of each seed]}}`` from the ICL cache (computed on a miss unless
    the cache is required). Scorers default to every registered one. Each run carries its
    ``seed``: the comparisons pair runs by it."""
    scorers = scorer_names() if scorers is None else scorers
    seeds = chapter_seeds(profile) if seeds is None else seeds
    return {task: experiments.load_runs(task, profile=profile, scorers=scorers, seeds=seeds, device=device) for task in tasks}


def cached_runs(profile: str, *, scorers=None, seeds=None, tasks=TASKS) -> tuple[dict[str, dict[str, list[ICLRun]]], int, int]:
    """What the cache already holds, without training anything: ``({task: {scorer: runs}},
    runs cached, runs planned)``. A scorer appears for a task only with all its seeds; a task
    only with softmax's (the reference of every comparison) and one other scorer. Each run carries
    its ``seed``."""
    scorers = scorer_names() if scorers is None else scorers
    seeds = chapter_seeds(profile) if seeds is None else seeds
    planned = plan(tasks, scorers, seeds)
    done = {run for run in planned if is_cached(*run, profile)}
    found = {}
    for task in tasks:
        complete = [scorer for scorer in scorers if all((task, scorer, seed) in done for seed in seeds)]
        if "softmax" in complete and len(complete) > 1:
            found[task] = experiments.load_runs(task, profile=profile, scorers=complete, seeds=seeds)
    return found, len(done), len(planned)


def chapter_runs(profile: str, *, seeds=None, device: str = "auto") -> tuple[dict[str, dict[str, list[ICLRun]]], int, int]:
    """What the chapter shows: ``({task: {scorer: runs}}, runs cached, runs planned)``. Where the
    cache is required (``$SSA_REQUIRE_CACHE``, as in book builds) that is what the cache holds now
    (:func:`cached_runs`: whole seed groups, so a sweep spread over sessions shows as it fills);
    otherwise every planned run, the missing ones trained here."""

    if require_cache_from_environment():
        return cached_runs(profile, seeds=seeds)
    runs = load_runs(profile, seeds=seeds, device=device)
    count = sum(len(seed_runs) for by_scorer in runs.values() for seed_runs in by_scorer.values())
    return runs, count, count


def coverage(cached: int, planned: int) -> dict:
    """How complete the chapter's results are: ``complete`` and one sentence for the text (plain
    text: it is glued into the prose, where Markdown is not parsed)."""
    if cached >= planned:
        return {"complete": True, "sentence": f"All {planned} planned runs are in the cache."}
    return {"complete": False, "sentence": (
        f"Only {cached} of the {planned} planned runs are in the cache so far: a task appears once softmax's runs are "
        f"in, a scorer once all its seeds are, and every verdict below is provisional until the rest "
        f"is trained (the regenerate command resumes the sweep where it stopped).")}


# --- the table and the ranks -------------------------------------------------------------------

def error_table(runs: dict[str, dict[str, list[ICLRun]]]):
    """Long table: one row per task, shift, sigma and scorer with the mean error over seeds and
    its 95% bootstrap band (columns ``task, shift, sigma, scorer, mean, low, high, seeds``)."""
    import pandas as pd

    rows = []
    for task, by_scorer in runs.items():
        first = next(iter(by_scorer.values()))[0]
        for shift, sweep in first.shifts.items():
            sigmas = sweep.values
            for scorer, seeds in by_scorer.items():
                band = bootstrap_band(icl_data.error_curve(seeds, task, shift))
                for index, sigma in enumerate(sigmas):
                    rows.append({"task": task, "shift": shift, "sigma": sigma, "scorer": scorer, "mean": band["mean"][index],
                                 "low": band["low"][index], "high": band["high"][index], "seeds": len(seeds)})
    return pd.DataFrame(rows)


def summary_table(errors, cost: dict | None = None, digits: int = 3):
    """Scorer x (panel, sigma at the levels of :data:`TABLE_SIGMAS`) as "mean [low, high]", with
    the cost columns (time per training step and peak memory, as multiples of softmax's) if given."""
    import pandas as pd

    columns = {}
    for (task, shift), group in errors.groupby(["task", "shift"], sort=False):
        wanted = TABLE_SIGMAS[get_task(task).claim]
        for sigma in [s for s in group["sigma"].unique() if s in wanted]:
            cells = group[group["sigma"] == sigma].set_index("scorer")
            columns[(panel_label(task, shift), f"σ = {sigma:g}")] = {
                scorer_label(scorer): f"{row['mean']:.{digits}f} [{row['low']:.{digits}f}, {row['high']:.{digits}f}]"
                for scorer, row in cells.iterrows()}
    table = pd.DataFrame(columns)
    if cost is not None:
        for column, key in (("step time / softmax", "time_ratio"), ("peak memory / softmax", "memory_ratio")):
            table[("cost", column)] = pd.Series({scorer_label(s): "n/a" if v[key] is None else f"{v[key]:.2f}"
                                                 for s, v in cost["scorers"].items()})
    table = table.reindex([scorer_label(s) for s in scorer_names() if scorer_label(s) in table.index])
    table.index.name = "scorer"
    return table


def rank_table(errors):
    """``errors`` with a ``rank`` column: 1 = lowest mean error among the scorers at that task,
    shift and sigma (ties share the average rank)."""
    ranked = errors.copy()
    ranked["rank"] = ranked.groupby(["task", "shift", "sigma"])["mean"].rank(method="average")
    return ranked


def mean_ranks(ranked):
    """Mean rank per scorer and panel over the shifted sigmas (> 1), and overall: scorer x panel."""
    shifted = ranked[ranked["sigma"] > 1]
    table = shifted.pivot_table(index="scorer", columns=["task", "shift"], values="rank", aggfunc="mean", sort=False)
    table.columns = [panel_label(task, shift) for task, shift in table.columns]
    table["all panels"] = table.mean(axis=1)
    table.index = [scorer_label(scorer) for scorer in table.index]
    return table.sort_values("all panels")


# --- each scorer against softmax, and the paper's statement ------------------------------------
#
# One rule for the whole book (ssa_book.verdicts): on each panel, the scorer's and softmax's errors are
# paired by seed (seed i trains both on the same batches and tests both on the same prompts), and
# the claim "the scorer's error is lower" is judged on the paired differences.

THRESHOLD = 0.1
THRESHOLD_REASON = (
    "a tenth of the error scale (a tenth of the test prompts for quantification, a tenth of the zero predictor's "
    "squared error for linear functions): the smallest effect the In-context learning chapters count, declared "
    "there before any result of this chapter was computed")
STATEMENT = "None of the alternatives the paper tried is consistently better than softmax"
POWER_SEEDS = (10, 20)  # seed counts at which the chapter states the power, besides its own
UNITS = {"quantification": "prompt error", "linear": "normalised squared error"}


def claim(scorer: str, task: str, shift: str) -> Claim:
    """The comparison on one panel: ``scorer``'s mean error over the shifted sigmas (> 1) is lower
    than softmax's (direction -1: an error), by at least :data:`THRESHOLD`. A prompt error lies in
    [0, 1] and flips from seed to seed (a learner generalises or fails), so it is decided from
    :func:`ssa_book.verdicts.claim.no_effect_pairs` pairs, as in every other chapter."""
    prompt_error = get_task(task).claim == "quantification"
    return Claim(f"{scorer_label(scorer)} has lower error than softmax on {panel_label(task, shift)}", direction=-1,
                 threshold=THRESHOLD, units=UNITS[get_task(task).claim],
                 reason=THRESHOLD_REASON, treatment=scorer_label(scorer),
                 bound=1.0 if prompt_error else None, largest_flip=icl_data.PROMPT_ERROR_FLIP if prompt_error else None)


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


def paired(treatment: list[ICLRun], control: list[ICLRun], task: str, shift: str) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
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
    return learning_failure({"softmax": False}, (
        f"{task!r} in distribution: its error at σ = 1 is {model:.3g}, not below {icl_data.LEARNED_FRACTION:g} times the "
        f"{baseline} predictor's {trivial:.3g}, so no shift tests anything"))


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
                verdict = (judge(comparison, error, softmax) if learned["softmax"]
                           else not_learned(comparison, _softmax_unlearned(by_scorer, task)))
                low, high = verdict.interval if verdict.interval is not None else (np.nan, np.nan)
                rows.append({
                    "scorer": scorer, "task": task, "shift": shift, "panel": panel_label(task, shift),
                    "paper": scorer in PAPER_ALTERNATIVES, "learned": learned[scorer],
                    "softmax": float(softmax.mean()) if len(seeds) else np.nan, "error": float(error.mean()) if len(seeds) else np.nan,
                    "outcome": verdict.outcome, "effect": np.nan if verdict.effect is None else verdict.effect, "low": low, "high": high,
                    "pairs": verdict.pairs, "seeds_to_resolve": verdict.seeds_to_resolve, "seeds": seeds,
                    "differences": verdict.differences, "verdict": verdict})
    # Every comparison of the chapter is one family: a direction must survive control of false
    # discoveries over all of them.
    for row, controlled in zip(rows, control_false_discoveries([row["verdict"] for row in rows])):
        row.update(verdict=controlled, outcome=controlled.outcome)
    columns = ["scorer", "task", "shift", "panel", "paper", "learned", "softmax", "error", "outcome", "effect", "low", "high",
               "pairs", "seeds_to_resolve", "seeds", "differences", "verdict"]
    return pd.DataFrame(rows, columns=columns)


def outcome_counts(comparison):
    """Scorer x outcome: on how many panels the rule gives each outcome of :data:`ssa_book.verdicts.words.OUTCOMES`
    to "the scorer's error is lower than softmax's", a direction with its subject ("scorer worse
    than softmax")."""
    counts = comparison.pivot_table(index="scorer", columns="outcome", values="task", aggfunc="count", fill_value=0, sort=False)
    counts = counts.reindex(columns=[o for o in OUTCOMES if o in counts.columns], fill_value=0)
    counts.index = [scorer_label(scorer) for scorer in counts.index]
    counts.columns = [outcome_words(outcome, "scorer") + (" than softmax" if outcome in (BETTER, WORSE) else "")
                      for outcome in counts.columns]
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
        rows.append({
            "scorer": scorer_label(row["scorer"]), "panel": row["panel"], "tried by the paper": "yes" if row["paper"] else "no",
            "outcome": row["verdict"].label(), "effect": round(row["effect"], digits),
            "95% interval": "" if np.isnan(row["low"]) else f"[{row['low']:+.{digits}f}, {row['high']:+.{digits}f}]",
            "pairs": row["pairs"],
            "seeds to decide": row["verdict"].pairs_to_decide(),
            "leaving one seed out": _rests_on(row["verdict"], row["seeds"]),
            "p": "" if found is None else f"{found['p']:.2g}", "adjusted p": "" if found is None else f"{found['adjusted p']:.2g}",
            **{f"seed {seed}": round(by_seed[seed], digits) if seed in by_seed else np.nan for seed in seeds}})
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
    power_claim = Claim("an alternative scorer has lower error than softmax", direction=-1, threshold=THRESHOLD,
                        units="error", reason=THRESHOLD_REASON)
    return power(power_claim, pairs, effect, spread)


def power_table(spread: float | None, pairs=(3, *POWER_SEEDS), effects=(THRESHOLD, 2 * THRESHOLD)):
    """Rate at which the rule finds a scorer better than softmax ("better") when it truly is
    better by each of ``effects`` and the paired differences are normal with standard deviation
    ``spread`` (:func:`ssa_book.verdicts.power.power`, 2000 simulated experiments): ``pairs`` x ``effects``.
    ``None`` when the spread is unknown (one seed)."""
    import pandas as pd

    if spread is None:
        return None
    table = pd.DataFrame({f"scorer better by {effect:g}": [_power(int(n), float(effect), float(spread)) for n in pairs] for effect in effects},
                         index=pd.Index([int(n) for n in pairs], name="paired seeds"))
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
    panels = "; ".join(f"{panel}, {part.label()}" + (f", {part.estimate(spec)} {part.units}" if part.interval is not None else "")
                       for panel, part in verdict.parts)
    return f"{verdict.claim}: {scorer_words(verdict)}" + (f": {panels}" if panels else "")


# A scorer's claim "better than softmax on every panel" (scorer_verdict) read as a part of the paper's
# statement that no alternative is: decided against it (a panel at least) or decided both ways, the
# statement holds for that scorer; the claim holds, the statement does not; open while the claim may
# still hold (better on some panels, the others open).
_FOR_THE_STATEMENT = {DOES_NOT_HOLD: BETTER, MIXED: BETTER, NEGLIGIBLE: BETTER,
                      WORSE: BETTER, BETTER: WORSE, HOLDS_IN_PART: UNDECIDED}


def _statement_part(verdict: Verdict, label: str) -> Verdict:
    """``verdict`` (:func:`scorer_verdict`) as a part of the paper's statement, "``label`` is not
    better than softmax on every panel": its outcome in the statement's direction (better: the
    statement holds for it), its panels kept as its parts."""
    return Verdict(f"{label} is not better than softmax on every panel", _FOR_THE_STATEMENT.get(verdict.outcome, verdict.outcome),
                   threshold=THRESHOLD, detail=verdict.detail, parts=verdict.parts, treatment="")


def _seeds_to_decide(undecided: list[Verdict]) -> str:
    """How many paired seeds would decide the ``undecided`` comparisons, in words."""
    spread = [v for v in undecided if v.pairs >= 2]
    known = sorted(v.seeds_to_resolve for v in spread if v.seeds_to_resolve is not None)
    beyond, single = len(spread) - len(known), len(undecided) - len(spread)
    pieces = []
    if known:
        count = f"about {known[0]}" if known[0] == known[-1] else f"about {known[0]} to {known[-1]}"
        pieces.append(f"{count} paired seeds would decide {'it' if len(known) == 1 else 'them'} at the observed means and spread")
    if beyond:
        pieces.append(f"{_plural(beyond, 'would', 'would')} need more than {MAX_SEEDS}")
    if single:
        pieces.append(f"{_plural(single, 'has', 'have')} one seed, no spread to go by, and the rule decides nothing "
                      f"with fewer than {MIN_PAIRS}")
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
        return (f"the power of the rule cannot be estimated from {_plural(pairs, 'seed')} (the spread of the paired "
                f"differences needs two at least)")
    others = [n for n in POWER_SEEDS if n != pairs]  # the comparisons' own count is said first, once
    table = power_table(spread, (pairs, *others), (THRESHOLD,))
    rates = table.iloc[:, 0]
    flips = no_effect_pairs(claim("softmax", "every", "sigma_x"))
    return (f"if an alternative were truly better than softmax by the threshold ({THRESHOLD:g}), at the observed spread of the "
            f"paired differences (standard deviation {spread:.3g}) the rule would find it better on a panel whose error does not "
            f"flip from seed to seed in {rates[pairs]:.0%} of experiments with {pairs} seeds"
            + "".join(f", {rates[n]:.0%} with {n}" for n in others)
            + f"; on the prompt-error panels, where a seed's error flips, it decides nothing below {flips} pairs")


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
    return ", ".join(f"{word} for {count}" + (f" of the {len(statement.parts)} {noun}" if i == 0 else "")
                     for i, (word, count) in enumerate(found.items()))


def statement_evidence(comparison, alternatives=PAPER_ALTERNATIVES) -> str:
    """Each of ``alternatives``' claims to be better than softmax on every panel of ``comparison``
    (:func:`versus_softmax`), one sentence each, every estimate beside its panel, its word and its
    units (:func:`scorer_evidence`); the sign said once."""
    names = [scorer for scorer in alternatives if scorer in set(comparison["scorer"])]
    said = " ".join(f"{scorer_evidence(scorer_verdict(comparison, scorer))}." for scorer in names)
    return (f"Each estimate is softmax's error minus the alternative's (positive: the alternative's lower), with its "
            f"{CONFIDENCE:.0%} interval. {said}") if said else ""


def judge_statement(comparison, alternatives=PAPER_ALTERNATIVES, *, name: str = STATEMENT,
                    what: str = "alternatives the paper tried") -> Verdict:
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
    statement = dataclasses.replace(combine(name, {label: _statement_part(verdict, label) for label, verdict in claims.items()}),
                                    threshold=THRESHOLD)
    rows = comparison[comparison["scorer"].isin(names)]
    tested = rows[~rows["outcome"].isin(TESTS_NOTHING)]
    if tested.empty:
        return dataclasses.replace(statement, detail=_distinct(verdict.detail for verdict in rows["verdict"]))
    rows = tested
    counts = rows["outcome"].value_counts()
    tally = ", ".join(f"{counts[o]} {'alternative ' if o in (BETTER, WORSE) else ''}{o}" for o in OUTCOMES if o in counts)
    panels_count = rows.groupby("scorer")["panel"].nunique()
    where = (f"{panels_count.max()} task-and-shift panels" if panels_count.min() == panels_count.max()
             else f"{panels_count.min()} to {panels_count.max()} task-and-shift panels")
    head = (f"{len(names)} of the {len(alternatives)} {what} compared with softmax on {where}: "
            f"{_plural(len(rows), 'comparison')} of the claim that the alternative's error is lower, {tally}"
            + (f"; no results yet for {', '.join(missing)}" if missing else ""))
    each = "; ".join(f"{label}, {scorer_words(verdict)}" for label, verdict in claims.items())
    detail = (f"{head}. Each alternative's claim to be better than softmax on every panel, its panels tallied by the book's one "
              f"rule for a claim of several parts: {each}. So the statement {_predicate(statement.outcome)} "
              f"({statement_tally(statement, what.split()[0])})")
    wins = rows[rows["outcome"] == BETTER].groupby("scorer").size()
    somewhere = [f"{scorer_label(scorer)} ({wins[scorer]} of {panels_count[scorer]})" for scorer in names if scorer in wins]
    if somewhere:
        detail += f"; better than softmax on some panels: {', '.join(somewhere)}"
    undecided = [v for v in rows["verdict"] if v.outcome in OPEN]
    if undecided:
        deciding = _most_seeds(undecided)
        where_deciding = next(f"{scorer_label(row.scorer)} on {row.panel}" for row in rows.itertuples() if row.verdict is deciding)
        detail += (f". {_plural(len(undecided), 'comparison is', 'comparisons are')} still open (undecided or exploratory): "
                   f"{_seeds_to_decide(undecided)} (the most for {where_deciding})")
        statement = dataclasses.replace(statement, seeds_to_resolve=deciding.seeds_to_resolve)
    return dataclasses.replace(statement, detail=f"{detail}. Power: {power_sentence(comparison, names)}.")


def statement_verdict(runs: dict[str, dict[str, list[ICLRun]]], alternatives=PAPER_ALTERNATIVES, *, name: str = STATEMENT,
                      what: str = "alternatives the paper tried") -> Verdict:
    """The verdict on the paper's statement from ``{task: {scorer: runs}}`` (each run with its
    ``seed``, as :func:`cached_runs` and :func:`load_runs` give them): :func:`judge_statement` of
    :func:`versus_softmax`. "not tested" when nothing is cached."""
    return judge_statement(versus_softmax(runs), alternatives, name=name, what=what)


# --- the collapse mechanism, scorer by scorer --------------------------------------------------

def mechanism_table(runs: dict[str, dict[str, list[ICLRun]]]):
    """One row per scorer and panel: mean attention entropy (normalised, mean over layers, heads
    and seeds) at the smallest and largest sigma, its drop, and the error at both ends and its
    growth, and whether the scorer learned the task in distribution (:func:`ssa_book.icl.verdicts.learned`).
    If collapse drives the errors, scorers whose entropy drops more should lose more."""
    import pandas as pd

    rows = []
    for task, by_scorer in runs.items():
        learned = icl_data.learned(by_scorer, task)
        for shift in next(iter(by_scorer.values()))[0].concentration:
            for scorer, seeds in by_scorer.items():
                entropy = icl_data.head_mean(seeds, shift, "entropy").mean(axis=0)
                error = icl_data.error_curve(seeds, task, shift).mean(axis=0)
                rows.append({"scorer": scorer, "task": task, "shift": shift, "learned": learned[scorer],
                             "entropy_first": entropy[0], "entropy_last": entropy[-1], "entropy_drop": entropy[0] - entropy[-1],
                             "error_first": error[0], "error_last": error[-1], "error_growth": error[-1] - error[0]})
    return pd.DataFrame(rows)


MIN_SCORERS_FOR_CORRELATION = 3  # a rank correlation of two points is always +-1


def mechanism_correlation(mechanism) -> dict[tuple[str, str], float]:
    """Spearman rank correlation across the scorers that learned the task (all of them when
    fewer than three did), per panel, between the entropy drop and the error growth (NaN-free:
    a panel where either is constant across scorers gets 0). Panels with results for fewer than
    :data:`MIN_SCORERS_FOR_CORRELATION` scorers are left out."""
    correlations = {}
    for (task, shift), group in mechanism.groupby(["task", "shift"], sort=False):
        if len(group) < MIN_SCORERS_FOR_CORRELATION:
            continue
        if group["learned"].sum() >= MIN_SCORERS_FOR_CORRELATION:
            group = group[group["learned"]]
        drop, growth = group["entropy_drop"].rank(), group["error_growth"].rank()
        correlations[(task, shift)] = 0.0 if drop.std() == 0 or growth.std() == 0 else float(np.corrcoef(drop, growth)[0, 1])
    return correlations


# --- cost: time per training step and peak memory, every scorer in one run ---------------------

COST_MODELS = ("icl", "retrieval")  # the in-context model (this chapter's) and max retrieval's retriever
# Every scorer through one kind of path: its weights in full, then weights @ v (softmax too, not
# PyTorch's fused kernel; SSA not through its own kernels), so that a ratio compares the scorers'
# arithmetic, not how much engineering each path has had.
COST_PATH = "reference"


@dataclasses.dataclass(frozen=True)
class CostConfig:
    profile: str  # the profile whose model is measured
    device: str  # a benchmark measures its device, so the device is part of the config
    scorers: tuple[str, ...]
    task: str = "linear"  # the in-context task whose model and batch are measured
    threads: int = 1  # torch threads (the book's runs train on one thread each)
    min_run_time: float = 2.0  # seconds of interleaved timing of the fastest scorer
    seed: int = 0
    version: int = 2
    model: str = "icl"  # one of COST_MODELS
    path: str = COST_PATH  # the attention path every scorer takes (ssa.attention.attention_path)

    def __post_init__(self) -> None:
        if self.model not in COST_MODELS:
            raise ValueError(f"model must be one of {', '.join(COST_MODELS)}; got {self.model!r}")


def cost_config(profile: str = "cpu", device: str = "auto", scorers=None, seed: int = 0, model: str = "icl") -> CostConfig:
    return CostConfig(check_profile(profile), resolve_device(device), tuple(scorer_names() if scorers is None else scorers),
                      min_run_time=0.2 if profile == "smoke" else 2.0, seed=seed, model=model)


def _icl_training_step(config: CostConfig, scorer: str):
    """One training step (forward, backward, Adam) of the in-context model with ``scorer``, on a
    batch at the curriculum's longest prompts; and what the batch is."""
    train_config = experiments.experiment_config(config.task, scorer, config.profile, config.seed).train
    last_step = train_config.train_steps - 1
    xs, ys = (tensor.to(config.device) for tensor in training_batch(train_config, last_step))
    model = build_model(train_config).to(config.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=train_config.learning_rate)

    def step():
        loss = train_config.task_rules.loss(model(xs, ys), ys)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step, {"points": train_config.curriculum.points(last_step), "batch_size": train_config.batch_size}


def _retrieval_training_step(config: CostConfig, scorer: str):
    """One training step of max retrieval's retriever with ``scorer`` (:func:`ssa_book.retrieval.experiment.training_step`)."""

    experiment = retrieval_config(scorer, config.profile, config.seed)
    return training_step(experiment, config.device), {"items": experiment.train.items, "batch_size": experiment.train.batch_size}


def cost_benchmark(config: CostConfig) -> dict:
    """Median time of one training step (forward, backward, Adam) of ``config.model`` with each
    scorer, all timed in interleaved rounds in the same process (:func:`ssa_book.measure.interleaved_medians`),
    and the peak memory of one step (:func:`ssa_book.measure.peak_memory_bytes`), every scorer through
    the attention path ``config.path``; ratios to softmax's."""
    if "softmax" not in config.scorers:
        raise ValueError(f"scorers must include softmax (the reference of the ratios); got {config.scorers}")
    torch.set_num_threads(config.threads)
    build = _icl_training_step if config.model == "icl" else _retrieval_training_step
    built = {scorer: build(config, scorer) for scorer in config.scorers}
    steps = {scorer: step for scorer, (step, _) in built.items()}
    with attention_path(config.path):
        for step in steps.values():  # warm-up: first-call work (compilation, allocator) is not a step's cost
            step()
            step()
        times = interleaved_medians(steps, config.min_run_time, config.threads)
        memory = {scorer: peak_memory_bytes(step, config.device) for scorer, step in steps.items()}
    result = {"model": config.model, "path": config.path, **built["softmax"][1], "scorers": {}}
    for scorer in config.scorers:
        result["scorers"][scorer] = {
            "step_s": times[scorer][0], "rounds": times[scorer][1], "peak_bytes": memory[scorer],
            "time_ratio": times[scorer][0] / times["softmax"][0],
            "memory_ratio": memory[scorer] / memory["softmax"] if memory["softmax"] else None,
        }
    return result


def cost_entry(profile: str = "cpu", device: str = "auto", scorers=None, seed: int = 0, model: str = "icl") -> dict:
    """:func:`cost_benchmark` of ``model`` through the result cache (``results/<profile>/alternatives/cost/``)."""

    config = cost_config(profile, device, scorers, seed, model)
    return cached(EXPERIMENT_COST, config, lambda: cost_benchmark(config), profile=profile,
                  regenerate=regenerate_command(profile), device=config.device)


def compute_cost(profile: str, device: str, progress: bool, model: str = "icl") -> str:
    """Run kind "cost": the scorers' cost per training step through the cache."""
    ratios = cost_entry(profile, device, model=model)["scorers"]
    return "time / memory per step, x softmax: " + ", ".join(
        f"{name} {value['time_ratio']:.2f}/{value['memory_ratio'] or float('nan'):.2f}" for name, value in ratios.items())


KINDS = {"cost": RunKind(compute_cost)}
