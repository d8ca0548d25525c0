"""The chapters with cached results: what each computes, and the registry that lists them.

A :class:`Chapter` (named after its notebook) lists its runs for a profile, seeds and scorers
(:meth:`Chapter.runs`); a :class:`Run` is one cache entry, or the few made together, computed by
its study's own cached function. Each study defines its chapters beside its code and registers
them (:func:`register`); :data:`CHAPTERS` then holds every chapter whose study has been imported,
in the book's order (:data:`ORDER`). The command line (:mod:`ssa_book.regenerate`) computes the runs
of :func:`plan`; :meth:`Chapter.command` is the command a reader is told to run.

Beside its chapter, a study registers how each kind of run it plans is computed
(:func:`register_kind`: :data:`KINDS`, which :func:`read_run` and the command line use) and, where
reruns on other machines are compared, how its runs are read and judged one by one
(:func:`register_reader`: :data:`READERS`, used by :mod:`ssa_book.reruns`).

This module knows no study: it is filled by them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Iterable, Mapping, Protocol, Sequence

from ssa_book.profiles import check_profile
from ssa_book.results import CacheMissError, Provenance, StoredEntry, cache_required, entries_read
from ssa.scoring import scorer_names

PROG = "python -m ssa_book regenerate"
ALL = "all"
# The chapters in the book's order: the order of `regenerate --help`, of `regenerate all` and of
# every table of chapters, whichever study is imported first.
ORDER = ("icl_quantification", "icl_linear", "icl_collapse", "alternative_scorers", "icl_study", "decoder", "encoder",
         "performance", "max_retrieval", "leaderboard")


@dataclasses.dataclass(frozen=True)
class Run:
    """One run: a cache entry, or the few made together (an ICL model's results and its logit
    spreads), computed by ``KINDS[kind].compute(profile, device, progress, *arguments)``.

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


@dataclasses.dataclass(frozen=True)
class Chapter:
    """A chapter with cached results: its published seeds and scorers, its runs, the configs it
    builds, and the command that computes them."""

    name: str
    summary: str  # one line, for --help
    jobs: int = 1  # the --jobs its documented command uses
    has_arms: ClassVar[bool] = False  # whether --arms may name parts of its plan

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

    def configs(self, profile: str) -> dict:
        """The configs the chapter builds at ``profile``, by its own builders: one per task for
        the in-context-learning chapters (``{task: config}``), else ``{"": config}``."""
        raise NotImplementedError

    def part(self, run: Run) -> str:
        """The part of the chapter ``run`` belongs to, for tables of time per part (default:
        the whole chapter, ``""``)."""
        return ""

    def check_scorers(self, scorers: Sequence[str]) -> tuple[str, ...]:
        check_scorer_names(scorers)
        rejected = [name for name in scorers if name not in self.accepted_scorers()]
        if rejected:
            raise ValueError(f"--scorers: the {self.name} chapter accepts only {', '.join(self.accepted_scorers())}; "
                             f"got {', '.join(rejected)}{self.scorer_hint()}")
        return tuple(dict.fromkeys(scorers))

    def command(self, profile: str = "cpu", *, scorers: Sequence[str] | None = None, seeds: Sequence[int] | None = None,
                arms: Sequence[str] | None = None) -> str:
        """The command that computes the chapter's cached results at ``profile``; the
        ``scorers`` and ``seeds`` named only when they are not all the chapter's published ones,
        the ``arms`` whenever given."""
        parts = [PROG, self.name, "--profile", check_profile(profile)]
        if self.jobs > 1:
            parts += ["--jobs", str(self.jobs)]
        if arms:
            parts += ["--arms", *arms]
        if scorers and not set(scorers) <= set(self.published_scorers()):
            parts += ["--scorers", *scorers]
        if seeds and not set(seeds) <= set(self.published_seeds(profile)):
            parts += ["--seeds", *map(str, seeds)]
        return " ".join(parts)


@dataclasses.dataclass(frozen=True)
class RunKind:
    """How the runs of one kind are computed: ``compute(profile, device, progress, *arguments)``
    reads the run through its study's cache, computing what is missing, and returns one line
    about the result; ``cached(profile, device, *arguments)``, for a kind whose entry here cannot
    say whether it is the one the chapter shows, answers that (``None``: read the entry)."""

    compute: Callable[..., str]
    cached: Callable[..., bool | None] | None = None


# kind -> how its runs are computed: registered by the study that defines the kind.
KINDS: dict[str, RunKind] = {}


def register_kind(name: str, compute: Callable[..., str], cached: Callable[..., bool | None] | None = None) -> RunKind:
    """Make ``name`` a kind of :class:`Run`, computed by ``compute``; returns its :class:`RunKind`."""
    kind = RunKind(compute, cached)
    if KINDS.get(name, kind) != kind:
        raise ValueError(f"run kind {name!r} is already registered by another study")
    KINDS[name] = kind
    return kind


