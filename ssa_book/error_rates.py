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

The pair minimums above the rule's own 6 (20 and 40 pairs in max retrieval and the encoder, 36 for a
direction on an outcome that flips) were set after the results were read, from these rates. So the rates
are also measured without them (:func:`ssa_book.claims.without_minimums`): the rates that set them, and that stand
behind the pages' "before it" notes.

    table = error_rate_table("cpu")     # one row per chapter: pairs used, rates there, and without the minimums
    largest(table)                      # the largest rate at the pairs each chapter uses, and where
    largest(table, NO_DIFFERENCE)       # the same for a false "no difference that matters"
    largest(table, WITHOUT_USED)        # the same for a false direction without the minimums
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from ssa_book.verdicts.claim import MIN_PAIRS, Claim, no_effect_pairs
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judged as rule_judged
from ssa_book.verdicts.power import FALSE_DIRECTIONAL, resampled_null_rates
from ssa_book.claims import DIRECTIONS, minimum_moved, plural, without_minimums
from ssa_book.verdicts.rule import decide
from ssa_book.verdicts.words import NEGLIGIBLE
from ssa_book.encoder import claims as encoder_claims, confirmation
from ssa_book.icl import claims as icl_claims
from ssa_book.icl.study import conduct as study_conduct, judging as study_judging
from ssa_book.leaderboard import claims as leaderboard_claims
from ssa_book.lm import claims as lm_claims
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError
from ssa_book.retrieval import analysis

DRAWS = 4000  # simulated studies per rate: Monte Carlo standard error at most sqrt(0.25 / 4000) = 0.8 points
PAIR_COUNTS = (6, 10, 20, 40)
LIMIT = 0.05  # the largest false direction rate a chapter may have at the pairs it uses
# What the rule aims at for a false "no difference that matters" with the true effect at the threshold: the
# interval lies within the threshold only when its end on the threshold's side falls short of it, which a
# two-sided interval of CONFIDENCE allows half of its (1 - CONFIDENCE) of the time.
NOMINAL_NO_DIFFERENCE = (1 - CONFIDENCE) / 2
USED = "at the pairs used"  # the table's column of the largest false direction rate at the pairs each verdict uses
NO_DIFFERENCE = 'false "no difference that matters" at the pairs used'  # and of the largest such rate there
DIRECTION_FROM = "fewest pairs for a direction"  # the table's column of the pair minimums each chapter's verdicts have
WITHOUT = "without the pair minimums set after reading"
WITHOUT_USED = f"at the pairs used, {WITHOUT}"  # the largest false direction rate with the rule's own minimum
WITHOUT_WHERE = f"largest {WITHOUT} at"
# Whether a pair minimum set after reading left exploratory a verdict of the row's that the rule read as a direction
# before it (:func:`moved_a_direction`), so that its pages say that direction ("... minimum set after reading, SSA worse
# before it"): the rows whose notes the rule without those minimums stands behind. A minimum that moved only
# "undecided" to "exploratory" leaves no direction to note.
NOTED = "a minimum set after reading moved a direction"
# The row of the readings the powered study's pages give of a comparison on its first seeds, before an amendment
# raised them: readings, not verdicts, so the verdicts the sentences count leave them out.
READINGS_BEFORE_RAISE = "powered study's readings before a raise of seeds"


def without_at(pairs: int) -> str:
    """The table's column of the largest false direction rate at ``pairs`` pairs, :data:`WITHOUT`."""
    return f"at {pairs} pairs, {WITHOUT}"


@dataclasses.dataclass(frozen=True)
class ChapterVerdicts:
    """A chapter and how to judge everything it judges from the cache (``judge(profile)``)."""

    chapter: str
    judge: Callable[[str], object]


def _in_context(profile: str) -> None:
    for row in (icl_claims.quantification_row, icl_claims.linear_row, icl_claims.collapse_row):
        row(profile)


def _study(profile: str) -> None:
    cache = study_conduct.StudyCache(profile, train=False)
    study_judging.verdict_rows(study_conduct.plan(profile, cache=cache), cache)


