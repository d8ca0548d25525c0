"""How often the rule names a direction that is not there, chapter by chapter, on each chapter's own data.

For every verdict a chapter judges from paired differences, :func:`ssa_book.verdicts.power.resampled_null_rates`
draws studies under a null made of that verdict's own per-seed differences recentred to a mean of zero
(for a yes-or-no outcome, its share of discordant pairs with both signs equally likely), and
judges each with the code that judges the real data (the rule without the chapter's control of
false discoveries, which can only lower the rate). A chapter's false direction rate at a number of
pairs is the largest over its verdicts: the worst case of its outcomes' shapes, not an average.

Its false "no difference that matters" rate (:func:`false_no_difference_rate`) is measured the same way
with the differences recentred to the claim's threshold instead of zero: the true effect is then as small
as an effect that matters can be, where the rule says "no difference that matters" most often.

    table = error_rate_table("cpu")     # one row per chapter: pairs used, rate there and at 6, 10, 20, 40
    largest(table)                      # the largest rate at the pairs each chapter uses, and where
    largest(table, NO_DIFFERENCE)       # the same for a false "no difference that matters"
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from ssa_book.verdicts.claim import MIN_PAIRS, Claim, no_effect_pairs
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judged as rule_judged
from ssa_book.verdicts.power import FALSE_DIRECTIONAL, resampled_null_rates
from ssa_book.verdicts.rule import decide
from ssa_book.verdicts.words import NEGLIGIBLE
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
USED = "at the pairs used"  # the table's column of the largest false direction rate at the pairs each verdict uses
NO_DIFFERENCE = 'false "no difference that matters" at the pairs used'  # and of the largest such rate there


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


def false_no_difference_rate(claim: Claim, differences: Sequence[float], pairs: int, draws: int = DRAWS, seed: int = 0) -> float:
    """How often the rule says "no difference that matters" of ``pairs`` pairs when the true effect is
    ``claim``'s threshold: ``draws`` studies resampled from a verdict's own paired ``differences`` (in
    the claim's direction, as :attr:`~ssa_book.verdicts.verdict.Verdict.differences` holds them)
    recentred to a mean of +threshold, and as many to -threshold, each judged by the code that judges
    the real data; the larger of the two rates. For a yes-or-no outcome the studies keep its share of
    discordant pairs (at least the threshold) with the signs split to give that mean. 0 below the
    pairs from which the rule may say it (:func:`~ssa_book.verdicts.claim.no_effect_pairs`). Seeded by
    ``np.random.default_rng(seed)``."""
    observed = np.asarray(differences, dtype=float)
    if observed.ndim != 1 or len(observed) < 2 or not np.isfinite(observed).all():
        raise ValueError(f"differences must be a flat sequence of at least 2 finite paired differences; got {differences!r}")
    for name, count in (("pairs", pairs), ("draws", draws)):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"{name} must be a whole number >= 1; got {count!r}")
    fewest = max(MIN_PAIRS, no_effect_pairs(claim))
    if pairs < fewest:
        return 0.0
    generator = np.random.default_rng(seed)
    rates = []
    for mean in (claim.threshold, -claim.threshold):
        if claim.binary:
            discordant = min(1.0, max(float(np.mean(observed != 0)), claim.threshold))
            draw = generator.random((draws, pairs))
            studies = np.where(draw < (discordant + mean) / 2, 1.0, np.where(draw < discordant, -1.0, 0.0))
        else:
            recentred = observed - observed.mean() + mean
            studies = recentred[generator.integers(0, len(recentred), size=(draws, pairs))]
        # a study whose estimate reaches the threshold cannot be "no difference that matters" (its interval holds the
        # estimate); leaving it out spares the signed-rank test the rule runs on directions, which changes no such word
        within = studies[np.abs(studies.mean(axis=1)) < claim.threshold]
        said = int(np.sum(decide(within, claim.threshold, claim.binary, fewest)[3] == NEGLIGIBLE)) if len(within) else 0
        rates.append(said / draws)
    return max(rates)


def error_rate_table(profile: str, draws: int = DRAWS, pair_counts: Sequence[int] = PAIR_COUNTS):
    """One row per chapter of :data:`CHAPTERS` with judged verdicts at ``profile``: how many
    verdicts were resampled, the pairs they use, the largest false direction rate at those pairs
    (with the verdict it comes from) and at each of ``pair_counts``, and the largest false "no
    difference that matters" rate at those pairs (:func:`false_no_difference_rate`, :data:`NO_DIFFERENCE`)."""
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
               USED: rate, "largest at": where}
        row.update({f"at {count} pairs": _largest(judged, count, draws)[0] for count in pair_counts})
        row[NO_DIFFERENCE] = max(false_no_difference_rate(claim, verdict.differences, verdict.pairs, draws) for claim, verdict in judged)
        rows.append(row)
    columns = ["chapter", "verdicts", "pairs used", USED, *(f"at {c} pairs" for c in pair_counts), "largest at", NO_DIFFERENCE]
    return pd.DataFrame(rows, columns=columns).set_index("chapter")


