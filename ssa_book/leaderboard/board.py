"""The leaderboard: every registered scorer under every kind of shift the book measures.

    board = read("cpu")                          # every cell the cache can fill (never trains at cpu or paper)
    tables.table(board, cost)                    # scorers x columns: "mean [low, high]" and the verdict
    tables.interactive_table(tables.board_frame(board, cost))  # the page's table, sortable
    tables.seed_frame(board, cost).to_csv(path)  # the long table the page offers for download, a row per seed
    findings.statement_verdict(board)            # the paper's "none is consistently better than softmax"

This module holds the columns and reads the cache into cells; :mod:`ssa_book.leaderboard.tables`
and :mod:`ssa_book.leaderboard.findings` show them.

**Columns** (:data:`COLUMNS`): one kind of shift each, read at one fixed out-of-distribution
point. They were declared here before any run of this leaderboard existed (and before any
max-retrieval run at the cpu profile), by one rule: *the first test point at least ten times the
training scale*.

* in-context "every" and "some" (:mod:`ssa_book.icl`), inputs x ~ N(0, sigma^2) where training had
  sigma = 1: the prompt error at σ = 10 (also the powered study's primary point);
* in-context linear functions, larger inputs (sigma_x) and larger functions (sigma_ab): the
  squared error over the zero predictor's, at σ = 10;
* max retrieval (:mod:`ssa_book.retrieval`), sets larger than the 16 items of training: the share of
  test sets whose class is named wrong, at 256 items, in each of the chapter's two setups (the
  short one, trained on sets of 16 items; the original's, on sets of 5 to 16), with the same point,
  error, threshold and seeds (:mod:`ssa_book.analysis_changes` records when the second was added).

**A cell** is one scorer in one column: its error at the point for each of :data:`SEEDS`, their
mean with a 95% t interval over seeds, and the verdict of :func:`ssa_book.verdicts.judge.judge` on "the
scorer's error at the point is lower than softmax's", runs paired with softmax's by seed (a seed
gives every scorer the same initialisation stream, batches and test sets). The threshold is the
column's benchmark's own, declared there before its results: 0.1 in context (a tenth of the error
scale, :data:`ssa_book.alternatives.comparison.THRESHOLD`), 0.05 for retrieval (one test set in twenty,
:data:`ssa_book.retrieval.analysis.THRESHOLD`). A comparison where softmax or the scorer did not
learn the task in distribution reads "not learned" (the shift then tests nothing), the error still
shown. A cell is filled only when every seed of
the scorer and of softmax is cached: never a smaller sample.

**Runs**. In context: each scorer as the chapters build it
(:func:`ssa_book.icl.experiments.experiment_config`, nothing tuned), evaluated at sigma = 1 (whether it
learned the task) and at the point only, without the per-point arrays, attention map and length
sweep the chapters keep (:func:`icl_experiment`), seeds 100-109. Max retrieval: the Max retrieval
chapter's own runs of both setups, seeds 0-9. ``python -m ssa_book regenerate leaderboard --jobs 2`` computes both,
retrieval first, then task by task and scorer by scorer (so an interrupted sweep leaves whole cells).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from ssa_book.verdicts.words import not_run_yet as rule_not_run_yet
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.claim import Claim, MIN_PAIRS
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge, learning_failure, not_learned, pair_by_seed
from ssa_book.verdicts.families import control_false_discoveries
from ssa_book.alternatives.statement import THRESHOLD as ICL_THRESHOLD, THRESHOLD_REASON as ICL_REASON
from ssa_book.chapters import Chapter, Run, RunKind
from ssa_book.icl import experiments
from ssa_book.icl.study.design import error_at
from ssa_book.icl.tasks import TASKS
from ssa_book.icl.verdicts import PROMPT_ERROR_FLIP, learned
from ssa_book.plotting import scorer_label, seed_ranges
from ssa_book.profiles import check_profile
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError
from ssa_book.results.provenance import total_wall_time
from ssa_book.retrieval.analysis import LEARNED_ACCURACY, THRESHOLD as RETRIEVAL_THRESHOLD, train_items
from ssa_book.retrieval.experiment import (
    ORIGINAL,
    ORIGINAL_SCORERS,
    SEEDS as RETRIEVAL_SEEDS,
    SHORT,
    load_run as load_retrieval_run,
    setup_of,
)
from ssa.scoring import scorer_names

TITLE = "Leaderboard: every scorer under every shift"
TEN_TIMES = 10  # the point of a column: the first test point at least this many times the training scale
ICL_SEEDS = {"smoke": (100, 101), "cpu": tuple(range(100, 110)), "paper": tuple(range(100, 110))}
ICL, RETRIEVAL = "in-context learning", "max retrieval"
BENCHMARK_WORDS = {ICL: "in context", RETRIEVAL: "max retrieval"}
# The two kinds of shift the board asks SSA about, one per benchmark: the paper's own (the scale of
# an in-context prompt's inputs or of its function) and set size, which the paper does not test.
SHIFT_KINDS = {ICL: "input and function scale", RETRIEVAL: "set size"}


@dataclasses.dataclass(frozen=True)
class Column:
    """One kind of shift at one out-of-distribution point."""

    key: str  # short name: CSV and code
    label: str  # the table's header
    benchmark: str  # ICL or RETRIEVAL
    task: str  # the ICL task ("every", "some", "linear"), or "retrieval"
    task_label: str  # the task in words
    shift: str  # "sigma_x", "sigma_ab" (ICL), "items" (retrieval)
    point: int  # sigma, or items per set
    training: str  # the training scale, in words
    error: str  # what the error is, in words
    bounded: bool  # the error lies in [0, 1] (a share); else only >= 0
    claim: Claim
    setup: str = SHORT  # max retrieval: which of the chapter's setups (ssa_book.retrieval.experiment.SETUPS)

    @property
    def shift_label(self) -> str:
        return {"sigma_x": "input scale", "sigma_ab": "function scale", "items": "set size"}[self.shift]


# The fewest pairs from which max retrieval's columns decide anything. With 10, nulls resampled from
# their cells' own per-seed differences (ssa_book.error_rates) made the rule name a false direction
# up to 10% of the time in the short setup and 19% in the original one, where one seed's softmax
# fails and the others do not; at most 5% from 20 pairs on in the short setup, and from 40 in the
# original (7% with 20). The in-context columns stay at or below 5% at their pairs.
RETRIEVAL_MIN_PAIRS = {"short": 20, "original": 40}


def _claim(
    what: str,
    threshold: float,
    units: str,
    reason: str,
    largest_flip: float | None = None,
    bounded: bool = False,
    min_pairs: int = MIN_PAIRS,
) -> Claim:
    """``bounded``: the error lies in [0, 1], so a paired difference lies in [-1, 1]."""
    return Claim(
        f"the error {what} is lower than softmax's",
        -1,
        threshold,
        units,
        reason,
        largest_flip=largest_flip,
        bound=1.0 if bounded else None,
        min_pairs=min_pairs,
    )


def _columns() -> tuple[Column, ...]:
    # a prompt error flips by up to 1 from seed to seed, so "no difference" needs
    # ssa_book.verdicts.claim.no_effect_pairs pairs; linear functions' normalised error and max retrieval's
    # share of sets wrong do not flip so

    retrieval_reason = (
        "one test set in twenty more answered wrong: the Max retrieval chapter's threshold, fixed before its runs"
    )
    point = TEN_TIMES
    return (
        Column(
            "every",
            f'"every", σ of x = {point}',
            ICL,
            "every",
            '"every"',
            "sigma_x",
            point,
            "σ = 1",
            "prompt error",
            True,
            _claim(
                f'on "every" at σ of x = {point}',
                ICL_THRESHOLD,
                "prompt error",
                ICL_REASON,
                PROMPT_ERROR_FLIP,
                bounded=True,
            ),
        ),
        Column(
            "some",
            f'"some", σ of x = {point}',
            ICL,
            "some",
            '"some"',
            "sigma_x",
            point,
            "σ = 1",
            "prompt error",
            True,
            _claim(
                f'on "some" at σ of x = {point}',
                ICL_THRESHOLD,
                "prompt error",
                ICL_REASON,
                PROMPT_ERROR_FLIP,
                bounded=True,
            ),
        ),
        Column(
            "linear_x",
            f"linear, σ of x = {point}",
            ICL,
            "linear",
            "linear functions",
            "sigma_x",
            point,
            "σ = 1",
            "normalised squared error",
            False,
            _claim(f"on linear functions at σ of x = {point}", ICL_THRESHOLD, "normalised squared error", ICL_REASON),
        ),
        Column(
            "linear_ab",
            f"linear, σ of a, b = {point}",
            ICL,
            "linear",
            "linear functions",
            "sigma_ab",
            point,
            "σ = 1",
            "normalised squared error",
            False,
            _claim(
                f"on linear functions at σ of a, b = {point}", ICL_THRESHOLD, "normalised squared error", ICL_REASON
            ),
        ),
        Column(
            "retrieval",
            "max retrieval, short setup, 256 items",
            RETRIEVAL,
            "retrieval",
            "max retrieval (short setup)",
            "items",
            256,
            "16 items",
            "share of sets wrong",
            True,
            _claim(
                "of max retrieval (short setup) at 256 items",
                RETRIEVAL_THRESHOLD,
                "share of test sets",
                retrieval_reason,
                bounded=True,
                min_pairs=RETRIEVAL_MIN_PAIRS["short"],
            ),
        ),
        Column(
            "retrieval_original",
            "max retrieval, original setup, 256 items",
            RETRIEVAL,
            "retrieval",
            "max retrieval (original setup)",
            "items",
            256,
            "5 to 16 items",
            "share of sets wrong",
            True,
            _claim(
                "of max retrieval (original setup) at 256 items",
                RETRIEVAL_THRESHOLD,
                "share of test sets",
                retrieval_reason,
                bounded=True,
                min_pairs=RETRIEVAL_MIN_PAIRS["original"],
            ),
            ORIGINAL,
        ),
    )


COLUMNS: tuple[Column, ...] = _columns()
ICL_COLUMNS = tuple(column.key for column in COLUMNS if column.benchmark == ICL)


def column(key: str) -> Column:
    found = {each.key: each for each in COLUMNS}
    if key not in found:
        raise ValueError(f"column must be one of {', '.join(found)}; got {key!r}")
    return found[key]


def scorers() -> tuple[str, ...]:
    """Every registered scorer: softmax (the reference of every verdict) and SSA first."""
    return tuple(dict.fromkeys(("softmax", "ssa", *scorer_names())))


def seeds(benchmark: str, profile: str) -> tuple[int, ...]:
    if benchmark == ICL:
        return ICL_SEEDS[check_profile(profile)]
    if benchmark == RETRIEVAL:
        return RETRIEVAL_SEEDS[check_profile(profile)]
    raise ValueError(f"benchmark must be {ICL!r} or {RETRIEVAL!r}; got {benchmark!r}")


# --- the runs ---------------------------------------------------------------------------------


def icl_experiment(task: str, scorer: str, seed: int, profile: str = "cpu"):
    """The leaderboard's in-context run: the chapters' experiment of ``task`` x ``scorer`` x
    ``seed``, evaluated at sigma 1 and at the point only, keeping prompt errors and attention
    statistics (a fifth of a chapter entry)."""

    base = experiments.experiment_config(task, scorer, profile, seed)
    evaluation = dataclasses.replace(
        base.eval, sigmas=(1, TEN_TIMES), lengths=(), length_prompts=0, per_position=False, attention_map=False
    )
    return dataclasses.replace(base, eval=evaluation)


@dataclasses.dataclass(frozen=True)
class LeaderboardChapter(Chapter):
    """The leaderboard: the Max retrieval chapter's runs, then every registered scorer on the
    three in-context tasks at the leaderboard's seeds (evaluated at its points only), task by task
    and scorer by scorer, and the scorers' cost measurement."""

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        return tuple(dict.fromkeys((*seeds(RETRIEVAL, profile), *seeds(ICL, profile))))

    def published_scorers(self) -> tuple[str, ...]:
        return scorers()

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        found = [
            Run("cost", (model,), f"cost of every scorer, {what}", exclusive=True, chapters=(self.name,))
            for model, what in (("icl", "the in-context model"), ("retrieval", "the retrieval model"))
        ]
        for run in plan(profile, scorers):
            if (run[2] if run[0] == "retrieval" else run[3]) not in seeds:
                continue
            if run[0] == "retrieval":
                setup = f" / {run[3]} setup" if run[3:] else ""
                found.append(
                    Run("retrieval", run[1:], f"retrieval / {run[1]} / seed {run[2]}{setup}", chapters=(self.name,))
                )
            else:
                found.append(
                    Run(
                        "leaderboard_icl",
                        run[1:],
                        f"{run[1]} / {run[2]} / seed {run[3]} (σ 1 and 10)",
                        chapters=(self.name,),
                    )
                )
        return found

    def part(self, run: Run) -> str:
        if run.kind == "retrieval":
            return f"max retrieval, {setup_of(run.arguments)} setup"
        return "cost" if run.kind == "cost" else "in-context runs"

    def configs(self, profile: str) -> dict:
        """Of its in-context runs (SSA's; every scorer's are the same but for the scorer); its
        retrieval runs are the Max retrieval chapter's."""
        return {task: icl_experiment(task, "ssa", seeds(ICL, profile)[0], profile) for task in TASKS}

    def settings(self) -> tuple:
        """Its in-context runs' (no length sweep); its retrieval runs' are in the Max retrieval chapter's table."""
        return tuple(
            setting
            for setting in experiments.ICL_SETTINGS
            if setting.path not in ("eval.lengths", "eval.length_prompts")
        )


