"""``python -m ssa regenerate CHAPTER``: compute every cached result a chapter reads.

    python -m ssa regenerate icl_linear --profile cpu               # what the chapter shows
    python -m ssa regenerate alternative_scorers --profile cpu --jobs 2 --dry-run
    python -m ssa regenerate decoder --profile cpu --seeds 2 3      # more seeds
    python -m ssa regenerate all --profile cpu --jobs 2             # every chapter, each run once

:data:`CHAPTERS` maps each chapter with cached results (its notebook's name) to a
:class:`Chapter`, which lists the chapter's runs for a profile, seeds and scorers
(:meth:`Chapter.runs`); a :class:`Run` is one cache entry (or one group of entries made
together), computed by the chapter's own cached function (:data:`KINDS`): this module trains
nothing itself. A run already in the cache is skipped; an interrupted training resumes from
its last checkpoint, so the command can be stopped and restarted at any time.

The flags mean the same in every chapter:

* ``--profile``: smoke, cpu or paper (:mod:`ssa.profiles`); default cpu.
* ``--seeds``: the training seeds of the chapter's models: one seed initialises one model's
  weights and draws its training data (batches, masking), and the same seed gives every scorer
  the same data, so runs pair by seed. Default: the seeds the chapter publishes at the profile.
  The performance chapter trains no model: there a seed draws the benchmark's random inputs and
  initial weights (it publishes seed 0).
* ``--scorers``: attention scorers, by their names in :func:`ssa.scoring.scorer_names`. Default:
  the scorers the chapter shows. The ICL chapters and the decoder accept softmax and ssa, the
  encoder its four variants, the performance chapter softmax and ssa (its benchmark always
  measures both); alternative_scorers accepts every registered scorer.
* ``--jobs N``: N runs at once, each in its own spawned process with one torch thread
  (measurements, the performance benchmark and the scorers' cost, always run alone first).
  With ``--jobs 1`` runs go one after the other in this process, also on one torch thread.
* ``--device``: where models train (auto, cpu, cuda, mps). The performance chapter's CPU
  benchmark always runs on the CPU and its GPU benchmark (profile paper) on CUDA.
* ``--dry-run``: list the runs, which are cached and which would be computed; compute nothing.
* ``--stop-launching-after MINUTES``: start no new run after that many minutes (a long sweep
  spread over sessions).
* ``--arms A ...`` (icl_study only): the study's arms to compute, by name
  (:data:`ssa.icl.study.ARMS`), so that any arm can be rerun with one command; with ``--seeds``,
  any of its runs.

Chapter-wide entries that belong to no seed or scorer (the scorers' cost measurement, the
encoder's corpus summary) are part of their chapter's runs whatever ``--seeds`` and
``--scorers`` say.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context
from typing import Callable, Iterable, Sequence

from ssa.profiles import DEVICES, PROFILES, check_profile
from ssa.scoring import scorer_names

PROG = "python -m ssa regenerate"


# ----------------------------------------------------------------------------------------------
# Runs and how each kind is computed (by the chapters' own cached functions).


@dataclasses.dataclass(frozen=True)
class Run:
    """One run: a cache entry, or the few made together (an ICL model's results and its logit
    spreads), computed by ``KINDS[kind](profile, device, progress, *arguments)``.

    Two runs with the same ``kind`` and ``arguments`` are the same run, whichever chapters plan
    it (the ICL chapters and alternative_scorers share theirs)."""

    kind: str
    arguments: tuple
    label: str
    exclusive: bool = False  # a measurement of speed: runs alone, before the others
    chapters: tuple[str, ...] = dataclasses.field(default=(), compare=False)

    @property
    def key(self) -> tuple:
        return (self.kind, self.arguments)


def _icl(profile: str, device: str, progress: bool, task: str, scorer: str, seed: int) -> str:
    from ssa.icl.experiments import regenerate_one

    summary, _ = regenerate_one(task, scorer, seed, profile, device, progress)
    return summary.split(": ", 1)[-1]


def _icl_study(profile: str, device: str, progress: bool, arm: str, task: str, seed: int) -> str:
    from ssa.icl.study import regenerate_one

    return regenerate_one(arm, task, seed, profile=profile, device=device, progress=progress)


def _cost(profile: str, device: str, progress: bool, model: str = "icl") -> str:
    from ssa.alternatives.comparison import cost_entry

    ratios = cost_entry(profile, device, model=model)["scorers"]
    return "time / memory per step, x softmax: " + ", ".join(
        f"{name} {value['time_ratio']:.2f}/{value['memory_ratio'] or float('nan'):.2f}" for name, value in ratios.items())


def _decoder(profile: str, device: str, progress: bool, scorer: str, seed: int) -> str:
    from ssa.lm.experiment import result

    found = result(profile, scorer, seed, device=device, progress=progress)
    return (f"perplexity {found.perplexity_id:.2f} in distribution, {found.perplexity_ood:.2f} out of distribution; "
            f"BLiMP {found.blimp.accuracy:.3f}")


def _encoder(profile: str, device: str, progress: bool, variant: str, seed: int) -> str:
    from ssa.encoder.experiment import run

    found = run(profile, variant, seed, device=device, threads=1, progress=progress)
    return f"mean Zorro accuracy {100 * found.overall(found.holistic):.1f}%"


def _encoder_data(profile: str, device: str, progress: bool) -> str:
    from ssa.encoder.experiment import data_summary

    found = data_summary(profile)
    return f"{found['corpus']['utterances']:,} utterances, {len(found['zorro_pairs'])} Zorro paradigms"


def _retrieval(profile: str, device: str, progress: bool, scorer: str, seed: int) -> str:
    from ssa.retrieval.experiment import regenerate_one

    return regenerate_one(scorer, seed, profile, device, progress)


def _leaderboard_icl(profile: str, device: str, progress: bool, task: str, scorer: str, seed: int) -> str:
    from ssa.leaderboard import regenerate_one

    return regenerate_one(task, scorer, seed, profile, device, progress)


def _bench(profile: str, device: str, progress: bool, bench_profile: str, bench_device: str, seed: int) -> str:
    from ssa.bench import benchmark_entry, target_checks, target_label

    entry = benchmark_entry(bench_profile, device=bench_device, seed=seed, log=lambda message: print(message, file=sys.stderr, flush=True))
    return "; ".join(f"{target_label(check)} {check['ratio']:.2f} (target {check['at most']:g}: {'met' if check['met'] else 'NOT met'})"
                     for check in target_checks(entry.result))


def _bench_is_cached(profile: str, device: str, bench_profile: str, bench_device: str, seed: int) -> bool | None:
    """A GPU benchmark on a machine without CUDA: is the entry the chapter shows (the newest
    cached GPU benchmark, :func:`ssa.bench.cached_gpu_entry`) of this seed? ``None``: check as usual."""
    import torch

    if bench_device != "cuda" or torch.cuda.is_available():
        return None
    from ssa.bench import cached_gpu_entry

    entry = cached_gpu_entry()
    return entry is not None and entry.config.get("seed") == seed


# kind -> the function that computes (or reads) it and returns one line about the result.
KINDS: dict[str, Callable[..., str]] = {
    "icl": _icl, "icl_study": _icl_study, "cost": _cost, "decoder": _decoder, "encoder": _encoder, "encoder_data": _encoder_data, "bench": _bench,
    "retrieval": _retrieval, "leaderboard_icl": _leaderboard_icl,
}
# kind -> a check of the cache that cannot be made by reading the entry here (``None``: read it).
CHECKS: dict[str, Callable[..., bool | None]] = {"bench": _bench_is_cached}


def icl_runs(tasks: Iterable[str], scorers: Iterable[str], seeds: Iterable[int], *, scorer_major: bool = False,
             chapter: str | None = None) -> list[Run]:
    """One run per task x scorer x seed (a trained ICL model and its logit spreads). Task by task,
    and within a task seed by seed (so an interrupted sweep leaves whole pairs), or with
    ``scorer_major`` scorer by scorer with all its seeds (whole scorers). ``chapter``: the
    chapter planning them (default: :func:`icl_chapter` of each run)."""
    tasks, scorers, seeds = list(tasks), list(scorers), list(seeds)
    if scorer_major:
        order = [(task, scorer, seed) for task in tasks for scorer in scorers for seed in seeds]
    else:
        order = [(task, scorer, seed) for task in tasks for seed in seeds for scorer in scorers]
    return [Run("icl", (task, scorer, seed), f"{task} / {scorer} / seed {seed}", chapters=(chapter or icl_chapter(task, scorer),))
            for task, scorer, seed in order]


# ----------------------------------------------------------------------------------------------
# The chapters.


@dataclasses.dataclass(frozen=True)
class Chapter:
    """A chapter with cached results: its published seeds and scorers, and its runs."""

    name: str
    summary: str  # one line, for --help
    jobs: int = 1  # the --jobs its documented command uses

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        raise NotImplementedError

    def published_scorers(self) -> tuple[str, ...]:
        raise NotImplementedError

    def accepted_scorers(self) -> tuple[str, ...]:
        """The scorers ``--scorers`` may name (default: only the published ones)."""
        return self.published_scorers()

    def scorer_hint(self) -> str:
        return ""

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        raise NotImplementedError

    def check_scorers(self, scorers: Sequence[str]) -> tuple[str, ...]:
        check_scorer_names(scorers)
        rejected = [name for name in scorers if name not in self.accepted_scorers()]
        if rejected:
            raise ValueError(f"--scorers: the {self.name} chapter accepts only {', '.join(self.accepted_scorers())}; "
                             f"got {', '.join(rejected)}{self.scorer_hint()}")
        return tuple(dict.fromkeys(scorers))


@dataclasses.dataclass(frozen=True)
class ICLChapter(Chapter):
    tasks: tuple[str, ...] = ()

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        from ssa.icl.experiments import chapter_seeds

        check_profile(profile)
        return chapter_seeds(0)

    def published_scorers(self) -> tuple[str, ...]:
        from ssa.icl.experiments import CHAPTER_SCORERS

        return CHAPTER_SCORERS

    def scorer_hint(self) -> str:
        return " (the other scorers' runs of these tasks are alternative_scorers')"

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        return icl_runs(self.tasks, scorers, seeds, chapter=self.name)


@dataclasses.dataclass(frozen=True)
class AlternativesChapter(Chapter):
    def published_seeds(self, profile: str) -> tuple[int, ...]:
        from ssa.alternatives.comparison import chapter_seeds

        return chapter_seeds(profile)

    def published_scorers(self) -> tuple[str, ...]:
        """Every registered scorer: softmax (the reference of every comparison) and SSA first,
        then the alternatives the paper tried, then the others."""
        from ssa.alternatives.comparison import PAPER_ALTERNATIVES
        from ssa.icl.experiments import CHAPTER_SCORERS

        return tuple(dict.fromkeys((*CHAPTER_SCORERS, *PAPER_ALTERNATIVES, *scorer_names())))

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str], *, tasks: Sequence[str] | None = None,
             cost: bool = True) -> list[Run]:
        from ssa.icl.tasks import TASKS

        measured = [Run("cost", ("icl",), "cost of every scorer, the in-context model", exclusive=True,
                        chapters=(self.name,))] if cost else []
        return measured + icl_runs(TASKS if tasks is None else tasks, scorers, seeds, scorer_major=True, chapter=self.name)


@dataclasses.dataclass(frozen=True)
class StudyChapter(Chapter):
    """The powered in-context study (:mod:`ssa.icl.study`): its runs are arms x tasks x seeds of
    its plan, in the plan's order of priority (a contingent comparison's once the cache says its
    condition holds: :func:`ssa.icl.study.plan`)."""

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        from ssa.icl import study

        return tuple(sorted({seed for _, _, seed in study.runs(study.plan(profile), profile=profile)}))

    def published_scorers(self) -> tuple[str, ...]:
        from ssa.icl.study import ARMS

        return tuple(dict.fromkeys(arm.scorer for arm in ARMS.values()))

    def scorer_hint(self) -> str:
        return " (the scorers of the study's arms; --scorers keeps the arms of the scorers named)"

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str], arms: Sequence[str] | None = None) -> list[Run]:
        """The plan's runs with ``seeds``, of the arms whose scorer is in ``scorers`` and, when
        ``arms`` is given, of those arms only."""
        from ssa.icl import study

        if arms is not None:
            unknown = [arm for arm in arms if arm not in study.ARMS]
            if unknown:
                raise ValueError(f"--arms: unknown arm {', '.join(map(repr, unknown))}; choose from {', '.join(study.ARMS)}")
        # With the cache, the plan includes a contingent comparison once its condition holds.
        comparisons = study.plan(profile, cache=study.StudyCache(profile, train=False))
        return [Run("icl_study", (arm, task, seed), f"{arm} / {task} / seed {seed}", chapters=(self.name,))
                for arm, task, seed in study.runs(comparisons, profile=profile)
                if seed in seeds and study.ARMS[arm].scorer in scorers and (arms is None or arm in arms)]


@dataclasses.dataclass(frozen=True)
class DecoderChapter(Chapter):
    def published_seeds(self, profile: str) -> tuple[int, ...]:
        from ssa.lm.experiment import SEEDS

        return SEEDS[check_profile(profile)]

    def published_scorers(self) -> tuple[str, ...]:
        from ssa.lm.experiment import SCORERS

        return SCORERS

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        return [Run("decoder", (scorer, seed), f"{scorer} / seed {seed}", chapters=(self.name,)) for seed in seeds for scorer in scorers]


@dataclasses.dataclass(frozen=True)
class EncoderChapter(Chapter):
    def published_seeds(self, profile: str) -> tuple[int, ...]:
        from ssa.encoder.experiment import seeds_for

        return tuple(seeds_for(profile))

    def published_scorers(self) -> tuple[str, ...]:
        from ssa.encoder.experiment import VARIANTS

        return VARIANTS

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        summary = Run("encoder_data", (), "corpus and Zorro summary", chapters=(self.name,))
        return [summary] + [Run("encoder", (variant, seed), f"{variant} / seed {seed}", chapters=(self.name,))
                            for seed in seeds for variant in scorers]


@dataclasses.dataclass(frozen=True)
class RetrievalChapter(Chapter):
    """Max retrieval under set-size shift (:mod:`ssa.retrieval`): every registered scorer, seed by
    seed (so an interrupted sweep leaves whole seeds, every scorer paired with softmax)."""

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        from ssa.retrieval.experiment import SEEDS

        return SEEDS[check_profile(profile)]

    def published_scorers(self) -> tuple[str, ...]:
        """Every registered scorer, then the variants that separate SSA's form from its start."""
        from ssa.retrieval.experiment import VARIANTS

        return tuple(dict.fromkeys(("softmax", "ssa", *scorer_names(), *VARIANTS)))

    def check_scorers(self, scorers: Sequence[str]) -> tuple[str, ...]:
        unknown = [name for name in scorers if name not in self.published_scorers()]
        if unknown:
            raise ValueError(f"--scorers: unknown scorer {', '.join(map(repr, unknown))}; choose from {', '.join(self.published_scorers())}")
        return tuple(dict.fromkeys(scorers))

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        """The registered scorers' runs seed by seed, then the variants' (whole seeds of the scorers first)."""
        from ssa.retrieval.experiment import VARIANTS

        ordered = [(seed, scorer) for seed in seeds for scorer in scorers if scorer not in VARIANTS]
        ordered += [(seed, scorer) for seed in seeds for scorer in scorers if scorer in VARIANTS]
        return [Run("retrieval", (scorer, seed), f"{scorer} / seed {seed}", chapters=(self.name,)) for seed, scorer in ordered]


