"""How the plan is carried out: the comparisons run at a profile (:func:`plan`, with the
contingency on training length read from the cache), the chapter that registers the study's runs
in the plan's order (:data:`CHAPTER`, run kind "icl_study"), and the cache the pages read them
from (:class:`StudyCache`), which trains nothing outside the smoke profile. The contingency lives
here because the plan at a profile reads it from the cache, and the cache knows its runs from the
plan."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ssa_book.verdicts.words import NEGLIGIBLE
from ssa_book.verdicts.claim import Claim, MIN_PAIRS
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge
from ssa_book.chapters import Chapter, Run, RunKind
from ssa_book.icl import experiments
from ssa_book.icl.experiments import ICLExperiment
from ssa_book.icl.records import ICLRun, LogitSpread
from ssa_book.icl.study.design import (
    ARM_LABELS,
    ARMS,
    COMPARISONS,
    CONTINGENT,
    ENDPOINTS,
    FIRST_SEED,
    LENGTH_TREND,
    LENGTH_TREND_ENDPOINT,
    LENGTH_TREND_TASK,
    Comparison,
    _tasks_of,
    check_plan,
    needed,
    outcomes,
    runs,
)
from ssa_book.icl.tasks import TASKS
from ssa_book.profiles import check_profile
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError

TITLE = "Does SSA generalise better? A powered test"  # the chapter's title


def plan(profile: str = "cpu", *, cache: "StudyCache | None" = None) -> tuple[Comparison, ...]:
    """The comparisons carried out at ``profile``: the whole plan at cpu and paper, and with a
    ``cache`` to read the length trend from, :data:`LONGER_TRAINING` once :func:`longer_training_needed`
    says so; at smoke, where nothing is read from the runs, the primary comparison on "every" with
    the fewest pairs the rule decides on, so that the chapter's code runs end to end in seconds."""

    if check_profile(profile) == "smoke":
        return (dataclasses.replace(COMPARISONS[0], tasks=("every",), seeds=MIN_PAIRS),)
    if cache is not None and longer_training_needed(cache):
        return COMPARISONS + CONTINGENT
    return COMPARISONS


def length_trend(cache: "StudyCache") -> Verdict | None:
    """Whether SSA's paired advantage over softmax in :data:`LENGTH_TREND_ENDPOINT` on "every"
    (softmax's error minus SSA's, seed by seed) changes from 3 x to 10 x the steps: the rule on the
    per-seed change, with the endpoint's own threshold (a change smaller than the smallest effect
    that matters is no change), on the seeds both comparisons have (the 10 x one's). ``None`` until
    both comparisons are complete there."""
    three, ten = (comparison(name) for name in LENGTH_TREND)
    if not set(ten.seed_list()) <= set(three.seed_list()):
        raise ValueError(
            "the length trend pairs the 3 x and 10 x comparisons by seed: the 3 x one must have the 10 x one's seeds"
        )
    three = dataclasses.replace(three, seeds=ten.seeds)
    if not (cache.complete(three, LENGTH_TREND_TASK) and cache.complete(ten, LENGTH_TREND_TASK)):
        return None
    endpoint = ENDPOINTS[LENGTH_TREND_ENDPOINT]
    advantage = {}
    for compared in (three, ten):
        treatment, control = outcomes(compared, LENGTH_TREND_TASK, LENGTH_TREND_ENDPOINT, cache)
        advantage[compared.name] = endpoint.claim.direction * (treatment - control)  # positive: SSA better
    claim = Claim(
        f'SSA\'s advantage over softmax ({LENGTH_TREND_ENDPOINT}, "every") grows from 3 x to 10 x the steps',
        1,
        endpoint.claim.threshold,
        endpoint.claim.units,
        "the endpoint's own threshold: a change smaller than the smallest effect that matters is no change",
        directions=("SSA's advantage grows", "SSA's advantage shrinks"),
    )
    return judge(claim, advantage[ten.name], advantage[three.name])