def _readings_before_raise(profile: str) -> None:
    cache = study_conduct.StudyCache(profile, train=False)
    for name in study_judging.RAISED_AFTER_READING:
        compared = study_conduct.comparison(name, profile)
        for task in compared.tasks if compared is not None else ():
            for endpoint in compared.endpoints:
                study_judging.read_before_raise(cache, name, task, endpoint)


def _max_retrieval(profile: str) -> None:
    analysis.READER.verdicts(analysis.READER.cached_runs(profile), profile)


def _leaderboard(profile: str) -> None:
    leaderboard_claims.leaderboard_rows(profile)


def _decoder(profile: str) -> None:
    lm_claims.decoder_rows(profile)


def _encoder(profile: str) -> None:
    encoder_claims.encoder_rows(profile)
    confirmation.judge(confirmation.cached_runs(profile))


# In this order: a verdict two chapters judge (the in-context rows quote the powered study's, and their
# readings before a raise of seeds) counts for the first.
CHAPTERS = (
    ChapterVerdicts("powered in-context study", _study),
    ChapterVerdicts(READINGS_BEFORE_RAISE, _readings_before_raise),
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


def false_no_difference_rate(
    claim: Claim, differences: Sequence[float], pairs: int, draws: int = DRAWS, seed: int = 0
) -> float:
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
        raise ValueError(
            f"differences must be a flat sequence of at least 2 finite paired differences; got {differences!r}"
        )
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


def error_rate_table(profile: str, draws: int = DRAWS, pair_counts: Sequence[int] | None = PAIR_COUNTS):
    """One row per chapter of :data:`CHAPTERS` with judged verdicts at ``profile``: how many
    verdicts were resampled, the pairs they use, the fewest pairs from which they may name a direction
    (:data:`DIRECTION_FROM`), the largest false direction rate at those pairs (with the verdict it comes
    from), the largest false "no difference that matters" rate at those pairs (:func:`false_no_difference_rate`,
    :data:`NO_DIFFERENCE`), and the largest false direction rate :data:`WITHOUT` (:func:`ssa_book.claims.without_minimums`)
    at those pairs (:data:`WITHOUT_USED`, with its verdict) and at each of ``pair_counts`` (:func:`without_at`), and
    whether such a minimum moved a direction of the row's (:data:`NOTED`);
    ``pair_counts=None``: the rule as applied only; ``pair_counts=()``: with :data:`WITHOUT_USED`, all the front
    page's sentences read (:func:`sentence`, :func:`notes_sentence`)."""
    import pandas as pd

    rows, seen = [], set()
    for chapter in CHAPTERS:
        judged = [
            (claim, verdict)
            for claim, verdict in chapter_claims(chapter, profile)
            if (verdict.claim, verdict.differences) not in seen
        ]
        seen.update((verdict.claim, verdict.differences) for _, verdict in judged)
        if not judged:
            continue
        rate, where = _largest(judged, None, draws)
        used = sorted({verdict.pairs for _, verdict in judged})
        row = {
            "chapter": chapter.chapter,
            "verdicts": len(judged),
            "pairs used": f"{used[0]}" if len(used) == 1 else f"{used[0]}-{used[-1]}",
            DIRECTION_FROM: ", ".join(map(str, sorted({no_effect_pairs(claim) for claim, _ in judged}))),
            USED: rate,
            "largest at": where,
            NO_DIFFERENCE: max(
                false_no_difference_rate(claim, verdict.differences, verdict.pairs, draws) for claim, verdict in judged
            ),
        }
        if pair_counts is not None:
            without = [(without_minimums(claim), verdict) for claim, verdict in judged]
            # a claim without such a minimum is judged as it is: its rate at the pairs used is already measured
            moved = [(bare, verdict) for (claim, verdict), (bare, _) in zip(judged, without) if bare != claim]
            row[WITHOUT_USED], row[WITHOUT_WHERE] = _largest(moved, None, draws) if moved else (0.0, "")
            if rate >= row[WITHOUT_USED]:
                row[WITHOUT_USED], row[WITHOUT_WHERE] = rate, where
            row.update({without_at(count): _largest(without, count, draws)[0] for count in pair_counts})
            row[NOTED] = moved_a_direction(judged)
        rows.append(row)
    columns = ["chapter", "verdicts", "pairs used", DIRECTION_FROM, USED, "largest at", NO_DIFFERENCE]
    if pair_counts is not None:
        columns += [WITHOUT_USED, *(without_at(count) for count in pair_counts), WITHOUT_WHERE, NOTED]
    return pd.DataFrame(rows, columns=columns).set_index("chapter")


def moved_a_direction(judged: Sequence[tuple[Claim, Verdict]]) -> bool:
    """Whether a pair minimum set after reading left a verdict of ``judged`` exploratory that the rule
    read as "better" or "worse" before it (:func:`ssa_book.claims.minimum_moved`)."""
    return any((moved := minimum_moved(claim, verdict)) and moved[1].outcome in DIRECTIONS for claim, verdict in judged)


def largest(table, column: str = USED) -> tuple[float, str] | None:
    """The largest rate of ``column`` (:data:`USED`: false directions; :data:`NO_DIFFERENCE`; :data:`WITHOUT_USED`)
    at the pairs each chapter uses, and its chapter (None for an empty table)."""
    if column not in (USED, NO_DIFFERENCE, WITHOUT_USED):
        raise ValueError(f"column must be {USED!r}, {NO_DIFFERENCE!r} or {WITHOUT_USED!r}; got {column!r}")
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
    the threshold, beside the rate the rule aims at there (:data:`NOMINAL_NO_DIFFERENCE`); each rate from ``draws``
    studies (the latter's two signs each from ``draws``)."""
    found = largest(table)
    if found is None:
        return "No chapter's verdicts are cached yet, so the rule's error rates are not measured."
    rate, chapter = found
    missed, where = largest(table, NO_DIFFERENCE)
    chapters = table.drop(index=READINGS_BEFORE_RAISE, errors="ignore")
    readings = int(table["verdicts"].sum() - chapters["verdicts"].sum())
    return (
        f"Under nulls made of each chapter's own per-seed differences, recentred to a mean of zero, the rule names a "
        f"direction that is not there at most {100 * rate:.1f}% of the time ({chapter}; Monte Carlo standard error "
        f"{100 * _standard_error(rate, draws):.1f} points) for any one verdict at the seeds its chapter uses: a rate per "
        f"verdict, not over the {int(chapters['verdicts'].sum())} verdicts of the {len(chapters)} chapters together"
        + (f" (nor the {plural(readings, 'reading')} before a raise of seeds)" if readings else "")
        + ", and of a false "
        f'"better" or "worse" only: it does not count the small direction said beside "no difference that matters" '
        f'("SSA slightly better", "SSA slightly worse"); a check added after the results were read, from which the '
        f"fewest pairs of three chapters were then chosen, so it shows the rule's error at those pairs rather than "
        f"validating them independently. Recentred instead to the claim's threshold, the smallest effect that matters, "
        f'the rule says "no difference that matters" at most {100 * missed:.1f}% of the time ({where}; Monte Carlo '
        f"standard error {100 * _standard_error(missed, draws):.1f} points), {_beside_nominal(missed, draws)}, again per "
        f"verdict at the seeds its chapter uses; a check added after the results were read, which moved no verdict."
    )


def _rates_listed(rates) -> str:
    """ "encoder (9.4%), max retrieval (7.4%)": each chapter of ``rates`` (a column of the table) with its rate, largest first."""
    return ", ".join(f"{chapter} ({100 * rate:.1f}%)" for chapter, rate in rates.sort_values(ascending=False).items())


def limit_sentence(table, draws: int = DRAWS) -> str:
    """Under the reproducing page's table: which of its false direction rates at the pairs used exceed
    :data:`LIMIT`, and which false "no difference that matters" rates exceed the :data:`NOMINAL_NO_DIFFERENCE`
    the rule aims at, each by more than two Monte Carlo standard errors (:func:`_above`, the front page's
    yardstick), each row with its rate; where none does, the largest with its row and standard error."""
    if not len(table):
        return ""
    directions = table[USED][[_above(rate, LIMIT, draws) for rate in table[USED]]]
    rate, chapter = largest(table)
    said = [
        f"Above {LIMIT:.0%} at the seed counts used (by more than two Monte Carlo standard errors), the rate of false "
        f"directions: {_rates_listed(directions)}. There a verdict that names a direction is less certain than the "
        f"rule's {CONFIDENCE:.0%} suggests."
        if len(directions)
        else f"Every row's rate of false directions at the seed counts it uses stays within two Monte Carlo standard "
        f"errors of {LIMIT:.0%}, or below (largest {100 * rate:.1f}%, {chapter}; Monte Carlo standard error "
        f"{100 * _standard_error(rate, draws):.1f} points)."
    ]
    missed, where = largest(table, NO_DIFFERENCE)
    above = table[NO_DIFFERENCE][[_above(rate, NOMINAL_NO_DIFFERENCE, draws) for rate in table[NO_DIFFERENCE]]]
    nominal = f"the {100 * NOMINAL_NO_DIFFERENCE:.1f}% the rule aims at"
    said.append(
        f'The rate of a false "no difference that matters" exceeds {nominal} (by more than two Monte Carlo standard '
        f"errors) in {len(above)} of the {len(table)} rows: {_rates_listed(above)}."
        if len(above)
        else f'The rate of a false "no difference that matters" stays within two Monte Carlo standard errors of, or below, '
        f"{nominal} (largest {100 * missed:.1f}%, {where})."
    )
    return " ".join(said)


def _above(rate: float, limit: float, draws: int) -> bool:
    """Whether ``rate``, a rate from ``draws`` studies (of each sign, for a false "no difference that
    matters"), is above ``limit`` by more than two Monte Carlo standard errors."""
    return rate - limit > 2 * _standard_error(rate, draws)


def _beside_nominal(rate: float, draws: int) -> str:
    """``rate``, a false "no difference that matters" rate from ``draws`` studies of each sign, beside
    :data:`NOMINAL_NO_DIFFERENCE`: above it only by more than two Monte Carlo standard errors."""
    nominal = (
        f"the {100 * NOMINAL_NO_DIFFERENCE:.1f}% the rule aims at there (a {CONFIDENCE:.0%} interval within the "
        f"threshold: half of the {1 - CONFIDENCE:.0%} it leaves out)"
    )
    if _above(rate, NOMINAL_NO_DIFFERENCE, draws):
        return f"{rate / NOMINAL_NO_DIFFERENCE:.1f} times {nominal}"
    return f"within two Monte Carlo standard errors of, or below, {nominal}"


def _noted(table):
    """The rows of ``table`` where a pair minimum set after reading moved a direction (:data:`NOTED`): the rows the
    notes "... minimum set after reading, ... before it" come from (none for a table without that column)."""
    return table[table[NOTED].astype(bool)] if NOTED in table.columns else table.iloc[0:0]


def _without_above_applied(table) -> tuple[float, str] | None:
    """The largest false direction rate :data:`WITHOUT` at the pairs used, and its row, where it is
    above every rate of the rule as applied (so that it comes from verdicts below a minimum set after
    reading, where the two rules differ); None otherwise, or for a table without that column."""
    if WITHOUT_USED not in table.columns:
        return None
    found, applied = largest(table, WITHOUT_USED), largest(table, USED)
    return found if found is not None and found[0] > applied[0] else None


# What the front page says beside :func:`sentence` of the rule behind the notes "... minimum set after reading,
# ... before it": its rates in the rows those notes come from (:func:`_noted`), largest first, and the largest's
# Monte Carlo standard error fill the fields.
NOTES_RATE = (
    'The notes "... minimum set after reading, ... before it" give what the rule said without the pair minimums set '
    "after reading, a rule that names a direction that is not there, at the seeds used, up to {rate} of the time "
    "where those minimums moved a direction: {listed}, each the largest over its row's own verdicts at the seeds "
    "they use (Monte Carlo standard error of the largest {error} points; at other seed counts the rates differ: "
    "the reproducing page)."
)
# What the glossary says beside "exploratory", of any verdict below a minimum set after reading
# (:func:`_without_above_applied`): the rate and its row fill the fields. A false direction needs the interval to
# miss the true difference, so that rate is a share of misses at least.
NOMINAL_INTERVAL = (
    f"Its {CONFIDENCE:.0%} is nominal: with fewer pairs than a minimum set after reading, the book's resampled "
    "nulls had the rule name a false direction, which needs the interval to miss the true difference, up to "
    f"{{rate}} of the time ({{chapter}}), where a {CONFIDENCE:.0%} interval misses it {1 - CONFIDENCE:.0%} of the time."
)


def notes_sentence(table, draws: int = DRAWS) -> str:
    """:data:`NOTES_RATE` with the :data:`WITHOUT_USED` rates of the rows of ``table`` the notes come from
    (:func:`_noted`), each with its row, and the largest's Monte Carlo standard error from ``draws`` studies
    ("" where none of those rates is larger than the rule's as applied, or they are not measured:
    ``error_rate_table(..., pair_counts=None)``)."""
    noted, applied = _noted(table), largest(table, USED)
    rates = noted[WITHOUT_USED] if len(noted) else None
    if rates is None or float(rates.max()) <= applied[0]:
        return ""
    rate = float(rates.max())
    return NOTES_RATE.format(
        rate=f"{100 * rate:.1f}%",
        listed=_rates_listed(rates),
        error=f"{100 * _standard_error(rate, draws):.1f}",
    )


def nominal_interval_sentence(table) -> str:
    """:data:`NOMINAL_INTERVAL`, the glossary's, with the largest :data:`WITHOUT_USED` rate of ``table`` and its
    row ("" where it is no larger than the rule's as applied, or is not measured)."""
    found = _without_above_applied(table)
    if found is None:
        return ""
    rate, chapter = found
    return NOMINAL_INTERVAL.format(rate=f"{100 * rate:.1f}%", chapter=chapter)


def without_minimums_sentence(table) -> str:
    """Under the reproducing page's second table: the largest false direction rate :data:`WITHOUT` at
    the pairs each chapter uses, its chapter and verdict, and every chapter above :data:`LIMIT` there."""
    found = largest(table, WITHOUT_USED)
    if found is None:
        return ""
    rate, chapter = found
    above = table[WITHOUT_USED][table[WITHOUT_USED] > LIMIT]
    return (
        f"With the rule's own {MIN_PAIRS} pairs in place of the minimums set after reading, the rule names a false "
        f"direction at the pairs used up to {100 * rate:.1f}% of the time ({chapter}: {table.loc[chapter, WITHOUT_WHERE]})"
        + (
            f"; above {LIMIT:.0%} in {len(above)} of the {len(table)} rows: {_rates_listed(above)}"
            if len(above)
            else ""
        )
        + ". These rates led to those minimums"
        + (
            f"; in the rows where those minimums moved a direction ({', '.join(_noted(table).index)}) they are the error rates "
            'of the rule behind the pages\' notes "... minimum set after reading, ... before it".'
            if len(_noted(table))
            else "."
        )
    )


def page_tables(table):
    """``table`` as the reproducing page shows it, rates in percent: the rule as applied (the pairs,
    the fewest for a direction, both rates at the pairs used), and the rule :data:`WITHOUT`."""
    shown = table.copy()
    for column in [c for c in shown.columns if c.startswith("at ")] + [NO_DIFFERENCE]:
        shown[column] = shown[column].map(lambda rate: f"{100 * rate:.1f}%")
    applied = shown[["verdicts", "pairs used", DIRECTION_FROM, USED, "largest at", NO_DIFFERENCE]]
    without = {
        column: column.removesuffix(f", {WITHOUT}") for column in shown.columns if column.endswith(f", {WITHOUT}")
    }
    return applied, shown[["pairs used", *without, WITHOUT_WHERE]].rename(
        columns={**without, WITHOUT_WHERE: "largest at"}
    )


__all__ = [
    "CHAPTERS",
    "ChapterVerdicts",
    "DIRECTION_FROM",
    "DRAWS",
    "LIMIT",
    "MIN_PAIRS",
    "NOMINAL_NO_DIFFERENCE",
    "NO_DIFFERENCE",
    "PAIR_COUNTS",
    "USED",
    "WITHOUT",
    "WITHOUT_USED",
    "WITHOUT_WHERE",
    "chapter_claims",
    "error_rate_table",
    "NOMINAL_INTERVAL",
    "NOTED",
    "NOTES_RATE",
    "READINGS_BEFORE_RAISE",
    "false_no_difference_rate",
    "largest",
    "limit_sentence",
    "moved_a_direction",
    "nominal_interval_sentence",
    "notes_sentence",
    "page_tables",
    "sentence",
    "without_at",
    "without_minimums",
    "without_minimums_sentence",
]