def read_run(run: Run, profile: str, device: str = "auto") -> list[StoredEntry] | None:
    """The cache entries ``run`` reads, each valid for its config, or ``None`` when one is
    missing: its kind's own function reads them with the cache required, so exactly what the
    chapter would find. A kind whose entry is found another way (:attr:`RunKind.cached`) gives
    ``[]`` when it is cached."""
    kind = KINDS[run.kind]
    found = kind.cached(profile, device, *run.arguments) if kind.cached is not None else None
    if found is not None:
        return [] if found else None
    with cache_required(), entries_read() as entries:
        try:
            kind.compute(profile, device, False, *run.arguments)
        except CacheMissError:
            return None
    return entries


def is_cached(run: Run, profile: str, device: str = "auto") -> bool:
    """Whether every entry of ``run`` is in the cache, valid for its config (:func:`read_run`)."""
    return read_run(run, profile, device) is not None


# name -> chapter, in ORDER: every chapter whose study has been imported.
CHAPTERS: dict[str, Chapter] = {}


def _in_order(registry: dict, name: str, value, what: str):
    """Add ``value`` under chapter ``name`` to ``registry``, which stays in :data:`ORDER`; returns it."""
    if name not in ORDER:
        raise ValueError(f"{what} {name!r} has no place in ORDER, the book's order of its chapters")
    registry[name] = value
    for each in sorted(registry, key=ORDER.index):
        registry[each] = registry.pop(each)
    return value


def register(chapter: Chapter) -> Chapter:
    """Add ``chapter`` to :data:`CHAPTERS`, which stays in :data:`ORDER`; returns it."""
    return _in_order(CHAPTERS, chapter.name, chapter, "chapter")


def chapter(name: str) -> Chapter:
    if name not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {name!r}")
    return CHAPTERS[name]


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


def plan(name: str, profile: str = "cpu", *, seeds: Sequence[int] | None = None, scorers: Sequence[str] | None = None,
         arms: Sequence[str] | None = None) -> list[Run]:
    """The runs of chapter ``name`` (or ``all``: every chapter's, each run once), in the order
    they are computed. ``seeds``/``scorers`` default to each chapter's published ones; with
    ``all`` each chapter takes the given scorers it accepts, and a chapter that accepts none of
    them is left out. ``arms``: only these arms of the powered study (icl_study only)."""
    check_profile(profile)
    seeds = None if seeds is None else check_seeds(seeds)
    if arms is not None:
        if name not in CHAPTERS or not CHAPTERS[name].has_arms:
            raise ValueError(f"--arms: only the study chapters ({', '.join(n for n, c in CHAPTERS.items() if c.has_arms)}) "
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


# ----------------------------------------------------------------------------------------------
# Reading a chapter's runs one by one: what a rerun on another machine is compared by.


class SeedRun(Protocol):
    """One run of a chapter, named by its scorer and seed (and, in a chapter of several tasks, its task)."""

    scorer: str
    seed: int
    task: str | None


class Reader(Protocol):
    """How a chapter names, reads and judges its runs one at a time (:mod:`ssa_book.reruns` puts a
    rerun in place of a cached seed and judges again): registered by the study beside its
    verdicts (:func:`register_reader`)."""

    chapter: str  # the chapter's name in CHAPTERS
    tasks: tuple[str, ...]  # the tasks its runs need one of (empty: none)

    def experiment(self, run: SeedRun, profile: str) -> tuple[str, Any]:
        """(cache folder, config) of ``run``'s result entry."""

    def record(self, run: SeedRun, result: Mapping, provenance: Provenance | None = None) -> Any:
        """``result`` as the chapter's typed record."""

    def endpoints(self, record: Any, profile: str) -> dict[str, float | None]:
        """The numbers the chapter's verdicts read from one record, by name."""

    def cached_runs(self, profile: str) -> dict:
        """Every record the chapter's verdicts read, from the book's cache."""

    def swapped(self, runs: Mapping, records: Sequence) -> dict:
        """``runs`` (as :meth:`cached_runs` gives them) with each of ``records`` in place of its seed's."""

    def verdicts(self, runs: Mapping, profile: str) -> dict[str, str]:
        """``{claim: outcome in the book's words}`` for every verdict the chapter computes."""


# chapter name -> its reader, for the chapters that have one.
READERS: dict[str, Reader] = {}


def register_reader(reader: Reader) -> Reader:
    """Add ``reader`` to :data:`READERS` (in :data:`ORDER`); returns it."""
    return _in_order(READERS, reader.chapter, reader, "the reader of chapter")


def swapped_by_scorer(runs: Mapping, records: Sequence) -> dict:
    """``{scorer: [runs]}`` with each of ``records`` in place of the run of its scorer and seed."""
    found = {scorer: list(group) for scorer, group in runs.items()}
    for record in records:
        replace_seed(found[record.scorer], record)
    return found


def replace_seed(group: list, record) -> None:
    """Put ``record`` in place of the run of its seed in ``group``."""
    seeds = [run.seed for run in group]
    if record.seed not in seeds:
        raise ValueError(f"records: no cached {record.scorer} run of seed {record.seed} to replace (cached seeds {seeds})")
    group[seeds.index(record.seed)] = record
