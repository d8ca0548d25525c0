"""The box of at most three computed bullets that opens every experimental chapter: the chapter's
rows of the ledger in short, or its own findings (the study, max retrieval, the benchmark)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ssa_book.verdicts.words import NOT_RUN_YET, NOT_TESTED, TOO_FEW_SEEDS, claim_phrase, claim_word, counted_words
from ssa_book.verdicts.claim import Claim, MIN_PAIRS
from ssa_book.verdicts.verdict import Verdict
from ssa_book.claims import ORDER, LedgerRow, comparison_words, plural
from ssa_book.studies import PAPER, STUDIES
from ssa_book.icl.study import judging as study_judging, regimes as study_regimes
from ssa_book.retrieval import analysis as retrieval_analysis
from ssa_book.icl.tasks import get_task
from ssa_book.profiles import check_profile
from ssa_book.ledger import listed_phrases, reading_cache, seed_counts_text, short_name, training_regime
from ssa_book.front_page import BULLET_WORDS, confidence_words, note_at, sentence_case, words


# The box at the top of an experimental chapter: what it found, in at most BOX_BULLETS bullets of
# at most BULLET_WORDS words (the front page's limit), before its plan or setup.
BOX_BULLETS = 3


def fitting(variants: str | Sequence[str]) -> str | None:
    """The first of ``variants`` (a bullet, or its wordings longest first) of at most
    :data:`BULLET_WORDS` words; None when none fits."""
    return next(
        (text for text in ([variants] if isinstance(variants, str) else variants) if words(text) <= BULLET_WORDS), None
    )


def box_problems(bullets: Sequence[str]) -> list[str]:
    """What keeps a chapter's box from reading at a glance: no bullet, more than :data:`BOX_BULLETS`,
    one over :data:`BULLET_WORDS` words. An empty list: none."""
    problems = [] if bullets else ["no bullet"]
    if len(bullets) > BOX_BULLETS:
        problems.append(f"{len(bullets)} bullets (at most {BOX_BULLETS})")
    return problems + [
        f"a bullet of {words(bullet)} words (at most {BULLET_WORDS}): {bullet[:60]!r}..."
        for bullet in bullets
        if words(bullet) > BULLET_WORDS
    ]


def result_box(bullets: Sequence[str | Sequence[str]]) -> str:
    """A chapter's result box as Markdown bullets (glue it with ``{glue:md}``): each of ``bullets``
    a bullet or its wordings longest first, of which the first of at most :data:`BULLET_WORDS`
    words is shown. Raises ValueError, before anything is shown, on a box :func:`box_problems` finds wrong."""
    chosen = [fitting(variants) or (variants if isinstance(variants, str) else variants[-1]) for variants in bullets]
    problems = box_problems(chosen)
    if problems:
        raise ValueError(f"bullets make a result box with {'; '.join(problems)}")
    return "\n".join(f"- {bullet}" for bullet in chosen)


def chapter_rows(chapter: str, profile: str = "cpu", *, results_dir: str | Path | None = None) -> list[LedgerRow]:
    """The ledger's rows of the claims chapter ``chapter`` tests, in :data:`ssa_book.claims.ORDER`,
    read from the cache at ``profile`` (only the studies that test them are read)."""
    check_profile(profile)
    keys = [key for key in ORDER if PAPER[key].chapter == chapter]
    if not keys:
        raise ValueError(
            f"chapter must test a claim of the ledger ({', '.join(dict.fromkeys(PAPER[key].chapter for key in ORDER))}); "
            f"got {chapter!r}"
        )
    with reading_cache(results_dir):
        rows = [
            row
            for study in STUDIES.values()
            if set(study.claims) & set(keys)
            for row in study.rows(profile)
            if row.key in keys
        ]
    return sorted(rows, key=lambda row: ORDER.index(row.key))


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+(?=[A-Z\"“])", text) if part.strip()]


def row_findings(row: LedgerRow) -> list[list[str]]:
    """The bullets a chapter's box can say of ``row``, each as its wordings longest first: what the
    book found of the claim, its direction in the glossary's words and its seeds (then its regime
    where the words allow); the row's numbers (:attr:`LedgerRow.summary`); what goes with it
    (:attr:`LedgerRow.finding`), sentence by sentence. What the word rests on and what was set after
    reading (:meth:`LedgerRow.note`, short), a check the claim's parts do not all pass
    (:attr:`LedgerRow.parts_note`) and an interval that excludes the paper's effect
    (:func:`published_excluded_note`) stay beside the word in every wording."""
    word = claim_word(row.verdict)
    found = comparison_words(row)
    kept = "; ".join(
        filter(None, (row.note(short=True), row.parts_note, published_excluded_note(row)))
    )  # beside the word in every wording
    beside = "; ".join(filter(None, (found if found != word else "", kept)))
    said = claim_phrase(row.verdict) + (f" ({beside})" if beside else "")
    whose = "the book's test" if PAPER[row.key].beyond_paper else "the paper's claim"
    said = said.replace("the claim", whose, 1)
    name = f"**{short_name(row)}**"
    if row.seeds or row.seed_counts:
        seeds = seed_counts_text(row)
        regime = training_regime(row)
        shortest = f"{word} ({kept})" if kept else word
        # the parts' tally kept beside the word with the brief note (kinds of minimum left out), then its leading
        # clause alone (the small directions beside "no difference that matters" left out), before the word alone
        brief = "; ".join(filter(None, (note_at(row, 2), row.parts_note, published_excluded_note(row))))
        tallied = (
            [
                f"{name}: {word} ({'; '.join(filter(None, (tally, brief)))}); {seeds}."
                for tally in dict.fromkeys((found, _clauses(found)[-1].removesuffix(".")))
            ]
            if found and found != word
            else []
        )
        verdict = [
            f"{name}: {said}; {seeds}; {regime}." if regime else f"{name}: {said}; {seeds}.",
            f"{name}: {said}; {seeds}.",
            *([f"{name}: {word} ({beside}); {seeds}."] if beside else []),
            *tallied,
            f"{name}: {shortest}; {seeds}.",
        ]
    else:
        verdict = [f"{name}: {said}. {row.summary}".strip(), f"{name}: {said}."]
    bullets = [verdict]
    if (row.seeds or row.seed_counts) and row.summary:
        bullets.append(_clauses(row.summary))
    bullets += [_clauses(sentence_case(part)) for part in _sentences(row.finding)]
    return bullets


def published_excluded_note(row: LedgerRow) -> str:
    """Beside an open word whose interval excludes the paper's effect (:attr:`LedgerRow.published_excluded`),
    that effect and how far the softmax baseline is from the paper's (:attr:`LedgerRow.baseline`): "the 95%
    interval excludes the paper's gain of 0.103 nats per token; the decoder's softmax in-distribution
    perplexity is 261, the paper's 21.86" ("" where the interval does not exclude it)."""
    if not row.published_excluded or row.paper_effect is None:
        return ""
    units = row.headline[0][1].units if row.headline else ""
    text = f"the {confidence_words()} interval excludes the paper's gain of {row.paper_effect:.3g}{f' {units}' if units else ''}"
    if row.baseline is not None:
        what, ours, paper = row.baseline
        text += f"; {what} is {ours:.3g}, the paper's {paper:.4g}"
    return text


