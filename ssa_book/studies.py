"""Every study of the book, listed once (:data:`STUDIES`), and what the book's machinery reads of
them, derived from that list (:func:`ssa_book.chapters.index_studies`): the chapters with cached
results in the book's order (:data:`CHAPTERS`, :data:`ORDER`), how each kind of run is computed
(:data:`KINDS`), how the runs of a chapter are read and judged one by one (:data:`READERS`) and
the paper's claims (:data:`PAPER`, in :data:`ssa_book.claims.ORDER`).

The command line (:mod:`ssa_book.regenerate`, :mod:`ssa_book.runner`), the size tables
(:mod:`ssa_book.sizes`), the ledger (:mod:`ssa_book.ledger`), the reproducing page
(:mod:`ssa_book.reproduce`) and the reruns (:mod:`ssa_book.reruns`) read the studies here: a new
study is named in :data:`STUDIES` and in the import contracts (``.importlinter``), which
``tests/test_import_graph.py`` checks against this list.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from ssa_book import bench, theory
from ssa_book.alternatives import comparison
from ssa_book.chapters import Chapter, Run, Study, check_scorer_names, check_seeds, index_studies
from ssa_book.encoder import claims as encoder_claims, experiment as encoder_experiment
from ssa_book.icl import claims as icl_claims, experiments as icl_experiments
from ssa_book.icl.study import conduct
from ssa_book.leaderboard import board, claims as leaderboard_claims
from ssa_book.lm import claims as decoder_claims, experiment as decoder_experiment
from ssa_book.profiles import check_profile
from ssa_book.results.cache import cache_required, entries_read
from ssa_book.results.errors import CacheMissError
from ssa_book.results.store import StoredEntry
from ssa_book.retrieval import analysis as retrieval_analysis, experiment as retrieval_experiment

ALL = "all"
# The chapters in the book's order: the order of `regenerate --help`, of `regenerate all` and of
# every table of chapters.
ORDER = (
    "icl_quantification",
    "icl_linear",
    "icl_collapse",
    "alternative_scorers",
    "icl_study",
    "decoder",
    "encoder",
    "performance",
    "max_retrieval",
    "leaderboard",
)

STUDIES, CHAPTERS, KINDS, READERS, PAPER = index_studies(
    (
        Study(
            "in_context",
            chapters=(*icl_experiments.ICL_CHAPTERS, conduct.CHAPTER),
            kinds={**icl_experiments.KINDS, **conduct.KINDS},
            readers=(icl_experiments.READER,),
            claims=icl_claims.CLAIMS,
            rows=icl_claims.in_context_rows,
        ),
        Study("alternatives", chapters=(comparison.CHAPTER,), kinds=comparison.KINDS),
        Study(
            "decoder",
            chapters=(decoder_experiment.CHAPTER,),
            kinds=decoder_experiment.KINDS,
            claims=decoder_claims.CLAIMS,
            rows=decoder_claims.decoder_rows,
        ),
        Study(
            "encoder",
            chapters=(encoder_experiment.CHAPTER,),
            kinds=encoder_experiment.KINDS,
            readers=(encoder_experiment.READER,),
            claims=encoder_claims.CLAIMS,
            rows=encoder_claims.encoder_rows,
        ),
        Study("performance", chapters=(bench.CHAPTER,), kinds=bench.KINDS),
        Study(
            "max_retrieval",
            chapters=(retrieval_experiment.CHAPTER,),
            kinds=retrieval_experiment.KINDS,
            readers=(retrieval_analysis.READER,),
        ),
        Study(
            "leaderboard",
            chapters=(board.CHAPTER,),
            kinds=board.KINDS,
            claims=leaderboard_claims.CLAIMS,
            rows=leaderboard_claims.leaderboard_rows,
        ),
        Study("theory", claims=theory.CLAIMS, rows=theory.theorem_rows),
    ),
    ORDER,
)


def chapter(name: str) -> Chapter:
    if name not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {name!r}")
    return CHAPTERS[name]


def plan(
    name: str,
    profile: str = "cpu",
    *,
    seeds: Sequence[int] | None = None,
    scorers: Sequence[str] | None = None,
    arms: Sequence[str] | None = None,
) -> list[Run]:
    """The runs of chapter ``name`` (or ``all``: every chapter's, each run once), in the order
    they are computed. ``seeds``/``scorers`` default to each chapter's published ones; with
    ``all`` each chapter takes the given scorers it accepts, and a chapter that accepts none of
    them is left out. ``arms``: only these arms of the powered study (icl_study only)."""
    check_profile(profile)
    seeds = None if seeds is None else check_seeds(seeds)
    if arms is not None:
        if name not in CHAPTERS or not CHAPTERS[name].has_arms:
            raise ValueError(
                f"--arms: only the study chapters ({', '.join(n for n, c in CHAPTERS.items() if c.has_arms)}) "
                f"have arms; {name} has none"
            )
        each = CHAPTERS[name]
        return each.runs(
            profile,
            seeds if seeds is not None else each.published_seeds(profile),
            each.published_scorers() if scorers is None else each.check_scorers(scorers),
            arms=tuple(dict.fromkeys(arms)),
        )
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
        for run in each.runs(
            profile,
            seeds if seeds is not None else each.published_seeds(profile),
            chosen if chosen is not None else each.published_scorers(),
        ):
            known = runs.get(run.key)
            runs[run.key] = run if known is None else dataclasses.replace(known, chapters=known.chapters + run.chapters)
    return list(runs.values())


def read_run(run: Run, profile: str, device: str = "auto") -> list[StoredEntry] | None:
    """The cache entries ``run`` reads, each valid for its config, or ``None`` when one is
    missing: its kind's own function reads them with the cache required, so exactly what the
    chapter would find. A kind whose entry is found another way (:attr:`ssa_book.chapters.RunKind.cached`)
    gives ``[]`` when it is cached."""
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