@dataclasses.dataclass(frozen=True)
class LeaderboardChapter(Chapter):
    """The leaderboard (:mod:`ssa.leaderboard`): the Max retrieval chapter's runs, then every
    registered scorer on the three in-context tasks at the leaderboard's seeds (evaluated at its
    points only), task by task and scorer by scorer, and the scorers' cost measurement."""

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        from ssa.leaderboard import ICL, RETRIEVAL, seeds

        return tuple(dict.fromkeys((*seeds(RETRIEVAL, profile), *seeds(ICL, profile))))

    def published_scorers(self) -> tuple[str, ...]:
        from ssa.leaderboard import scorers

        return scorers()

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        from ssa.leaderboard import plan

        found = [Run("cost", (model,), f"cost of every scorer, {what}", exclusive=True, chapters=(self.name,))
                 for model, what in (("icl", "the in-context model"), ("retrieval", "the retrieval model"))]
        for run in plan(profile, scorers):
            if run[-1] not in seeds:
                continue
            if run[0] == "retrieval":
                found.append(Run("retrieval", run[1:], f"retrieval / {run[1]} / seed {run[2]}", chapters=(self.name,)))
            else:
                found.append(Run("leaderboard_icl", run[1:], f"{run[1]} / {run[2]} / seed {run[3]} (σ 1 and 10)", chapters=(self.name,)))
        return found