def _clauses(text: str) -> list[str]:
    """``text`` and its shorter wordings: its leading clauses (split at a "; " outside brackets, so
    that no wording leaves a bracket open), fewer and fewer."""
    parts, depth, start = [], 0, 0
    body = text.rstrip(".")
    for at, char in enumerate(body):
        depth += (char in "([") - (char in ")]")
        if depth == 0 and body.startswith("; ", at):
            parts.append(body[start:at])
            start = at + 2
    parts.append(body[start:])
    return [text] + ["; ".join(parts[:count]) + "." for count in range(len(parts) - 1, 0, -1)]


def chapter_findings(rows: Sequence[LedgerRow]) -> list[str]:
    """A chapter's box (:func:`result_box`) from its rows of the ledger (:func:`chapter_rows`): one
    bullet per row saying what the book found of its claim, then, while there is room, the rows'
    numbers and what goes with them, each only where it fits in :data:`BULLET_WORDS` words."""
    if not rows:
        raise ValueError("rows must hold at least one row of the ledger")
    candidates = [row_findings(row) for row in rows]
    bullets = [fitting(found[0]) or found[0][-1] for found in candidates]
    for extra in (bullet for found in candidates for bullet in found[1:]):
        if len(bullets) >= BOX_BULLETS:
            break
        if (text := fitting(extra)) is not None:
            bullets.append(text)
    return bullets[:BOX_BULLETS]


