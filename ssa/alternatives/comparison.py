"""Every scorer side by side on the in-context-learning tasks: table, ranks, cost, collapse, verdict.

Runs are the In-context learning chapters' own experiments (:mod:`ssa.icl.experiments`), so the
budget and hyperparameters are theirs by construction: :func:`ssa.icl.experiments.experiment_config`
with the scorer's name and nothing else. Scorer-specific settings are *learned* parameters with
fixed, documented initial values, not tuned (no sweep touches any test data):

* ``temperature_softmax``: temperature ``T`` trained per layer, initialised at 1 (softmax);
* ``ssmax``: ``s`` trained per layer, initialised at 0.43 (``s log N = 1`` near ``N = 10`` keys);
* ``ssa``: ``b = e``, ``n = e^0.4`` initially, both trained (the ICL chapters' choice);
* ``ssa_n1.5``, ``ssa_n2``: ``n`` fixed, ``b`` trained from the registry's default 1;
* the others (sparsemax, 1.5-entmax, SA-softmax and its normalised form, cosFormer, sigmoid)
  have no parameters.

A *panel* is one task and one sigma sweep: ``every``/``sigma_x``, ``some``/``sigma_x``,
``linear``/``sigma_x`` and ``linear``/``sigma_ab``. Errors are those of :mod:`ssa.icl.verdicts`
(prompt-level error for quantification, MSE normalised by the zero predictor for linear).
"""

from __future__ import annotations

import dataclasses
import json
import statistics

import numpy as np

from ssa.icl import experiments, verdicts
from ssa.icl.evaluate import bootstrap_band
from ssa.icl.tasks import TASKS, is_classification
from ssa.plotting import scorer_label
from ssa.profiles import check_profile, resolve_device
from ssa.scoring import scorer_names

EXPERIMENT_COST = "alternatives/cost"
# The scorers the paper says it tried (its discussion of alternative scoring functions); the
# verdict on its statement is about these.
PAPER_ALTERNATIVES = ("temperature_softmax", "sparsemax", "entmax15", "sa_softmax", "sa_softmax_normalized", "cosformer")
SMOKE_SEEDS = 1  # the smoke profile only checks the code: one model per scorer and task (12 x 3 add up)
# Shift levels in the results table (the figures show every sigma).
TABLE_SIGMAS = {"quantification": (1, 5, 10, 20, 29), "linear": (1, 2, 5, 10)}
SHIFT_LABELS = {"sigma_x": "σ of x", "sigma_ab": "σ of a, b"}
# Seconds per run when no run of the task is cached yet to measure it (cpu: measured on the
# shared 2-core machine, one thread per run, two runs at once, logit-spread diagnostic included).
DEFAULT_RUN_SECONDS = {"smoke": 3.0, "cpu": 420.0, "paper": 20 * 3600.0}


def chapter_seeds(profile: str, first_seed: int = 0) -> tuple[int, ...]:
    """The seeds the chapter shows: the ICL chapters' three; one at ``smoke``."""
    seeds = experiments.chapter_seeds(first_seed)
    return seeds[:SMOKE_SEEDS] if check_profile(profile) == "smoke" else seeds


def panels(profile: str = "cpu") -> list[tuple[str, str]]:
    """``(task, shift)`` of every sigma sweep the ICL experiments evaluate."""
    return [(task, shift) for task in TASKS for shift in experiments.shifts(experiments.experiment_config(task, "softmax", profile))]


def panel_label(task: str, shift: str) -> str:
    return f'"{task}", {SHIFT_LABELS.get(shift, shift)}'


def regenerate_command(profile: str = "cpu", tasks=None, scorers=None, seeds=None) -> str:
    """The command that fills this chapter's cache (all of it, or the selection given)."""
    command = f"python -m ssa.alternatives regenerate --profile {profile} --jobs 2"
    for flag, values in (("--task", tasks), ("--scorer", scorers), ("--seeds", seeds)):
        if values:
            command += f" {flag} {' '.join(map(str, values))}"
    return command


# --- the plan of runs --------------------------------------------------------------------------

def plan(tasks=TASKS, scorers=None, seeds=(0, 1, 2)) -> list[tuple[str, str, int]]:
    """``(task, scorer, seed)`` runs in the order they should finish: task by task, and within a
    task scorer by scorer with all its seeds, so an interrupted sweep leaves whole groups."""
    scorers = scorer_names() if scorers is None else scorers
    return [(task, scorer, seed) for task in tasks for scorer in scorers for seed in seeds]


