"""The leaderboard: every registered scorer under every kind of shift the book measures.

    board = read("cpu")                   # every cell the cache can fill (never trains at cpu or paper)
    table(board, cost)                    # scorers x columns: "mean [low, high]" and the verdict
    interactive_table(board_frame(board, cost))  # the page's table: a row per scorer and column, sortable
    seed_frame(board, cost).to_csv(path)  # the long table the page offers for download, a row per seed
    statement_verdict(board)              # the paper's "none is consistently better than softmax"

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

import base64
import dataclasses
import html
import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ssa_book.verdicts.words import (BETTER, HOLDS_IN_PART, MIXED, NEGLIGIBLE, NOT_LEARNED, NOT_RUN_YET, NOT_TESTED, OPEN,
                                     PREMISE_NOT_SHOWN, TOO_FEW_SEEDS, UNDECIDED, WORSE, claim_word,
                                     not_run_yet as rule_not_run_yet)
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.claim import Claim, MIN_PAIRS
from ssa_book.verdicts.rule import FALSE_DISCOVERY_RATE
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge, learning_failure, not_learned, pair_by_seed
from ssa_book.verdicts.families import combine, control_false_discoveries
from ssa_book.verdicts.robustness import rests_on_words, seeds_it_rests_on
from ssa_book.alternatives.comparison import (PAPER_ALTERNATIVES, THRESHOLD as ICL_THRESHOLD, THRESHOLD_REASON as ICL_REASON,
                                              cost_entry, judge_statement)
from ssa_book.chapters import Chapter, Run, RunKind
from ssa_book.claims import listed, minimum_moved, minimums_after_reading, only_on, panels_by_task, plural, set_after_reading
from ssa_book.icl import experiments
from ssa_book.icl.study import error_at
from ssa_book.icl.tasks import TASKS
from ssa_book.icl.verdicts import PROMPT_ERROR_FLIP, learned
from ssa_book.plotting import COLUMN_WIDTH_IN, scorer_color, scorer_label, seed_ranges
from ssa_book.profiles import check_profile
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError
from ssa_book.results.provenance import total_wall_time
from ssa_book.icl.study.design import SCHEDULE_WORDS
from ssa_book.retrieval.analysis import LEARNED_ACCURACY, THRESHOLD as RETRIEVAL_THRESHOLD, regime as retrieval_regime, train_items
from ssa_book.retrieval.experiment import (ORIGINAL, ORIGINAL_SCORERS, SEEDS as RETRIEVAL_SEEDS, SHORT, experiment_config as retrieval_config,
                                           load_run as load_retrieval_run, setup_of)
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


def _claim(what: str, threshold: float, units: str, reason: str, largest_flip: float | None = None,
           bounded: bool = False, min_pairs: int = MIN_PAIRS) -> Claim:
    """``bounded``: the error lies in [0, 1], so a paired difference lies in [-1, 1]."""
    return Claim(f"the error {what} is lower than softmax's", -1, threshold, units, reason, largest_flip=largest_flip,
                 bound=1.0 if bounded else None, min_pairs=min_pairs)


def _columns() -> tuple[Column, ...]:
    # a prompt error flips by up to 1 from seed to seed, so "no difference" needs
    # ssa_book.verdicts.claim.no_effect_pairs pairs; linear functions' normalised error and max retrieval's
    # share of sets wrong do not flip so

    retrieval_reason = ("one test set in twenty more answered wrong: the Max retrieval chapter's threshold, "
                        "fixed before its runs")
    point = TEN_TIMES
    return (
        Column("every", f'"every", σ of x = {point}', ICL, "every", '"every"', "sigma_x", point, "σ = 1", "prompt error", True,
               _claim(f'on "every" at σ of x = {point}', ICL_THRESHOLD, "prompt error", ICL_REASON, PROMPT_ERROR_FLIP, bounded=True)),
        Column("some", f'"some", σ of x = {point}', ICL, "some", '"some"', "sigma_x", point, "σ = 1", "prompt error", True,
               _claim(f'on "some" at σ of x = {point}', ICL_THRESHOLD, "prompt error", ICL_REASON, PROMPT_ERROR_FLIP, bounded=True)),
        Column("linear_x", f"linear, σ of x = {point}", ICL, "linear", "linear functions", "sigma_x", point, "σ = 1", "normalised squared error", False,
               _claim(f"on linear functions at σ of x = {point}", ICL_THRESHOLD, "normalised squared error", ICL_REASON)),
        Column("linear_ab", f"linear, σ of a, b = {point}", ICL, "linear", "linear functions", "sigma_ab", point, "σ = 1", "normalised squared error", False,
               _claim(f"on linear functions at σ of a, b = {point}", ICL_THRESHOLD, "normalised squared error", ICL_REASON)),
        Column("retrieval", "max retrieval, short setup, 256 items", RETRIEVAL, "retrieval", "max retrieval (short setup)", "items", 256,
               "16 items", "share of sets wrong", True,
               _claim("of max retrieval (short setup) at 256 items", RETRIEVAL_THRESHOLD, "share of test sets", retrieval_reason,
                      bounded=True, min_pairs=RETRIEVAL_MIN_PAIRS["short"])),
        Column("retrieval_original", "max retrieval, original setup, 256 items", RETRIEVAL, "retrieval", "max retrieval (original setup)",
               "items", 256, "5 to 16 items", "share of sets wrong", True,
               _claim("of max retrieval (original setup) at 256 items", RETRIEVAL_THRESHOLD, "share of test sets", retrieval_reason,
                      bounded=True, min_pairs=RETRIEVAL_MIN_PAIRS["original"]), ORIGINAL),
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
    evaluation = dataclasses.replace(base.eval, sigmas=(1, TEN_TIMES), lengths=(), length_prompts=0, per_position=False, attention_map=False)
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
        found = [Run("cost", (model,), f"cost of every scorer, {what}", exclusive=True, chapters=(self.name,))
                 for model, what in (("icl", "the in-context model"), ("retrieval", "the retrieval model"))]
        for run in plan(profile, scorers):
            if (run[2] if run[0] == "retrieval" else run[3]) not in seeds:
                continue
            if run[0] == "retrieval":
                setup = f" / {run[3]} setup" if run[3:] else ""
                found.append(Run("retrieval", run[1:], f"retrieval / {run[1]} / seed {run[2]}{setup}", chapters=(self.name,)))
            else:
                found.append(Run("leaderboard_icl", run[1:], f"{run[1]} / {run[2]} / seed {run[3]} (σ 1 and 10)", chapters=(self.name,)))
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
        return tuple(setting for setting in experiments.ICL_SETTINGS if setting.path not in ("eval.lengths", "eval.length_prompts"))


CHAPTER = LeaderboardChapter("leaderboard", "every registered scorer under every shift: max retrieval's runs, the in-context runs "
                             "at the leaderboard's points and seeds, and the scorers' cost", jobs=2)


def regenerate_command(profile: str = "cpu", scorer: str | None = None, seed: int | None = None) -> str:
    return CHAPTER.command(profile, scorers=None if scorer is None else [scorer], seeds=None if seed is None else [seed])


def load_icl_run(task: str, scorer: str, seed: int, *, profile: str, device: str = "auto", progress: bool = False):
    """The run through the result cache (computed if missing unless the cache is required)."""

    return experiments.load_run(icl_experiment(task, scorer, seed, profile), profile=profile, device=device, progress=progress,
                                regenerate=regenerate_command(profile, scorer, seed))


def compute_leaderboard_icl_run(profile: str, device: str, progress: bool, task: str, scorer: str, seed: int) -> str:
    """Run kind "leaderboard_icl": one in-context run of the leaderboard through the cache."""
    run = load_icl_run(task, scorer, seed, profile=profile, device=device, progress=progress)
    parts = [f"{_SHIFT_WORDS[shift]} error {_point_error(run, task, shift):.4g} at σ = {TEN_TIMES}" for shift in ("sigma_x", "sigma_ab") if shift in run.shifts]
    return "; ".join(parts)


_SHIFT_WORDS = {"sigma_x": "x-shift", "sigma_ab": "a,b-shift"}


def _point_error(run, task: str, shift: str) -> float:
    return error_at(float(TEN_TIMES), shift)(run, task)


KINDS = {"leaderboard_icl": RunKind(compute_leaderboard_icl_run)}


def plan(profile: str = "cpu", scorer_names_: Sequence[str] | None = None, seed_list: Sequence[int] | None = None) -> list[tuple]:
    """The runs, in the order they are computed (the Max retrieval chapter's): ``("retrieval",
    scorer, seed)`` of its short setup seed by seed, then ``("retrieval", scorer, seed, ORIGINAL)``
    of its original setup scorer by scorer; then ``("icl", task, scorer, seed)`` task by task and
    scorer by scorer. ``seed_list`` replaces both benchmarks' seeds when given."""
    chosen = scorers() if scorer_names_ is None else tuple(scorer_names_)
    retrieval_seeds = seeds(RETRIEVAL, profile) if seed_list is None else tuple(seed_list)
    icl_seeds = seeds(ICL, profile) if seed_list is None else tuple(seed_list)
    runs: list[tuple] = [("retrieval", scorer, seed) for seed in retrieval_seeds for scorer in chosen]
    runs += [("retrieval", scorer, seed, ORIGINAL) for scorer in ORIGINAL_SCORERS if scorer in chosen for seed in retrieval_seeds]
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
        by_benchmark = {benchmark: sorted({seed for (_, key), cell in self.cells.items() if column(key).benchmark == benchmark
                                           for seed in cell.seeds}) for benchmark in (ICL, RETRIEVAL)}
        where = ", ".join(f"{BENCHMARK_WORDS[benchmark]} {seed_ranges(found)}" for benchmark, found in by_benchmark.items() if found)
        pairs = f"{' or '.join(map(str, self.pair_counts()))} paired seeds a column"
        if not seeds:
            return f"{self.profile} profile, {pairs}, {self.wall_time_s / 60:.1f} min in total"
        return f"{self.profile} profile, {pairs} ({where}), {self.wall_time_s / 60:.1f} min of training and evaluation in total"

    def progress_sentence(self) -> str:
        """How full the board is, and the command that fills it (Markdown: the command in backticks)."""
        total = len(scorers()) * len(COLUMNS)
        if self.complete:
            return f"All {total} cells are filled, from {self.runs[1]} cached runs."
        return (f"{len(self.cells)} of the {total} cells are filled so far: a cell waits until every seed of its scorer and "
                f"of softmax is cached, and the board is {rule_not_run_yet(*self.runs)}. "
                f"`{regenerate_command(self.profile)}` computes the rest.")


