"""The claims ledger: each headline claim of the paper, the paper's figure, ours, and a verdict.

    rows = ledger(profile="cpu")       # one LedgerRow per claim, read from the result cache
    summary_markdown(rows)             # the front page's table: claim, verdict, one short sentence
    ledger_markdown(rows)              # the full table: the paper's figure and ours, claim by claim
    ledger_frame(rows)                 # the same as a pandas DataFrame

Nothing here trains or evaluates a model. Every study registers the paper's claims it tests, with
the function that gives their rows (:class:`ssa_book.chapters.Study`); the ledger iterates the
registry (:data:`ssa_book.chapters.STUDIES`) and puts the rows in :data:`ssa_book.claims.ORDER`, with the result cache *required* (as CI does), so
a claim whose results are not cached yet is "not tested", with the command that creates them; it
becomes a verdict as soon as that chapter commits its results, without any edit here. The
theorems are the exception: they are checked live with :mod:`ssa_book.theory`, in seconds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ssa_book import error_rates, paths, studies, verdicts  # noqa: F401  (studies: importing it registers every study, with its claims)
from ssa_book.book import toc_documents
from ssa_book.chapters import STUDIES
from ssa_book.claims import ORDER, PAPER, PAPER_REGIME, LedgerRow, comparison_words, paper_figure, plural
from ssa_book.icl import study as icl_study
from ssa_book.profiles import check_profile
from ssa_book.results import REQUIRE_CACHE_ENV
from ssa_book.verdicts import NOT_TESTED

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
    unregistered = [key for key in ORDER if key not in PAPER]
    if unregistered:
        raise RuntimeError(f"no study registered the claims {', '.join(unregistered)} (ssa_book.studies imports every study)")
    rows: list[LedgerRow] = []
    with reading_cache(results_dir):
        for study in STUDIES.values():
            if not study.claims:
                continue
            if not theorems and set(study.claims) <= set(LIVE):
                rows += [LedgerRow(key, PAPER[key].claim, paper_figure(key), "not checked (theorems=False)", "live", (), NOT_TESTED,
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


def _verdict_cell(row: LedgerRow) -> str:
    """What the row found of the paper's claim, linked to the glossary, with the comparison's own
    words beside it when they say more: "does not hold (SSA worse on 5 of 6 parts, ...)"."""
    words = comparison_words(row)
    claim = verdicts.claim_word(row.verdict)
    return verdict_link(claim) + (f" ({words})" if words and words != claim else "")


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
    comparison's words), :attr:`LedgerRow.summary` (one short sentence) and the regime in short
    (:func:`short_regime`); :func:`ledger_markdown` has the full rows."""
    lines = ["| claim | the paper's claim | in short | regime (layers × width, training, SSA's start, seeds) |",
             "|---|---|---|---|"]
    for row in rows:
        claim = f"{{doc}}`{row.claim} </{row.section}>`" if row.section else row.claim
        regime = short_regime(row.regime) if row.regime else ("computed live" if row.profile == "live" else "")
        lines.append("| " + " | ".join(_cell(text) for text in (claim, _verdict_cell(row), row.summary or row.ours, regime)) + " |")
    return "\n".join(lines)


def ledger_frame(rows: Sequence[LedgerRow]):
    """The ledger as a pandas DataFrame, one row per claim."""
    import pandas as pd

    return pd.DataFrame([dataclasses.asdict(row) for row in rows]).set_index("key")


# What a count of claims does, by :func:`ssa_book.verdicts.claim_word`: (one, several).
_PREDICATES = {
    verdicts.HOLDS: ("holds", "hold"),
    verdicts.DOES_NOT_HOLD: ("does not hold", "do not hold"),
    verdicts.HOLDS_IN_PART: ("holds in part", "hold in part"),
    verdicts.MIXED: ("is mixed", "are mixed"),
    verdicts.UNDECIDED: ("is undecided", "are undecided"),
    verdicts.PREMISE_ABSENT: ("lacks its premise", "lack their premise"),
    verdicts.NOT_TESTED: ("is not tested", "are not tested"),
}


def verdict_counts(rows: Sequence[LedgerRow]) -> dict[str, int]:
    """How many rows' claims hold, do not hold, ... (:func:`ssa_book.verdicts.claim_word`), every word counted."""
    words = [verdicts.claim_word(row.verdict) for row in rows]
    return {word: words.count(word) for word in _PREDICATES}


