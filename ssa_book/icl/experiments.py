"""One in-context-learning experiment = one trained model (task x scorer x seed) and everything
the chapters measure on it, cached as one result file.

:class:`ICLExperiment` is the single config of an experiment; :func:`experiment_config` fills it
for a profile:

* ``paper``: the paper's setup (the hyperparameters as in the authors' public code): GPT-2 with
  12 layers, 8 heads, embedding 256; Adam 1e-4, batch 64, 500k steps, curriculum 11 -> 41 points
  (+2 every 2000 steps), 256 positions.
* ``cpu``: what the book shows, sized so that one model trains in minutes on one CPU core (the
  chapters state how the size was chosen and the times measured).
* ``smoke``: seconds; checks that the code runs.

:func:`run` trains (or resumes, or loads) the model and evaluates it; :func:`cached_run` goes
through :func:`ssa_book.results.cache.cached`, keyed by the whole config, so a result is reused only for an
identical config and code version (:mod:`ssa_book.code_versions`, computation ``icl``).
``python -m ssa_book regenerate icl_collapse --profile cpu`` computes every one missing (:mod:`ssa_book.regenerate`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from typing import Any, Iterable, Sequence

import numpy as np

from ssa_book.chapters import (
    Chapter,
    Run,
    RunKind,
    SeedRun,
    Setting,
    listed,
    regenerate_command as chapter_command,
    replace_seed,
    scorer_settings,
)
from ssa_book.icl import diagnostics, verdicts as icl_verdicts
from ssa_book.icl.curriculum import Curriculum
from ssa_book.icl.evaluate import evaluate, model_predictor, sweep
from ssa_book.icl.models import ModelConfig
from ssa_book.icl.records import ICLRun, LogitSpread
from ssa_book.icl.samplers import PromptSpec, generator, sample_prompts
from ssa_book.icl.tasks import get_task
from ssa_book.icl.train import TrainConfig, train
from ssa_book.profiles import check_profile, resolve_device
from ssa_book.results.cache import cache_required, cached, cached_entry
from ssa_book.results.keys import added_field, check_throwaway_cache, config_dict
from ssa_book.results.provenance import Provenance
from ssa.scoring import AUTHORS_ICL_START, scorer_names

CHAPTER_SCORERS = ("softmax", "ssa")
ALTERNATIVES_CHAPTER = "alternative_scorers"  # the chapter that runs the other scorers on the ICL chapters' tasks
SEEDS = (0, 1, 2)

# SSA starts as in the authors' public ICL code; other scorers start from their registry defaults.
SCORER_DEFAULTS: dict[str, dict[str, float]] = {"ssa": dict(AUTHORS_ICL_START)}


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    sigmas: tuple[float, ...] = tuple(range(1, 30))  # test scales (quantification 1..29, linear 1..10)
    points: int = 41  # points per prompt in the sigma sweeps (linear: 9, as the paper)
    lengths: tuple[int, ...] = tuple(range(10, 201, 10))  # prompt lengths (points) at sigma 1
    prompts: int = 256  # prompts per sigma cell (paper: 64 quantification, 100 linear functions)
    length_prompts: int = 64  # prompts per length cell (the paper's 64; long prompts dominate the cost)
    inject_position: int = 5  # 0-based point that gets one extreme x
    inject_magnitude: float = 10.0  # |x| of the injected value (training x ~ N(0, 1))
    diagnostic_prompts: int = 64  # prompts per sigma for the attention statistics
    seed: int = 1_000_003  # evaluation prompts: the same for every model, so comparisons are paired
    per_position: bool = added_field(
        True
    )  # keep each sigma's error at every point (False: prompt errors only, a smaller entry)
    attention_map: bool = added_field(
        True
    )  # keep one prompt's attention map, layers x tokens x tokens (False: a smaller entry)

    def __post_init__(self) -> None:
        if any(not (math.isfinite(s) and s > 0) for s in self.sigmas):
            raise ValueError(f"sigmas must all be finite and > 0; got {self.sigmas}")
        if self.points <= 2 or any(length <= 2 for length in self.lengths):
            raise ValueError("points and lengths must exceed 2 (the metric scores points 3 on)")
        if not 0 <= self.inject_position < self.points - 1:
            raise ValueError(f"inject_position must be in 0..{self.points - 2}; got {self.inject_position}")


@dataclasses.dataclass(frozen=True)
class ICLExperiment:
    train: TrainConfig
    eval: EvalConfig

    def __post_init__(self) -> None:
        longest = max((self.eval.points, *self.eval.lengths))
        if longest > self.train.model.n_positions:
            raise ValueError(
                f"evaluation prompts of {longest} points exceed the model's n_positions="
                f"{self.train.model.n_positions}; shorten eval.lengths/eval.points or enlarge the model"
            )

    @property
    def name(self) -> str:
        """The cache folder: ``icl/<task>/<scorer>``."""
        return f"icl/{self.train.task}/{self.train.model.scorer}"


def _profile_sizes(profile: str) -> tuple[ModelConfig, Curriculum, dict]:
    """(model sizes without scorer, curriculum, training and evaluation settings) of a profile."""
    if profile == "paper":
        return (
            ModelConfig(n_layer=12, n_head=8, n_embd=256, n_positions=256),
            Curriculum(start=11, end=41, increment=2, interval=2000),
            {"train_steps": 500_000, "learning_rate": 1e-4, "prompts": 256, "lengths": tuple(range(10, 201, 10))},
        )
    if profile == "cpu":  # the quantification tasks take fewer steps: see experiment_config
        return (
            ModelConfig(n_layer=4, n_head=4, n_embd=64, n_positions=200),
            Curriculum(start=5, end=21, increment=2, interval=150),
            {
                "train_steps": 1500,
                "learning_rate": 1e-3,
                "prompts": 256,
                "lengths": (10, 20, 30, 40, 60, 80, 100, 150, 200),
            },
        )
    return (
        ModelConfig(n_layer=1, n_head=2, n_embd=16, n_positions=40),
        Curriculum(start=5, end=9, increment=2, interval=10),
        {"train_steps": 30, "learning_rate": 1e-3, "prompts": 16, "lengths": (10, 20)},
    )


def experiment_config(
    task: str, scorer: str, profile: str = "cpu", seed: int = 0, **scorer_kwargs: float
) -> ICLExperiment:
    """The experiment of ``task`` x ``scorer`` x ``seed`` at ``profile``; ``scorer_kwargs``
    override :data:`SCORER_DEFAULTS` (e.g. ``n=2.0``)."""
    rules = get_task(task)
    classification = rules.classification
    check_profile(profile)
    if scorer not in scorer_names():
        raise ValueError(f"scorer must be one of {', '.join(scorer_names())}; got {scorer!r}")
    model, curriculum, settings = _profile_sizes(profile)
    if profile == "cpu" and classification:
        # Quantification is learned within a few hundred steps at this size (measured: training
        # loss below 0.01 by step 500), so it gets 1000 steps, the curriculum done by step 800.
        curriculum = dataclasses.replace(curriculum, interval=100)
        settings = {**settings, "train_steps": 1000}
    kwargs = {**SCORER_DEFAULTS.get(scorer, {}), **scorer_kwargs}
    model = dataclasses.replace(model, scorer=scorer, scorer_kwargs=tuple(sorted(kwargs.items())))
    train_config = TrainConfig(
        task=rules,
        model=model,
        curriculum=curriculum,
        batch_size=64,
        learning_rate=settings["learning_rate"],
        train_steps=settings["train_steps"],
        seed=seed,
        log_every=max(1, min(50, settings["train_steps"] // 20)),
    )
    quick = profile == "smoke"
    sigmas = (
        (1, 5, 29)
        if quick and classification
        else (1, 5, 10)
        if quick
        else tuple(range(1, 30 if classification else 11))
    )
    eval_config = EvalConfig(
        sigmas=sigmas,
        points=curriculum.end if classification else 9,
        lengths=settings["lengths"],
        # The paper's test sets: 64 prompts per cell for quantification, 100 functions for linear.
        prompts=(64 if classification else 100) if profile == "paper" else settings["prompts"],
        length_prompts=min(64, settings["prompts"]),
        diagnostic_prompts=8 if quick else 64,
    )
    return ICLExperiment(train_config, eval_config)


def shifts(experiment: ICLExperiment) -> dict[str, list[PromptSpec]]:
    """The sigma sweeps of the task: ``sigma_x`` (inputs), and for the linear task ``sigma_ab``
    (function parameters), each with the other scale at 1."""
    points, sigmas = experiment.eval.points, experiment.eval.sigmas
    return {
        scale: [PromptSpec(points, **{scale: s}) for s in sigmas]
        for scale in experiment.train.task_rules.shifted_scales
    }


def injection_spec(experiment: ICLExperiment) -> PromptSpec:
    """A sigma-1 prompt with one extreme x of the sign that leaves the task's label rule
    untouched (:meth:`ssa_book.icl.tasks.Task.injection_sign`)."""
    return PromptSpec(
        experiment.eval.points,
        inject_position=experiment.eval.inject_position,
        inject_value=experiment.train.task_rules.injection_sign() * experiment.eval.inject_magnitude,
    )


def _rounded(value, digits: int = 6):
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, list):
        return [_rounded(item, digits) for item in value]
    if isinstance(value, dict):
        return {key: _rounded(item, digits) for key, item in value.items()}
    return value


def evaluate_trained(experiment: ICLExperiment, model, device: str = "cpu") -> dict:
    """Every measurement of the chapters on a trained ``model``, with the baselines on the same prompts."""
    task, ev = experiment.train.task_rules, experiment.eval
    predictors = {"model": model_predictor(model, device), **task.baselines()}

    def everywhere(specs: list[PromptSpec], seed: int, prompts: int, keep_positions: bool = True) -> dict:
        results = {name: sweep(predictor, task, specs, prompts, seed) for name, predictor in predictors.items()}
        return {
            name: {
                "prompt_error": [cell["prompt_error"] for cell in cells],
                **({"per_position": [cell["per_position"] for cell in cells]} if keep_positions else {}),
            }
            for name, cells in results.items()
        }

    out: dict = {"shifts": {}, "concentration": {}}
    for offset, (shift, specs) in enumerate(shifts(experiment).items()):
        seed = ev.seed + 1000 * offset
        out["shifts"][shift] = {
            "sigmas": list(ev.sigmas),
            **everywhere(specs, seed, ev.prompts, keep_positions=ev.per_position),
        }
        out["concentration"][shift] = {
            "sigmas": list(ev.sigmas),
            **diagnostics.concentration_sweep(model, task, specs, ev.diagnostic_prompts, seed, device),
        }
    out["length"] = {
        "lengths": list(ev.lengths),
        **everywhere([PromptSpec(n) for n in ev.lengths], ev.seed + 5000, ev.length_prompts, keep_positions=False),
    }

    spec = injection_spec(experiment)
    # The same seed draws the same prompts with and without the injected value (it only overwrites
    # one input), so "clean" is the paired control.
    clean = dataclasses.replace(spec, inject_position=None)
    out["injection"] = {
        "position": spec.inject_position,
        "value": spec.inject_value,
        **{name: evaluate(predictor, task, spec, ev.prompts, ev.seed + 7000) for name, predictor in predictors.items()},
        "clean": {
            name: evaluate(predictor, task, clean, ev.prompts, ev.seed + 7000) for name, predictor in predictors.items()
        },
    }
    xs, ys = sample_prompts(task, spec, ev.diagnostic_prompts, generator(ev.seed + 7000))
    weights = diagnostics.attention_weights(model, xs, ys, device)
    out["injection"]["injected_mass"] = diagnostics.injected_token_mass(weights, spec.inject_position)
    if ev.attention_map:
        out["attention_map"] = {
            "xs": xs[0].tolist(),
            "ys": ys[0].tolist(),
            "weights": diagnostics.attention_map(weights),
        }
    return out


def run(experiment: ICLExperiment, *, device: str = "auto", progress: bool = True, stop_at: int | None = None) -> dict:
    """Train (resuming from a checkpoint if one exists) and evaluate; a JSON-able dict.

    ``stop_at`` stops training after that many steps (:func:`ssa_book.icl.train.train`; the
    paper-profile check, :mod:`ssa_book.paper_check`, uses it)."""
    device = resolve_device(device)
    trained = train(experiment.train, device=device, progress=progress, stop_at=stop_at)
    started = time.perf_counter()
    result = evaluate_trained(experiment, trained.model, device)
    result["training"] = {
        "history": [list(item) for item in trained.history],
        "steps": trained.steps,
        "wall_time_s": trained.wall_time_s,
        "steps_per_s": trained.steps / trained.wall_time_s if trained.wall_time_s > 0 else None,
        "device": trained.device,
        "evaluation_wall_time_s": time.perf_counter() - started,
    }
    result["scorer_values"] = trained.model.scorer_values()
    return _rounded(result)


def logit_spread(
    experiment: ICLExperiment, *, device: str = "auto", progress: bool = True, stop_at: int | None = None
) -> dict:
    """Attention-logit spread per layer and head along the input-scale sweep, measured on the
    trained model of ``experiment`` (loaded from its final checkpoint, trained if there is none;
    ``stop_at`` as in :func:`run`)."""
    device = resolve_device(device)
    model = train(experiment.train, device=device, progress=progress, stop_at=stop_at).model
    ev, task = experiment.eval, experiment.train.task_rules
    specs = shifts(experiment)["sigma_x"]
    spreads = []
    for index, spec in enumerate(specs):
        xs, ys = sample_prompts(task, spec, ev.diagnostic_prompts, generator(ev.seed + index))
        spreads.append(diagnostics.logit_ranges(model, xs, ys, device))
    return _rounded({"sigmas": list(ev.sigmas), "logit_spread": spreads})


def logit_spread_key(experiment: ICLExperiment) -> dict:
    """The config of the logit-spread entry of ``experiment`` (its key, beside the run's)."""

    return {"experiment": config_dict(experiment), "measure": "logit_spread"}


def cached_logit_spread(
    experiment: ICLExperiment,
    *,
    profile: str,
    device: str = "auto",
    progress: bool = True,
    results_dir=None,
    stop_at: int | None = None,
    regenerate: str | None = None,
) -> dict:
    """:func:`logit_spread` through the result cache (its own entry, beside the experiment's);
    ``regenerate`` as in :func:`cached_run`."""

    if stop_at is not None:
        check_throwaway_cache(results_dir)

    resolved = resolve_device(device)
    return cached(
        f"icl_logits/{experiment.train.task}/{experiment.train.model.scorer}",
        logit_spread_key(experiment),
        lambda: logit_spread(experiment, device=resolved, progress=progress, stop_at=stop_at),
        profile=profile,
        regenerate=regenerate
        or regenerate_command(profile, experiment.train.task, experiment.train.model.scorer, experiment.train.seed),
        results_dir=results_dir,
        device=resolved,
    )


def regenerate_command(
    profile: str, task: str | None = None, scorer: str | None = None, seed: int | None = None
) -> str:
    """The command that computes the run of ``task`` x ``scorer`` x ``seed``: its chapter's
    ``python -m ssa_book regenerate`` (:func:`icl_chapter`); for a scorer of no ICL chapter, the
    alternatives chapter's, with the scorer and seed named (that chapter is defined above the ICL
    study, :mod:`ssa_book.alternatives`)."""
    name = icl_chapter(task, scorer)
    if name == ALTERNATIVES_CHAPTER:
        return chapter_command(name, profile, scorers=[scorer], seeds=None if seed is None else [seed])
    return next(each for each in ICL_CHAPTERS if each.name == name).command(
        profile, scorers=[scorer] if scorer else None, seeds=None if seed is None else [seed]
    )


def cached_run(
    experiment: ICLExperiment,
    *,
    profile: str,
    device: str = "auto",
    progress: bool = True,
    results_dir=None,
    stop_at: int | None = None,
    regenerate: str | None = None,
) -> dict:
    """:func:`run` through the result cache, keyed by the whole experiment config: the result
    dict (:func:`load_run` gives it as a typed record, with its provenance).

    The key does not hold ``stop_at``: a stopped run is written only to a throwaway cache.
    ``regenerate``: the command that computes the run, when it is not its task's chapter's
    (:func:`regenerate_command`; the powered study's runs are its own)."""
    return _cached_run_entry(
        experiment,
        profile=profile,
        device=device,
        progress=progress,
        results_dir=results_dir,
        stop_at=stop_at,
        regenerate=regenerate,
    ).result


def load_run(
    experiment: ICLExperiment,
    *,
    profile: str,
    device: str = "auto",
    progress: bool = False,
    regenerate: str | None = None,
) -> ICLRun:
    """:func:`cached_run` as a typed record (:class:`ssa_book.icl.records.ICLRun`) that knows its task,
    scorer and seed, and carries its cache entry's provenance."""
    entry = _cached_run_entry(experiment, profile=profile, device=device, progress=progress, regenerate=regenerate)
    return ICLRun.from_result(
        entry.result,
        task=experiment.train.task,
        scorer=experiment.train.model.scorer,
        seed=experiment.train.seed,
        provenance=entry.provenance,
    )


def _cached_run_entry(
    experiment: ICLExperiment,
    *,
    profile: str,
    device: str,
    progress: bool,
    results_dir=None,
    stop_at: int | None = None,
    regenerate: str | None = None,
):

    if stop_at is not None:
        check_throwaway_cache(results_dir)

    resolved = resolve_device(device)
    return cached_entry(
        experiment.name,
        experiment,
        lambda: run(experiment, device=resolved, progress=progress, stop_at=stop_at),
        profile=profile,
        regenerate=regenerate
        or regenerate_command(profile, experiment.train.task, experiment.train.model.scorer, experiment.train.seed),
        results_dir=results_dir,
        device=resolved,
    )


def chapter_seeds(first_seed: int = 0) -> tuple[int, ...]:
    """The seeds a chapter shows: ``first_seed`` and the next ones, :data:`SEEDS` many."""
    return tuple(first_seed + offset for offset in SEEDS)


def load_runs(
    task: str, *, profile: str, scorers=CHAPTER_SCORERS, seeds=SEEDS, device: str = "auto", progress: bool = False
) -> dict[str, list[ICLRun]]:
    """``{scorer: [the run of each seed]}`` as typed records (:class:`ssa_book.icl.records.ICLRun`,
    each with its seed and provenance), from the cache (or computed, unless the cache is required)."""
    return {
        scorer: [
            load_run(experiment_config(task, scorer, profile, seed), profile=profile, device=device, progress=progress)
            for seed in seeds
        ]
        for scorer in scorers
    }


def load_logit_spreads(
    task: str, *, profile: str, scorers=CHAPTER_SCORERS, seeds=SEEDS, device: str = "auto"
) -> dict[str, list[LogitSpread]]:
    """``{scorer: [logit spread of each seed]}`` (:func:`logit_spread`) as typed records, cached."""
    return {
        scorer: [
            LogitSpread.from_result(
                cached_logit_spread(
                    experiment_config(task, scorer, profile, seed), profile=profile, device=device, progress=False
                ),
                task=task,
                scorer=scorer,
                seed=seed,
            )
            for seed in seeds
        ]
        for scorer in scorers
    }


def compute_icl_run(profile: str, device: str, progress: bool, task: str, scorer: str, seed: int) -> str:
    """Run kind "icl": one chapter experiment and its logit spreads through the cache."""
    return cached_with_spread(
        experiment_config(task, scorer, profile, seed), profile=profile, device=device, progress=progress
    )


def cached_with_spread(
    experiment: ICLExperiment, *, profile: str, device: str, progress: bool, regenerate: str | None = None
) -> str:
    """An experiment's run and its logit spreads through the cache (:func:`cached_run`,
    :func:`cached_logit_spread`): one line about the run."""
    run = load_run(experiment, profile=profile, device=device, progress=progress, regenerate=regenerate)
    cached_logit_spread(experiment, profile=profile, device=device, progress=progress, regenerate=regenerate)
    return (
        f"{run.training.steps} steps in {run.training.wall_time_s:.0f} s training; "
        f"in-distribution prompt error {run.sweep('sigma_x').error()[0]:.4g}"
    )


# --- the chapters -----------------------------------------------------------------------------


def icl_runs(
    tasks: Iterable[str], scorers: Iterable[str], seeds: Iterable[int], *, planned_by: str, scorer_major: bool = False
) -> list[Run]:
    """One run per task x scorer x seed (a trained model and its logit spreads), planned by the
    chapter ``planned_by``. Task by task, and within a task seed by seed (so an interrupted sweep leaves
    whole pairs), or with ``scorer_major`` scorer by scorer with all its seeds (whole scorers)."""
    tasks, scorers, seeds = list(tasks), list(scorers), list(seeds)
    if scorer_major:
        order = [(task, scorer, seed) for task in tasks for scorer in scorers for seed in seeds]
    else:
        order = [(task, scorer, seed) for task in tasks for seed in seeds for scorer in scorers]
    return [
        Run("icl", (task, scorer, seed), f"{task} / {scorer} / seed {seed}", chapters=(planned_by,))
        for task, scorer, seed in order
    ]


def _curriculum(curriculum) -> str:
    return f"{curriculum.start} -> {curriculum.end}, +{curriculum.increment} every {curriculum.interval} steps"


# The rows of an in-context chapter's table of sizes (ssa_book.sizes).
ICL_SETTINGS = (
    Setting("layers", "transformer blocks (GPT-2)", "train.model.n_layer"),
    Setting("heads", "attention heads per block", "train.model.n_head"),
    Setting("width", "embedding width", "train.model.n_embd"),
    Setting("positions", "longest prompt the model takes, in points", "train.model.n_positions"),
    Setting(
        "SSA at initialisation",
        "SSA's b and n before training (both are trained)",
        "train.model.scorer_kwargs",
        scorer_settings,
    ),
    Setting("batch", "prompts per training step", "train.batch_size"),
    Setting("learning rate", "Adam", "train.learning_rate"),
    Setting("steps", "training steps", "train.train_steps"),
    Setting(
        "curriculum",
        "training prompt length in points: first -> last, + increment every interval steps",
        "train.curriculum",
        _curriculum,
    ),
    Setting("test σ", "scales of the shifted test inputs (and functions, linear task)", "eval.sigmas", listed),
    Setting("test prompts per σ", "test prompts (linear: functions) per scale", "eval.prompts"),
    Setting("test points per prompt", "points per prompt of the scale sweeps", "eval.points"),
    Setting("test lengths", "prompt lengths of the length sweep, in points", "eval.lengths", listed),
    Setting("prompts per length", "test prompts per length", "eval.length_prompts"),
    Setting(
        "attention-statistics prompts", "prompts per scale for the attention statistics", "eval.diagnostic_prompts"
    ),
)


@dataclasses.dataclass(frozen=True)
class ICLChapter(Chapter):
    """An in-context-learning chapter: softmax and SSA on its tasks, at the chapters' seeds."""

    tasks: tuple[str, ...] = ()

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        check_profile(profile)
        return chapter_seeds(0)

    def published_scorers(self) -> tuple[str, ...]:
        return CHAPTER_SCORERS

    def scorer_hint(self) -> str:
        return " (the other scorers' runs of these tasks are alternative_scorers')"

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        return icl_runs(self.tasks, scorers, seeds, planned_by=self.name)

    def configs(self, profile: str) -> dict:
        return {task: experiment_config(task, "ssa", profile) for task in self.tasks}

    def settings(self) -> tuple[Setting, ...]:
        return ICL_SETTINGS


KINDS = {"icl": RunKind(compute_icl_run)}
ICL_CHAPTERS = (
    ICLChapter("icl_quantification", "the 'every' and 'some' in-context learners", tasks=("every", "some")),
    ICLChapter("icl_linear", "the linear-function in-context learners", tasks=("linear",)),
    ICLChapter(
        "icl_collapse",
        "the in-context learners of all three tasks and their logit spreads",
        tasks=("every", "some", "linear"),
    ),
)


def icl_chapter(task: str | None = None, scorer: str | None = None) -> str:
    """The chapter whose command makes the run of ``task`` x ``scorer``: the task's chapter for
    softmax and SSA (icl_collapse, which has every task, without one), else alternative_scorers."""
    if scorer is not None and scorer not in CHAPTER_SCORERS:
        return ALTERNATIVES_CHAPTER
    if task is None:
        return "icl_collapse"
    return next(each.name for each in ICL_CHAPTERS if task in each.tasks)


class InContextQuantification:
    """The in-context quantification chapter (notebooks/icl_quantification.ipynb): its runs are
    ``icl/<task>/<scorer>`` entries, read as :class:`ssa_book.icl.records.ICLRun`; its verdicts are
    the shift and length verdicts of each task and the combined quantification verdict."""

    chapter = "icl_quantification"
    tasks = ("every", "some")

    def experiment(self, run: SeedRun, profile: str) -> tuple[str, Any]:
        """(cache folder, config) of ``run``'s result entry."""
        found = experiment_config(run.task, run.scorer, profile, run.seed)
        return found.name, found

    def record(self, run: SeedRun, result: Mapping, provenance: Provenance | None = None):
        return ICLRun.from_result(result, task=run.task, scorer=run.scorer, seed=run.seed, provenance=provenance)

    def endpoints(self, record, profile: str) -> dict[str, float | None]:
        """The prompt error at σ = 10 (``None`` where the profile does not test it) and its mean
        over the shifted sigmas (> 1), as the chapter's verdicts read the error curve."""
        curve = icl_verdicts.error_curve([record], record.task, "sigma_x")[0]
        sigmas = np.array(record.sweep("sigma_x").values, dtype=float)
        at_ten = curve[sigmas == 10]
        return {
            "prompt error at σ 10": float(at_ten[0]) if at_ten.size else None,
            "mean prompt error over σ > 1": float(curve[sigmas > 1].mean()),
        }

    def cached_runs(self, profile: str) -> dict:
        """``{task: {scorer: [runs]}}``: every run the chapter's verdicts read, from the book's
        cache (:class:`ssa_book.results.errors.CacheMissError`, naming the command, when one is missing)."""
        with cache_required():
            return {task: load_runs(task, profile=profile, seeds=chapter_seeds(0), device="cpu") for task in self.tasks}

    def swapped(self, runs: Mapping, records: Sequence) -> dict:
        """``runs`` with each of ``records`` in place of the run of its task, scorer and seed."""
        found = {task: {scorer: list(group) for scorer, group in by_scorer.items()} for task, by_scorer in runs.items()}
        for record in records:
            replace_seed(found[record.task][record.scorer], record)
        return found

    def verdicts(self, runs: Mapping, profile: str) -> dict[str, str]:
        """``{claim: outcome in the book's words}`` for every verdict the chapter computes."""
        outcomes = {}
        for task in self.tasks:
            label = f'"{task}"'
            trained_points = experiment_config(task, "ssa", profile, 0).train.curriculum.end
            for verdict in [
                *icl_verdicts.shift_verdicts(runs[task], task, "sigma_x", label),
                icl_verdicts.length_verdict(runs[task], task, trained_points, label),
            ]:
                outcomes[verdict.claim] = verdict.label()
        combined = icl_verdicts.quantification_verdict(runs)
        outcomes[combined.claim] = combined.label()
        return outcomes


READER = InContextQuantification()