def read(profile: str = "cpu", *, train: bool | None = None, device: str = "auto", load=None) -> Board:
    """Every cell the cache can fill at ``profile``. ``train`` (default: at smoke only) computes the
    missing runs first; at cpu and paper the leaderboard's hours of training are started by
    :func:`regenerate_command`, never by reading it. ``load(run)`` (a run of :func:`plan` -> its
    record, or ``None`` when it is not cached) replaces the cache (tests)."""
    profile = check_profile(profile)
    train = profile == "smoke" if train is None else bool(train)
    if train and profile != "smoke":
        raise ValueError(f"train: the leaderboard's runs are trained at {profile} by `{regenerate_command(profile)}`, never by reading them")
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
            cells[(scorer, each.key)] = Cell(scorer, each.key, ordered, tuple(errors[scorer][s] for s in ordered), learned[scorer], verdict,
                                             each.bounded)
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
    keys = ([("retrieval", scorer, seed, *setup) for seed in seeds(RETRIEVAL, profile)] if each.benchmark == RETRIEVAL
            else [("icl", each.task, scorer, seed) for seed in seeds(ICL, profile)])
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
        return {scorer: bool(np.mean([run.at(size) for run in runs]) >= LEARNED_ACCURACY) for scorer, runs in by_scorer.items()}

    return learned(dict(by_scorer), each.task)