CHAPTER = LeaderboardChapter(
    "leaderboard",
    "every registered scorer under every shift: max retrieval's runs, the in-context runs "
    "at the leaderboard's points and seeds, and the scorers' cost",
    jobs=2,
)


def regenerate_command(profile: str = "cpu", scorer: str | None = None, seed: int | None = None) -> str:
    return CHAPTER.command(
        profile, scorers=None if scorer is None else [scorer], seeds=None if seed is None else [seed]
    )


def load_icl_run(task: str, scorer: str, seed: int, *, profile: str, device: str = "auto", progress: bool = False):
    """The run through the result cache (computed if missing unless the cache is required)."""

    return experiments.load_run(
        icl_experiment(task, scorer, seed, profile),
        profile=profile,
        device=device,
        progress=progress,
        regenerate=regenerate_command(profile, scorer, seed),
    )


def compute_leaderboard_icl_run(profile: str, device: str, progress: bool, task: str, scorer: str, seed: int) -> str:
    """Run kind "leaderboard_icl": one in-context run of the leaderboard through the cache."""
    run = load_icl_run(task, scorer, seed, profile=profile, device=device, progress=progress)
    parts = [
        f"{_SHIFT_WORDS[shift]} error {_point_error(run, task, shift):.4g} at σ = {TEN_TIMES}"
        for shift in ("sigma_x", "sigma_ab")
        if shift in run.shifts
    ]
    return "; ".join(parts)