def _listed(phrases: Sequence[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _counted(rows: Sequence[LedgerRow]) -> str:
    """"2 do not hold, 5 are undecided and 1 is not tested" (the words that occur, in :data:`_PREDICATES` order)."""
    return _listed([f"{count} {_PREDICATES[word][count != 1]}" for word, count in verdict_counts(rows).items() if count])


def counts_sentence(rows: Sequence[LedgerRow]) -> str:
    """The claims counted by what the book found of them, the experiments apart from the theorems
    (rows computed live): "Of the 9 experimental claims, none holds: 3 do not hold, 5 are
    undecided and 1 is not tested. The 2 theorems (derivations, checked live): 2 hold."."""
    theorems = [row for row in rows if row.profile == "live"]
    own = [row for row in rows if row.profile != "live" and row.key in PAPER and PAPER[row.key].beyond_paper]
    experiments = [row for row in rows if row.profile != "live" and row not in own]
    sentences = []
    if experiments:
        holding = sum(verdicts.claim_word(row.verdict) == verdicts.HOLDS for row in experiments)
        head = f"Of the paper's {plural(len(experiments), 'experimental claim')}"
        if holding:
            sentences.append(f"{head}, {_counted(experiments)}.")
        else:
            sentences.append(f"{head}, none holds: {_counted(experiments)}.")
    if own:
        sentences.append(f"The book's own {'test' if len(own) == 1 else 'tests'} beyond the paper: {_counted(own)}.")
    if theorems:
        noun = "The theorem" if len(theorems) == 1 else f"The {len(theorems)} theorems"
        sentences.append(f"{noun} (derivations, checked live): {_counted(theorems)}.")
    return " ".join(sentences)


DECIDED_AGAINST = (verdicts.DOES_NOT_HOLD, verdicts.WORSE, verdicts.NEGLIGIBLE)


def regime_map_markdown(profile: str) -> str:
    """The powered study's regime map (:func:`ssa_book.icl.study.regime_map`) as a whole MyST table:
    SSA against softmax in every training regime the study has ("" when the plan at ``profile``
    has only its primary comparison)."""
    study = icl_study
    frame = study.regime_map(study.StudyCache(profile, train=False))
    if len(frame) < 2:
        return ""
    return markdown_table(frame, [column for column in frame.columns if column != "comparison"])


def _rule_error_sentence(profile: str) -> str:
    """The rule's largest false direction rate over every chapter, at the seed counts each uses,
    under nulls resampled from the chapters' own per-seed differences
    (:func:`ssa_book.error_rates.sentence`; the whole table is on the reproducing page)."""
    return error_rates.sentence(error_rates.error_rate_table(profile, pair_counts=()))


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
            found = comparison_words(row) or row.summary.rstrip(".")
            whose = "the book's test" if row.key in PAPER and PAPER[row.key].beyond_paper else "the paper's claim"
            bullets.append(f"**{row.claim}**: {whose} does not hold here{f' ({found})' if found else ''}.{regime}{caveats}")
    for word, label in ((verdicts.HOLDS_IN_PART, "Holds in part"), (verdicts.MIXED, "Mixed")):
        found = [row for row in experiments if row.verdict == word]
        if found:
            bullets.append(f"**{label}**: " + "; ".join(f"{row.claim} ({comparison_words(row) or row.summary.rstrip('.')})"
                                                       for row in found) + ".")
    undecided = [row for row in experiments if row.verdict in verdicts.OPEN]
    if undecided:
        listed = "; ".join(f"{row.claim} ({_seed_counts_text(row)}{', exploratory' if row.verdict == verdicts.TOO_FEW_SEEDS else ''}"
                           f"{f'; {row.finding}' if row.finding else ''})" for row in undecided)
        excluded = [row.claim for row in undecided if row.published_excluded]
        beside = (f" For {_listed(excluded)}, the 95% interval at the book's scale already excludes an effect the size of the paper's."
                  if excluded else "")
        bullets.append(f"**Undecided**, at the seeds run so far: {listed}. Each row says how many seeds would decide it.{beside}")
    untested = [row for row in experiments if row.verdict in (verdicts.NOT_TESTED, verdicts.NOT_LEARNED, verdicts.PREMISE_ABSENT)]
    if untested:
        bullets.append("**Not tested or premise absent**: " + "; ".join(f"{row.claim} ({verdicts.claim_word(row.verdict)})" for row in untested) + ".")
    return bullets[:6]


def findings_markdown(rows: Sequence[LedgerRow]) -> str:
    return "\n".join(f"- {bullet}" for bullet in findings(rows))