def _verdict(each: Column, scorer: str, errors: Mapping[str, Mapping[int, float]], learned: Mapping[str, bool]) -> Verdict:

    claim = dataclasses.replace(each.claim, name=f"{scorer_label(scorer)}: {each.claim.name}", treatment=scorer_label(scorer))
    why = learning_failure({"softmax": learned["softmax"], scorer_label(scorer): learned[scorer]},
                           f"{each.task_label} in distribution, at {each.training}")
    if why:
        return not_learned(claim, why)
    _, treatment, control = pair_by_seed(errors[scorer], errors["softmax"])
    return judge(claim, treatment, control)


# --- what the page shows ----------------------------------------------------------------------

# Each benchmark's cost is measured on its own model (ssa_book.alternatives.comparison.COST_MODELS).
COST_MODEL = {ICL: "icl", RETRIEVAL: "retrieval"}


def costs(profile: str, device: str = "auto") -> dict[str, Mapping]:
    """The cost of every scorer on each benchmark's own model, ``{benchmark: cost entry}``
    (:func:`ssa_book.alternatives.comparison.cost_entry`): a training step's time and peak memory as
    multiples of softmax's, every scorer through the same attention path."""
    return {benchmark: cost_entry(profile, device, model=model) for benchmark, model in COST_MODEL.items()}


def _cost_ratios(cost: Mapping[str, Mapping] | None, benchmark: str, scorer: str) -> tuple[float | None, float | None]:
    """``scorer``'s (time, memory) ratios to softmax on ``benchmark``'s model; ``None`` where not measured."""
    found = (cost or {}).get(benchmark, {}).get("scorers", {}).get(scorer)
    if found is None:
        return None, None
    return found.get("time_ratio"), found.get("memory_ratio")


def frame(board: Board, cost: Mapping[str, Mapping] | None = None):
    """The long table, one row per scorer and column (the CSV, :func:`seed_frame`, has one per seed): the point, each
    seed's error, the mean and its 95% interval, softmax's mean, the verdict with its effect
    (softmax's error minus the scorer's: positive when the scorer is better) and interval, and the
    cost of a training step and its peak memory on the column's own model as multiples of
    softmax's (``cost``: :func:`costs`). Pending cells have no numbers and say how many seeds are
    cached."""
    import pandas as pd


    rows = []
    for scorer in scorers():
        for each in COLUMNS:
            time_ratio, memory_ratio = _cost_ratios(cost, each.benchmark, scorer)
            found, reference = board.cell(scorer, each.key), board.cell("softmax", each.key)
            cached, planned = board.seeds_cached.get((scorer, each.key), (0, 0))
            row = {"scorer": scorer, "scorer_label": scorer_label(scorer), "column": each.key, "shift": each.shift_label,
                   "benchmark": each.benchmark, "point": each.point, "error": each.error, "seeds": planned, "seeds_cached": cached,
                   "mean": np.nan, "low": np.nan, "high": np.nan, "softmax_mean": np.nan, "learned": None,
                   "outcome": NOT_RUN_YET, "effect": np.nan, "effect_low": np.nan, "effect_high": np.nan, "pairs": 0,
                   "per_seed": "", "time_ratio": time_ratio, "memory_ratio": memory_ratio}
            if found is not None:
                low, high = found.interval or (np.nan, np.nan)
                row.update(mean=found.mean, low=low, high=high, learned=found.learned, softmax_mean=reference.mean,
                           per_seed=" ".join(f"{seed}:{error:.6g}" for seed, error in zip(found.seeds, found.errors)),
                           outcome="reference" if found.verdict is None else found.verdict.outcome)
                if found.verdict is not None and found.verdict.interval is not None:
                    row.update(effect=found.verdict.effect, effect_low=found.verdict.interval[0],
                               effect_high=found.verdict.interval[1], pairs=found.verdict.pairs)
            rows.append(row)
    return pd.DataFrame(rows)


def not_run_yet(board: Board, scorer: str, column: str) -> str:
    """A cell whose comparison lacks runs, in the book's one wording (:func:`ssa_book.verdicts.words.not_run_yet`):
    "not run yet: 14 of 20 runs done", counting the seeds of ``scorer`` and of softmax in ``column`` (softmax's
    own for softmax's cell), so that a scorer whose seeds are all in still says what its verdict waits for."""
    counts = [board.seeds_cached[(each, column)] for each in dict.fromkeys((scorer, "softmax"))]
    return rule_not_run_yet(sum(cached for cached, _ in counts), sum(planned for _, planned in counts))


# A cell's verdict against softmax, the scorer named by its row: the book's words without the name.
# A direction keeps its subject, the row's scorer: "scorer worse than softmax", never a bare "worse".
OUTCOME_MARKS = {outcome: f"scorer {outcome} than softmax" if outcome in (BETTER, WORSE) else outcome
                 for outcome in (BETTER, WORSE, NEGLIGIBLE, UNDECIDED, TOO_FEW_SEEDS,
                                 PREMISE_NOT_SHOWN, NOT_LEARNED)}