_SHIFT_WORDS = {"sigma_x": "x-shift", "sigma_ab": "a,b-shift"}


def _point_error(run, task: str, shift: str) -> float:
    return error_at(float(TEN_TIMES), shift)(run, task)


KINDS = {"leaderboard_icl": RunKind(compute_leaderboard_icl_run)}


def plan(
    profile: str = "cpu", scorer_names_: Sequence[str] | None = None, seed_list: Sequence[int] | None = None
) -> list[tuple]:
    """The runs, in the order they are computed (the Max retrieval chapter's): ``("retrieval",
    scorer, seed)`` of its short setup seed by seed, then ``("retrieval", scorer, seed, ORIGINAL)``
    of its original setup scorer by scorer; then ``("icl", task, scorer, seed)`` task by task and
    scorer by scorer. ``seed_list`` replaces both benchmarks' seeds when given."""
    chosen = scorers() if scorer_names_ is None else tuple(scorer_names_)
    retrieval_seeds = seeds(RETRIEVAL, profile) if seed_list is None else tuple(seed_list)
    icl_seeds = seeds(ICL, profile) if seed_list is None else tuple(seed_list)
    runs: list[tuple] = [("retrieval", scorer, seed) for seed in retrieval_seeds for scorer in chosen]
    runs += [
        ("retrieval", scorer, seed, ORIGINAL)
        for scorer in ORIGINAL_SCORERS
        if scorer in chosen
        for seed in retrieval_seeds
    ]
    runs += [("icl", task, scorer, seed) for task in TASKS for scorer in chosen for seed in icl_seeds]
    return runs


