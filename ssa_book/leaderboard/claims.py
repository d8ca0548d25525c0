"""The paper's statement on the alternative scorers, and SSA across two kinds of shift, as rows of
the ledger: the Alternative scorers chapter's cached runs (:mod:`ssa_book.alternatives`) until every
in-context cell of the paper's alternatives is filled in the leaderboard (:mod:`ssa_book.leaderboard.board`),
then the leaderboard's."""

from __future__ import annotations

from collections.abc import Sequence

from ssa_book.verdicts.words import DOES_NOT_HOLD, HOLDS, OPEN, UNDECIDED, claim_word, counted_words
from ssa_book.verdicts.claim import no_effect_pairs
from ssa_book.verdicts.verdict import Verdict
from ssa_book.leaderboard import board as leaderboard, findings
from ssa_book.alternatives import comparison, statement
from ssa_book.claims import (
    LedgerRow,
    PaperClaim,
    headline_of,
    judged_parts,
    listed,
    missing,
    only_on,
    ours,
    paired,
    paper_figure,
    panels_by_task,
    parts_of,
    sentence,
    set_after_reading,
    short_summary,
    tally,
)
from ssa_book.icl.study import design as study_design
from ssa_book.retrieval import analysis as retrieval_analysis, experiment as retrieval
from ssa_book.results.provenance import total_wall_time


# The alternatives' statement is about every alternative: its scorecard row draws each comparison.
ALL_PARTS = 64


def leaderboard_regime(profile: str, seeds: Sequence[int]) -> str:
    """The in-context columns' regime with their ``seeds``, then max retrieval's in each of its setups."""
    retrieval_seeds = leaderboard.seeds(leaderboard.RETRIEVAL, profile)
    return f"in-context columns: {study_design.ARMS['ssa'].regime('every', profile)}, {paired(seeds)}; " + "; ".join(
        f"max retrieval, {setup} setup: {retrieval_analysis.regime(profile, setup, retrieval_seeds)}"
        for setup in retrieval.SETUPS
    )


def alternatives_row(profile: str) -> LedgerRow:
    """The Alternative scorers chapter's verdict on the paper's statement (``ssa_book.alternatives``),
    from whatever runs of the alternatives the paper tried are cached (all seeds of a scorer and
    task, next to softmax's)."""
    scorers = ("softmax", *comparison.PAPER_ALTERNATIVES)
    command = comparison.regenerate_command(profile)
    board = leaderboard.read(profile, train=False)
    runs, cached, planned = comparison.cached_runs(profile, scorers=scorers)
    if findings.statement_complete(board):
        return alternatives_row_at_ten_seeds(profile, board, runs)
    if not runs:
        return missing(
            "alternatives", CLAIMS["alternatives"], profile, command, "no alternative scorer's results in the cache"
        )
    verdict = statement.statement_verdict(runs)
    infos = [run.provenance for by_scorer in runs.values() for seed_runs in by_scorer.values() for run in seed_runs]
    coverage = (
        "" if cached == planned else f" (so far {cached} of the {planned} runs of these scorers; the rest: `{command}`)"
    )
    return LedgerRow(
        "alternatives",
        CLAIMS["alternatives"].claim,
        paper_figure(CLAIMS["alternatives"]),
        statement_ours(verdict) + coverage,
        profile,
        tuple(comparison.chapter_seeds(profile)),
        verdict.outcome,
        None,
        command,
        total_wall_time(infos),
        short_summary(
            verdict,
            tally(
                verdict,
                "comparison of an alternative with softmax",
                "comparisons of the paper's alternatives with softmax",
            ),
        ),
        regime=f"{study_design.ARMS['ssa'].regime('every', profile)}; {paired(comparison.chapter_seeds(profile))}",
        headline=headline_of(verdict, limit=ALL_PARTS),
    )


