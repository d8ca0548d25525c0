"""What a study of the book is, and the chapters with cached results it defines.

A :class:`Study` is one study of the book (in-context learning, the decoder, max retrieval, ...):
its chapters with cached results (:class:`Chapter`: its plan of runs for a profile, seeds and
scorers, the configs it builds, the command that computes them), how each kind of run it plans
is computed (:class:`RunKind`: its regenerate step), how its runs are read as typed records and
judged one by one (:class:`Reader`), and the paper's claims it tests with the function that gives
their verdicts as rows of the ledger. :mod:`ssa_book.studies` lists the studies and derives from
that list, through :func:`index_studies`, the indexes the book's machinery reads: the chapters,
the kinds of run, the readers and the paper's claims.

This module knows no study.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Iterable, Mapping, NamedTuple, Protocol, Sequence

from ssa_book.claims import LedgerRow, PaperClaim, ORDER as CLAIM_ORDER
from ssa_book.profiles import check_profile
from ssa_book.results.provenance import Provenance
from ssa.scoring import scorer_names

PROG = "python -m ssa_book regenerate"


@dataclasses.dataclass(frozen=True)
class Run:
    """One run: a cache entry, or the few made together (an ICL model's results and its logit
    spreads), computed by its kind's ``compute(profile, device, progress, *arguments)`` (:class:`RunKind`).

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
    return ", ".join(
        f"{name} = {value:.4g}"
        + (f" ({'trained' if kwargs[f'learn_{name}'] else 'fixed'})" if f"learn_{name}" in kwargs else "")
        for name, value in kwargs.items()
        if not name.startswith("learn_")
    )


@dataclasses.dataclass(frozen=True)
class Chapter:
    """A chapter with cached results: its published seeds and scorers, its runs, the configs it
    builds, and the command that computes them."""

    name: str
    summary: str  # one line, for --help
    jobs: int = 1  # the --jobs its documented command uses
    has_arms: ClassVar[bool] = False  # whether --arms may name parts of its plan
    seeds_meaning: ClassVar[str] = (
        "training seeds: each initialises a model and draws its data"  # its table of sizes' words
    )

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
            raise ValueError(
                f"--scorers: the {self.name} chapter accepts only {', '.join(self.accepted_scorers())}; "
                f"got {', '.join(rejected)}{self.scorer_hint()}"
            )
        return tuple(dict.fromkeys(scorers))

    def command(
        self,
        profile: str = "cpu",
        *,
        scorers: Sequence[str] | None = None,
        seeds: Sequence[int] | None = None,
        arms: Sequence[str] | None = None,
    ) -> str:
        """The command that computes the chapter's cached results at ``profile``; the
        ``scorers`` and ``seeds`` named only when they are not all the chapter's published ones,
        the ``arms`` whenever given."""
        return regenerate_command(
            self.name,
            profile,
            jobs=self.jobs,
            arms=arms,
            scorers=scorers if scorers and not set(scorers) <= set(self.published_scorers()) else None,
            seeds=seeds if seeds and not set(seeds) <= set(self.published_seeds(profile)) else None,
        )


def regenerate_command(
    chapter: str,
    profile: str = "cpu",
    *,
    jobs: int = 1,
    arms: Sequence[str] | None = None,
    scorers: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
) -> str:
    """``python -m ssa_book regenerate CHAPTER --profile P`` with the ``--jobs`` (when more
    than one), ``--arms``, ``--scorers`` and ``--seeds`` given (:meth:`Chapter.command` gives a
    chapter's own)."""
    parts = [PROG, chapter, "--profile", check_profile(profile)]
    if jobs > 1:
        parts += ["--jobs", str(jobs)]
    if arms:
        parts += ["--arms", *arms]
    if scorers:
        parts += ["--scorers", *scorers]
    if seeds:
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


def check_scorer_names(scorers: Iterable[str]) -> None:
    unknown = [name for name in scorers if name not in scorer_names()]
    if unknown:
        raise ValueError(
            f"--scorers: unknown scorer {', '.join(map(repr, unknown))}; choose from {', '.join(scorer_names())}"
        )


def check_seeds(seeds: Iterable[int]) -> tuple[int, ...]:
    seeds = tuple(seeds)
    negative = [seed for seed in seeds if seed < 0]
    if negative:
        raise ValueError(f"--seeds: a seed must be >= 0; got {', '.join(map(str, negative))}")
    return tuple(dict.fromkeys(seeds))


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

    chapter: str  # the name of its chapter
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


# ----------------------------------------------------------------------------------------------
# The studies.