# --- reading the cache into cells -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Cell:
    scorer: str
    column: str  # Column.key
    seeds: tuple[int, ...]
    errors: tuple[float, ...]  # one per seed, at the column's point
    learned: bool  # in distribution (ICL: ssa_book.icl.verdicts.learned; retrieval: accuracy at the training size)
    verdict: Verdict | None  # against softmax (None for softmax itself)

    @property
    def mean(self) -> float:
        return float(np.mean(self.errors))

    bounded: bool = False  # the column's error lies in [0, 1]

    @property
    def interval(self) -> tuple[float, float] | None:
        """95% t interval of the mean over seeds (``None`` with one seed), clipped to the error's
        range (an error is never below 0, a share never above 1)."""
        found = mean_interval(self.errors)
        if found is None:
            return None
        return max(found[0], 0.0), min(found[1], 1.0) if self.bounded else found[1]


def mean_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """The 95% t interval of the mean of ``values`` (``None`` for fewer than two; the mean twice
    when they are all equal), unclipped."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return None
    mean, error = float(values.mean()), float(stats.sem(values))
    if error == 0.0:
        return mean, mean
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, values.size - 1)) * error
    return mean - half, mean + half


@dataclasses.dataclass(frozen=True)
class Board:
    """What the leaderboard shows: the complete cells, and for the others how many runs are cached."""

    profile: str
    cells: Mapping[tuple[str, str], Cell]  # (scorer, column key) -> cell
    seeds_cached: Mapping[tuple[str, str], tuple[int, int]]  # (scorer, column key) -> (seeds cached, seeds planned)
    runs: tuple[int, int]  # (runs cached, runs planned), each run once
    wall_time_s: float  # training and evaluation of every cached run, from their provenance
    commits: tuple[str, ...]  # the commits the cached runs were computed at

    def cell(self, scorer: str, key: str) -> Cell | None:
        return self.cells.get((scorer, key))

    @property
    def complete(self) -> bool:
        return len(self.cells) == len(scorers()) * len(COLUMNS)

    def pair_counts(self) -> tuple[int, ...]:
        """The distinct numbers of seeds the filled cells hold: ``(10,)`` when every cell has ten
        (the columns' seeds differ, so the board's distinct seeds are more than any cell pairs)."""
        return tuple(sorted({len(cell.seeds) for cell in self.cells.values()}))

    def caption(self, seeds: bool = True) -> str:
        """The figure's and table's provenance: the pairs a cell holds and (``seeds``) each
        benchmark's seeds, never the distinct seeds of all columns together as one count: "cpu
        profile, 10 paired seeds a column (in context 100-109, max retrieval 0-9), 1674.8 min of
        training and evaluation in total"; without ``seeds``: "cpu profile, 10 paired seeds a column, 1674.8 min in total"."""
        if not self.cells:
            return f"{self.profile} profile, no cell filled yet"
        by_benchmark = {
            benchmark: sorted(
                {
                    seed
                    for (_, key), cell in self.cells.items()
                    if column(key).benchmark == benchmark
                    for seed in cell.seeds
                }
            )
            for benchmark in (ICL, RETRIEVAL)
        }
        where = ", ".join(
            f"{BENCHMARK_WORDS[benchmark]} {seed_ranges(found)}" for benchmark, found in by_benchmark.items() if found
        )
        pairs = f"{' or '.join(map(str, self.pair_counts()))} paired seeds a column"
        if not seeds:
            return f"{self.profile} profile, {pairs}, {self.wall_time_s / 60:.1f} min in total"
        return f"{self.profile} profile, {pairs} ({where}), {self.wall_time_s / 60:.1f} min of training and evaluation in total"

    def progress_sentence(self) -> str:
        """How full the board is, and the command that fills it (Markdown: the command in backticks)."""
        total = len(scorers()) * len(COLUMNS)
        if self.complete:
            return f"All {total} cells are filled, from {self.runs[1]} cached runs."
        return (
            f"{len(self.cells)} of the {total} cells are filled so far: a cell waits until every seed of its scorer and "
            f"of softmax is cached, and the board is {rule_not_run_yet(*self.runs)}. "
            f"`{regenerate_command(self.profile)}` computes the rest."
        )


