"""How often the rule names a direction that is not there, chapter by chapter, on each chapter's own data.

For every verdict a chapter judges from paired differences, :func:`ssa_book.verdicts.power.resampled_null_rates`
draws studies under a null made of that verdict's own per-seed differences recentred to a mean of zero
(for a yes-or-no outcome, its share of discordant pairs with both signs equally likely), and
judges each with the code that judges the real data (the rule without the chapter's control of
false discoveries, which can only lower the rate). A chapter's false direction rate at a number of
pairs is the largest over its verdicts: the worst case of its outcomes' shapes, not an average.

    table = error_rate_table("cpu")     # one row per chapter: pairs used, rate there and at 6, 10, 20, 40
    largest(table)                      # the largest rate at the pairs each chapter uses, and where
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from ssa_book.verdicts.claim import Claim
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judged as rule_judged
from ssa_book.verdicts.power import FALSE_DIRECTIONAL, resampled_null_rates
from ssa_book.encoder import claims as encoder_claims, confirmation
from ssa_book.icl import claims as icl_claims, study
from ssa_book.leaderboard import claims as leaderboard_claims
from ssa_book.lm import claims as lm_claims
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError
from ssa_book.retrieval import analysis

DRAWS = 4000  # simulated studies per rate: Monte Carlo standard error at most sqrt(0.25 / 4000) = 0.8 points
PAIR_COUNTS = (6, 10, 20, 40)
LIMIT = 0.05  # the largest false direction rate a chapter may have at the pairs it uses


@dataclasses.dataclass(frozen=True)
class ChapterVerdicts:
    """A chapter and how to judge everything it judges from the cache (``judge(profile)``)."""

    chapter: str
    judge: Callable[[str], object]


def _in_context(profile: str) -> None:
    for row in (icl_claims.quantification_row, icl_claims.linear_row, icl_claims.collapse_row):
        row(profile)


def _study(profile: str) -> None:
    cache = study.StudyCache(profile, train=False)
    study.verdict_rows(study.plan(profile, cache=cache), cache)


def _max_retrieval(profile: str) -> None:
    analysis.READER.verdicts(analysis.READER.cached_runs(profile), profile)


def _leaderboard(profile: str) -> None:
    leaderboard_claims.leaderboard_rows(profile)


def _decoder(profile: str) -> None:
    lm_claims.decoder_rows(profile)


def _encoder(profile: str) -> None:
    encoder_claims.encoder_rows(profile)
    confirmation.judge(confirmation.cached_runs(profile))


# In this order: a verdict two chapters judge (the in-context rows quote the powered study's) counts
# for the first.
CHAPTERS = (
    ChapterVerdicts("powered in-context study", _study),
    ChapterVerdicts("in-context chapters", _in_context),
    ChapterVerdicts("max retrieval", _max_retrieval),
    ChapterVerdicts("leaderboard and alternatives", _leaderboard),
    ChapterVerdicts("decoder", _decoder),
    ChapterVerdicts("encoder", _encoder),
)


def chapter_claims(chapter: ChapterVerdicts, profile: str) -> list[tuple[Claim, Verdict]]:
    """Every ``(claim, verdict)`` ``chapter`` judges from at least two paired differences at
    ``profile``, each once; empty when its runs are not cached."""
    with cache_required(), rule_judged() as found:
        try:
            chapter.judge(profile)
        except CacheMissError:
            return []
    unique = {}
    for record in found:
        if record.kind == "judged" and len(record.verdict.differences) >= 2:
            unique.setdefault((record.claim, record.verdict.differences), (record.claim, record.verdict))
    return list(unique.values())


def _largest(judged: Sequence[tuple[Claim, Verdict]], pairs: int | None, draws: int) -> tuple[float, str]:
    """The largest false direction rate over ``judged`` with ``pairs`` pairs (None: each verdict's own), and its claim."""
    worst, where = 0.0, ""
    for claim, verdict in judged:
        rate = resampled_null_rates(claim, verdict.differences, pairs or verdict.pairs, simulations=draws)
        if rate[FALSE_DIRECTIONAL] > worst or not where:
            worst, where = rate[FALSE_DIRECTIONAL], verdict.claim
    return worst, where


def error_rate_table(profile: str, draws: int = DRAWS, pair_counts: Sequence[int] = PAIR_COUNTS):
    """One row per chapter of :data:`CHAPTERS` with judged verdicts at ``profile``: how many
    verdicts were resampled, the pairs they use, the largest false direction rate at those pairs
    (with the verdict it comes from) and at each of ``pair_counts``."""
    import pandas as pd

    rows, seen = [], set()
    for chapter in CHAPTERS:
        judged = [(claim, verdict) for claim, verdict in chapter_claims(chapter, profile)
                  if (verdict.claim, verdict.differences) not in seen]
        seen.update((verdict.claim, verdict.differences) for _, verdict in judged)
        if not judged:
            continue
        used = sorted({verdict.pairs for _, verdict in judged})
        rate, where = _largest(judged, None, draws)
        row = {"chapter": chapter.chapter, "verdicts": len(judged),
               "pairs used": f"{used[0]}" if len(used) == 1 else f"{used[0]}-{used[-1]}",
               "at the pairs used": rate, "largest at": where}
        row.update({f"at {count} pairs": _largest(judged, count, draws)[0] for count in pair_counts})
        rows.append(row)
    columns = ["chapter", "verdicts", "pairs used", "at the pairs used", *(f"at {c} pairs" for c in pair_counts), "largest at"]
    return pd.DataFrame(rows, columns=columns).set_index("chapter")


def largest(table) -> tuple[float, str] | None:
    """The largest rate at the pairs each chapter uses, and its chapter (None for an empty table)."""
    if not len(table):
        return None
    chapter = table["at the pairs used"].idxmax()
    return float(table.loc[chapter, "at the pairs used"]), str(chapter)


def sentence(table, draws: int = DRAWS) -> str:
    """The front page's sentence: the largest rate, to one decimal, and what it covers: one verdict's
    false "better" or "worse" (not a rate over all the verdicts together, nor of a small direction said beside "no
    difference that matters", nor of a false "no difference that matters")."""
    found = largest(table)
    if found is None:
        return "No chapter's verdicts are cached yet, so the rule's error rates are not measured."
    rate, chapter = found
    error = math.sqrt(max(rate, 1 / draws) * (1 - rate) / draws)
    return (f"Under nulls made of each chapter's own per-seed differences, recentred to a mean of zero, the rule names a "
            f"direction that is not there at most {100 * rate:.1f}% of the time ({chapter}; Monte Carlo standard error "
            f"{100 * error:.1f} points) for any one verdict at the seeds its chapter uses: a rate per verdict, not over the "
            f"{int(table['verdicts'].sum())} verdicts of the {len(table)} chapters together, and of a false \"better\" or "
            f"\"worse\" only: it does not count the small direction said beside \"no difference that matters\" (\"SSA "
            f"slightly better\"), nor a false \"no difference that matters\"; a check added after the results were read, from which the fewest "
            f"pairs of three chapters were then chosen, so it shows the rule's error at those pairs rather than validating "
            f"them independently.")


__all__ = ["CHAPTERS", "ChapterVerdicts", "DRAWS", "LIMIT", "PAIR_COUNTS", "chapter_claims", "error_rate_table", "largest",
           "sentence"]