def leaderboard_row(profile: str) -> LedgerRow:
    """SSA against softmax in every column of the leaderboard (:mod:`ssa_book.leaderboard.board`), combined,
    from whatever cells the cache fills; the scorers better than softmax in each column."""
    command = leaderboard.regenerate_command(profile)
    board = leaderboard.read(profile, train=False)
    if not board.cells:
        return missing(
            "across_shifts", CLAIMS["across_shifts"], profile, command, "no cell of the leaderboard in the cache"
        )
    verdict = findings.ssa_verdict(board)
    columns = [each for each in leaderboard.COLUMNS if board.cell("ssa", each.key) is not None]
    numbers = "; ".join(
        f"{each.label}: SSA {board.cell('ssa', each.key).mean:.3g}, softmax {board.cell('softmax', each.key).mean:.3g}"
        for each in columns
    )
    text = ours(verdict, f"Error at the out-of-distribution point ({numbers})")
    text += f" Scorers better than softmax by the rule, per column: {findings.winners_words(board)}."
    original = retrieval_analysis.original_setup_sentence(profile)
    if original:
        text += " " + original
    if not board.complete:
        text += " " + board.progress_sentence()
    seeds = tuple(sorted({seed for cell in board.cells.values() for seed in cell.seeds}))
    ssa_tasks = panels_by_task([(each.label, cell) for each, cell in findings.ssa_cells(board)])
    short = f"SSA against softmax in {len(columns)} of the {len(leaderboard.COLUMNS)} columns"
    return LedgerRow(
        "across_shifts",
        CLAIMS["across_shifts"].claim,
        paper_figure(CLAIMS["across_shifts"]),
        text,
        profile,
        seeds,
        verdict.outcome,
        None,
        command,
        board.wall_time_s or None,
        short_summary(verdict, short),
        parts_of(verdict),
        leaderboard_regime(profile, leaderboard.seeds(leaderboard.ICL, profile)),
        seed_counts=board.pair_counts(),
        finding=" ".join(
            filter(
                None,
                (
                    sentence(findings.ssa_shifts_sentence(board)),
                    retrieval_analysis.starting_point_finding(profile),
                    fewest_pairs_note(),
                ),
            )
        ),
        headline=headline_of(verdict, rests_on_panels(*ssa_tasks[1:])),
        word_note=findings.ssa_rests_on(board),
        after_reading=minimums_after_reading(board),
    )


# The commit that raised max retrieval's fewest pairs after its results had been read (its entry in
# ssa_book.analysis_changes.CHANGES).
RETRIEVAL_MINIMUM_SET_AFTER_READING = "550efa7"
# The commit that gave the alternatives' statement the book's one tally for a claim of several parts,
# after the leaderboard's ten seeds had been read (its entry in ssa_book.analysis_changes.CHANGES).
TALLY_SET_AFTER_READING = "05e486f"


def decided_panels_note(verdict) -> str:
    """What the alternatives' statement rests on when every panel of some task is open, for the
    front page: "linear panels only" (:func:`statement_tasks`, :func:`ssa_book.claims.only_on`)."""
    _, decided, open_ = statement_tasks(verdict)
    return only_on(decided, open_)


def tally_after_reading_note(verdict: Verdict) -> tuple[str, str]:
    """The statement's tally, the appendix's change :data:`TALLY_SET_AFTER_READING`, made after the
    leaderboard's seeds had been read, and what the tally before it gave (undecided while any panel
    was open), for :func:`ssa_book.claims.set_after_reading`: ("tally", "undecided") (() when both agree)."""
    by_task, _, _ = statement_tasks(verdict)
    before = (
        UNDECIDED if any(panel.outcome in OPEN for panels in by_task.values() for panel in panels) else verdict.outcome
    )
    return ("tally", claim_word(before)) if claim_word(before) != claim_word(verdict.outcome) else ()


def rests_on_panels(decided: Sequence[str], open_: Sequence[str]) -> str | None:
    """The panels a word decided on one task only rests on (the tasks of
    :func:`ssa_book.claims.panels_by_task`), as :func:`ssa_book.claims.headline_of` picks them by
    name, so that a row's scorecard draws the parts its word stands on: "linear, " (None where the
    word rests on every task's panels, or on several)."""
    return f"{decided[0]}, " if len(decided) == 1 and open_ else None


def minimums_after_reading(board) -> tuple[tuple[str, str], ...]:
    """SSA's cells exploratory only under a pair minimum set after they had been read, and what they
    read before it, for :func:`ssa_book.claims.set_after_reading`: max retrieval's, the appendix's change
    :data:`RETRIEVAL_MINIMUM_SET_AFTER_READING` ("set-size minimum"), and the one for prompt errors
    (:data:`ssa_book.claims.FLIP_MINIMUM`): (("set-size minimum", "SSA worse"), ...) (() when none moved a word)."""
    return findings.ssa_minimums_after_reading(board, what="set-size minimum")