def read(profile: str = "cpu", *, train: bool | None = None, device: str = "auto", load=None) -> Board:
    """Every cell the cache can fill at ``profile``. ``train`` (default: at smoke only) computes the
    missing runs first; at cpu and paper the leaderboard's hours of training are started by
    :func:`regenerate_command`, never by reading it. ``load(run)`` (a run of :func:`plan` -> its
    record, or ``None`` when it is not cached) replaces the cache (tests)."""
    profile = check_profile(profile)
    train = profile == "smoke" if train is None else bool(train)
    if train and profile != "smoke":
        raise ValueError(
            f"train: the leaderboard's runs are trained at {profile} by `{regenerate_command(profile)}`, never by reading them"
        )
    if load is None:

        def load(run):
            return _load(run, profile, train, device)

    loaded: dict[tuple, object] = {}
    for run in plan(profile):
        found = load(run)
        if found is not None:
            loaded[run] = found
    cells, counts = {}, {}
    for each in COLUMNS:
        by_scorer = {scorer: _runs_of(loaded, each, scorer, profile) for scorer in scorers()}
        planned = len(seeds(each.benchmark, profile))
        for scorer, found in by_scorer.items():
            counts[(scorer, each.key)] = (len(found), planned)
        complete = {scorer: found for scorer, found in by_scorer.items() if len(found) == planned}
        if "softmax" not in complete:
            continue
        learned = _learned(each, complete, profile)
        errors = {scorer: {run.seed: _error(each, run) for run in found} for scorer, found in complete.items()}
        for scorer in complete:
            verdict = None if scorer == "softmax" else _verdict(each, scorer, errors, learned)
            ordered = tuple(sorted(errors[scorer]))
            cells[(scorer, each.key)] = Cell(
                scorer,
                each.key,
                ordered,
                tuple(errors[scorer][s] for s in ordered),
                learned[scorer],
                verdict,
                each.bounded,
            )
    # The board is one family: a direction against softmax must survive control of false
    # discoveries over every cell judged.
    judged = [key for key, cell in cells.items() if cell.verdict is not None]
    for key, controlled in zip(judged, control_false_discoveries([cells[key].verdict for key in judged])):
        cells[key] = dataclasses.replace(cells[key], verdict=controlled)
    provenances = [run.provenance for run in loaded.values() if run.provenance is not None]
    wall = total_wall_time(provenances) or 0.0
    commits = tuple(sorted({provenance.git_commit[:7] for provenance in provenances if provenance.git_commit}))
    return Board(profile, cells, counts, (len(loaded), len(plan(profile))), wall, commits)


