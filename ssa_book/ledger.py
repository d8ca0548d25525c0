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
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

from ssa_book import error_rates, paths
from ssa_book.verdicts.words import (DOES_NOT_HOLD, HOLDS, HOLDS_IN_PART, MIXED, NEGLIGIBLE, NOT_LEARNED, NOT_RUN_YET, NOT_TESTED,
                                     OPEN, PREMISE_NOT_SHOWN, TOO_FEW_SEEDS, UNDECIDED, WORSE, claim_phrase, claim_word,
                                     counted_words)
from ssa_book.verdicts.glossary import glossary_frame
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.claim import Claim, MIN_PAIRS, no_effect_pairs
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.readings import effect_placement
from ssa_book.book import toc_documents
from ssa_book.claims import ORDER, PAPER_REGIME, LedgerRow, comparison_words, paper_figure, plural
from ssa_book.studies import PAPER, STUDIES
from ssa_book.encoder import confirmation as encoder_confirmation, experiment as encoder_experiment
from ssa_book.icl import study as icl_study
from ssa_book.leaderboard import board as leaderboard_board
from ssa_book.lm import experiment as decoder_experiment
from ssa_book.retrieval import analysis as retrieval_analysis
from ssa_book.icl.tasks import get_task
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


def ledger(profile: str = "cpu", *, results_dir: str | Path | None = None, theorems: bool = True,
           root: Path | None = None) -> list[LedgerRow]:
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
                rows += [LedgerRow(key, PAPER[key].claim, paper_figure(PAPER[key]), "not checked (theorems=False)", "live", (), NOT_TESTED,
                                   None, None, summary="Not checked.") for key in study.claims]
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
    lines = ["| " + " | ".join(headers[column] if headers else column for column in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(str(value)) for value in row) + " |"
              for row in frame[columns].itertuples(index=False)]
    return "\n".join(lines)


def _cell(text: str) -> str:
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
        lines.append("| " + " | ".join(_cell(text) for text in (claim, _verdict_cell(row), row.paper, ours)) + " |")
    return "\n".join(lines)


_SHORTER = ((r"(\d+) layers of width (\d+)", r"\1 × \2"), (r" at learning rate ", ", lr "), (r"(\d) steps at (\d)", r"\1 steps, lr \2"),
            (r" paired seed", " seed"))
# Which of the paper's experiments each row re-runs, to name the paper's regimes once under the front page's table.
PAPER_EXPERIMENTS = {"quantification": "in-context models", "collapse": "in-context models", "linear": "in-context models",
                     "alternatives": "in-context models", "across_shifts": "in-context models",
                     "perplexity_id": "decoder", "perplexity_ood": "decoder", "probing": "encoder"}


def _shorter(regime: str) -> str:
    for pattern, replacement in _SHORTER:
        regime = re.sub(pattern, replacement, regime)
    return regime


def short_regime(regime: str) -> str:
    """A row's regime in fewer words, for the front page, without the paper's (which
    :func:`paper_regimes_sentence` names once): "4 × 64, 1,000 steps, lr 0.001 (constant), SSA
    from b = 2.72, n = 1.49; 40 seeds a task" (layers × width)."""
    return _shorter(PAPER_REGIME.sub("", regime))


def paper_regimes_sentence(rows: Sequence[LedgerRow]) -> str:
    """The paper's regimes, once each, for the rows that name one: "The paper trains its in-context
    models 12 × 256, 500,000 steps, lr 0.0001; its decoder ..." ("" when no row names one)."""
    regimes: dict[str, str] = {}
    for row in rows:
        match = PAPER_REGIME.search(row.regime)
        if match:
            regimes.setdefault(PAPER_EXPERIMENTS.get(row.key, row.claim), _shorter(match.group(1)))
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
        lines.append("| " + " | ".join(_cell(text) for text in (claim, _verdict_cell(row), row.summary or row.ours, regime)) + " |")
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