def alternatives_row_at_ten_seeds(profile: str, board, chapter_runs: dict) -> LedgerRow:
    """The paper's statement as the leaderboard reads it (every in-context cell of the paper's
    alternatives filled, :func:`ssa_book.leaderboard.findings.statement_complete`): its seeds replace the
    chapter's three; the chapter's outcome is kept as a note."""
    verdict = findings.statement_verdict(board)
    chapter = (
        f" The Alternative scorers chapter, on its {len(comparison.chapter_seeds(profile))} seeds and the mean error over "
        f"the shifted values of σ, says {chapter_words(chapter_runs)}."
        if chapter_runs
        else ""
    )
    seeds = leaderboard.seeds(leaderboard.ICL, profile)
    note = decided_panels_note(verdict)
    text = (
        f"Read by the leaderboard at {len(seeds)} paired seeds, on the error at σ = {leaderboard.TEN_TIMES} of the four "
        f"in-context panels. " + statement_ours(verdict) + chapter
    )
    # beside the tally (what the word rests on stands beside the word): what the chapter's own seeds say
    said = (
        f"the chapter's {len(comparison.chapter_seeds(profile))} seeds: {chapter_words(chapter_runs)}"
        if chapter_runs
        else ""
    )
    return LedgerRow(
        "alternatives",
        CLAIMS["alternatives"].claim,
        paper_figure(CLAIMS["alternatives"]),
        text,
        profile,
        tuple(seeds),
        verdict.outcome,
        None,
        leaderboard.regenerate_command(profile),
        board.wall_time_s or None,
        short_summary(
            verdict,
            tally(
                verdict,
                "comparison of an alternative with softmax",
                "comparisons of the paper's alternatives with softmax",
            )
            + f" at σ = {leaderboard.TEN_TIMES}"
            + (f"; {said}" if said else ""),
        ),
        regime=f"{study_design.ARMS['ssa'].regime('every', profile)}; {paired(seeds)}",
        finding=statement_finding(verdict, len(seeds), chapter_reading(profile, chapter_runs)),
        headline=headline_of(verdict, rests_on_panels(*statement_tasks(verdict)[1:]), limit=ALL_PARTS),
        word_note=note,
        after_reading=tuple(filter(None, (tally_after_reading_note(verdict),))),
    )


CLAIMS: dict[str, PaperClaim] = {
    "alternatives": PaperClaim(
        "Alternative scorers",
        "Temperature softmax, sparsemax, entmax, cosFormer, SA-softmax and others were tried: "
        "none consistently better than softmax (numbers not published).",
        "paper, discussion of alternative scoring functions",
        "alternative_scorers",
    ),
    "across_shifts": PaperClaim(
        "Beyond the paper: SSA on the paper's shift and on set size",
        "The paper's thesis is that SSA generalises better than softmax under distribution shift; it tests "
        "one kind, the scale of the inputs. The leaderboard asks it on that shift and on a second one the "
        "paper does not test, set size in max retrieval (Veličković et al. 2025), beside every other scorer.",
        "paper, abstract (its general claim); the second shift is not in the paper",
        "leaderboard",
        beyond_paper=True,
    ),
}


def leaderboard_rows(profile: str) -> list[LedgerRow]:
    return [alternatives_row(profile), leaderboard_row(profile)]


def fewest_pairs_note() -> str:
    """Max retrieval's fewest pairs, and the leaderboard's retrieval columns' where they differ, said
    set after the results were read, as the appendix records (:data:`RETRIEVAL_MINIMUM_SET_AFTER_READING`)."""
    chapter = no_effect_pairs(retrieval_analysis.SHIFTED_ACCURACY)
    columns = {
        each.label: no_effect_pairs(each.claim)
        for each in leaderboard.COLUMNS
        if each.benchmark == leaderboard.RETRIEVAL
    }
    other = [
        f"the leaderboard's column of the {label.split(', ')[1]} from {pairs}"
        for label, pairs in columns.items()
        if pairs != chapter
    ]
    return (
        f"Max retrieval decides from {chapter} pairs"
        + (f" ({listed(other)})" if other else "")
        + f", minimum{'s' if other else ''} set after the results were read (the analysis-changes page lists "
        f"{'them' if other else 'it'})."
    )


# The paper's statement in words: its direction said plainly, what its word rests on, how it was tallied.


def statement_words(verdict: Verdict) -> str:
    """The paper's statement that none of its alternatives is consistently better than softmax
    (:func:`ssa_book.alternatives.statement.judge_statement`), its direction said plainly, never
    as "not better: undecided": "holds: no alternative the paper tried is better than softmax on
    every panel", "undecided whether any alternative the paper tried is better than softmax on every panel"."""
    which = "alternative the paper tried is better than softmax on every panel"
    word = claim_word(verdict.outcome)
    if verdict.outcome in OPEN:
        return f"undecided whether any {which}"
    if word == HOLDS:
        return f"holds: no {which}"
    if word == DOES_NOT_HOLD:
        return f"does not hold: an {which}"
    return word