def table(board: Board, cost: Mapping[str, Mapping] | None = None, digits: int = 3):
    """Scorers x columns as the page shows them: "mean [low, high]" and, below softmax, the
    verdict against it (:data:`OUTCOME_MARKS`: scorer better than softmax / scorer worse than softmax /
    no difference that matters / undecided / not learned); "not run yet: k of n runs" for a cell not
    complete; then the cost columns, each benchmark's model apart."""
    import pandas as pd


    rows = {}
    for scorer in scorers():
        row = {}
        for each in COLUMNS:
            found = board.cell(scorer, each.key)
            if found is None:
                row[each.label] = not_run_yet(board, scorer, each.key)
                continue
            interval = found.interval
            text = f"{found.mean:.{digits}f}" + ("" if interval is None else f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]")
            rests = "" if found.verdict is None else rests_on_words(seeds_it_rests_on(found.verdict, found.seeds))
            row[each.label] = (text + ("" if found.verdict is None else f" {OUTCOME_MARKS[found.verdict.outcome]}")
                               + (f" ({rests})" if rests else ""))
        for benchmark, where in ((ICL, "in context"), (RETRIEVAL, "retrieval")):
            time_ratio, memory_ratio = _cost_ratios(cost, benchmark, scorer)
            row[f"step time / softmax, {where}"] = "n/a" if time_ratio is None else f"{time_ratio:.2f}"
            row[f"peak memory / softmax, {where}"] = "n/a" if memory_ratio is None else f"{memory_ratio:.2f}"
        rows[scorer_label(scorer)] = row
    found = pd.DataFrame.from_dict(rows, orient="index")
    found.index.name = "scorer"
    return found


def outcome_counts(board: Board):
    """Scorer x outcome: in how many columns each verdict against softmax was reached."""
    import pandas as pd


    counts = {}
    for scorer in scorers()[1:]:
        outcomes = [cell.verdict.outcome for key in (c.key for c in COLUMNS) if (cell := board.cell(scorer, key)) is not None]
        counts[scorer_label(scorer)] = {OUTCOME_MARKS[o]: outcomes.count(o) for o in OUTCOME_MARKS}
        counts[scorer_label(scorer)][NOT_RUN_YET] = len(COLUMNS) - len(outcomes)
    return pd.DataFrame.from_dict(counts, orient="index")


def before_minimums_sentence(board: Board) -> str:
    """What the exploratory cells read before the pair minimums set after they had been read (max
    retrieval's and the one for prompt-error directions, :func:`ssa_book.claims.minimum_moved`), counted
    by direction with the scorers that read better named, before false-discovery control: "Before the
    pair minimums set after the cells had been read (...), 17 read worse than softmax and 1.5-entmax read
    better than softmax, of the 50 cells those minimums left exploratory, ..." ("" when they moved no
    cell to a direction)."""
    before = [moved[1] for scorer in scorers()[1:] for each in COLUMNS
              if (cell := board.cell(scorer, each.key)) is not None and (moved := minimum_moved(each.claim, cell.verdict))]
    worse = [verdict for verdict in before if verdict.outcome == WORSE]
    better = [verdict.treatment for verdict in before if verdict.outcome == BETTER]
    if not worse and not better:
        return ""
    said = " and ".join(filter(None, (f"{len(worse)} read worse than softmax" if worse else "",
                                      f"{listed(better)} read better than softmax" if better else "")))
    return (f"Before the pair minimums set after the cells had been read (max retrieval's, and the prompt-error minimum "
            f"for a direction), {said}, of the {plural(len(before), 'cell')} those minimums left exploratory, before false-discovery "
            f"control; the analysis-changes page lists the changes.")


def comparison(board: Board, keys: Sequence[str] = ICL_COLUMNS):
    """The cells of ``keys`` as :func:`ssa_book.alternatives.comparison.versus_softmax` lays out its
    comparisons (one row per scorer and panel), so that the Alternative scorers chapter's reading
    of the paper's statement (:func:`ssa_book.alternatives.comparison.judge_statement`) reads this
    table too."""
    import pandas as pd


    rows = []
    for key in keys:
        each = column(key)
        reference = board.cell("softmax", key)
        for scorer in scorers()[1:]:
            found = board.cell(scorer, key)
            if found is None or reference is None:
                continue
            verdict = found.verdict
            low, high = verdict.interval if verdict.interval is not None else (np.nan, np.nan)
            rows.append({"scorer": scorer, "task": each.task, "shift": each.shift, "panel": each.label,
                         "paper": scorer in PAPER_ALTERNATIVES, "learned": found.learned, "softmax": reference.mean,
                         "error": found.mean, "outcome": verdict.outcome, "effect": np.nan if verdict.effect is None else verdict.effect,
                         "low": low, "high": high, "pairs": verdict.pairs, "seeds_to_resolve": verdict.seeds_to_resolve,
                         "seeds": found.seeds if verdict.interval is not None else (), "differences": verdict.differences,
                         "verdict": verdict})
    columns = ["scorer", "task", "shift", "panel", "paper", "learned", "softmax", "error", "outcome", "effect", "low", "high",
               "pairs", "seeds_to_resolve", "seeds", "differences", "verdict"]
    return pd.DataFrame(rows, columns=columns)


def statement_verdict(board: Board) -> Verdict:
    """The paper's "none of the alternatives it tried is consistently better than softmax", read
    from the in-context columns (the paper's own shift) at the leaderboard's seeds, with the power
    of the rule at their spread (:func:`ssa_book.alternatives.comparison.judge_statement`)."""

    return judge_statement(comparison(board))


def statement_complete(board: Board) -> bool:
    """Whether every in-context cell of softmax and of the paper's alternatives is filled: only
    then does the leaderboard's reading of the paper's statement replace the chapter's."""

    return all(board.cell(scorer, key) is not None for scorer in ("softmax", *PAPER_ALTERNATIVES) for key in ICL_COLUMNS)