def study_findings(comparisons: Sequence, cache) -> list[list[str]]:
    """The powered study's box (:func:`result_box`), from its verdicts at ``cache``: each primary
    comparison's verdicts counted in the glossary's words with its paired seeds (and how many of its
    decided prompt-error verdicts the distribution-free check keeps), then the regime map's takeaway."""
    rows = study_judging.verdict_rows(comparisons, cache)
    checks = study_judging.bounded_checks(rows)
    bullets = []
    checked_above = set()  # the comparisons whose bullet, as the box shows it, states their distribution-free check
    for comparison in (comparison for comparison in comparisons if comparison.primary):
        judged = [
            row["verdict"]
            for row in rows
            if row["comparison"] == comparison.name and row["verdict"].outcome != NOT_TESTED
        ]
        if not judged:
            bullets.append([f"**{comparison.name}**: {NOT_RUN_YET}."])
            continue
        pairs = sorted({verdict.pairs for verdict in judged})
        tasks = f"{', '.join(get_task(task).title for task in comparison.tasks)}; " if len(comparison.tasks) > 1 else ""
        head = f"**{comparison.name}** ({tasks}{listed_phrases([str(count) for count in pairs])} paired seeds): "
        small = [direction for verdict in judged if (direction := verdict.small_direction())]
        counted = counted_words([(verdict.outcome, verdict.word()) for verdict in judged], of=" verdicts")
        counted += (
            f" ({', '.join(f'{direction} on {small.count(direction)}' for direction in dict.fromkeys(small))})"
            if small
            else ""
        )
        mine = [check for check in checks if check["comparison"] == comparison.name]
        caveat = f"; a distribution-free check {study_judging.bounded_check_words(mine)}" if mine else ""
        bullets.append([f"{head}{counted}{caveat}.", f"{head}{counted}."])
        if caveat and fitting(bullets[-1]) == bullets[-1][0]:
            checked_above.add(comparison.name)
    regime_rows = study_regimes.regime_rows(cache)
    # where the bullets above state the distribution-free check of every regime cell it does not keep, the
    # short form gives the seed note in its place
    takeaway, seeds_noted, short = (
        study_regimes.regime_takeaway(regime_rows, detail, seed_note, checked)
        for detail, seed_note, checked in ((True, True, ()), (False, True, checked_above), (False, False, ()))
    )
    takeaway, seeds_noted, short = (text[:1].lower() + text[1:] for text in (takeaway, seeds_noted, short))
    pairs = sorted({row["verdict"].pairs for row in regime_rows if row["verdict"].pairs})
    seeds = f"; {pairs[0]} to {pairs[-1]} paired seeds" if len(pairs) > 1 else ""
    endpoint = study_regimes.REGIME_MAP_ENDPOINT
    bullets.append(
        [
            f"**Training regimes** ({endpoint}{seeds}): {takeaway}",
            f"**Training regimes** ({endpoint}): {takeaway}",
            f"**Training regimes**: {takeaway}",
            f"**Training regimes**: {seeds_noted}",
            f"**Training regimes**: {short}",
        ]
    )
    return bullets[:BOX_BULLETS]