@dataclasses.dataclass(frozen=True)
class PerformanceChapter(Chapter):
    def published_seeds(self, profile: str) -> tuple[int, ...]:
        from ssa.bench import BenchConfig

        check_profile(profile)
        return (BenchConfig.seed,)

    def published_scorers(self) -> tuple[str, ...]:
        return ("softmax", "ssa")

    def scorer_hint(self) -> str:
        return " (its benchmark measures both in every run)"

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        # As the chapter reads them: the CPU benchmark at smoke or cpu sizes, always on the CPU
        # (under results/cpu/ when the book runs at paper), and at paper also the GPU benchmark.
        bench_profile = "smoke" if profile == "smoke" else "cpu"
        runs = []
        for seed in seeds:
            runs.append(Run("bench", (bench_profile, "cpu", seed), f"CPU benchmark, {bench_profile} sizes / seed {seed}",
                            exclusive=True, chapters=(self.name,)))
            if profile == "paper":
                runs.append(Run("bench", ("paper", "cuda", seed), f"GPU benchmark, paper sizes / seed {seed}",
                                exclusive=True, chapters=(self.name,)))
        return runs


CHAPTERS: dict[str, Chapter] = {chapter.name: chapter for chapter in (
    ICLChapter("icl_quantification", "the 'every' and 'some' in-context learners", tasks=("every", "some")),
    ICLChapter("icl_linear", "the linear-function in-context learners", tasks=("linear",)),
    ICLChapter("icl_collapse", "the in-context learners of all three tasks and their logit spreads", tasks=("every", "some", "linear")),
    AlternativesChapter("alternative_scorers", "every registered scorer on the three in-context tasks, and their cost", jobs=2),
    StudyChapter("icl_study", "the powered in-context study: its plan's arms, tasks and seeds, primary question first", jobs=2),
    DecoderChapter("decoder", "the decoder language models"),
    EncoderChapter("encoder", "the BabyBERTa encoders, and the corpus summary"),
    PerformanceChapter("performance", "the attention benchmark"),
    RetrievalChapter("max_retrieval", "max retrieval under set-size shift, every registered scorer", jobs=2),
    LeaderboardChapter("leaderboard", "every registered scorer under every shift: max retrieval's runs, the in-context runs at "
                       "the leaderboard's points and seeds, and the scorers' cost", jobs=2),
)}
ALL = "all"