def longer_training_needed(cache: "StudyCache") -> bool | None:
    """``True`` when the length trend (:func:`length_trend`) is anything but "no effect at this
    scale" (it moved, or the seeds cannot rule out that it moved), ``False`` when it lies within
    the threshold, ``None`` while it cannot be read."""
    trend = length_trend(cache)
    return None if trend is None else trend.outcome != NEGLIGIBLE


def comparison(name: str, profile: str = "cpu") -> Comparison | None:
    """The comparison called ``name`` as carried out at ``profile`` (:func:`plan`, with the
    contingent ones at cpu and paper whether or not their condition holds); ``None`` when the plan
    at ``profile`` leaves it out (at smoke, all but the primary one)."""
    known = COMPARISONS + CONTINGENT
    if name not in {candidate.name for candidate in known}:
        raise ValueError(f"comparison must be one of {', '.join(c.name for c in known)}; got {name!r}")
    carried = plan(profile) + (CONTINGENT if profile != "smoke" else ())
    return next((candidate for candidate in carried if candidate.name == name), None)


@dataclasses.dataclass(frozen=True)
class StudyChapter(Chapter):
    """The powered in-context study: its runs are arms x tasks x seeds of its plan, in the plan's
    order of priority (a contingent comparison's once the cache says its condition holds: :func:`plan`)."""

    has_arms = True

    def part(self, run: Run) -> str:
        """The arm ``run`` belongs to."""
        return ARM_LABELS[run.arguments[0]]

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        return tuple(sorted({seed for _, _, seed in runs(plan(profile), profile=profile)}))

    def published_scorers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(arm.scorer for arm in ARMS.values()))

    def scorer_hint(self) -> str:
        return " (the scorers of the study's arms; --scorers keeps the arms of the scorers named)"

    def runs(
        self, profile: str, seeds: Sequence[int], scorers: Sequence[str], arms: Sequence[str] | None = None
    ) -> list[Run]:
        """The plan's runs with ``seeds``, of the arms whose scorer is in ``scorers`` and, when
        ``arms`` is given, of those arms only."""
        if arms is not None:
            unknown = [arm for arm in arms if arm not in ARMS]
            if unknown:
                raise ValueError(f"--arms: unknown arm {', '.join(map(repr, unknown))}; choose from {', '.join(ARMS)}")
        # With the cache, the plan includes a contingent comparison once its condition holds.
        comparisons = plan(profile, cache=StudyCache(profile, train=False))
        return [
            Run("icl_study", (arm, task, seed), f"{arm} / {task} / seed {seed}", chapters=(self.name,))
            for arm, task, seed in runs(comparisons, profile=profile)
            if seed in seeds and ARMS[arm].scorer in scorers and (arms is None or arm in arms)
        ]

    def configs(self, profile: str) -> dict:
        """Of its base arm (SSA as in the chapters); each arm's change is in the plan."""
        return {task: ARMS["ssa"].experiment(task, FIRST_SEED, profile) for task in TASKS}

    def settings(self) -> tuple:
        """Of its base arm, as the chapters' (each arm's change is in the plan)."""
        return experiments.ICL_SETTINGS


CHAPTER = StudyChapter(
    "icl_study", "the powered in-context study: its plan's arms, tasks and seeds, primary question first", jobs=2
)


def regenerate_command(profile: str, seed: int | None = None, arm: str | None = None) -> str:
    """The command that computes the study's runs at ``profile`` (``seed``, ``arm``: only that
    seed's, that arm's)."""
    return CHAPTER.command(profile, seeds=None if seed is None else [seed], arms=None if arm is None else [arm])


def _experiment(arm: str, task: str, seed: int, profile: str) -> ICLExperiment:
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {', '.join(ARMS)}; got {arm!r}")
    return ARMS[arm].experiment(task, seed, profile)