@dataclasses.dataclass(frozen=True)
class Study:
    """One study of the book: everything the book's machinery reads of it, listed once in
    :mod:`ssa_book.studies`.

    ``rows(profile)`` gives one ledger row per claim of ``claims``, in their order, read from the
    result cache (it never trains)."""

    name: str
    chapters: tuple[Chapter, ...] = ()  # its chapters with cached results (their plans of runs)
    kinds: Mapping[str, RunKind] = dataclasses.field(default_factory=dict)  # how each kind of run it plans is computed
    readers: tuple[Reader, ...] = ()  # how the runs of its chapters are read and judged one by one
    claims: Mapping[str, PaperClaim] = dataclasses.field(
        default_factory=dict
    )  # the paper's claims it tests (keys of ssa_book.claims.ORDER)
    rows: Callable[[str], list[LedgerRow]] | None = None  # their verdicts, as rows of the ledger

    @property
    def packages(self) -> set[str]:
        """The packages (or top-level modules) of ``ssa_book`` that define the study's chapters,
        kinds of run, readers and rows: one, for a study kept apart in its own package, which the
        import contracts (``.importlinter``) name."""
        parts = [
            *map(type, self.chapters),
            *(kind.compute for kind in self.kinds.values()),
            *(kind.cached for kind in self.kinds.values() if kind.cached is not None),
            *map(type, self.readers),
            *([self.rows] if self.rows is not None else []),
        ]
        return {".".join(part.__module__.split(".")[:2]) for part in parts}


class Indexes(NamedTuple):
    """What the book's machinery reads of its studies, each part under its name."""

    studies: dict[str, Study]
    chapters: dict[str, Chapter]  # in the book's order of chapters
    kinds: dict[str, RunKind]
    readers: dict[str, Reader]  # in the book's order of chapters
    claims: dict[str, PaperClaim]  # in ssa_book.claims.ORDER, the front page's order


def index_studies(studies: Sequence[Study], order: Sequence[str]) -> Indexes:
    """The indexes of ``studies``: their chapters (in ``order``, the book's order of chapters),
    kinds of run, readers and claims, each part under its name. A part two studies name, a chapter
    outside ``order`` (or one of ``order`` no study defines), a claim outside (or missing from)
    :data:`ssa_book.claims.ORDER`, claims without the rows that judge them, a reader of a chapter
    its study does not define, and a study whose parts lie in more than one package are errors."""
    found = Indexes({}, {}, {}, {}, {})
    for study in studies:
        if study.name in found.studies:
            raise ValueError(f"study {study.name!r} is listed twice")
        names = [chapter.name for chapter in study.chapters]
        outside = [name for name in names if name not in order]
        if outside:
            raise ValueError(
                f"study {study.name!r}: chapter {', '.join(map(repr, outside))} has no place in ORDER, the book's order of its chapters"
            )
        unknown = [key for key in study.claims if key not in CLAIM_ORDER]
        if unknown:
            raise ValueError(
                f"study {study.name!r}: claims {', '.join(unknown)} not in ORDER ({', '.join(CLAIM_ORDER)})"
            )
        if bool(study.claims) != (study.rows is not None):
            raise ValueError(f"study {study.name!r}: claims and the rows that judge them go together")
        strays = [reader.chapter for reader in study.readers if reader.chapter not in names]
        if strays:
            raise ValueError(f"study {study.name!r}: a reader of chapter {', '.join(strays)}, which it does not define")
        if len(study.packages) > 1:
            raise ValueError(
                f"study {study.name!r}: its parts lie in {', '.join(sorted(study.packages))}; a study is one package"
            )
        for what, mine, index in (
            ("chapter", names, found.chapters),
            ("run kind", list(study.kinds), found.kinds),
            ("reader of chapter", [reader.chapter for reader in study.readers], found.readers),
            ("claim", list(study.claims), found.claims),
        ):
            taken = [name for name in mine if name in index]
            if taken:
                raise ValueError(
                    f"study {study.name!r}: {what} {', '.join(map(repr, taken))} is already another study's"
                )
        found.studies[study.name] = study
        found.chapters.update((chapter.name, chapter) for chapter in study.chapters)
        found.kinds.update(study.kinds)
        found.readers.update((reader.chapter, reader) for reader in study.readers)
        found.claims.update(study.claims)
    for what, index, wanted in (("chapter", found.chapters, order), ("claim", found.claims, CLAIM_ORDER)):
        left_out = [name for name in wanted if name not in index]
        if left_out:
            raise ValueError(f"no study defines the {what} {', '.join(map(repr, left_out))}")
    return Indexes(
        found.studies,
        {name: found.chapters[name] for name in order},
        found.kinds,
        {name: found.readers[name] for name in order if name in found.readers},
        {key: found.claims[key] for key in CLAIM_ORDER},
    )


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
        raise ValueError(
            f"records: no cached {record.scorer} run of seed {record.seed} to replace (cached seeds {seeds})"
        )
    group[seeds.index(record.seed)] = record