def _listed(phrases: Sequence[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _counted(rows: Sequence[LedgerRow], short: bool = False) -> str:
    """"1 holds (Alternative scorers: ...), 2 do not hold and 1 is not tested" (the words that occur, in
    :data:`_PREDICATES` order), each with what the words of its rows rest on and what was set after
    reading (:meth:`LedgerRow.note`, ``short`` or not), named by the claim where ``rows`` are several."""
    def noted(word: str) -> str:
        notes = [f"{short_name(row)}: {note}" if len(rows) > 1 else note for row in rows
                 if (note := row.note(short)) and claim_word(row.verdict) == word]
        return f" ({'; '.join(notes)})" if notes else ""

    return _listed([f"{count} {_PREDICATES[word][count != 1]}{noted(word)}" for word, count in verdict_counts(rows).items() if count])


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
            sentences.append(f"{head}, {_counted(experiments)}.")
        else:
            sentences.append(f"{head}, none holds: {_counted(experiments)}.")
    if own:
        sentences.append(f"The book's own {'test' if len(own) == 1 else 'tests'} beyond the paper: {_counted(own)}.")
    if theorems:
        noun = "The theorem" if len(theorems) == 1 else f"The {len(theorems)} theorems"
        sentences.append(f"{noun}, in the book's own versions (the paper's statements are not public; derived and checked "
                         f"numerically, live): {_counted(theorems)}.")
    return " ".join(sentences)


DECIDED_AGAINST = (DOES_NOT_HOLD, WORSE, NEGLIGIBLE)


def regime_map_markdown(profile: str) -> str:
    """The powered study's regime map (:func:`ssa_book.icl.study.regime_map`) as a whole MyST table:
    SSA against softmax in every training regime the study has ("" when the plan at ``profile``
    has only its primary comparison)."""
    study = icl_study
    frame = study.regime_map(study.StudyCache(profile, train=False))
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
    return {no_effect_pairs(claim) for _, claim in _minimum_kinds()
            if claim.largest_flip is not None and no_effect_pairs(claim) > max(MIN_PAIRS, claim.min_pairs)}


def _minimum_kinds() -> tuple[tuple[str, Claim], ...]:
    """Each kind of comparison of the book and the claim that sets its fewest pairs."""
    columns = {column.key: column.claim for column in leaderboard_board.COLUMNS}
    endpoints = icl_study.ENDPOINTS
    kinds = (
        ("the decoder's perplexity", decoder_experiment.CLAIMS["perplexity_id"]),
        ("linear functions' error", endpoints["normalised error, larger inputs"].claim),
        ("a yes-or-no outcome (whether a seed generalises: Tango's interval)", endpoints[icl_study.BINARY_ENDPOINT].claim),
        ("the encoder's confirmatory test (its plan's rule)", encoder_confirmation.PLAN[0].claim),
        ("a prompt error (it flips from seed to seed)", endpoints[icl_study.REGIME_MAP_ENDPOINT].claim),
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
    return "; ".join(f"{pairs}{' pairs' if i == 0 else ''}{', set after reading,' if pairs in after else ''} for {_listed(whats)}"
                     for i, (pairs, whats) in enumerate(decision_minimums()))


# Where the claims' thresholds were declared before their results were read, and where after a first
# reading (each such threshold is on the analysis-changes page): said the same way wherever a page says it.
THRESHOLDS_BEFORE = ("the powered study", "the leaderboard", "max retrieval", "the encoder's confirmatory test")
THRESHOLDS_AFTER = ("the decoder", "the encoder", "the in-context chapters", "the alternatives", "the collapse cut")


def thresholds_declared() -> str:
    """When the thresholds were fixed, in two groups: "fixed before the results were read in the
    powered study, ...; set after a first reading in the decoder, ... (the analysis-changes page lists them)"."""
    return (f"fixed before the results were read in {_listed(THRESHOLDS_BEFORE)}; set after a first reading in "
            f"{_listed(THRESHOLDS_AFTER)} (the analysis-changes page lists them)")


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
        nominal = error_rates.notes_sentence(error_rates.error_rate_table(profile, pair_counts=()), error_rates.NOMINAL_INTERVAL)
        frame.loc[exploratory, "meaning"] += f" {nominal}" if nominal else ""
    return markdown_table(frame)


def _rule_error_sentence(profile: str) -> str:
    """The rule's largest false direction rate over every chapter, at the seed counts each uses,
    under nulls resampled from the chapters' own per-seed differences, and its largest false "no
    difference that matters" rate with the true effect at the threshold
    (:func:`ssa_book.error_rates.sentence`), then the largest false direction rate of the rule behind the
    notes "... before it" (:func:`ssa_book.error_rates.notes_sentence`; the whole table is on the reproducing page)."""
    table = error_rates.error_rate_table(profile, pair_counts=())
    return " ".join(filter(None, (error_rates.sentence(table), error_rates.notes_sentence(table))))


def _seed_counts_text(row: LedgerRow) -> str:
    """"10 seeds", or for a row whose parts ran different seeds "3 and 10 seeds"."""
    counts = row.seed_counts or (len(row.seeds),)
    return plural(counts[0], "seed") if len(counts) == 1 else f"{_listed([str(count) for count in counts])} seeds"


def findings(rows: Sequence[LedgerRow]) -> list[str]:
    """What the book found, in at most six Markdown bullets computed from the rows: the claims
    counted (experiments apart from theorems); each claim decided against the paper, with its parts
    in direction-explicit words and the regime it holds in; the undecided claims with their seeds;
    the claims not tested or whose premise is absent."""
    experiments = [row for row in rows if row.profile != "live"]
    profile = next((row.profile for row in experiments if row.profile in ("smoke", "cpu", "paper")), None)
    caveat = _rule_error_sentence(profile) if profile is not None and any(row.key == "quantification" for row in rows) else ""
    bullets = [f"{counts_sentence(rows)} {caveat}".strip()]
    for row in experiments:
        if row.verdict in DECIDED_AGAINST and len(bullets) < 4:
            regime = f" Regime: {short_regime(row.regime)}." if row.regime else f" Seeds: {len(row.seeds)}, profile {row.profile}."
            caveats = f" {row.finding}" if row.finding else ""
            found = beside_word(row) or row.summary.rstrip(".")
            whose = "the book's test" if row.key in PAPER and PAPER[row.key].beyond_paper else "the paper's claim"
            bullets.append(f"**{row.claim}**: {whose} does not hold here{f' ({found})' if found else ''}.{regime}{caveats}")
    for word, label in ((HOLDS_IN_PART, "Holds in part"), (MIXED, "Mixed")):
        found = [row for row in experiments if row.verdict == word]
        if found:
            bullets.append(f"**{label}**: " + "; ".join(f"{row.claim} ({comparison_words(row) or row.summary.rstrip('.')})"
                                                       for row in found) + ".")
    undecided = [row for row in experiments if row.verdict in OPEN]
    if undecided:
        listed = "; ".join(f"{row.claim} ({_seed_counts_text(row)}{', exploratory' if row.verdict == TOO_FEW_SEEDS else ''}"
                           f"{f'; {row.finding}' if row.finding else ''})" for row in undecided)
        excluded = [row.claim for row in undecided if row.published_excluded]
        beside = (f" For {_listed(excluded)}, the 95% interval at the book's scale already excludes an effect the size of the paper's."
                  if excluded else "")
        bullets.append(f"**Undecided** so far: {listed}. Each row says how many seeds would decide it.{beside}")
    untested = [row for row in experiments if row.verdict in (NOT_TESTED, NOT_LEARNED, PREMISE_NOT_SHOWN)]
    if untested:
        bullets.append("**Not tested or premise not shown**: " + "; ".join(f"{row.claim} ({claim_word(row.verdict)})" for row in untested) + ".")
    return bullets[:6]


def findings_markdown(rows: Sequence[LedgerRow]) -> str:
    return "\n".join(f"- {bullet}" for bullet in findings(rows))


# The top of the front page: an abstract, the scorecard figure, a few findings that name each
# regime by a short code, and the table of those codes, all computed from the ledger's rows.
ABSTRACT_WORDS = 120  # at most, in the abstract
BULLET_WORDS = 30  # at most, in one bullet of the findings
BULLETS = 6  # at most, in the findings

# Each claim's name on the scorecard and in the findings (the ledger's first column is longer).
SHORT_NAMES = {
    "theorem_1": "Theorem 1", "theorem_2": "Theorem 2", "quantification": "ICL quantification",
    "collapse": "ICL collapse", "linear": "ICL linear functions", "perplexity_id": "Perplexity, in distribution",
    "perplexity_ood": "Perplexity, out of distribution", "benchmarks": "Decoder benchmarks",
    "probing": "Encoder probing on Zorro", "alternatives": "Alternative scorers", "across_shifts": "Own test: two shifts",
}

# Each word said of a claim, in the scorecard's colours: holds green, does not hold red, a claim
# partly held or decided both ways ochre, undecided dark grey; the rest (not tested, its premise
# not shown) light grey (OTHER_COLOUR).
VERDICT_COLOURS = {
    HOLDS: "#2E7D32", DOES_NOT_HOLD: "#C62828", HOLDS_IN_PART: "#9C6B00",
    MIXED: "#9C6B00", UNDECIDED: "#555555",
}
OTHER_COLOUR = "#8A8A8A"
# The words that decide a claim one way or another.
DECIDED_WORDS = (HOLDS, DOES_NOT_HOLD, HOLDS_IN_PART, MIXED)


def _confidence() -> str:
    return f"{100 * CONFIDENCE:.0f}%"


def words(text: str) -> int:
    """The words a reader sees in ``text`` (Markdown's ``**`` and list marks are no words)."""
    return len([word for word in text.replace("**", " ").split() if word not in ("-", "*")])


def short_name(row: LedgerRow) -> str:
    return SHORT_NAMES.get(row.key, row.claim)


def training_regime(row: LedgerRow) -> str:
    """The row's regime in short without its seeds and the paper's: what a regime code stands for."""
    regime = re.sub(r"[,;] \d[\d,]* paired seeds?( a task)?", "", PAPER_REGIME.sub("", row.regime))
    return _shorter(regime).strip("; ")


def regime_codes(rows: Sequence[LedgerRow]) -> dict[str, str]:
    """Each training regime of the rows -> its code, "R1", "R2", ...: the regimes no other contains
    first, in the rows' order, then those made of others (a variant, a row of several studies)."""
    regimes = list(dict.fromkeys(regime for regime in map(training_regime, rows) if regime))
    simple = [regime for regime in regimes if not any(other != regime and other in regime for other in regimes)]
    return {regime: f"R{number}" for number, regime in enumerate(simple + [r for r in regimes if r not in simple], 1)}


def regime_code(row: LedgerRow, codes: Mapping[str, str]) -> str:
    return codes.get(training_regime(row), "")


def regime_codes_markdown(rows: Sequence[LedgerRow]) -> str:
    """The table of regime codes (``{glue:md}``): each code, the claims judged in it and the regime,
    a regime made of others naming them by their codes."""
    codes = regime_codes(rows)
    lines = ["| code | claims | regime (layers × width, training, SSA's start) |", "|---|---|---|"]
    for regime, code in codes.items():
        text = regime
        for other in sorted(codes, key=len, reverse=True):
            if other != regime and other in text:
                text = text.replace(other, codes[other])
        claimed = ", ".join(short_name(row) for row in rows if regime_code(row, codes) == code)
        lines.append("| " + " | ".join(_cell(cell) for cell in (code, claimed, text)) + " |")
    return "\n".join(lines)


def _scale(row: LedgerRow) -> tuple[str, str] | None:
    """(ours, the paper's): the size and training of the row's models, "4 × 64, 1,000 steps"."""
    match = PAPER_REGIME.search(row.regime)
    if not match:
        return None

    def size(regime: str, lengths: int) -> str:
        parts = regime.split(", ")
        shape = next((part for part in parts if "×" in part), "")
        trained = [re.sub(r" \(.*\)$", "", part) for part in parts if re.match(r"[\d.,]+[kMB]? (steps|tokens)", part)][:lengths]
        return ", ".join([shape, *trained] if shape else trained)

    return size(_shorter(PAPER_REGIME.sub("", row.regime).split(";")[0]), 1), size(_shorter(match.group(1)), 1)


def scale_gap(rows: Sequence[LedgerRow]) -> LedgerRow | None:
    """The row whose softmax baseline is farthest from the paper's (by their ratio), or None."""
    measured = [row for row in rows if row.baseline is not None and row.baseline[1] > 0 and row.baseline[2] > 0]
    if not measured:
        return None
    return max(measured, key=lambda row: max(row.baseline[1] / row.baseline[2], row.baseline[2] / row.baseline[1]))


def abstract(rows: Sequence[LedgerRow]) -> str:
    """The front page's abstract, at most :data:`ABSTRACT_WORDS` words: what was re-run and at what
    scale against the paper's, the claims counted by what the book found of them (the paper's
    experimental claims, the book's own tests, the theorems), and the caveat that matters most (the
    softmax baseline farthest from the paper's)."""
    scales: dict[str, tuple[str, str]] = {}
    for row in rows:
        found = _scale(row) if row.key in PAPER_EXPERIMENTS else None
        if found:
            scales.setdefault(PAPER_EXPERIMENTS[row.key], found)
    theorems = [row for row in rows if row.profile == "live"]
    own = [row for row in rows if row.profile != "live" and PAPER[row.key].beyond_paper]
    experiments = [row for row in rows if row.profile != "live" and row not in own]
    did = [f"derives its own versions of the paper's {plural(len(theorems), 'theorem')}"] if theorems else []
    did.append("re-runs its experiments" + (", smaller: " if scales else ""))
    text = f"This book {' and '.join(did)}"
    # the paper's size in the same units as ours, which name them: "4 × 64, 1,000 steps (paper: 12 × 256, 500,000)"
    text += "; ".join(f"{name} {ours} (paper: {paper.removesuffix(' steps')})" for name, (ours, paper) in scales.items()) + ". "
    found = []
    if experiments:
        holding = sum(claim_word(row.verdict) == HOLDS for row in experiments)
        found.append(f"of the paper's {plural(len(experiments), 'experimental claim')}, {'' if holding else 'none holds: '}"
                     f"{_counted(experiments, short=True)}")
    if own:
        found.append(f"the book's own {'test' if len(own) == 1 else 'tests'}: {_counted(own, short=True)}")
    if theorems:
        found.append(f"the theorems' versions: {_counted(theorems)}")
    if found:
        text += sentence_case("; ".join(found)) + "."
    gap = scale_gap(rows)
    if gap is not None:
        what, ours, paper = gap.baseline
        text += f" Caveat: {what}: {ours:.3g} here, {paper:.3g} in the paper."
    return text


def sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def _listing(head: str, items: Sequence[str], tail: str = ".") -> str:
    """``head`` and as many of ``items`` as fit in :data:`BULLET_WORDS` words, then how many more."""
    shown = list(items)
    while shown:
        more = len(items) - len(shown)
        text = head + "; ".join(shown) + (f"; {more} more in the ledger" if more else "") + tail
        if words(text) <= BULLET_WORDS:
            return text
        shown.pop()
    return f"{head}{len(items)} in the ledger{tail}"


def key_findings(rows: Sequence[LedgerRow]) -> list[str]:
    """What the book found, in at most :data:`BULLETS` Markdown bullets of at most
    :data:`BULLET_WORDS` words, regimes named by their codes (:func:`regime_codes`): each claim the
    book decides, with its parts in direction-explicit words; the undecided claims; the claims whose
    interval excludes the paper's effect; those not tested or whose premise is not shown."""
    codes = regime_codes(rows)
    experiments = [row for row in rows if row.profile != "live"]

    def named(row: LedgerRow, coded: bool = True) -> str:
        code = regime_code(row, codes) if coded else ""
        return f"{short_name(row)}{f' ({code})' if code else ''}"

    decided = [row for row in experiments if claim_word(row.verdict) in DECIDED_WORDS]
    undecided = [named(row) for row in experiments if claim_word(row.verdict) == UNDECIDED]
    excluded = [short_name(row) for row in experiments if row.published_excluded]
    untested = [f"{short_name(row)} ({claim_word(row.verdict)})" for row in experiments
                if claim_word(row.verdict) not in (*DECIDED_WORDS, UNDECIDED)]
    others = [text for text in (
        _listing("**Undecided** so far: ", undecided) if undecided else "",
        _listing(f"**The paper's effect excluded** by the {_confidence()} interval at the book's scale: ", excluded) if excluded else "",
        _listing("**Not tested or premise not shown**: ", untested) if untested else "") if text]
    room = max(0, BULLETS - len(others))
    # decided claims that do not fit a bullet each share the last one: none is left out unsaid
    full, rest = (decided, []) if len(decided) <= room else (decided[:max(0, room - 1)], decided[max(0, room - 1):])
    bullets = []
    for row in full:
        word, found = claim_word(row.verdict), beside_word(row)
        bullet = f"**{named(row)}**: {word}{f' ({found})' if found else ''}."
        noted = f"**{named(row)}**: {word}{f' ({row.note()})' if row.note() else ''}."
        bullets.append(bullet if words(bullet) <= BULLET_WORDS else noted)
    if rest:
        # each word with its note, in full until the bullet is too long, then the last ones in short, then in brief (what
        # was set after reading stays), then the same without the regimes' codes (the table of codes names the claims),
        # so that a row is left to "more in the ledger" only where no wording fits
        def decided_words(level: int, shortened: int, coded: bool = True) -> list[str]:
            return [f"{named(row, coded)}, {claim_word(row.verdict)}" + (
                f" ({_note_at(row, level if i >= len(rest) - shortened else max(0, level - 1))})" if row.note() else "")
                for i, row in enumerate(rest)]

        wordings = [decided_words(level, shortened, coded) for coded in (True, False) for level, shortened in
                    [(0, 0), *((level, shortened) for level in (1, 2) for shortened in range(1, len(rest) + 1))]]
        fits = next((wording for wording in wordings
                     if words("**Also decided**: " + "; ".join(wording) + ".") <= BULLET_WORDS), wordings[-1])
        bullets.append(_listing("**Also decided**: ", fits))
    return (bullets + others)[:BULLETS]


def _note_at(row: LedgerRow, level: int) -> str:
    """The row's note (:meth:`LedgerRow.note`) at ``level`` of brevity: 0 in full, 1 short, 2 brief: the
    short note with the kinds of several changes of one kind left out ("linear panels only; minimums set
    after reading"; what was set after reading stays)."""
    short = row.note(short=level > 0)
    nouns = {what.rsplit(" ", 1)[-1] for what, _ in row.after_reading}
    if level < 2 or len(row.after_reading) < 2 or len(nouns) != 1 or any(row.moved_claim_word(before) for _, before in row.after_reading):
        return short
    return "; ".join(filter(None, (row.word_note.split(";")[0], f"{nouns.pop()}s set after reading")))


def key_findings_markdown(rows: Sequence[LedgerRow]) -> str:
    return "\n".join(f"- {bullet}" for bullet in key_findings(rows))


def scorecard_takeaway(rows: Sequence[LedgerRow]) -> str:
    """The scorecard's takeaway, in one sentence: how many of the paper's experimental claims hold
    at the book's scale, and in how many of the rows where the paper publishes an effect the book's
    interval lies below it (excludes it), those whose interval is exploratory (fewer pairs than
    their chapter decides from: it decides nothing) named apart with their pairs."""
    experiments = [row for row in rows if row.profile != "live" and not PAPER[row.key].beyond_paper]
    holding = sum(claim_word(row.verdict) == HOLDS for row in experiments)
    notes = [f"{short_name(row)}: {row.note(short=True)}" for row in experiments
             if row.note() and claim_word(row.verdict) == HOLDS]
    text = (f"{'None' if not holding else holding} of the paper's {plural(len(experiments), 'experimental claim')} "
            f"{'holds' if holding < 2 else 'hold'} here" + (f" ({'; '.join(notes)})" if notes else ""))
    published = [row for row in rows if row.paper_effect is not None and row.headline]
    if published:
        excluded = sum(any(effect_placement(verdict, row.paper_effect) == "above" for _, verdict in row.headline)
                       for row in published)
        # an exploratory interval decides nothing, so it is counted among the rows below the effect but named apart
        exploratory = [f"{short_name(row)}: exploratory, {verdict.pairs} of {max(MIN_PAIRS, verdict.no_effect_pairs)} pairs"
                       for row in published for verdict in _exploratory_excluding(row)]
        below, count = excluded + len(exploratory), len(published)
        rows_said = ({1: "the one row", 2: "both rows"}.get(count, f"all {count} rows") if below == count
                     else f"{below} of the {count} rows")
        text += f"; intervals lie below the published effect in {rows_said} with one"
        text += f" ({'; '.join(exploratory)})" if exploratory else ""
    return text + "."


def scorecard_key(rows: Sequence[LedgerRow]) -> str:
    """How to read the scorecard (:func:`scorecard_figure`), after its takeaway in the caption: its
    sign and, where it draws one, what an open part in grey is (the legend names the rest; each row's
    units, under its name, say that its scale is its own)."""
    drawn_open = any(verdict.outcome in OPEN for row in rows for _, verdict in row.headline)
    return "Positive favours the claim" + ("; grey dots: open parts" if drawn_open else "") + "."


def _exploratory_excluding(row: LedgerRow) -> list[Verdict]:
    """The row's exploratory headline verdicts whose interval lies below the paper's effect: at most
    one per row (the first), for :func:`scorecard_takeaway`; empty when any headline verdict is judged."""
    if any(effect_placement(verdict, row.paper_effect) is not None for _, verdict in row.headline):
        return []
    found = [verdict for _, verdict in row.headline if verdict.outcome == TOO_FEW_SEEDS and verdict.interval is not None
             and row.paper_effect > verdict.interval[1]]
    return found[:1]


def _without_estimate(row: LedgerRow) -> str:
    if row.profile == "live":
        return "a derivation, checked live"
    if row.verdict == NOT_TESTED:
        return "nothing measured"
    return "no paired estimate"


# Characters per line of the note under a scorecard row's word (the figure's right margin at 8 points, the
# column's smallest text).
NOTE_CHARACTERS = 24


def scorecard_note(row: LedgerRow) -> str:
    """What stands under a row's word on the scorecard: its short note (:meth:`LedgerRow.note`), and
    where the word is decided but every part drawn is open, that the parts it rests on are not drawn:
    "linear panels only (not drawn); tally set after reading" ("" for nothing)."""
    note = row.note(short=True)
    drawn = [verdict for _, verdict in row.headline]
    if not drawn or claim_word(row.verdict) not in DECIDED_WORDS or any(verdict.outcome not in OPEN for verdict in drawn):
        return note
    basis = row.word_note.split(";")[0]
    return note.replace(basis, f"{basis} (not drawn)", 1) if basis else "; ".join(filter(None, ("parts it rests on not drawn", note)))


def scorecard_figure(rows: Sequence[LedgerRow]):
    """The front page's scorecard: a row per claim, each on its own x-scale (their units differ):
    the book's estimate and 95% interval for each judged part (:attr:`LedgerRow.headline`, in the
    paper's direction: positive favours the claim), the paper's published effect (a diamond) where
    there is one, the threshold band in grey; each decided part in the colour of the word said of the
    claim (:data:`VERDICT_COLOURS`), an open part (exploratory, undecided) in grey, since it cannot carry
    the word; the word stands at the row's right with its note under it (:func:`scorecard_note`); a row
    without an estimate (a theorem, a claim not tested) shows its word alone. Returns the figure."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ssa_book import plotting

    width = min(7.2, getattr(plotting, "COLUMN_WIDTH_IN", 7.5) - 0.3)
    codes = regime_codes(rows)
    notes = [textwrap.fill(scorecard_note(row), NOTE_CHARACTERS, break_on_hyphens=False) for row in rows]
    # a row tall enough for its parts, and for its word with the note's lines under it
    heights = [max(0.42, 0.2 + 0.06 * len(row.headline), (0.2 + 0.14 * (note.count("\n") + 1)) if note else 0)
               for row, note in zip(rows, notes)]
    top, bottom = 0.6, 0.25  # inches: the legend above (two lines), the last row's tick labels below
    height = sum(heights) * 1.35 + top + bottom
    fig = plt.figure(figsize=(width, height))
    grid = fig.add_gridspec(len(rows), 1, height_ratios=heights, left=0.36, right=0.76, top=1 - top / height,
                            bottom=bottom / height, hspace=0.35)
    for index, (row, note) in enumerate(zip(rows, notes)):
        ax = fig.add_subplot(grid[index], gid=row.key)
        word = claim_word(row.verdict)
        colour = VERDICT_COLOURS.get(word, OTHER_COLOUR)
        code = regime_code(row, codes)
        units = row.headline[0][1].units if row.headline else ""
        detail = " · ".join(part for part in (code, units) if part)
        ax.text(-0.03, 0.5, short_name(row), transform=ax.transAxes, ha="right", va="bottom" if detail else "center", fontsize=9)
        if detail:
            ax.text(-0.03, 0.45, detail, transform=ax.transAxes, ha="right", va="top", fontsize=8, color="0.35")
        ax.text(1.03, 1.0 if note else 0.5, word, transform=ax.transAxes, ha="left", va="top" if note else "center", fontsize=9,
                color=colour, fontweight="bold")
        if note:
            ax.annotate(note, (1.03, 1.0), xycoords="axes fraction", xytext=(0, -13), textcoords="offset points", ha="left",
                        va="top", fontsize=8, color="0.35", linespacing=1.1)
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.grid(False)
        if not row.headline:
            ax.set_xticks([])
            for side in ax.spines.values():
                side.set_visible(False)
            ax.text(0.5, 0.5, _without_estimate(row), transform=ax.transAxes, ha="center", va="center", fontsize=8,
                    color="0.35", fontstyle="italic")
            continue
        parts = [verdict for _, verdict in row.headline]
        ys = np.linspace(0.2, 0.8, len(parts)) if len(parts) > 1 else [0.5]
        threshold = parts[0].threshold
        if threshold:
            ax.axvspan(-threshold, threshold, color="0.88", lw=0, zorder=0)
        ax.axvline(0, color="0.45", lw=0.8, zorder=1)
        for y, verdict in zip(ys, parts):
            low, high = verdict.interval
            ax.errorbar([verdict.effect], [y], xerr=[[verdict.effect - low], [high - verdict.effect]], fmt="o",
                        color=OTHER_COLOUR if verdict.outcome in OPEN else colour,
                        ms=3.5 if len(parts) > 6 else 4.5, elinewidth=1.2, capsize=0, zorder=3)
        extent = [value for verdict in parts for value in verdict.interval] + [0.0]
        if threshold:
            extent += [-threshold, threshold]
        if row.paper_effect is not None:
            ax.plot([row.paper_effect], [0.5], marker="D", ms=6, mfc="white", mec="black", mew=1.2, ls="none", zorder=4)
            extent.append(row.paper_effect)
        low, high = min(extent), max(extent)
        pad = 0.08 * (high - low or 1.0)
        ax.set_xlim(low - pad, high + pad)
        ax.locator_params(axis="x", nbins=5)
        ax.tick_params(axis="x", labelsize=8, pad=1, length=2)
    handles = [Line2D([], [], marker="o", color="0.3", ls="-", ms=4.5, label=f"the book: estimate, {_confidence()} interval"),
               Line2D([], [], marker="D", mfc="white", mec="black", ls="none", ms=6, label="the paper's effect"),
               Patch(color="0.88", label="threshold band"),
               Line2D([], [], marker="o", color=OTHER_COLOUR, ls="-", ms=4.5, label="an open part (exploratory, undecided)")]
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False,
               handletextpad=0.4, columnspacing=1.2)
    return fig


def scorecard_keys(fig) -> list[str]:
    """The claims the scorecard ``fig`` draws, top to bottom (each row's axes carry its key)."""
    return [ax.get_gid() for ax in fig.axes if ax.get_gid()]


def top_problems(rows: Sequence[LedgerRow], summary: str, bullets: Sequence[str], fig) -> list[str]:
    """What keeps the top of the front page from reading in a minute: an abstract over
    :data:`ABSTRACT_WORDS` words, more than :data:`BULLETS` bullets or one over :data:`BULLET_WORDS`
    words, a scorecard whose rows are not the ledger's claims in order. An empty list: none."""
    problems = []
    if words(summary) > ABSTRACT_WORDS:
        problems.append(f"the abstract has {words(summary)} words (at most {ABSTRACT_WORDS})")
    if len(bullets) > BULLETS:
        problems.append(f"{len(bullets)} bullets (at most {BULLETS})")
    problems += [f"a bullet of {words(bullet)} words (at most {BULLET_WORDS}): {bullet[:60]!r}..." for bullet in bullets
                 if words(bullet) > BULLET_WORDS]
    drawn = scorecard_keys(fig)
    if drawn != [row.key for row in rows]:
        problems.append(f"the scorecard draws {drawn}, the ledger has {[row.key for row in rows]}")
    return problems


# The box at the top of an experimental chapter: what it found, in at most BOX_BULLETS bullets of
# at most BULLET_WORDS words (the front page's limit), before its plan or setup.
BOX_BULLETS = 3


def fitting(variants: str | Sequence[str]) -> str | None:
    """The first of ``variants`` (a bullet, or its wordings longest first) of at most
    :data:`BULLET_WORDS` words; None when none fits."""
    return next((text for text in ([variants] if isinstance(variants, str) else variants) if words(text) <= BULLET_WORDS), None)


def box_problems(bullets: Sequence[str]) -> list[str]:
    """What keeps a chapter's box from reading at a glance: no bullet, more than :data:`BOX_BULLETS`,
    one over :data:`BULLET_WORDS` words. An empty list: none."""
    problems = [] if bullets else ["no bullet"]
    if len(bullets) > BOX_BULLETS:
        problems.append(f"{len(bullets)} bullets (at most {BOX_BULLETS})")
    return problems + [f"a bullet of {words(bullet)} words (at most {BULLET_WORDS}): {bullet[:60]!r}..." for bullet in bullets
                       if words(bullet) > BULLET_WORDS]


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
        raise ValueError(f"chapter must test a claim of the ledger ({', '.join(dict.fromkeys(PAPER[key].chapter for key in ORDER))}); "
                         f"got {chapter!r}")
    with reading_cache(results_dir):
        rows = [row for study in STUDIES.values() if set(study.claims) & set(keys) for row in study.rows(profile) if row.key in keys]
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
    kept = "; ".join(filter(None, (row.note(short=True), row.parts_note, published_excluded_note(row))))  # beside the word in every wording
    beside = "; ".join(filter(None, (found if found != word else "", kept)))
    said = claim_phrase(row.verdict) + (f" ({beside})" if beside else "")
    whose = "the book's test" if PAPER[row.key].beyond_paper else "the paper's claim"
    said = said.replace("the claim", whose, 1)
    name = f"**{short_name(row)}**"
    if row.seeds or row.seed_counts:
        seeds = _seed_counts_text(row)
        regime = training_regime(row)
        shortest = f"{word} ({kept})" if kept else word
        verdict = [f"{name}: {said}; {seeds}; {regime}." if regime else f"{name}: {said}; {seeds}.", f"{name}: {said}; {seeds}.",
                   *([f"{name}: {word} ({beside}); {seeds}."] if beside else []), f"{name}: {shortest}; {seeds}."]
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
    text = f"the {_confidence()} interval excludes the paper's gain of {row.paper_effect:.3g}{f' {units}' if units else ''}"
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
    rows = icl_study.verdict_rows(comparisons, cache)
    checks = icl_study.bounded_checks(rows)
    bullets = []
    for comparison in (comparison for comparison in comparisons if comparison.primary):
        judged = [row["verdict"] for row in rows if row["comparison"] == comparison.name and row["verdict"].outcome != NOT_TESTED]
        if not judged:
            bullets.append([f"**{comparison.name}**: {NOT_RUN_YET}."])
            continue
        pairs = sorted({verdict.pairs for verdict in judged})
        tasks = f"{', '.join(get_task(task).title for task in comparison.tasks)}; " if len(comparison.tasks) > 1 else ""
        head = f"**{comparison.name}** ({tasks}{_listed([str(count) for count in pairs])} paired seeds): "
        small = [direction for verdict in judged if (direction := verdict.small_direction())]
        counted = counted_words([(verdict.outcome, verdict.word()) for verdict in judged], of=" verdicts")
        counted += f" ({', '.join(f'{direction} on {small.count(direction)}' for direction in dict.fromkeys(small))})" if small else ""
        mine = [check for check in checks if check["comparison"] == comparison.name]
        caveat = f"; a distribution-free check {icl_study.bounded_check_words(mine)}" if mine else ""
        bullets.append([f"{head}{counted}{caveat}.", f"{head}{counted}."])
    regime_rows = icl_study.regime_rows(cache)
    takeaway, short = (icl_study.regime_takeaway(regime_rows, detail) for detail in (True, False))
    takeaway, short = takeaway[:1].lower() + takeaway[1:], short[:1].lower() + short[1:]
    pairs = sorted({row["verdict"].pairs for row in regime_rows if row["verdict"].pairs})
    seeds = f"; {pairs[0]} to {pairs[-1]} paired seeds" if len(pairs) > 1 else ""
    endpoint = icl_study.REGIME_MAP_ENDPOINT
    bullets.append([f"**Training regimes** ({endpoint}{seeds}): {takeaway}", f"**Training regimes** ({endpoint}): {takeaway}",
                    f"**Training regimes**: {takeaway}", f"**Training regimes**: {short}"])
    return bullets[:BOX_BULLETS]


def retrieval_findings(accuracy: Mapping[str, Verdict], weight: Mapping[str, Verdict],
                       original_accuracy: Mapping[str, Verdict], replication: Verdict,
                       original_replication: Verdict) -> list[list[str]]:
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
    bullets = [[f"{head}{ssa(short_setup)}; on the top item's share: {_with_seeds(weight['ssa'])}."] * ("ssa" in weight)
               + [f"{head}{ssa(short_setup)}.", f"{head}{ssa(short_setup, False)}.", f"{head}{ssa(short_setup, short=True)}."]]
    if "ssa" in original_accuracy:
        original = original_accuracy["ssa"]
        bullets.append([f"**Original setup**, the same comparison: {ssa(original)}.",
                        f"**Original setup**, the same comparison: {ssa(original, False)}.",
                        f"**Original setup**, the same comparison: {ssa(original, short=True)}."])
    head = "**Adaptive temperature** against its authors' published gain: "
    claim = retrieval_analysis.ADAPTIVE_TEMPERATURE_REPLICATION
    setups = {"short": replication, "original": original_replication}
    judged = [(claim, verdict) for verdict in setups.values()]
    variants = [noted("; ".join(f"{name} setup {_with_seeds(verdict, estimate, short)}" for name, verdict in setups.items()), *judged)
                for estimate, short in ((True, False), (False, False), (False, True))]
    if len({_with_seeds(verdict, False) for verdict in setups.values()}) == 1:  # one word for both: said once
        estimates = ", ".join(f"{name} {verdict.estimate()}" for name, verdict in setups.items() if verdict.interval is not None)
        variants[1:1] = [noted(", ".join(filter(None, (_with_seeds(replication, False), estimates))), *judged),
                         noted(f"both setups {_with_seeds(replication, False)}", *judged)]
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
        raise ValueError(f"tokens must be a length the checks measure ({sorted({c['tokens'] for c in checks if c['tokens']})}); got {tokens}")
    bullets = [[f"**Attention, forward + backward**, {tokens:,} tokens, one measurement on this CPU: SSA takes {time['ratio']:.2f} "
                f"times softmax's time" + (f" and {memory['ratio']:.2f} times its peak memory." if memory else ".")]]
    training = by_what.get(("in-context training time", None))
    if training is not None:
        bullets.append([f"**A whole in-context training run**, estimated from timed training steps weighted by the curriculum: "
                        f"SSA's would take {training['ratio']:.2f} times softmax's time."])
    met = sum(check["met"] for check in checks)
    worst = max(checks, key=lambda check: check["ratio"] / check["at most"])
    where = f" at {worst['tokens']:,} tokens" if worst["tokens"] else ""
    bullets.append([f"**Targets**: {met} of {len(checks)} met; the furthest, {worst['what']}{where}: {worst['ratio']:.2f} times "
                    f"softmax's, against at most {worst['at most']:g}.", f"**Targets**: {met} of {len(checks)} met."])
    return bullets