def statement_reading(board: Board) -> dict:
    """The leaderboard's reading of the paper's statement, for the Alternative scorers chapter and
    the front page: ``{"complete": bool, "outcome": str, "text": str}``, "not tested"
    with what is missing until :func:`statement_complete`. The text is Markdown (it may name a
    command in backticks)."""
    if not statement_complete(board):
        cells = [(scorer, key) for scorer in ("softmax", *PAPER_ALTERNATIVES) for key in ICL_COLUMNS]
        filled = sum(board.cell(*cell) is not None for cell in cells)
        return {"complete": False, "outcome": NOT_TESTED,
                "text": (f"not read yet: {filled} of the {len(cells)} in-context cells of softmax and the paper's alternatives "
                         f"are filled; `{regenerate_command(board.profile)}` computes the rest")}
    verdict = statement_verdict(board)
    pairs = len(seeds(ICL, board.profile))
    return {"complete": True, "outcome": verdict.outcome,
            "text": f"{verdict.words()}, at {pairs} paired seeds on the error at σ = {TEN_TIMES}. {verdict.detail}"}


def ssa_verdict(board: Board) -> Verdict:
    """SSA against softmax in every column, combined (:func:`ssa_book.verdicts.families.combine`): the front
    page's row. While a column is pending it stays "undecided" (or "holds in part" when the columns
    in already disagree); "not tested" while no column has SSA's cell."""
    name = "SSA's error at the out-of-distribution point is lower than softmax's, on every kind of shift"
    parts = {each.label: cell.verdict for each in COLUMNS if (cell := board.cell("ssa", each.key)) is not None}
    if not parts:
        return Verdict(name, NOT_TESTED, detail="no column has SSA's and softmax's runs complete")
    combined = combine(name, parts)
    pending = [each.label for each in COLUMNS if board.cell("ssa", each.key) is None]
    if not pending:
        return combined
    # parts decided both ways, or one for the claim, stay so whatever the columns still to come show
    outcome = combined.outcome if combined.outcome in (HOLDS_IN_PART, MIXED) else UNDECIDED
    return dataclasses.replace(combined, outcome=outcome, detail=f"{combined.detail}; not run yet: {', '.join(pending)}")


def ssa_by_shift(board: Board) -> dict[str, Verdict]:
    """SSA against softmax on each kind of shift (:data:`SHIFT_KINDS`) whose columns have SSA's
    cell, those columns combined by the one tally of a claim of several parts."""
    found = {}
    for benchmark, kind in SHIFT_KINDS.items():
        parts = {each.label: cell.verdict for each in COLUMNS if each.benchmark == benchmark and (cell := board.cell("ssa", each.key)) is not None}
        if parts:
            found[kind] = combine(f"SSA's error is lower than softmax's under a shift of {kind}", parts)
    return found


def shift_words(verdict: Verdict, kind: str, note: str = "") -> str:
    """SSA's claim on one kind of shift (:func:`ssa_by_shift`) in words: its word where a column
    decides it, "not decided" while every column is open, its columns counted, then ``note``: "does
    not hold on input and function scale (no difference that matters on 2 of 4, exploratory on 2;
    linear panels only)", "set size not decided (exploratory on 2 of 2; pair minimum set after
    reading, SSA worse before it)"."""
    inside = "; ".join(filter(None, (verdict.tally() or verdict.label(), note)))
    if verdict.outcome in OPEN:
        return f"{kind} not decided ({inside})"
    return f"{claim_word(verdict.outcome)} on {kind} ({inside})"


def ssa_cells(board: Board, benchmark: str | None = None) -> list[tuple[Column, Verdict]]:
    """SSA's cells against softmax, column by column (those of ``benchmark`` only, when given)."""
    return [(each, cell.verdict) for each in COLUMNS if benchmark in (None, each.benchmark)
            and (cell := board.cell("ssa", each.key)) is not None]


def ssa_rests_on(board: Board, benchmark: str | None = None) -> str:
    """What SSA's word (on the columns of ``benchmark``, or on all) rests on, by the one rule for a
    word decided on some tasks only (:func:`ssa_book.claims.only_on`): "linear panels only"."""
    _, decided, open_ = panels_by_task([(each.label, verdict) for each, verdict in ssa_cells(board, benchmark)])
    return only_on(decided, open_)


def ssa_minimums_after_reading(board: Board, benchmark: str | None = None,
                               what: str = "pair minimum") -> tuple[tuple[str, str], ...]:
    """The pair minimums set after SSA's cells (of ``benchmark``, or all) had been read that left them
    exploratory, each with what they read before it: max retrieval's :data:`RETRIEVAL_MIN_PAIRS`
    (called ``what``) and the one for prompt errors, which flip from seed to seed
    (:func:`ssa_book.claims.minimums_after_reading`): (("pair minimum", "SSA worse"),)."""
    return minimums_after_reading([(each.claim, verdict) for each, verdict in ssa_cells(board, benchmark)], what)


def ssa_shifts_sentence(board: Board) -> str:
    """SSA against softmax kind of shift by kind (:func:`shift_words`), so that a word decided on one
    kind is never read as said of both, each with what its word rests on and what was set after
    reading: "does not hold on input and function scale (...; linear panels only); set size not
    decided (exploratory on 2 of 2; pair minimum set after reading, SSA worse before it)" ("" before
    any SSA cell)."""
    by_kind = ssa_by_shift(board)
    return "; ".join(shift_words(by_kind[kind], kind, "; ".join(filter(None, (
        ssa_rests_on(board, benchmark), *(set_after_reading(*change) for change in ssa_minimums_after_reading(board, benchmark))))))
                     for benchmark, kind in SHIFT_KINDS.items() if kind in by_kind)