def check_scorer_names(scorers: Iterable[str]) -> None:
    unknown = [name for name in scorers if name not in scorer_names()]
    if unknown:
        raise ValueError(f"--scorers: unknown scorer {', '.join(map(repr, unknown))}; choose from {', '.join(scorer_names())}")


def check_seeds(seeds: Iterable[int]) -> tuple[int, ...]:
    seeds = tuple(seeds)
    negative = [seed for seed in seeds if seed < 0]
    if negative:
        raise ValueError(f"--seeds: a seed must be >= 0; got {', '.join(map(str, negative))}")
    return tuple(dict.fromkeys(seeds))


def chapter(name: str) -> Chapter:
    if name not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {name!r}")
    return CHAPTERS[name]


def plan(name: str, profile: str = "cpu", *, seeds: Sequence[int] | None = None, scorers: Sequence[str] | None = None,
         arms: Sequence[str] | None = None) -> list[Run]:
    """The runs of chapter ``name`` (or ``all``: every chapter's, each run once), in the order
    they are computed. ``seeds``/``scorers`` default to each chapter's published ones; with
    ``all`` each chapter takes the given scorers it accepts, and a chapter that accepts none of
    them is left out. ``arms``: only these arms of the powered study (icl_study only)."""
    check_profile(profile)
    seeds = None if seeds is None else check_seeds(seeds)
    if arms is not None:
        if not isinstance(CHAPTERS.get(name), StudyChapter):
            raise ValueError(f"--arms: only the study chapters ({', '.join(n for n, c in CHAPTERS.items() if isinstance(c, StudyChapter))}) "
                             f"have arms; {name} has none")
        each = CHAPTERS[name]
        return each.runs(profile, seeds if seeds is not None else each.published_seeds(profile),
                         each.published_scorers() if scorers is None else each.check_scorers(scorers), arms=tuple(dict.fromkeys(arms)))
    if name == ALL:
        if scorers is not None:
            check_scorer_names(scorers)
        selected = []
        for each in CHAPTERS.values():
            chosen = None if scorers is None else [s for s in scorers if s in each.accepted_scorers()]
            if chosen == []:
                continue
            selected.append((each, chosen))
    else:
        each = chapter(name)
        selected = [(each, None if scorers is None else each.check_scorers(scorers))]
    runs: dict[tuple, Run] = {}
    for each, chosen in selected:
        for run in each.runs(profile, seeds if seeds is not None else each.published_seeds(profile),
                             chosen if chosen is not None else each.published_scorers()):
            known = runs.get(run.key)
            runs[run.key] = run if known is None else dataclasses.replace(known, chapters=known.chapters + run.chapters)
    return list(runs.values())