def statement_ours(verdict: Verdict) -> str:
    """A ledger row's side of the statement: its plain words (:func:`statement_words`), then each
    alternative's claim with its panels counted (the verdict's detail)."""
    said = f"The paper's statement {statement_words(verdict)}."
    return f"{said} {verdict.detail.rstrip('.')}." if verdict.detail else said


def statement_tasks(verdict: Verdict) -> tuple[dict[str, list[Verdict]], list[str], list[str]]:
    """The statement's panels by task (a panel's task is its label up to the first comma), the
    tasks that decide a panel, and those every panel of which is open."""
    return panels_by_task([panel for _, claim in verdict.parts for panel in claim.parts])


def statement_basis(verdict: Verdict) -> str:
    """On which tasks' panels the statement's word rests, where every panel of another task is open,
    so that a word decided on some tasks is never read as said of all: 'on linear panels only (no
    difference that matters on 11 of 12, undecided on 1); "every" and "some" exploratory on 12 of
    12' ("" when every task decides a panel, or none does). A panel's task is its label up to the
    first comma."""
    by_task, decided, open_ = statement_tasks(verdict)
    if not decided or not open_:
        return ""

    def counted(tasks: Sequence[str]) -> str:
        return counted_words([(part.outcome, part.word()) for task in tasks for part in by_task[task]])

    return f"on {only_on(decided, open_)} ({counted(decided)}); {listed(open_)} {counted(open_)}"


def tally_after_reading(verdict: Verdict, pairs: int) -> str:
    """How the statement's word at the leaderboard's seeds comes from its parts changed after those
    seeds had been read (the analysis changes page, 05e486f), by the one rule for such notes
    (:func:`ssa_book.claims.set_after_reading`, :func:`tally_after_reading_note`): 'the tally giving
    "holds" at 10 seeds set after reading, undecided before it'."""
    what = f'the tally giving "{claim_word(verdict.outcome)}" at {pairs} seeds'
    note = tally_after_reading_note(verdict)
    return set_after_reading(what, note[1]) if note else f"{what} set after reading"


def statement_qualifier(verdict: Verdict, pairs: int) -> str:
    """What follows the leaderboard's word on the statement: what the word rests on and how it was
    tallied, 'on linear panels only (...); "every" and "some" exploratory on 12 of 12; the tally
    giving "holds" at 10 seeds set after reading, undecided before it.' ("(the tally ...)." when every task decides)."""
    basis = statement_basis(verdict)
    tally_words = tally_after_reading(verdict, pairs)
    return f"{basis}; {tally_words}." if basis else f"({tally_words})."


def statement_finding(verdict: Verdict, pairs: int, chapter: str = "") -> str:
    """What goes with the leaderboard's word on the statement in a chapter's box, most needed first
    (the box keeps the leading clauses that fit): the tasks it rests on, that its tally came after
    reading, then ``chapter`` (:func:`chapter_reading`): 'Holds on linear panels only ("every" and
    "some" exploratory on 12 of 12); the tally giving "holds" at 10 seeds set after reading,
    undecided before it; the chapter's own 3 seeds ... read undecided (...).'"""
    by_task, decided, open_ = statement_tasks(verdict)
    basis = ""
    if decided and open_:
        counted = counted_words([(part.outcome, part.word()) for task in open_ for part in by_task[task]])
        basis = f"{claim_word(verdict.outcome)} on {only_on(decided, open_)} ({listed(open_)} {counted})"
    return sentence(
        "; ".join(filter(None, (basis, tally_after_reading(verdict, pairs), chapter[:1].lower() + chapter[1:])))
    )


def chapter_words(chapter_runs: dict) -> str:
    """What the Alternative scorers chapter's own seeds say of the statement, in the claim's word with
    its comparisons counted, wherever a page says it: "undecided (exploratory on 24 of 24)"."""
    verdict = statement.statement_verdict(chapter_runs)
    counted = counted_words([(part.outcome, part.word()) for part in judged_parts(verdict)])
    return claim_word(verdict.outcome) + (f" ({counted})" if counted else "")


def chapter_reading(profile: str, chapter_runs: dict) -> str:
    """What the Alternative scorers chapter's own seeds say of the statement, its comparisons
    counted (:func:`chapter_words`): "The chapter's own 3 seeds (mean error over σ > 1) read undecided
    (exploratory on 24 of 24)." ("" without its runs)."""
    if not chapter_runs:
        return ""
    return (
        f"The chapter's own {len(comparison.chapter_seeds(profile))} seeds (mean error over σ > 1) read "
        f"{chapter_words(chapter_runs)}."
    )
