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
from typing import Sequence

import numpy as np

from ssa_book.chapters import Chapter, Run, RunKind, Setting
from ssa_book.icl import experiments
from ssa_book.icl import verdicts as icl_data  # its data accessors only (error_curve, learned, ...)
from ssa_book.icl.evaluate import bootstrap_band
from ssa_book.icl.records import ICLRun
from ssa_book.icl.tasks import TASKS, get_task
from ssa_book.plotting import scorer_label
from ssa_book.profiles import check_profile
from ssa.scoring import scorer_names
from ssa_book.results.store import entry_exists
from ssa_book.results.cache import require_cache_from_environment
from ssa_book.results.cache import cached
from ssa_book.alternatives.cost import EXPERIMENT_COST, cost_benchmark, cost_config

# The scorers the paper says it tried (its discussion of alternative scoring functions); the
# verdict on its statement is about these.
PAPER_ALTERNATIVES = (
    "temperature_softmax",
    "sparsemax",
    "entmax15",
    "sa_softmax",
    "sa_softmax_normalized",
    "cosformer",
)
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
    return [
        (task, shift)
        for task in TASKS
        for shift in experiments.shifts(experiments.experiment_config(task, "softmax", profile))
    ]


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

    def runs(
        self,
        profile: str,
        seeds: Sequence[int],
        scorers: Sequence[str],
        *,
        tasks: Sequence[str] | None = None,
        cost: bool = True,
    ) -> list[Run]:
        measured = (
            [Run("cost", ("icl",), "cost of every scorer, the in-context model", exclusive=True, chapters=(self.name,))]
            if cost
            else []
        )
        return measured + experiments.icl_runs(
            TASKS if tasks is None else tasks, scorers, seeds, scorer_major=True, planned_by=self.name
        )

    def configs(self, profile: str) -> dict:
        cost = cost_config(profile, "cpu")
        return {
            task: {"experiment": experiments.experiment_config(task, "ssa", profile), "cost": cost} for task in TASKS
        }

    def settings(self) -> tuple[Setting, ...]:
        return tuple(
            dataclasses.replace(setting, path=f"experiment.{setting.path}") for setting in experiments.ICL_SETTINGS
        ) + (
            Setting(
                "cost: timing",
                "seconds of interleaved timing of the fastest scorer, cost measurement",
                "cost.min_run_time",
            ),
            Setting(
                "cost: task", "the task whose model and longest training batch the cost measurement times", "cost.task"
            ),
            Setting("cost: threads", "torch threads of the cost measurement", "cost.threads"),
        )


CHAPTER = AlternativesChapter(
    "alternative_scorers", "every registered scorer on the three in-context tasks, and their cost", jobs=2
)


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
    return entry_exists(experiment.name, experiment, profile=profile) and entry_exists(
        f"icl_logits/{task}/{scorer}", spread, profile=profile
    )


# --- loading -----------------------------------------------------------------------------------


def load_runs(
    profile: str, *, scorers=None, seeds=None, tasks=TASKS, device: str = "auto"
) -> dict[str, dict[str, list[ICLRun]]]:
    """``{task: {scorer: [result of each seed]}}`` from the ICL cache (computed on a miss unless
    the cache is required). Scorers default to every registered one. Each run carries its
    ``seed``: the comparisons pair runs by it."""
    scorers = scorer_names() if scorers is None else scorers
    seeds = chapter_seeds(profile) if seeds is None else seeds
    return {
        task: experiments.load_runs(task, profile=profile, scorers=scorers, seeds=seeds, device=device)
        for task in tasks
    }


def cached_runs(
    profile: str, *, scorers=None, seeds=None, tasks=TASKS
) -> tuple[dict[str, dict[str, list[ICLRun]]], int, int]:
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


def chapter_runs(
    profile: str, *, seeds=None, device: str = "auto"
) -> tuple[dict[str, dict[str, list[ICLRun]]], int, int]:
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
    return {
        "complete": False,
        "sentence": (
            f"Only {cached} of the {planned} planned runs are in the cache so far: a task appears once softmax's runs are "
            f"in, a scorer once all its seeds are, and every verdict below is provisional until the rest "
            f"is trained (the regenerate command resumes the sweep where it stopped)."
        ),
    }


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
                    rows.append(
                        {
                            "task": task,
                            "shift": shift,
                            "sigma": sigma,
                            "scorer": scorer,
                            "mean": band["mean"][index],
                            "low": band["low"][index],
                            "high": band["high"][index],
                            "seeds": len(seeds),
                        }
                    )
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
                for scorer, row in cells.iterrows()
            }
    table = pd.DataFrame(columns)
    if cost is not None:
        for column, key in (("step time / softmax", "time_ratio"), ("peak memory / softmax", "memory_ratio")):
            table[("cost", column)] = pd.Series(
                {scorer_label(s): "n/a" if v[key] is None else f"{v[key]:.2f}" for s, v in cost["scorers"].items()}
            )
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
                rows.append(
                    {
                        "scorer": scorer,
                        "task": task,
                        "shift": shift,
                        "learned": learned[scorer],
                        "entropy_first": entropy[0],
                        "entropy_last": entropy[-1],
                        "entropy_drop": entropy[0] - entropy[-1],
                        "error_first": error[0],
                        "error_last": error[-1],
                        "error_growth": error[-1] - error[0],
                    }
                )
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
        correlations[(task, shift)] = (
            0.0 if drop.std() == 0 or growth.std() == 0 else float(np.corrcoef(drop, growth)[0, 1])
        )
    return correlations


# --- the cost through the cache ----------------------------------------------------------------


def cost_entry(profile: str = "cpu", device: str = "auto", scorers=None, seed: int = 0, model: str = "icl") -> dict:
    """:func:`cost_benchmark` of ``model`` through the result cache (``results/<profile>/alternatives/cost/``)."""

    config = cost_config(profile, device, scorers, seed, model)
    return cached(
        EXPERIMENT_COST,
        config,
        lambda: cost_benchmark(config),
        profile=profile,
        regenerate=regenerate_command(profile),
        device=config.device,
    )


def compute_cost(profile: str, device: str, progress: bool, model: str = "icl") -> str:
    """Run kind "cost": the scorers' cost per training step through the cache."""
    ratios = cost_entry(profile, device, model=model)["scorers"]
    return "time / memory per step, x softmax: " + ", ".join(
        f"{name} {value['time_ratio']:.2f}/{value['memory_ratio'] or float('nan'):.2f}"
        for name, value in ratios.items()
    )


KINDS = {"cost": RunKind(compute_cost)}