def largest(table, column: str = USED) -> tuple[float, str] | None:
    """The largest rate of ``column`` (:data:`USED`: false directions; :data:`NO_DIFFERENCE`) at the
    pairs each chapter uses, and its chapter (None for an empty table)."""
    if column not in (USED, NO_DIFFERENCE):
        raise ValueError(f"column must be {USED!r} or {NO_DIFFERENCE!r}; got {column!r}")
    if not len(table):
        return None
    chapter = table[column].idxmax()
    return float(table.loc[chapter, column]), str(chapter)


def _standard_error(rate: float, draws: int) -> float:
    """The Monte Carlo standard error of a rate from ``draws`` studies (of 1 / draws at a rate of 0)."""
    return math.sqrt(max(rate, 1 / draws) * (1 - rate) / draws)


def sentence(table, draws: int = DRAWS) -> str:
    """The front page's sentence: the largest rate, to one decimal, and what it covers: one verdict's
    false "better" or "worse" (not a rate over all the verdicts together, nor of a small direction said beside "no
    difference that matters"); then the largest false "no difference that matters" rate, with the true effect at
    the threshold; each rate from ``draws`` studies (the latter's two signs each from ``draws``)."""
    found = largest(table)
    if found is None:
        return "No chapter's verdicts are cached yet, so the rule's error rates are not measured."
    rate, chapter = found
    missed, where = largest(table, NO_DIFFERENCE)
    return (f"Under nulls made of each chapter's own per-seed differences, recentred to a mean of zero, the rule names a "
            f"direction that is not there at most {100 * rate:.1f}% of the time ({chapter}; Monte Carlo standard error "
            f"{100 * _standard_error(rate, draws):.1f} points) for any one verdict at the seeds its chapter uses: a rate per "
            f"verdict, not over the {int(table['verdicts'].sum())} verdicts of the {len(table)} chapters together, and of a false "
            f"\"better\" or \"worse\" only: it does not count the small direction said beside \"no difference that matters\" "
            f"(\"SSA slightly better\", \"SSA slightly worse\"); a check added after the results were read, from which the "
            f"fewest pairs of three chapters were then chosen, so it shows the rule's error at those pairs rather than "
            f"validating them independently. Recentred instead to the claim's threshold, the smallest effect that matters, "
            f"the rule says \"no difference that matters\" at most {100 * missed:.1f}% of the time ({where}; Monte Carlo "
            f"standard error {100 * _standard_error(missed, draws):.1f} points), again per verdict at the seeds its chapter "
            f"uses; a check added after the results were read, which moved no verdict.")


__all__ = ["CHAPTERS", "ChapterVerdicts", "DRAWS", "LIMIT", "NO_DIFFERENCE", "PAIR_COUNTS", "USED", "chapter_claims",
           "error_rate_table", "false_no_difference_rate", "largest", "sentence"]
