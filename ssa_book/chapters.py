"""The studies of the book, each registered once, and the chapters with cached results they define.

A :class:`Study` is one study of the book (in-context learning, the decoder, max retrieval, ...):
its chapters with cached results (:class:`Chapter`: its plan of runs for a profile, seeds and
scorers, the configs it builds, the command that computes them), how each kind of run it plans
is computed (:class:`RunKind`: its regenerate step), how its runs are read as typed records and
judged one by one (:class:`Reader`), and the paper's claims it tests with the function that gives
their verdicts as rows of the ledger. Each study registers itself once (:func:`register_study`),
from the package or module that holds it, so that importing any of its modules registers it;
:data:`STUDIES` is the registry. The command line (:mod:`ssa_book.regenerate`), the size tables
(:mod:`ssa_book.sizes`), the ledger (:mod:`ssa_book.ledger`), the reproducing page
(:mod:`ssa_book.reproduce`) and the reruns (:mod:`ssa_book.reruns`) iterate it, through the
indexes it fills: :data:`CHAPTERS` (in the book's order, :data:`ORDER`), :data:`KINDS`,
:data:`READERS` and :data:`ssa_book.claims.PAPER`.

This module knows no study: it is filled by them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Iterable, Mapping, Protocol, Sequence

from ssa_book.claims import LedgerRow, PaperClaim, PAPER, ORDER as CLAIM_ORDER
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
class Setting:
    """One row of a chapter's table of sizes (:mod:`ssa_book.sizes`): the value at ``path`` of the
    chapter's config (attribute names or dict keys joined by dots; ``""`` is the whole config),
    shown through ``show`` (default: as it is). The numbers are never written in a setting: every
    value is read from the built config, so the table cannot disagree with what runs."""

    name: str
    description: str
    path: str
    show: Callable[[Any], Any] | None = None

    def value(self, config: Any) -> Any:
        value = resolve(config, self.path)
        return value if self.show is None else self.show(value)


def resolve(config: Any, path: str) -> Any:
    """The value at ``path`` (``"train.model.n_layer"``) of ``config``; ``""`` is ``config``."""
    value = config
    for part in path.split(".") if path else ():
        value = value[part] if isinstance(value, dict) else getattr(value, part)
    return value


def listed(values) -> str:
    """A sequence as text, for a :class:`Setting`; a long evenly spaced one as its first two values
    and its last."""
    values = list(values)
    if len(values) > 6 and all(b - a == values[1] - values[0] for a, b in zip(values, values[1:])):
        return f"{values[0]}, {values[1]}, …, {values[-1]} ({len(values)} values)"
    return ", ".join(map(str, values))


def scorer_settings(kwargs) -> str:
    """A scorer's settings for a :class:`Setting`: ``b = 2.718, n = 1.492``; with the decoder's
    ``learn_b``/``learn_n`` flags, which are trained."""
    kwargs = dict(kwargs)
    return ", ".join(f"{name} = {value:.4g}" + (f" ({'trained' if kwargs[f'learn_{name}'] else 'fixed'})" if f"learn_{name}" in kwargs else "")
                     for name, value in kwargs.items() if not name.startswith("learn_"))


@dataclasses.dataclass(frozen=True)
class Chapter:
    """A chapter with cached results: its published seeds and scorers, its runs, the configs it
    builds, and the command that computes them."""

    name: str
    summary: str  # one line, for --help
    jobs: int = 1  # the --jobs its documented command uses
    has_arms: ClassVar[bool] = False  # whether --arms may name parts of its plan
    seeds_meaning: ClassVar[str] = "training seeds: each initialises a model and draws its data"  # its table of sizes' words

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

    def settings(self) -> tuple[Setting, ...]:
        """The rows of the chapter's table of sizes (:func:`ssa_book.sizes.sizes`): where each
        value sits in the configs of :meth:`configs`."""
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


# kind -> how its runs are computed: filled by register_study.
KINDS: dict[str, RunKind] = {}


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


# name -> chapter, in ORDER: every chapter of a registered study.
CHAPTERS: dict[str, Chapter] = {}


def _in_order(registry: dict) -> None:
    """Put ``registry``'s chapters in :data:`ORDER`."""
    for each in sorted(registry, key=ORDER.index):
        registry[each] = registry.pop(each)


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
    rerun in place of a cached seed and judges again): part of the study that defines the chapter
    (:attr:`Study.readers`)."""

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


# chapter name -> its reader, for the chapters that have one: filled by register_study.
READERS: dict[str, Reader] = {}


# ----------------------------------------------------------------------------------------------
# The studies.


@dataclasses.dataclass(frozen=True)
class Study:
    """One study of the book: everything the book's machinery reads of it, registered at once.

    ``rows(profile)`` gives one ledger row per claim of ``claims``, in their order, read from the
    result cache (it never trains)."""

    name: str
    chapters: tuple[Chapter, ...] = ()  # its chapters with cached results (their plans of runs)
    kinds: Mapping[str, RunKind] = dataclasses.field(default_factory=dict)  # how each kind of run it plans is computed
    readers: tuple[Reader, ...] = ()  # how the runs of its chapters are read and judged one by one
    claims: Mapping[str, PaperClaim] = dataclasses.field(default_factory=dict)  # the paper's claims it tests (keys of ssa_book.claims.ORDER)
    rows: Callable[[str], list[LedgerRow]] | None = None  # their verdicts, as rows of the ledger


# name -> study: every study imported (ssa_book.studies imports them all).
STUDIES: dict[str, Study] = {}


def register_study(study: Study) -> Study:
    """Add ``study`` to :data:`STUDIES`, and its chapters, kinds of run, readers and claims to the
    indexes (:data:`CHAPTERS`, :data:`KINDS`, :data:`READERS`, :data:`ssa_book.claims.PAPER`);
    returns it. Registering the same study again changes nothing; a name another study holds is
    an error, as is a chapter outside :data:`ORDER`, a claim outside :data:`ssa_book.claims.ORDER`,
    claims without rows, or a reader of a chapter the study does not define."""
    known = STUDIES.get(study.name)
    if known is not None:
        if known != study:
            raise ValueError(f"study {study.name!r} is already registered, with other parts")
        return known
    names = [chapter.name for chapter in study.chapters]
    outside = [name for name in names if name not in ORDER]
    if outside:
        raise ValueError(f"study {study.name!r}: chapter {', '.join(map(repr, outside))} has no place in ORDER, the book's order of its chapters")
    unknown = [key for key in study.claims if key not in CLAIM_ORDER]
    if unknown:
        raise ValueError(f"study {study.name!r}: claims {', '.join(unknown)} not in ORDER ({', '.join(CLAIM_ORDER)})")
    if bool(study.claims) != (study.rows is not None):
        raise ValueError(f"study {study.name!r}: claims and the rows that judge them go together")
    strays = [reader.chapter for reader in study.readers if reader.chapter not in names]
    if strays:
        raise ValueError(f"study {study.name!r}: a reader of chapter {', '.join(strays)}, which it does not define")
    for what, mine, index in (("chapter", names, CHAPTERS), ("run kind", list(study.kinds), KINDS),
                              ("reader of chapter", [reader.chapter for reader in study.readers], READERS),
                              ("claim", list(study.claims), PAPER)):
        taken = [name for name in mine if name in index]
        if taken:
            raise ValueError(f"study {study.name!r}: {what} {', '.join(map(repr, taken))} is already registered by another study")
    CHAPTERS.update((chapter.name, chapter) for chapter in study.chapters)
    _in_order(CHAPTERS)
    KINDS.update(study.kinds)
    READERS.update((reader.chapter, reader) for reader in study.readers)
    _in_order(READERS)
    PAPER.update(study.claims)
    STUDIES[study.name] = study
    return study


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