def false_discovery_sentence(board: Board) -> str:
    """How many of the board's decided directions against softmax survive control of false
    discoveries over all its cells, one family (:func:`ssa_book.verdicts.families.false_discoveries`)."""
    cells = [cell.verdict for scorer in scorers()[1:] for each in COLUMNS
             if (cell := board.cell(scorer, each.key)) is not None]
    tested = [verdict for verdict in cells if verdict.adjusted_p is not None]
    if not tested:
        return "No cell has enough pairs for a signed-rank test yet."
    kept = [verdict for verdict in tested if verdict.outcome in (BETTER, WORSE)]
    lost = [verdict.claim for verdict in tested if verdict.uncontrolled is not None]
    return (f"Controlled for false discoveries over the {len(tested)} tested cells (Benjamini and Hochberg), {len(kept)} of "
            f"the {len(kept) + len(lost)} directions the interval and threshold decide keep an adjusted p below "
            f"{FALSE_DISCOVERY_RATE:g} and their word"
            + (f"; the others read undecided: {'; '.join(lost)}." if lost else "."))


def best_scorers(board: Board) -> dict[str, list[str]]:
    """Per column: the scorers judged better than softmax there (empty when none is)."""
    return {each.key: [scorer for scorer in scorers()[1:] if (cell := board.cell(scorer, each.key)) is not None
                       and cell.verdict.outcome == BETTER] for each in COLUMNS}


def winners_words(board: Board) -> str:
    """The scorers better than softmax by the rule, column by column, in words; a column with
    pending cells says how many of its scorers are judged so far."""
    better, words = best_scorers(board), []
    for each in COLUMNS:
        if board.cell("softmax", each.key) is None:
            continue
        judged = sum(board.cell(scorer, each.key) is not None for scorer in scorers()[1:])
        so_far = "" if judged == len(scorers()) - 1 else f" (so far: {judged} of the {len(scorers()) - 1} scorers judged)"
        named = []
        for scorer in better[each.key]:
            found = board.cell(scorer, each.key)
            rests = rests_on(found)
            # the verdict's own word, so that the direction a page shows is logged from the verdict that decided it
            named.append(f"{found.verdict.word()}{f', but it {rests}' if rests else ''} ({found.verdict.estimate('+.3f')}, "
                         f"threshold {each.claim.threshold:g})")
        words.append(f"{each.label}: {', '.join(named) or 'none'}{so_far}"
                     + "".join(f" ({said} before the {what} set after reading)" for said, what in better_before_minimum(board, each)))
    return "; ".join(words) or "no column is complete yet"


def better_before_minimum(board: Board, column: Column) -> list[tuple[str, str]]:
    """The scorers of ``column`` exploratory only under a pair minimum set after the cells had been
    read that read better than softmax before it (:func:`ssa_book.claims.minimum_moved`), so that a
    column's winners are said whichever way that minimum cut: [("1.5-entmax better", "pair minimum")]
    (the words of the verdict before it)."""
    found = []
    for scorer in scorers()[1:]:
        cell = board.cell(scorer, column.key)
        moved = minimum_moved(column.claim, cell.verdict) if cell is not None else ()
        if moved and moved[1].outcome == BETTER:
            found.append((moved[1].label(), moved[0]))
    return found


def winners_takeaway(board: Board) -> str:
    """The leaderboard figure's takeaway in one sentence: in how many of the complete columns some
    scorer is better than softmax by the rule, and which (with the seeds a verdict rests on)."""
    better = best_scorers(board)
    complete = [each for each in COLUMNS if board.cell("softmax", each.key) is not None]
    if not complete:
        return "No column is complete yet"
    named = [f"{scorer_label(scorer)} on {each.label}" + (f" ({rests})" if (rests := rests_on(board.cell(scorer, each.key))) else "")
             for each in complete for scorer in better[each.key]]
    found = sum(bool(better[each.key]) for each in complete)
    before = [f"{said} on {each.label} only before the {what} set after reading"
              for each in complete for said, what in better_before_minimum(board, each)]
    also = f"; {'; '.join(before)}" if before else ""
    if not named:
        return f"In none of the {len(complete)} columns is a scorer better than softmax{also}"
    return f"In {found} of {len(complete)} columns a scorer is better than softmax: {'; '.join(named)}{also}"


PANELS_PER_ROW = 3
TITLE_WIDTH = 26  # characters of a panel's title line at 8 points in a third of the column