def command(name: str, profile: str = "cpu", *, scorers: Sequence[str] | None = None, seeds: Sequence[int] | None = None,
            arms: Sequence[str] | None = None) -> str:
    """The command that computes chapter ``name``'s cached results at ``profile``; the
    ``scorers`` and ``seeds`` named only when they are not all the chapter's published ones,
    the ``arms`` (a study chapter's) whenever given."""
    each = chapter(name)
    parts = [PROG, name, "--profile", check_profile(profile)]
    if each.jobs > 1:
        parts += ["--jobs", str(each.jobs)]
    if arms:
        parts += ["--arms", *arms]
    if scorers and not set(scorers) <= set(each.published_scorers()):
        parts += ["--scorers", *scorers]
    if seeds and not set(seeds) <= set(each.published_seeds(profile)):
        parts += ["--seeds", *map(str, seeds)]
    return " ".join(parts)


def icl_chapter(task: str | None = None, scorer: str | None = None) -> str:
    """The chapter whose command makes the ICL run of ``task`` x ``scorer``: the task's ICL
    chapter for softmax and SSA (icl_collapse, which has every task, without one), else
    alternative_scorers."""
    from ssa.icl.experiments import CHAPTER_SCORERS

    if scorer is not None and scorer not in CHAPTER_SCORERS:
        return "alternative_scorers"
    if task is None:
        return "icl_collapse"
    return next(name for name, each in CHAPTERS.items() if isinstance(each, ICLChapter) and task in each.tasks)