def load_run(arm: str, task: str, seed: int, *, profile: str, device: str = "auto", progress: bool = False) -> ICLRun:
    """The run of ``arm`` on ``task`` with ``seed`` through the result cache
    (:func:`ssa_book.icl.experiments.load_run`), computed if missing unless the cache is required."""
    return experiments.load_run(
        _experiment(arm, task, seed, profile),
        profile=profile,
        device=device,
        progress=progress,
        regenerate=regenerate_command(profile, seed, arm),
    )


def compute_study_run(profile: str, device: str, progress: bool, arm: str, task: str, seed: int) -> str:
    """Run kind "icl_study": one study run and its logit spreads through the cache."""
    return experiments.cached_with_spread(
        _experiment(arm, task, seed, profile),
        profile=profile,
        device=device,
        progress=progress,
        regenerate=regenerate_command(profile, seed, arm),
    )


KINDS = {"icl_study": RunKind(compute_study_run)}


class StudyCache:
    """The study's runs and logit spreads as the chapter reads them, each once: at smoke it trains
    the runs of the smoke plan that are missing (seconds); at cpu and paper it reads the cache
    only. A run not cached (or, at smoke, not planned) is ``None``: the study's hours of training
    are started by ``python -m ssa_book regenerate icl_study``, never by opening its page. Calling it
    is ``load(arm, task, seed)`` for :func:`outcomes`. ``train=False`` reads the cache only at
    smoke too (the front page never trains)."""

    def __init__(self, profile: str, *, train: bool | None = None):

        self.profile = check_profile(profile)
        self.train = self.profile == "smoke" if train is None else bool(train)
        if self.train and self.profile != "smoke":
            raise ValueError(
                f"train: the study's runs are trained at {self.profile} by `{regenerate_command(self.profile)}`, "
                "never by reading them"
            )
        self._planned = set(runs(plan(profile) + (CONTINGENT if self.profile != "smoke" else ()), profile=profile))
        self._runs: dict[tuple[str, str, int], ICLRun | None] = {}
        self._spreads: dict[tuple[str, str, int], LogitSpread | None] = {}
        self._controlled = (
            None  # the plan's verdicts under false-discovery control, once judged (judging.controlled_verdicts)
        )

    def _read(self, key: tuple[str, str, int], read: Callable[[], Any]):
        if self.train:
            return read() if key in self._planned else None

        with cache_required():
            try:
                return read()
            except CacheMissError:
                return None

    def run(self, arm: str, task: str, seed: int) -> ICLRun | None:
        key = (arm, task, seed)
        if key not in self._runs:
            self._runs[key] = self._read(key, lambda: load_run(arm, task, seed, profile=self.profile))
        return self._runs[key]

    __call__ = run

    def spread(self, arm: str, task: str, seed: int) -> LogitSpread | None:
        key = (arm, task, seed)
        if key not in self._spreads:
            experiment = _experiment(arm, task, seed, self.profile)
            self._spreads[key] = self._read(
                key,
                lambda: LogitSpread.from_result(
                    experiments.cached_logit_spread(
                        experiment,
                        profile=self.profile,
                        progress=False,
                        regenerate=regenerate_command(self.profile, seed, arm),
                    ),
                    task=task,
                    scorer=experiment.train.model.scorer,
                    seed=seed,
                ),
            )
        return self._spreads[key]

    def cached(self, compared: Comparison, task: str | None = None) -> int:
        """How many of ``compared``'s runs (both arms, every seed; on ``task``, else on every task) are there."""
        return sum(
            self.run(arm, each, seed) is not None
            for each in _tasks_of(compared, task)
            for seed in compared.seed_list()
            for arm in (compared.treatment, compared.control)
        )

    def complete(self, compared: Comparison, task: str) -> bool:
        """Whether every run of ``compared`` on ``task`` is there: only then is it judged on that task."""
        return self.cached(compared, task) == needed(compared, task)


check_plan(plan("smoke"), profile="smoke")