def _load(run: tuple, profile: str, train: bool, device: str):

    def load():
        if run[0] == "retrieval":
            return load_retrieval_run(*run[1:3], profile=profile, device=device, setup=setup_of(run[1:]))
        return load_icl_run(*run[1:], profile=profile, device=device)

    if train:
        return load()
    with cache_required():
        try:
            return load()
        except CacheMissError:
            return None


def _runs_of(loaded: Mapping[tuple, object], each: Column, scorer: str, profile: str) -> list:
    setup = () if each.setup == SHORT else (each.setup,)
    keys = (
        [("retrieval", scorer, seed, *setup) for seed in seeds(RETRIEVAL, profile)]
        if each.benchmark == RETRIEVAL
        else [("icl", each.task, scorer, seed) for seed in seeds(ICL, profile)]
    )
    return [loaded[key] for key in keys if key in loaded]


def _error(each: Column, run) -> float:
    if each.benchmark == RETRIEVAL:
        return 1.0 - run.at(each.point, "accuracy")
    return _point_error(run, each.task, each.shift)


def _learned(each: Column, by_scorer: Mapping[str, list], profile: str) -> dict[str, bool]:
    """Whether each scorer (mean over its seeds) learned the column's task in distribution, by its
    chapter's own test: accuracy at the training size (retrieval), error at sigma 1 against the
    trivial predictor's (in context)."""
    if each.benchmark == RETRIEVAL:
        size = train_items(profile, each.setup)
        return {
            scorer: bool(np.mean([run.at(size) for run in runs]) >= LEARNED_ACCURACY)
            for scorer, runs in by_scorer.items()
        }

    return learned(dict(by_scorer), each.task)


def _verdict(
    each: Column, scorer: str, errors: Mapping[str, Mapping[int, float]], learned: Mapping[str, bool]
) -> Verdict:

    claim = dataclasses.replace(
        each.claim, name=f"{scorer_label(scorer)}: {each.claim.name}", treatment=scorer_label(scorer)
    )
    why = learning_failure(
        {"softmax": learned["softmax"], scorer_label(scorer): learned[scorer]},
        f"{each.task_label} in distribution, at {each.training}",
    )
    if why:
        return not_learned(claim, why)
    _, treatment, control = pair_by_seed(errors[scorer], errors["softmax"])
    return judge(claim, treatment, control)