# ----------------------------------------------------------------------------------------------
# Checking the cache and computing.


def is_cached(run: Run, profile: str, device: str = "auto") -> bool:
    """Whether every entry of ``run`` is in the cache, valid for its config: the chapter's own
    function reads it with the cache required (so exactly what the chapter would find)."""
    from ssa.results import CacheMissError, cache_required

    check = CHECKS.get(run.kind)
    found = check(profile, device, *run.arguments) if check is not None else None
    if found is not None:
        return found
    with cache_required():
        try:
            KINDS[run.kind](profile, device, False, *run.arguments)
        except CacheMissError:
            return False
    return True


def single_thread() -> None:
    """One torch thread per process (:func:`ssa.icl.experiments.single_thread`)."""
    from ssa.icl.experiments import single_thread as one_thread

    one_thread()


def compute(run: Run, profile: str, device: str, progress: bool) -> tuple[str, float]:
    """Compute (or read) ``run``: (one line about its result, seconds)."""
    started = time.perf_counter()
    summary = KINDS[run.kind](profile, device, progress, *run.arguments)
    return summary, time.perf_counter() - started


def execute(runs: Sequence[Run], *, profile: str, device: str, jobs: int = 1, progress: bool = False,
            stop_launching_after: float | None = None, log: Callable[[str], None] = print) -> tuple[int, int, list[Run]]:
    """Compute ``runs``: the exclusive ones (measurements) first, one at a time in this process,
    then the others ``jobs`` at a time (in spawned processes of one torch thread each when
    ``jobs > 1``). A failed run is reported and the others go on. Returns (runs done, runs
    failed, runs not started because of ``stop_launching_after`` minutes)."""
    if jobs < 1:
        raise ValueError(f"--jobs must be >= 1; got {jobs}")
    started = time.perf_counter()
    deadline = None if stop_launching_after is None else started + 60 * stop_launching_after
    pending = [run for run in runs if run.exclusive] + [run for run in runs if not run.exclusive]
    done = failed = 0

    def report(run: Run, outcome: Callable[[], tuple[str, float]]) -> bool:
        from ssa.data import DatasetError

        try:
            summary, seconds = outcome()
        except (DatasetError, ValueError) as error:  # a message that says what to do: no traceback
            log(f"FAILED {run.label} ({', '.join(run.chapters)}): {error}")
            return False
        except Exception as error:  # report and go on: the other runs are still worth having
            log(f"FAILED {run.label} ({', '.join(run.chapters)}): {error!r}")
            traceback.print_exception(error, file=sys.stderr)
            return False
        log(f"[{time.perf_counter() - started:7.0f} s] {run.label}: {summary} ({seconds:.0f} s)")
        return True

    def open_window() -> bool:
        return deadline is None or time.perf_counter() < deadline

    while pending and (pending[0].exclusive or jobs == 1) and open_window():
        if not pending[0].exclusive:
            single_thread()
        run = pending.pop(0)
        succeeded = report(run, lambda: compute(run, profile, device, progress))
        done, failed = done + succeeded, failed + (not succeeded)
    if pending and jobs > 1 and open_window():
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=single_thread) as pool:
            running = {}
            while pending or running:
                # Keep exactly `jobs` runs in flight, in plan order, until the launch deadline.
                while pending and len(running) < jobs and open_window():
                    run = pending.pop(0)
                    running[pool.submit(compute, run, profile, device, False)] = run
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    succeeded = report(running.pop(future), future.result)
                    done, failed = done + succeeded, failed + (not succeeded)
    return done, failed, pending