def retrieval_findings(
    accuracy: Mapping[str, Verdict],
    weight: Mapping[str, Verdict],
    original_accuracy: Mapping[str, Verdict],
    replication: Verdict,
    original_replication: Verdict,
) -> list[list[str]]:
    """Max retrieval's box (:func:`result_box`): SSA against softmax on the accuracy over the sets
    larger than in training in the short setup (with the top item's share) and in the original
    setup, and adaptive temperature against the gain its authors publish, each with its paired
    seeds, its estimate and, after them, where the chapter's fewest pairs were set after reading,
    that and what it read before them: one form in every bullet."""
    if "ssa" not in accuracy:
        raise ValueError(f"accuracy must judge SSA against softmax; it judges {', '.join(accuracy) or 'nothing'}")

    def noted(said: str, *judged: tuple[Claim, Verdict]) -> str:
        return "; ".join(filter(None, (said, retrieval_analysis.minimum_notes(judged))))

    def ssa(verdict: Verdict, estimate: bool = True, short: bool = False) -> str:
        return noted(_with_seeds(verdict, estimate, short), (retrieval_analysis.SHIFTED_ACCURACY, verdict))

    head = "**Short setup**, SSA against softmax on accuracy beyond the training sizes: "
    short_setup = accuracy["ssa"]
    bullets = [
        [f"{head}{ssa(short_setup)}; on the top item's share: {_with_seeds(weight['ssa'])}."] * ("ssa" in weight)
        + [f"{head}{ssa(short_setup)}.", f"{head}{ssa(short_setup, False)}.", f"{head}{ssa(short_setup, short=True)}."]
    ]
    if "ssa" in original_accuracy:
        original = original_accuracy["ssa"]
        bullets.append(
            [
                f"**Original setup**, the same comparison: {ssa(original)}.",
                f"**Original setup**, the same comparison: {ssa(original, False)}.",
                f"**Original setup**, the same comparison: {ssa(original, short=True)}.",
            ]
        )
    head = "**Adaptive temperature** against its authors' published gain: "
    claim = retrieval_analysis.ADAPTIVE_TEMPERATURE_REPLICATION
    setups = {"short": replication, "original": original_replication}
    judged = [(claim, verdict) for verdict in setups.values()]
    variants = [
        noted(
            "; ".join(f"{name} setup {_with_seeds(verdict, estimate, short)}" for name, verdict in setups.items()),
            *judged,
        )
        for estimate, short in ((True, False), (False, False), (False, True))
    ]
    if len({_with_seeds(verdict, False) for verdict in setups.values()}) == 1:  # one word for both: said once
        estimates = ", ".join(
            f"{name} {verdict.estimate()}" for name, verdict in setups.items() if verdict.interval is not None
        )
        variants[1:1] = [
            noted(", ".join(filter(None, (_with_seeds(replication, False), estimates))), *judged),
            noted(f"both setups {_with_seeds(replication, False)}", *judged),
        ]
    bullets.append([f"{head}{variant}." for variant in variants])
    return bullets


def _with_seeds(verdict: Verdict, estimate: bool = True, short: bool = False) -> str:
    """The verdict's words (``short``: without what would decide it) with its paired seeds (once),
    an exploratory one's out of the pairs the rule decides from ("exploratory (10 of 20 pairs)"),
    and, with ``estimate``, its effect and interval."""
    if verdict.outcome == TOO_FEW_SEEDS and not verdict.parts:
        said = f"{verdict.word()} ({verdict.pairs} of {max(MIN_PAIRS, verdict.no_effect_pairs)} pairs)"
    else:
        said = f"{verdict.label() if short else verdict.words()} ({plural(verdict.pairs, 'paired seed')})"
    return f"{said}, {verdict.estimate()}" if estimate and verdict.interval is not None else said


def performance_findings(checks: Sequence[Mapping], tokens: int) -> list[list[str]]:
    """The performance chapter's box (:func:`result_box`) from its targets' checks
    (:func:`ssa_book.bench.target_checks`): SSA's fast path against softmax at ``tokens`` tokens
    (time and peak memory), the whole in-context training run as its timed steps estimate it, and how
    many targets are met."""
    by_what = {(check["what"], check["tokens"]): check for check in checks}
    time, memory = by_what.get(("attention time", tokens)), by_what.get(("attention peak memory", tokens))
    if time is None:
        raise ValueError(
            f"tokens must be a length the checks measure ({sorted({c['tokens'] for c in checks if c['tokens']})}); got {tokens}"
        )
    bullets = [
        [
            f"**Attention, forward + backward**, {tokens:,} tokens, one measurement on this CPU: SSA takes {time['ratio']:.2f} "
            f"times softmax's time" + (f" and {memory['ratio']:.2f} times its peak memory." if memory else ".")
        ]
    ]
    training = by_what.get(("in-context training time", None))
    if training is not None:
        bullets.append(
            [
                f"**A whole in-context training run**, estimated from timed training steps weighted by the curriculum: "
                f"SSA's would take {training['ratio']:.2f} times softmax's time."
            ]
        )
    met = sum(check["met"] for check in checks)
    worst = max(checks, key=lambda check: check["ratio"] / check["at most"])
    where = f" at {worst['tokens']:,} tokens" if worst["tokens"] else ""
    bullets.append(
        [
            f"**Targets**: {met} of {len(checks)} met; the furthest, {worst['what']}{where}: {worst['ratio']:.2f} times "
            f"softmax's, against at most {worst['at most']:g}.",
            f"**Targets**: {met} of {len(checks)} met.",
        ]
    )
    return bullets
