"""The claims ledger: each headline claim of the paper, the paper's figure, ours, and a verdict.

    rows = ledger(profile="cpu")       # one LedgerRow per claim, read from the result cache
    summary_markdown(rows)             # the front page's table: claim, verdict, one short sentence
    ledger_markdown(rows)              # the full table: the paper's figure and ours, claim by claim
    ledger_frame(rows)                 # the same as a pandas DataFrame

Nothing here trains or evaluates a model. Every study names the paper's claims it tests, with
the function that gives their rows (:class:`ssa_book.chapters.Study`); the ledger iterates the
list (:data:`ssa_book.studies.STUDIES`) and puts the rows in :data:`ssa_book.claims.ORDER`, with the result cache *required* (as CI does), so
a claim whose results are not cached yet is "not tested", with the command that creates them; it
becomes a verdict as soon as that chapter commits its results, without any edit here. The
theorems are the exception: they are checked live with :mod:`ssa_book.theory`, in seconds.
:mod:`ssa_book.front_page` words the rows for the front page, :mod:`ssa_book.result_boxes` for the
box that opens each chapter.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ssa_book import error_rates, paths
from ssa_book.verdicts.words import (
    DOES_NOT_HOLD,
    HOLDS,
    HOLDS_IN_PART,
    MIXED,
    NEGLIGIBLE,
    NOT_LEARNED,
    NOT_TESTED,
    OPEN,
    PREMISE_NOT_SHOWN,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
    claim_word,
)
from ssa_book.verdicts.glossary import glossary_frame
from ssa_book.verdicts.claim import Claim, MIN_PAIRS, no_effect_pairs
from ssa_book.book import toc_documents
from ssa_book.claims import ORDER, PAPER_REGIME, LedgerRow, comparison_words, paper_figure, plural
from ssa_book.studies import PAPER, STUDIES
from ssa_book.encoder import confirmation as encoder_confirmation, experiment as encoder_experiment
from ssa_book.icl.study import conduct as study_conduct, design as study_design, regimes as study_regimes
from ssa_book.leaderboard import board as leaderboard_board
from ssa_book.lm import experiment as decoder_experiment
from ssa_book.retrieval import analysis as retrieval_analysis
from ssa_book.profiles import check_profile
from ssa_book.results.cache import REQUIRE_CACHE_ENV

# The rows computed live (seconds of sympy), which ledger(theorems=False) reports as not checked.
LIVE = ("theorem_1", "theorem_2")


def reading_cache(results_dir: str | Path | None):
    """A context in which every chapter reads ``results_dir`` and a cache miss raises instead of
    computing: the ledger never trains."""
    changes = {REQUIRE_CACHE_ENV: "1"}
    if results_dir is not None:
        changes["SSA_RESULTS_DIR"] = str(Path(results_dir).resolve())
    return paths.environment(changes)


def _sections(root: Path | None) -> dict[str, str]:
    """chapter name -> its _toc.yml entry (``theory`` -> ``notebooks/theory``), whichever page exists."""
    if root is None or not (root / "_toc.yml").is_file():
        return {}

    return {Path(document).stem: document for document in toc_documents(root / "_toc.yml")}


def ledger(
    profile: str = "cpu", *, results_dir: str | Path | None = None, theorems: bool = True, root: Path | None = None
) -> list[LedgerRow]:
    """Every row of the ledger, in :data:`ssa_book.claims.ORDER`, from the cache at ``profile``.

    ``theorems=False`` skips the live theorem checks (seconds of sympy) and reports them as not
    tested. ``root`` is the checkout whose ``_toc.yml`` gives the section links (default: this
    package's checkout, if any)."""
    check_profile(profile)
    rows: list[LedgerRow] = []
    with reading_cache(results_dir):
        for study in STUDIES.values():
            if not study.claims:
                continue
            if not theorems and set(study.claims) <= set(LIVE):
                rows += [
                    LedgerRow(
                        key,
                        PAPER[key].claim,
                        paper_figure(PAPER[key]),
                        "not checked (theorems=False)",
                        "live",
                        (),
                        NOT_TESTED,
                        None,
                        None,
                        summary="Not checked.",
                    )
                    for key in study.claims
                ]
            else:
                rows += study.rows(profile)
    rows.sort(key=lambda row: ORDER.index(row.key))
    sections = _sections(root if root is not None else paths.repository_root())
    return [dataclasses.replace(row, section=sections.get(PAPER[row.key].chapter)) for row in rows]


def markdown_table(frame, columns: Sequence[str] | Mapping[str, str] | None = None) -> str:
    """``frame`` (or its ``columns``) as a whole MyST table, every row and cell, nothing cut, for
    ``{glue:md}``: a page's table that prose may surround. ``frame`` may be a list of dicts;
    ``columns`` a mapping gives each column its header."""
    import pandas as pd

    frame = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(list(frame))
    headers = dict(columns) if isinstance(columns, Mapping) else None
    columns = [str(column) for column in (frame.columns if columns is None else columns)]
    lines = [
        "| " + " | ".join(headers[column] if headers else column for column in columns) + " |",
        "|" + "---|" * len(columns),
    ]
    lines += [
        "| " + " | ".join(table_cell(str(value)) for value in row) + " |"
        for row in frame[columns].itertuples(index=False)
    ]
    return "\n".join(lines)


def table_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _seeds_text(row: LedgerRow) -> str:
    if row.profile == "live":
        return "computed live, deterministic"
    if not row.seeds:
        return f"profile {row.profile}"
    return f"profile {row.profile}, {plural(len(row.seeds), 'seed')}: {', '.join(map(str, row.seeds))}"


# The page that defines every verdict word (a _toc.yml file entry); each verdict links to it.
GLOSSARY = "notebooks/glossary"


def verdict_link(word: str) -> str:
    """``word`` as a MyST link to the glossary page."""
    return f"{{doc}}`{word} </{GLOSSARY}>`"


def beside_word(row: LedgerRow) -> str:
    """What stands beside the claim's word: the comparison's own words when they say more, what the
    word rests on and a check its parts do not all pass: "SSA worse on 5 of 6 parts, undecided on 1;
    a distribution-free check keeps 1 of its 4 prompt-error parts" ("" for nothing)."""
    words = comparison_words(row)
    return "; ".join(filter(None, (words if words != claim_word(row.verdict) else "", row.note(), row.parts_note)))


def _verdict_cell(row: LedgerRow) -> str:
    """What the row found of the paper's claim, linked to the glossary, with :func:`beside_word`:
    "does not hold (SSA worse on 5 of 6 parts, ...)"."""
    beside = beside_word(row)
    return verdict_link(claim_word(row.verdict)) + (f" ({beside})" if beside else "")


def ledger_markdown(rows: Sequence[LedgerRow]) -> str:
    """A MyST table (glue it with ``{glue:md}`` and ``:format: myst``): each claim links to its
    page with a ``{doc}`` role, its verdict to the glossary, and our side ends with the profile
    and seeds it comes from."""
    lines = ["| claim | the paper's claim | paper | ours |", "|---|---|---|---|"]
    for row in rows:
        claim = f"{{doc}}`{row.claim} </{row.section}>`" if row.section else row.claim
        ours = f"{row.ours} *({_seeds_text(row)}{f'; regime: {row.regime}' if row.regime else ''})*"
        lines.append(
            "| " + " | ".join(table_cell(text) for text in (claim, _verdict_cell(row), row.paper, ours)) + " |"
        )
    return "\n".join(lines)


_SHORTER = (
    (r"(\d+) layers of width (\d+)", r"\1 × \2"),
    (r" at learning rate ", ", lr "),
    (r"(\d) steps at (\d)", r"\1 steps, lr \2"),
    (r" paired seed", " seed"),
)
# Which of the paper's experiments each row re-runs, to name the paper's regimes once under the front page's table.
PAPER_EXPERIMENTS = {
    "quantification": "in-context models",
    "collapse": "in-context models",
    "linear": "in-context models",
    "alternatives": "in-context models",
    "across_shifts": "in-context models",
    "perplexity_id": "decoder",
    "perplexity_ood": "decoder",
    "probing": "encoder",
}


def shorter_regime(regime: str) -> str:
    for pattern, replacement in _SHORTER:
        regime = re.sub(pattern, replacement, regime)
    return regime


def short_regime(regime: str) -> str:
    """A row's regime in fewer words, for the front page, without the paper's (which
    :func:`paper_regimes_sentence` names once): "4 × 64, 1,000 steps, lr 0.001 (constant), SSA
    from b = 2.72, n = 1.49; 40 seeds a task" (layers × width)."""
    return shorter_regime(PAPER_REGIME.sub("", regime))


def paper_regimes_sentence(rows: Sequence[LedgerRow]) -> str:
    """The paper's regimes, once each, for the rows that name one: "The paper trains its in-context
    models 12 × 256, 500,000 steps, lr 0.0001; its decoder ..." ("" when no row names one)."""
    regimes: dict[str, str] = {}
    for row in rows:
        match = PAPER_REGIME.search(row.regime)
        if match:
            regimes.setdefault(PAPER_EXPERIMENTS.get(row.key, row.claim), shorter_regime(match.group(1)))
    if not regimes:
        return ""
    return "The paper trains " + "; ".join(f"its {name} {regime}" for name, regime in regimes.items()) + "."


def summary_markdown(rows: Sequence[LedgerRow]) -> str:
    """The front page's table (glue it with ``{glue:md}`` and ``:format: myst``): per claim, a
    ``{doc}`` link to its page, what the book found of the claim (linked to the glossary, with the
    comparison's words), :attr:`LedgerRow.summary` (one short sentence) and the regime's code
    (:func:`regime_codes_markdown` says what each stands for); :func:`ledger_markdown` has the full rows."""
    codes = regime_codes(rows)
    lines = ["| claim | the paper's claim | in short | regime (code) |", "|---|---|---|---|"]
    for row in rows:
        claim = f"{{doc}}`{row.claim} </{row.section}>`" if row.section else row.claim
        regime = regime_code(row, codes) or ("computed live" if row.profile == "live" else "")
        lines.append(
            "| "
            + " | ".join(table_cell(text) for text in (claim, _verdict_cell(row), row.summary or row.ours, regime))
            + " |"
        )
    return "\n".join(lines)


def ledger_frame(rows: Sequence[LedgerRow]):
    """The ledger as a pandas DataFrame, one row per claim."""
    import pandas as pd

    return pd.DataFrame([dataclasses.asdict(row) for row in rows]).set_index("key")


# What a count of claims does, by :func:`ssa_book.verdicts.words.claim_word`: (one, several).
_PREDICATES = {
    HOLDS: ("holds", "hold"),
    DOES_NOT_HOLD: ("does not hold", "do not hold"),
    HOLDS_IN_PART: ("holds in part", "hold in part"),
    MIXED: ("is mixed", "are mixed"),
    UNDECIDED: ("is undecided", "are undecided"),
    PREMISE_NOT_SHOWN: ("lacks its premise", "lack their premise"),
    NOT_TESTED: ("is not tested", "are not tested"),
}


def verdict_counts(rows: Sequence[LedgerRow]) -> dict[str, int]:
    """How many rows' claims hold, do not hold, ... (:func:`ssa_book.verdicts.words.claim_word`), every word counted."""
    words = [claim_word(row.verdict) for row in rows]
    return {word: words.count(word) for word in _PREDICATES}


def listed_phrases(phrases: Sequence[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def counted_claims(rows: Sequence[LedgerRow], short: bool = False, brief: bool = False) -> str:
    """ "1 holds (Alternative scorers: ...), 2 do not hold and 1 is not tested" (the words that occur, in
    :data:`_PREDICATES` order), each with what the words of its rows rest on and what was set after
    reading (:meth:`LedgerRow.note`, ``short``, ``brief`` or in full), named by the claim where ``rows`` are several."""

    def noted(word: str) -> str:
        notes = [
            f"{short_name(row)}: {note}" if len(rows) > 1 else note
            for row in rows
            if (note := row.note(short, brief)) and claim_word(row.verdict) == word
        ]
        return f" ({'; '.join(notes)})" if notes else ""

    return listed_phrases(
        [
            f"{count} {_PREDICATES[word][count != 1]}{noted(word)}"
            for word, count in verdict_counts(rows).items()
            if count
        ]
    )


def counts_sentence(rows: Sequence[LedgerRow]) -> str:
    """The claims counted by what the book found of them, the experiments apart from the theorems
    (rows computed live): "Of the 9 experimental claims, none holds: 3 do not hold, 5 are
    undecided and 1 is not tested. The 2 theorems, in the book's own versions (...): 2 hold."."""
    theorems = [row for row in rows if row.profile == "live"]
    own = [row for row in rows if row.profile != "live" and row.key in PAPER and PAPER[row.key].beyond_paper]
    experiments = [row for row in rows if row.profile != "live" and row not in own]
    sentences = []
    if experiments:
        holding = sum(claim_word(row.verdict) == HOLDS for row in experiments)
        head = f"Of the paper's {plural(len(experiments), 'experimental claim')}"
        if holding:
            sentences.append(f"{head}, {counted_claims(experiments)}.")
        else:
            sentences.append(f"{head}, none holds: {counted_claims(experiments)}.")
    if own:
        sentences.append(
            f"The book's own {'test' if len(own) == 1 else 'tests'} beyond the paper: {counted_claims(own)}."
        )
    if theorems:
        noun = "The theorem" if len(theorems) == 1 else f"The {len(theorems)} theorems"
        sentences.append(
            f"{noun}, in the book's own versions (the paper's statements are not public; derived and checked "
            f"numerically, live): {counted_claims(theorems)}."
        )
    return " ".join(sentences)


DECIDED_AGAINST = (DOES_NOT_HOLD, WORSE, NEGLIGIBLE)


def regime_map_markdown(profile: str) -> str:
    """The powered study's regime map (:func:`ssa_book.icl.study.regime_map`) as a whole MyST table:
    SSA against softmax in every training regime the study has ("" when the plan at ``profile``
    has only its primary comparison)."""
    frame = study_regimes.regime_map(study_conduct.StudyCache(profile, train=False))
    if len(frame) < 2:
        return ""
    return markdown_table(frame, [column for column in frame.columns if column != "comparison"])


def decision_minimums() -> list[tuple[int, list[str]]]:
    """The fewest pairs from which each kind of comparison of the book decides anything, read from
    the claims that set them (:func:`ssa_book.verdicts.claim.no_effect_pairs` of a chapter's claim: the
    rule's minimum, the pairs that would reveal flips for an outcome that flips from seed to seed,
    or a chapter's own minimum), as ``[(pairs, [what decides from them, ...]), ...]``, fewest first."""
    grouped: dict[int, list[str]] = {}
    for what, claim in _minimum_kinds():
        grouped.setdefault(no_effect_pairs(claim), []).append(what)
    return sorted(grouped.items())


def chapter_minimums() -> set[int]:
    """The fewest pairs that are a chapter's own minimum above the rule's (a claim's ``min_pairs``),
    each set after that chapter's results were read (the analysis-changes page, 550efa7)."""
    return {no_effect_pairs(claim) for _, claim in _minimum_kinds() if claim.min_pairs > MIN_PAIRS}


def flip_minimums() -> set[int]:
    """The fewest pairs an outcome that flips from seed to seed needs to decide, above its claim's own
    minimum: set after results were read, for "no difference that matters" and then for a direction
    (the analysis-changes page, :data:`ssa_book.claims.FLIP_NO_DIFFERENCE_SET_AFTER_READING` and
    :data:`ssa_book.claims.FLIP_MINIMUM_SET_AFTER_READING`)."""
    return {
        no_effect_pairs(claim)
        for _, claim in _minimum_kinds()
        if claim.largest_flip is not None and no_effect_pairs(claim) > max(MIN_PAIRS, claim.min_pairs)
    }


def _minimum_kinds() -> tuple[tuple[str, Claim], ...]:
    """Each kind of comparison of the book and the claim that sets its fewest pairs."""
    columns = {column.key: column.claim for column in leaderboard_board.COLUMNS}
    endpoints = study_design.ENDPOINTS
    kinds = (
        ("the decoder's perplexity", decoder_experiment.CLAIMS["perplexity_id"]),
        ("linear functions' error", endpoints["normalised error, larger inputs"].claim),
        (
            "a yes-or-no outcome (whether a seed generalises: Tango's interval)",
            endpoints[study_design.BINARY_ENDPOINT].claim,
        ),
        ("the encoder's confirmatory test (its plan's rule)", encoder_confirmation.PLAN[0].claim),
        ("a prompt error (it flips from seed to seed)", endpoints[study_regimes.REGIME_MAP_ENDPOINT].claim),
        ("max retrieval (both setups)", retrieval_analysis.SHIFTED_ACCURACY),
        ("the leaderboard's max retrieval column in the short setup", columns["retrieval"]),
        ("the encoder's claim on the paper's paradigms", encoder_experiment.CLAIMS[encoder_experiment.HEADLINE]),
        ("the leaderboard's max retrieval column in the original setup", columns["retrieval_original"]),
    )
    return kinds


def decision_minimums_sentence() -> str:
    """:func:`decision_minimums` in words, a chapter's own minimum said set after reading, and the
    pairs an outcome that flips needs likewise (:func:`flip_minimums`: both for "no difference that
    matters" and for a direction): "6 pairs for the decoder's perplexity, ...; 20, set after reading,
    for max retrieval (both setups) ...; 36, set after reading, for a prompt error ..."."""
    after = chapter_minimums() | flip_minimums()
    return "; ".join(
        f"{pairs}{' pairs' if i == 0 else ''}{', set after reading,' if pairs in after else ''} for {listed_phrases(whats)}"
        for i, (pairs, whats) in enumerate(decision_minimums())
    )


# Where the claims' thresholds were declared before their results were read, and where after a first
# reading, each of those with the commit that set it, a threshold change made after reading on the
# analysis-changes page (ssa_book.analysis_changes.CHANGES, a layer above, which the tests hold this to):
# said the same way wherever a page says it.
THRESHOLDS_BEFORE = (
    "the powered study",
    "the leaderboard",
    "max retrieval's claim for every scorer",
    "max retrieval's original setup",
    "the encoder's confirmatory test",
)
THRESHOLDS_AFTER = (
    ("the decoder", "7e238a6"),
    ("the encoder", "7e238a6"),
    ("the in-context chapters", "7e238a6"),
    ("the alternatives", "7e238a6"),
    ("the collapse cut", "7e238a6"),
    ("max retrieval's replication of adaptive temperature in the short setup", "75a550b"),
)


def thresholds_declared() -> str:
    """When the thresholds were fixed, in two groups: "fixed before the results were read in the
    powered study, ...; set after a first reading in the decoder, ... (the analysis-changes page lists them)"."""
    return (
        f"fixed before the results were read in {listed_phrases(THRESHOLDS_BEFORE)}; set after a first reading in "
        f"{listed_phrases([where for where, _ in THRESHOLDS_AFTER])} (the analysis-changes page lists them)"
    )


def glossary_table(profile: str | None = None) -> str:
    """The glossary's table of words (:func:`ssa_book.verdicts.glossary.glossary_frame`) as a whole MyST table,
    the "exploratory" row with the fewest pairs each kind of comparison decides from
    (:func:`decision_minimums_sentence`) and, read from the cache at ``profile``, how far short of its nominal
    level the book measured an exploratory interval (:data:`ssa_book.error_rates.NOMINAL_INTERVAL`)."""
    if profile is not None:
        check_profile(profile)
    frame = glossary_frame()
    exploratory = frame["word"] == TOO_FEW_SEEDS
    frame.loc[exploratory, "meaning"] += f" The fewest pairs that decide: {decision_minimums_sentence()}."
    if profile is not None:
        nominal = error_rates.nominal_interval_sentence(error_rates.error_rate_table(profile, pair_counts=()))
        frame.loc[exploratory, "meaning"] += f" {nominal}" if nominal else ""
    return markdown_table(frame)


def _rule_error_sentence(profile: str) -> str:
    """The rule's largest false direction rate over every chapter, at the seed counts each uses,
    under nulls resampled from the chapters' own per-seed differences, and its largest false "no
    difference that matters" rate with the true effect at the threshold
    (:func:`ssa_book.error_rates.sentence`), then the largest false direction rate of the rule behind the
    notes "... minimum set after reading, ... before it", where those minimums moved a direction
    (:func:`ssa_book.error_rates.notes_sentence`; the whole table is on the reproducing page)."""
    table = error_rates.error_rate_table(profile, pair_counts=())
    return " ".join(filter(None, (error_rates.sentence(table), error_rates.notes_sentence(table))))


def seed_counts_text(row: LedgerRow) -> str:
    """ "10 seeds", or for a row whose parts ran different seeds "3 and 10 seeds"."""
    counts = row.seed_counts or (len(row.seeds),)
    return (
        plural(counts[0], "seed") if len(counts) == 1 else f"{listed_phrases([str(count) for count in counts])} seeds"
    )


def findings(rows: Sequence[LedgerRow]) -> list[str]:
    """What the book found, in at most six Markdown bullets computed from the rows: the claims
    counted (experiments apart from theorems); each claim decided against the paper, with its parts
    in direction-explicit words and the regime it holds in; the undecided claims with their seeds;
    the claims not tested or whose premise is absent."""
    experiments = [row for row in rows if row.profile != "live"]
    profile = next((row.profile for row in experiments if row.profile in ("smoke", "cpu", "paper")), None)
    caveat = (
        _rule_error_sentence(profile)
        if profile is not None and any(row.key == "quantification" for row in rows)
        else ""
    )
    bullets = [f"{counts_sentence(rows)} {caveat}".strip()]
    for row in experiments:
        if row.verdict in DECIDED_AGAINST and len(bullets) < 4:
            regime = (
                f" Regime: {short_regime(row.regime)}."
                if row.regime
                else f" Seeds: {len(row.seeds)}, profile {row.profile}."
            )
            caveats = f" {row.finding}" if row.finding else ""
            found = beside_word(row) or row.summary.rstrip(".")
            whose = "the book's test" if row.key in PAPER and PAPER[row.key].beyond_paper else "the paper's claim"
            bullets.append(
                f"**{row.claim}**: {whose} does not hold here{f' ({found})' if found else ''}.{regime}{caveats}"
            )
    for word, label in ((HOLDS_IN_PART, "Holds in part"), (MIXED, "Mixed")):
        found = [row for row in experiments if row.verdict == word]
        if found:
            bullets.append(
                f"**{label}**: "
                + "; ".join(f"{row.claim} ({comparison_words(row) or row.summary.rstrip('.')})" for row in found)
                + "."
            )
    undecided = [row for row in experiments if row.verdict in OPEN]
    if undecided:
        listed = "; ".join(
            f"{row.claim} ({seed_counts_text(row)}{', exploratory' if row.verdict == TOO_FEW_SEEDS else ''}"
            f"{f'; {row.finding}' if row.finding else ''})"
            for row in undecided
        )
        excluded = [row.claim for row in undecided if row.published_excluded]
        beside = (
            f" For {listed_phrases(excluded)}, the 95% interval at the book's scale already excludes an effect the size of the paper's."
            if excluded
            else ""
        )
        bullets.append(f"**Undecided** so far: {listed}. Each row says how many seeds would decide it.{beside}")
    untested = [row for row in experiments if row.verdict in (NOT_TESTED, NOT_LEARNED, PREMISE_NOT_SHOWN)]
    if untested:
        bullets.append(
            "**Not tested or premise not shown**: "
            + "; ".join(f"{row.claim} ({claim_word(row.verdict)})" for row in untested)
            + "."
        )
    return bullets[:6]


def findings_markdown(rows: Sequence[LedgerRow]) -> str:
    return "\n".join(f"- {bullet}" for bullet in findings(rows))


SHORT_NAMES = {
    "theorem_1": "Theorem 1",
    "theorem_2": "Theorem 2",
    "quantification": "ICL quantification",
    "collapse": "ICL collapse",
    "linear": "ICL linear functions",
    "perplexity_id": "Perplexity, in distribution",
    "perplexity_ood": "Perplexity, out of distribution",
    "benchmarks": "Decoder benchmarks",
    "probing": "Encoder probing on Zorro",
    "alternatives": "Alternative scorers",
    "across_shifts": "Own test: two shifts",
}


def short_name(row: LedgerRow) -> str:
    return SHORT_NAMES.get(row.key, row.claim)


def training_regime(row: LedgerRow) -> str:
    """The row's regime in short without its seeds and the paper's: what a regime code stands for."""
    regime = re.sub(r"[,;] \d[\d,]* paired seeds?( a task)?", "", PAPER_REGIME.sub("", row.regime))
    return shorter_regime(regime).strip("; ")


def regime_codes(rows: Sequence[LedgerRow]) -> dict[str, str]:
    """Each training regime of the rows -> its code, "R1", "R2", ...: the regimes no other contains
    first, in the rows' order, then those made of others (a variant, a row of several studies)."""
    regimes = list(dict.fromkeys(regime for regime in map(training_regime, rows) if regime))
    simple = [regime for regime in regimes if not any(other != regime and other in regime for other in regimes)]
    return {regime: f"R{number}" for number, regime in enumerate(simple + [r for r in regimes if r not in simple], 1)}


def regime_code(row: LedgerRow, codes: Mapping[str, str]) -> str:
    return codes.get(training_regime(row), "")