def is_cached(task: str, scorer: str, seed: int, profile: str) -> bool:
    """Whether the run and its logit-spread diagnostic (what ``ssa.icl``'s regenerate makes) are cached."""
    from ssa.results import entry_path

    experiment = experiments.experiment_config(task, scorer, profile, seed)
    spread = {"experiment": dataclasses.asdict(experiment), "measure": "logit_spread"}
    return (entry_path(experiment.name, experiment, profile=profile).exists()
            and entry_path(f"icl_logits/{task}/{scorer}", spread, profile=profile).exists())


def measured_run_seconds(task: str, profile: str) -> float:
    """Median seconds of one cached run of ``task`` (training, evaluation and logit spread, from
    the provenance of every cached run); :data:`DEFAULT_RUN_SECONDS` when none is cached."""
    from ssa import paths

    def median_time(folder: str) -> float | None:
        times = []
        for path in (paths.results_dir() / profile / folder / task).glob("*/*.json"):
            try:
                times.append(float(json.loads(path.read_text())["provenance"]["wall_time_s"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return statistics.median(times) if times else None

    run, spread = median_time("icl"), median_time("icl_logits")
    return DEFAULT_RUN_SECONDS[profile] if run is None else run + (spread or 0.0)


# --- loading -----------------------------------------------------------------------------------

def load_runs(profile: str, *, scorers=None, seeds=None, tasks=TASKS, device: str = "auto") -> dict[str, dict[str, list[dict]]]:
    """``{task: {scorer: [result of each seed]}}`` from the ICL cache (computed on a miss unless
    the cache is required). Scorers default to every registered one."""
    scorers = scorer_names() if scorers is None else scorers
    seeds = chapter_seeds(profile) if seeds is None else seeds
    return {task: experiments.load_runs(task, profile=profile, scorers=scorers, seeds=seeds, device=device) for task in tasks}


def cached_runs(profile: str, *, scorers=None, seeds=None, tasks=TASKS) -> tuple[dict[str, dict[str, list[dict]]], int, int]:
    """What the cache already holds, without training anything: ``({task: {scorer: runs}},
    runs cached, runs planned)``. A scorer appears for a task only with all its seeds; a task
    only with softmax's (the reference of every comparison) and one other scorer."""
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


def chapter_runs(profile: str, *, seeds=None, device: str = "auto") -> tuple[dict[str, dict[str, list[dict]]], int, int]:
    """What the chapter shows: ``({task: {scorer: runs}}, runs cached, runs planned)``. Where the
    cache is required (``$SSA_REQUIRE_CACHE``, as in book builds) that is what the cache holds now
    (:func:`cached_runs`: whole seed groups, so a sweep spread over sessions shows as it fills);
    otherwise every planned run, the missing ones trained here."""
    from ssa.results import require_cache_from_environment

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


def load_provenance(profile: str, *, scorers=None, seeds=None, tasks=TASKS) -> dict[str, dict[str, list[dict]]]:
    scorers = scorer_names() if scorers is None else scorers
    seeds = chapter_seeds(profile) if seeds is None else seeds
    return {task: experiments.load_provenance(task, profile=profile, scorers=scorers, seeds=seeds) for task in tasks}


# --- the table and the ranks -------------------------------------------------------------------

def error_table(runs: dict[str, dict[str, list[dict]]]):
    """Long table: one row per task, shift, sigma and scorer with the mean error over seeds and
    its 95% bootstrap band (columns ``task, shift, sigma, scorer, mean, low, high, seeds``)."""
    import pandas as pd

    rows = []
    for task, by_scorer in runs.items():
        first = next(iter(by_scorer.values()))[0]
        for shift in first["shifts"]:
            sigmas = first["shifts"][shift]["sigmas"]
            for scorer, seeds in by_scorer.items():
                band = bootstrap_band(verdicts.error_curve(seeds, task, shift))
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
        wanted = TABLE_SIGMAS["quantification" if is_classification(task) else "linear"]
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

OUTCOMES = ("better", "worse", "no clear difference", "did not learn", "not tested")


def _shifted_error(seeds: list[dict], task: str, shift: str) -> np.ndarray:
    """Per-seed mean error over the shifted sigmas (> 1)."""
    curve = verdicts.error_curve(seeds, task, shift)
    sigmas = np.array(seeds[0]["shifts"][shift]["sigmas"], dtype=float)
    return curve[:, sigmas > 1].mean(axis=1)


def versus_softmax(runs: dict[str, dict[str, list[dict]]]):
    """One row per scorer (other than softmax) and panel: mean error over the shifted sigmas for
    softmax and the scorer, their difference (softmax - scorer: positive = the scorer is better)
    with its 95% band, and the outcome, with the ICL chapters' thresholds
    (:func:`ssa.icl.verdicts.lower`): **better** when the scorer removes at least
    ``MIN_RELATIVE_GAIN`` of softmax's error and the band excludes zero, **worse** the same way
    round, **did not learn** when the scorer's models fail in distribution, **not tested** when
    softmax's do."""
    import pandas as pd

    rows = []
    for task, by_scorer in runs.items():
        learned = verdicts.learned(by_scorer, task)
        for shift in by_scorer["softmax"][0]["shifts"]:
            softmax = _shifted_error(by_scorer["softmax"], task, shift)
            for scorer, seeds in by_scorer.items():
                if scorer == "softmax":
                    continue
                other = _shifted_error(seeds, task, shift)
                difference, low, high = verdicts.difference_band(softmax, other)
                if not learned["softmax"]:
                    outcome = "not tested"
                elif not learned[scorer]:
                    outcome = "did not learn"
                elif verdicts.lower("", softmax, other, "").verdict == verdicts.VERDICTS[0]:
                    outcome = "better"
                elif verdicts.lower("", other, softmax, "").verdict == verdicts.VERDICTS[0]:
                    outcome = "worse"
                else:
                    outcome = "no clear difference"
                rows.append({"scorer": scorer, "task": task, "shift": shift, "softmax": float(softmax.mean()),
                             "error": float(other.mean()), "difference": difference, "low": low, "high": high, "outcome": outcome})
    return pd.DataFrame(rows)


def outcome_counts(comparison):
    """Scorer x outcome: on how many panels each scorer is better / worse / ... than softmax."""
    counts = comparison.pivot_table(index="scorer", columns="outcome", values="task", aggfunc="count", fill_value=0, sort=False)
    counts = counts.reindex(columns=[o for o in OUTCOMES if o in counts.columns], fill_value=0)
    counts.index = [scorer_label(scorer) for scorer in counts.index]
    return counts


def paper_verdict(comparison, alternatives=PAPER_ALTERNATIVES, what: str = "alternatives the paper tried") -> dict:
    """The paper's statement, "none [of the alternatives it tried] consistently better than
    softmax", checked on ``comparison`` (:func:`versus_softmax`): an alternative is consistently
    better when it is **better** on every panel. ``reproduced`` when none of the paper's
    alternatives with results is, ``not reproduced at this scale`` when one is, ``not tested``
    when none has results. Returns ``verdict``, ``evidence`` (one sentence with the numbers),
    ``tested``, ``consistently_better``, ``better_somewhere``, ``panels``; ``what`` names the
    group of ``alternatives`` in the evidence."""
    rows = comparison[comparison["scorer"].isin(alternatives) & (comparison["outcome"] != "not tested")]
    tested = [name for name in alternatives if name in set(rows["scorer"])]
    if not tested:
        why = ("softmax did not learn the tasks in distribution, so no shift tests anything" if len(comparison)
               else f"none of the {what} has results")
        return {"verdict": verdicts.VERDICTS[3], "evidence": why, "tested": [], "consistently_better": [],
                "better_somewhere": [], "panels": 0}
    wins = rows.groupby("scorer", sort=False)["outcome"].apply(lambda outcomes: int((outcomes == "better").sum()))
    panels_per_scorer = rows.groupby("scorer", sort=False).size()
    consistent = [name for name in tested if wins[name] == panels_per_scorer[name]]
    somewhere = [name for name in tested if wins[name] > 0]
    panels_count = int(panels_per_scorer.max())
    fewest = int(panels_per_scorer.min())
    where = (f"all {panels_count} task-and-shift panels" if fewest == panels_count
             else f"every task-and-shift panel with its results ({fewest} to {panels_count} so far)")
    label = ", ".join
    evidence = (f"of the {len(tested)} {what} that we trained ({label(map(scorer_label, tested))}), "
                f"{len(consistent)} {'is' if len(consistent) == 1 else 'are'} clearly better than softmax on {where}"
                + (f" ({label(map(scorer_label, consistent))})" if consistent else "")
                + f"; {len(somewhere)} {'is' if len(somewhere) == 1 else 'are'} clearly better on at least one"
                + (f" ({label(f'{scorer_label(n)}: {wins[n]} of {panels_per_scorer[n]}' for n in somewhere)})" if somewhere else ""))
    return {"verdict": verdicts.VERDICTS[2] if consistent else verdicts.VERDICTS[0], "evidence": evidence, "tested": tested,
            "consistently_better": consistent, "better_somewhere": somewhere, "panels": panels_count}


# --- the collapse mechanism, scorer by scorer --------------------------------------------------

def mechanism_table(runs: dict[str, dict[str, list[dict]]]):
    """One row per scorer and panel: mean attention entropy (normalised, mean over layers, heads
    and seeds) at the smallest and largest sigma, its drop, and the error at both ends and its
    growth, and whether the scorer learned the task in distribution (:func:`ssa.icl.verdicts.learned`).
    If collapse drives the errors, scorers whose entropy drops more should lose more."""
    import pandas as pd

    rows = []
    for task, by_scorer in runs.items():
        learned = verdicts.learned(by_scorer, task)
        for shift in next(iter(by_scorer.values()))[0]["concentration"]:
            for scorer, seeds in by_scorer.items():
                entropy = verdicts.head_mean(seeds, shift, "entropy").mean(axis=0)
                error = verdicts.error_curve(seeds, task, shift).mean(axis=0)
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

@dataclasses.dataclass(frozen=True)
class CostConfig:
    profile: str  # the ICL profile whose model is measured
    device: str  # a benchmark measures its device, so the device is part of the config
    scorers: tuple[str, ...]
    task: str = "linear"  # the task whose model and batch are measured
    threads: int = 1  # torch threads (the book's runs train on one thread each)
    min_run_time: float = 2.0  # seconds of interleaved timing of the fastest scorer
    seed: int = 0
    version: int = 1


def cost_config(profile: str = "cpu", device: str = "auto", scorers=None, seed: int = 0) -> CostConfig:
    return CostConfig(check_profile(profile), resolve_device(device), tuple(scorer_names() if scorers is None else scorers),
                      min_run_time=0.2 if profile == "smoke" else 2.0, seed=seed)


def cost_benchmark(config: CostConfig) -> dict:
    """Median time of one training step (forward, backward, Adam) of the ICL model with each
    scorer, all timed in interleaved rounds in the same process (:func:`ssa.bench.interleaved_medians`),
    and the peak memory of one step (:func:`ssa.bench.peak_memory_bytes`), on a batch at the
    curriculum's longest prompts; ratios to softmax's."""
    import torch

    from ssa.bench import interleaved_medians, peak_memory_bytes
    from ssa.icl.tasks import loss as task_loss
    from ssa.icl.train import build_model, training_batch

    if "softmax" not in config.scorers:
        raise ValueError(f"scorers must include softmax (the reference of the ratios); got {config.scorers}")
    torch.set_num_threads(config.threads)
    train_configs = {s: experiments.experiment_config(config.task, s, config.profile, config.seed).train for s in config.scorers}
    reference = train_configs["softmax"]
    last_step = reference.train_steps - 1  # a batch of the longest prompts of the curriculum
    xs, ys = (tensor.to(config.device) for tensor in training_batch(reference, last_step))

    def training_step(train_config):
        model = build_model(train_config).to(config.device)
        optimizer = torch.optim.Adam(model.parameters(), lr=train_config.learning_rate)

        def step():
            loss = task_loss(config.task, model(xs, ys), ys)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        return step

    steps = {scorer: training_step(train_config) for scorer, train_config in train_configs.items()}
    for step in steps.values():  # warm-up: first-call work (compilation, allocator) is not a step's cost
        step()
        step()
    times = interleaved_medians(steps, config.min_run_time, config.threads)
    memory = {scorer: peak_memory_bytes(step, config.device) for scorer, step in steps.items()}
    result = {"points": reference.curriculum.points(last_step), "batch_size": reference.batch_size, "scorers": {}}
    for scorer in config.scorers:
        result["scorers"][scorer] = {
            "step_s": times[scorer][0], "rounds": times[scorer][1], "peak_bytes": memory[scorer],
            "time_ratio": times[scorer][0] / times["softmax"][0],
            "memory_ratio": memory[scorer] / memory["softmax"] if memory["softmax"] else None,
        }
    return result


def cost_entry(profile: str = "cpu", device: str = "auto", scorers=None, seed: int = 0) -> dict:
    """:func:`cost_benchmark` through the result cache (``results/<profile>/alternatives/cost/``)."""
    from ssa.results import cached

    config = cost_config(profile, device, scorers, seed)
    return cached(EXPERIMENT_COST, config, lambda: cost_benchmark(config), profile=profile,
                  regenerate=regenerate_command(profile), device=config.device)