def run_plan(runs: Sequence[Run], *, profile: str, device: str = "auto", jobs: int = 1, dry_run: bool = False,
             stop_launching_after: float | None = None, progress: bool | None = None, log: Callable[[str], None] = print) -> int:
    """Say what ``runs`` hold (cached or to compute), then compute the missing ones unless
    ``dry_run``. The exit status: 0, or 1 if a run failed."""
    from ssa.profiles import resolve_device

    device = resolve_device(device)
    cached = [is_cached(run, profile, device) for run in runs]
    todo = [run for run, hit in zip(runs, cached) if not hit]
    log(f"{len(runs)} runs at profile {profile}: {len(runs) - len(todo)} cached, {len(todo)} to compute"
        + (f" ({jobs} at a time)" if jobs > 1 and todo else ""))
    if dry_run:
        width = max((len(run.label) for run in runs), default=0)
        for run, hit in zip(runs, cached):
            log(f"  {'cached    ' if hit else 'to compute'}  {run.label:{width}}  {', '.join(run.chapters)}")
        return 0
    if not todo:
        return 0
    progress = jobs == 1 and sys.stderr.isatty() if progress is None else progress
    done, failed, left = execute(todo, profile=profile, device=device, jobs=jobs, progress=progress,
                                 stop_launching_after=stop_launching_after, log=log)
    log(f"{done} runs computed, {failed} failed, {len(left)} not started")
    return 1 if failed else 0


# ----------------------------------------------------------------------------------------------
# The command line.