def plot(board: Board, fig=None):
    """One panel per column: each scorer's mean error (dot) with its 95% interval (bar) and each
    seed (small grey dots), softmax's mean as a dashed line; the dot is filled when the rule finds
    the scorer better than softmax there, hollow when worse, grey-edged otherwise."""
    import matplotlib.pyplot as plt


    names = list(scorers())
    # Three panels a row, so that the figure keeps legible text at a page's width.
    columns = min(PANELS_PER_ROW, len(COLUMNS))
    rows = -(-len(COLUMNS) // columns)
    if fig is None:
        fig = plt.figure(figsize=(COLUMN_WIDTH_IN - 0.3, rows * (0.3 * len(names) + 1.5)))  # the column's width
    axes = np.ravel(fig.subplots(rows, columns, sharey=True, squeeze=False))
    for unused in axes[len(COLUMNS):]:
        unused.remove()
    positions = {scorer: index for index, scorer in enumerate(names)}
    for ax, each in zip(axes, COLUMNS):
        reference = board.cell("softmax", each.key)
        if reference is not None:
            ax.axvline(reference.mean, color=scorer_color("softmax"), linestyle="--", linewidth=1)
        for scorer in names:
            found = board.cell(scorer, each.key)
            if found is None:
                continue
            y, color = positions[scorer], scorer_color(scorer)
            ax.scatter(found.errors, np.full(len(found.errors), y + 0.22), color="0.55", s=5, linewidths=0, zorder=1)
            if found.interval is not None:
                ax.plot(found.interval, (y, y), color=color, linewidth=2, zorder=2)
            outcome = None if found.verdict is None else found.verdict.outcome
            face = color if outcome in (None, BETTER) else "white"
            edge = color if outcome in (None, BETTER, WORSE) else "0.5"
            ax.scatter([found.mean], [y], s=30, facecolor=face, edgecolor=edge, linewidths=1.2, zorder=3)
        ax.set_title(f"{textwrap.fill(each.label, TITLE_WIDTH)}\n({each.shift_label}; training {each.training})", fontsize=8)
        ax.set_xlabel(each.error, fontsize=8)
        ax.tick_params(labelsize=8)
        if each.benchmark == RETRIEVAL:
            ax.set_xlim(-0.02, 1.02)
    first = axes[0]
    first.set_yticks(range(len(names)), [scorer_label(scorer) for scorer in names])
    first.invert_yaxis()
    for row_start in axes[::columns]:
        row_start.tick_params(labelleft=True)
    fig.tight_layout()
    return fig


# --- the regime of each column, and each cell's words against softmax ------------------------------

def regime_fields(each: Column, profile: str) -> dict:
    """The training regime of ``each``'s runs at ``profile``, field by field (every scorer's runs
    of a column share it; SSA's start is in the chapters' tables): the model's layers and width,
    training steps, learning rate and its schedule, the training scale, and the paired seeds."""
    if each.benchmark == RETRIEVAL:
        config = retrieval_config("softmax", profile, setup=each.setup)
        layers, width, steps, rate, schedule = config.model.depth, config.model.width, config.train.steps, config.train.learning_rate, "constant"
    else:
        train = icl_experiment(each.task, "softmax", seeds(ICL, profile)[0], profile).train
        layers, width, steps, rate, schedule = (train.model.n_layer, train.model.n_embd, train.train_steps, train.learning_rate,
                                                SCHEDULE_WORDS[train.schedule])
    return {"layers": layers, "width": width, "steps": steps, "learning_rate": rate, "schedule": schedule,
            "training_scale": each.training, "seeds": len(seeds(each.benchmark, profile))}


def regime(each: Column, profile: str) -> str:
    """``each``'s regime in words: "in context, 4 layers of width 64, 1,000 steps at learning rate
    0.001 (constant), trained at σ = 1; 10 paired seeds" (max retrieval: its chapter's words)."""
    if each.benchmark == RETRIEVAL:
        return f"max retrieval, {each.setup} setup: {retrieval_regime(profile, each.setup)}"
    fields = regime_fields(each, profile)
    return (f"in context, {fields['layers']} layers of width {fields['width']}, {fields['steps']:,} steps at learning rate "
            f"{fields['learning_rate']:g} ({fields['schedule']}), trained at {each.training}; {fields['seeds']} paired seeds")


def short_regime(each: Column, profile: str) -> str:
    """``each``'s regime in a few words for the table: "in context, 4 × 64, 1,000 steps, lr 0.001"
    (layers × width)."""
    fields = regime_fields(each, profile)
    where = "in context" if each.benchmark == ICL else f"retrieval, {each.setup}"
    return f"{where}, {fields['layers']} × {fields['width']}, {fields['steps']:,} steps, lr {fields['learning_rate']:g}"


_DIRECTION = re.compile(r"\b(better|worse)\b")


def rests_on(cell: Cell) -> str:
    """The seeds whose pair, left out alone, moves the cell's decided verdict, in words: "rests on
    seed 102" ("" when it survives leaving any one out, or is open)."""
    return "" if cell.verdict is None else rests_on_words(seeds_it_rests_on(cell.verdict, cell.seeds))


def against_softmax(cell: Cell) -> str:
    """The cell's verdict against softmax with its subject, never a bare direction, and beside it
    the seed it rests on: "sigmoid better than softmax (rests on seed 102)", "SSA worse than
    softmax", "no difference that matters; SSA slightly better than softmax", "exploratory (3
    pairs)", "not learned"; "reference" for softmax itself."""
    if cell.verdict is None:
        return "reference"
    fragile = rests_on(cell)
    return _DIRECTION.sub(r"\1 than softmax", cell.verdict.label()) + (f" ({fragile})" if fragile else "")


def columns_table():
    """The columns as declared: shift, benchmark, training scale, point, error, and the threshold
    of the verdict against softmax with its reason."""
    import pandas as pd

    return pd.DataFrame([{"column": each.label, "kind of shift": each.shift_label, "benchmark": each.benchmark,
                          "training": each.training, "error read": each.error, "threshold": each.claim.threshold,
                          "why this threshold": each.claim.reason} for each in COLUMNS]).set_index("column")


BOARD_COST_COLUMNS = ("step time / softmax", "peak memory / softmax")


def board_frame(board: Board, cost: Mapping[str, Mapping] | None = None, digits: int = 3):
    """The page's table: one row per scorer and column, so that it fits the text column and sorts
    and filters by any of them: the scorer, the column (its shift and point), its regime in short
    (:func:`short_regime`), the mean error over seeds with its 95% interval, the verdict against
    softmax with its subject (:func:`against_softmax`; "not run yet: k of n runs" for a cell not
    complete), and the cost of a training step and its peak memory on the column's own model as
    multiples of softmax's (:data:`BOARD_COST_COLUMNS`)."""
    import pandas as pd

    rows = []
    for scorer in scorers():
        for each in COLUMNS:
            found = board.cell(scorer, each.key)
            time_ratio, memory_ratio = _cost_ratios(cost, each.benchmark, scorer)
            row = {"scorer": scorer_label(scorer), "column": each.label, "regime": short_regime(each, board.profile),
                   "mean error": np.nan, "95% interval": "", "against softmax": ""}
            if found is None:
                row["against softmax"] = not_run_yet(board, scorer, each.key)
            else:
                row["mean error"] = round(found.mean, digits)
                if found.interval is not None:
                    row["95% interval"] = f"[{found.interval[0]:.{digits}f}, {found.interval[1]:.{digits}f}]"
                row["against softmax"] = against_softmax(found)
            row.update(zip(BOARD_COST_COLUMNS, (np.nan if ratio is None else round(float(ratio), 2) for ratio in (time_ratio, memory_ratio))))
            rows.append(row)
    return pd.DataFrame(rows)


ROWS_PER_PAGE = 14  # one scorer's six columns fit twice and a third of a screen


def interactive_table(table, rows: int = ROWS_PER_PAGE) -> str:
    """``table`` (a DataFrame, without its index) as an interactive HTML table (itables, DataTables):
    sorting by any column, a search box that filters the rows, and pages of ``rows`` rows. It works
    offline: DataTables' JavaScript and CSS travel inside the HTML (itables' offline mode), never
    from a CDN; without JavaScript the table's first rows show as plain HTML."""
    from itables import options
    from itables.javascript import generate_init_offline_itables_html, to_html_datatable

    # "compact" without "nowrap": cells wrap, so that the table fits the text column
    found = to_html_datatable(table, connected=False, showIndex=False, classes="display compact", pageLength=rows,
                              lengthMenu=[rows, 2 * rows, len(table)], style="width:100%", autoWidth=False,
                              layout={"topStart": "pageLength", "topEnd": "search", "bottomStart": "info", "bottomEnd": "paging"})
    return generate_init_offline_itables_html(options.dt_bundle) + found


CSV_NAME = "ssa-leaderboard.csv"
CSV_DIGITS = 6  # significant digits of the CSV's numbers (a float's binary noise left out)


def seed_frame(board: Board, cost: Mapping[str, Mapping] | None = None):
    """The leaderboard in long format, the CSV the page offers: one row per scorer, column and
    seed of every filled cell (a seed per row, so that each pair with softmax can be re-judged from
    the file), with the column's regime (in words, and field by field: :func:`regime_fields`), the
    scorer's and softmax's error at that seed, the cell's verdict against softmax with its subject
    (:func:`against_softmax`: "SSA worse than softmax") with its effect and interval (softmax's
    error minus the scorer's: positive when the scorer is better), and the cost of a training step
    and its peak memory on the column's own model as multiples of softmax's. Numbers are kept to
    :data:`CSV_DIGITS` significant digits."""
    import pandas as pd


    rows = []
    for scorer in scorers():
        for each in COLUMNS:
            time_ratio, memory_ratio = _cost_ratios(cost, each.benchmark, scorer)
            found, reference = board.cell(scorer, each.key), board.cell("softmax", each.key)
            if found is None:
                continue
            verdict = found.verdict
            softmax_errors = dict(zip(reference.seeds, reference.errors))
            decided = verdict is not None and verdict.interval is not None
            fields = {f"regime_{name}": value for name, value in regime_fields(each, board.profile).items()}
            words, outcome = regime(each, board.profile), against_softmax(found)
            for seed, error in zip(found.seeds, found.errors):
                rows.append({"scorer": scorer, "scorer_label": scorer_label(scorer), "column": each.key, "shift": each.shift_label,
                             "benchmark": each.benchmark, "point": each.point, "regime": words, **fields,
                             "error_measure": each.error, "seed": seed,
                             "error": error, "softmax_error": softmax_errors.get(seed, np.nan),
                             "outcome": outcome,
                             "effect": verdict.effect if decided else np.nan,
                             "effect_low": verdict.interval[0] if decided else np.nan,
                             "effect_high": verdict.interval[1] if decided else np.nan,
                             "pairs": verdict.pairs if decided else 0,
                             "time_ratio": np.nan if time_ratio is None else time_ratio,
                             "memory_ratio": np.nan if memory_ratio is None else memory_ratio})
    return significant(pd.DataFrame(rows), CSV_DIGITS)


def significant(table, digits: int = CSV_DIGITS):
    """``table`` with every float rounded to ``digits`` significant digits, so that its CSV reads
    -0.278516, not -0.27851560000000003."""
    found = table.copy()
    for name in found.columns:
        if found[name].dtype.kind == "f":
            found[name] = [value if not np.isfinite(value) else float(f"{value:.{digits}g}") for value in found[name]]
    return found


def download_link(table, folder: str | Path | None = None, filename: str = CSV_NAME,
                  text: str = "Download the leaderboard as CSV") -> str:
    """An HTML link that downloads ``table`` (a DataFrame) as a CSV file. With ``folder`` (the
    book's downloads folder, which the build copies to the site's root: a stable address,
    ``<site>/<filename>``), the file is written there and the link points at it from a chapter
    page; without one (a notebook opened alone), the file travels inside the link (a data URI)."""
    rows = f" ({len(table)} rows: one per scorer, column and seed)"
    if folder is not None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        table.to_csv(folder / filename, index=False)
        return f'<a download="{html.escape(filename)}" href="../{html.escape(filename)}">{html.escape(text)}</a>{rows}'
    payload = base64.b64encode(table.to_csv(index=False).encode("utf-8")).decode("ascii")
    return f'<a download="{html.escape(filename)}" href="data:text/csv;charset=utf-8;base64,{payload}">{html.escape(text)}</a>{rows}'