def _at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= ``minimum``."""
    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}; got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}; got {value}")
        return value
    return whole_number


def _device(text: str) -> str:
    """A device this machine has (``auto`` resolved)."""
    from ssa.profiles import resolve_device

    try:
        return resolve_device(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of minutes; got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0; got {value:g}")
    return value


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every regenerate command shares (this one and the chapters' own)."""
    parser.add_argument("--profile", choices=PROFILES, default="cpu", help="smoke | cpu | paper (default: cpu)")
    parser.add_argument("--seeds", nargs="+", type=_at_least(0), metavar="S",
                        help="training seeds of the chapter's models (default: the chapter's published seeds)")
    parser.add_argument("--scorers", nargs="+", metavar="X",
                        help="attention scorers, by registry name (default: the chapter's published scorers)")
    parser.add_argument("--jobs", type=_at_least(1), default=1, metavar="N",
                        help="runs at once, each in its own process with one torch thread (default: 1)")
    parser.add_argument("--device", type=_device, default="auto", metavar="{" + ",".join(DEVICES) + "}",
                        help="where models train (default: auto: cuda, else mps, else cpu)")
    parser.add_argument("--dry-run", action="store_true", help="list the runs, cached or to compute, and compute nothing")
    parser.add_argument("--stop-launching-after", type=_minutes, metavar="MINUTES", help="start no new run after this many minutes")


def _seed_ranges(seeds: Sequence[int]) -> str:
    """``0 1 2`` or, for a run of four or more consecutive seeds, ``100-139``."""
    parts, start = [], 0
    seeds = sorted(seeds)
    for index in range(1, len(seeds) + 1):
        if index == len(seeds) or seeds[index] != seeds[index - 1] + 1:
            block = seeds[start:index]
            parts += [f"{block[0]}-{block[-1]}"] if len(block) >= 4 else list(map(str, block))
            start = index
    return " ".join(parts)


def _chapter_lines() -> str:
    width = max(map(len, [*CHAPTERS, ALL]))
    lines = []
    for name, each in CHAPTERS.items():
        seeds = _seed_ranges(each.published_seeds("cpu"))
        lines.append(f"  {name:{width}}  {each.summary} ({', '.join(each.published_scorers())}; seeds {seeds})"
                     if len(each.published_scorers()) <= 4 else
                     f"  {name:{width}}  {each.summary} ({len(each.published_scorers())} scorers; seeds {seeds})")
    lines.append(f"  {ALL:{width}}  every chapter above, each run once")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    described = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compute every cached result a chapter reads that is not cached yet (resumable).",
        epilog=("chapters (in brackets: the scorers and seeds published at profile cpu, the defaults):\n" + _chapter_lines() + "\n\n"
                "A seed initialises one model's weights and draws its training data; runs pair by seed. The\n"
                "performance chapter trains no model: its seed draws the benchmark's inputs. The ICL chapters, the\n"
                "decoder and the encoder accept only the scorers they show; alternative_scorers accepts every\n"
                f"registered one ({', '.join(scorer_names())}).\n"
                "More in the docstring of ssa/regenerate.py."))
    described.add_argument("chapter", metavar="CHAPTER", choices=(*CHAPTERS, ALL), help="a chapter below, or all")
    add_run_arguments(described)
    described.add_argument("--arms", nargs="+", metavar="A",
                           help="icl_study only: the arms of its plan to compute, by name (default: every arm)")
    return described


def main(argv: list[str] | None = None) -> int:
    command_line = parser()
    arguments = command_line.parse_args(argv)
    try:
        runs = plan(arguments.chapter, arguments.profile, seeds=arguments.seeds, scorers=arguments.scorers, arms=arguments.arms)
    except ValueError as error:  # "--scorers: ...": argparse's own form, "argument --scorers: ..."
        command_line.error(f"argument {error}")
    return run_plan(runs, profile=arguments.profile, device=arguments.device, jobs=arguments.jobs, dry_run=arguments.dry_run,
                    stop_launching_after=arguments.stop_launching_after)


if __name__ == "__main__":
    raise SystemExit("this command is `python -m ssa regenerate`")
