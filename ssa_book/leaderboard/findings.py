"""What the leaderboard finds: the outcomes counted, the paper's statement re-read, SSA across
both kinds of shift, the scorers better than softmax, and the figure."""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Sequence

import numpy as np

from ssa_book.verdicts.words import (
    BETTER,
    HOLDS_IN_PART,
    MIXED,
    NOT_RUN_YET,
    NOT_TESTED,
    OPEN,
    UNDECIDED,
    WORSE,
    claim_word,
)
from ssa_book.verdicts.rule import FALSE_DISCOVERY_RATE
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.families import combine
from ssa_book.alternatives.comparison import PAPER_ALTERNATIVES
from ssa_book.alternatives.statement import COMPARISON_COLUMNS, judge_statement
from ssa_book.claims import (
    listed,
    minimum_moved,
    minimums_after_reading,
    only_on,
    panels_by_task,
    plural,
    set_after_reading,
)
from ssa_book.plotting import COLUMN_WIDTH_IN, scorer_color, scorer_label
from ssa_book.leaderboard.board import (
    Board,
    COLUMNS,
    Column,
    ICL_COLUMNS,
    ICL,
    RETRIEVAL,
    SHIFT_KINDS,
    TEN_TIMES,
    column,
    regenerate_command,
    scorers,
    seeds,
)
from ssa_book.leaderboard.tables import OUTCOME_MARKS, rests_on


def outcome_counts(board: Board):
    """Scorer x outcome: in how many columns each verdict against softmax was reached."""
    import pandas as pd

    counts = {}
    for scorer in scorers()[1:]:
        outcomes = [
            cell.verdict.outcome for key in (c.key for c in COLUMNS) if (cell := board.cell(scorer, key)) is not None
        ]
        counts[scorer_label(scorer)] = {OUTCOME_MARKS[o]: outcomes.count(o) for o in OUTCOME_MARKS}
        counts[scorer_label(scorer)][NOT_RUN_YET] = len(COLUMNS) - len(outcomes)
    return pd.DataFrame.from_dict(counts, orient="index")


def before_minimums_sentence(board: Board) -> str:
    """What the exploratory cells read before the pair minimums set after they had been read (max
    retrieval's and the one for prompt-error directions, :func:`ssa_book.claims.minimum_moved`), counted
    by direction with the scorers that read better named, before false-discovery control: "Before the
    pair minimums set after the cells had been read (...), 17 read worse than softmax and 1.5-entmax read
    better than softmax, of the 50 cells those minimums left exploratory, ..." ("" when they moved no
    cell to a direction)."""
    before = [
        moved[1]
        for scorer in scorers()[1:]
        for each in COLUMNS
        if (cell := board.cell(scorer, each.key)) is not None and (moved := minimum_moved(each.claim, cell.verdict))
    ]
    worse = [verdict for verdict in before if verdict.outcome == WORSE]
    better = [verdict.treatment for verdict in before if verdict.outcome == BETTER]
    if not worse and not better:
        return ""
    said = " and ".join(
        filter(
            None,
            (
                f"{len(worse)} read worse than softmax" if worse else "",
                f"{listed(better)} read better than softmax" if better else "",
            ),
        )
    )
    return (
        f"Before the pair minimums set after the cells had been read (max retrieval's, and the prompt-error minimum "
        f"for a direction), {said}, of the {plural(len(before), 'cell')} those minimums left exploratory, before false-discovery "
        f"control; the analysis-changes page lists the changes."
    )


def comparison(board: Board, keys: Sequence[str] = ICL_COLUMNS):
    """The cells of ``keys`` as :func:`ssa_book.alternatives.comparison.versus_softmax` lays out its
    comparisons (one row per scorer and panel), so that the Alternative scorers chapter's reading
    of the paper's statement (:func:`ssa_book.alternatives.comparison.judge_statement`) reads this
    table too."""
    import pandas as pd

    rows = []
    for key in keys:
        each = column(key)
        reference = board.cell("softmax", key)
        for scorer in scorers()[1:]:
            found = board.cell(scorer, key)
            if found is None or reference is None:
                continue
            verdict = found.verdict
            low, high = verdict.interval if verdict.interval is not None else (np.nan, np.nan)
            rows.append(
                {
                    "scorer": scorer,
                    "task": each.task,
                    "shift": each.shift,
                    "panel": each.label,
                    "paper": scorer in PAPER_ALTERNATIVES,
                    "learned": found.learned,
                    "softmax": reference.mean,
                    "error": found.mean,
                    "outcome": verdict.outcome,
                    "effect": np.nan if verdict.effect is None else verdict.effect,
                    "low": low,
                    "high": high,
                    "pairs": verdict.pairs,
                    "seeds_to_resolve": verdict.seeds_to_resolve,
                    "seeds": found.seeds if verdict.interval is not None else (),
                    "differences": verdict.differences,
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))


def statement_verdict(board: Board) -> Verdict:
    """The paper's "none of the alternatives it tried is consistently better than softmax", read
    from the in-context columns (the paper's own shift) at the leaderboard's seeds, with the power
    of the rule at their spread (:func:`ssa_book.alternatives.comparison.judge_statement`)."""

    return judge_statement(comparison(board))


def statement_complete(board: Board) -> bool:
    """Whether every in-context cell of softmax and of the paper's alternatives is filled: only
    then does the leaderboard's reading of the paper's statement replace the chapter's."""

    return all(
        board.cell(scorer, key) is not None for scorer in ("softmax", *PAPER_ALTERNATIVES) for key in ICL_COLUMNS
    )


def statement_reading(board: Board) -> dict:
    """The leaderboard's reading of the paper's statement, for the Alternative scorers chapter and
    the front page: ``{"complete": bool, "outcome": str, "text": str}``, "not tested"
    with what is missing until :func:`statement_complete`. The text is Markdown (it may name a
    command in backticks)."""
    if not statement_complete(board):
        cells = [(scorer, key) for scorer in ("softmax", *PAPER_ALTERNATIVES) for key in ICL_COLUMNS]
        filled = sum(board.cell(*cell) is not None for cell in cells)
        return {
            "complete": False,
            "outcome": NOT_TESTED,
            "text": (
                f"not read yet: {filled} of the {len(cells)} in-context cells of softmax and the paper's alternatives "
                f"are filled; `{regenerate_command(board.profile)}` computes the rest"
            ),
        }
    verdict = statement_verdict(board)
    pairs = len(seeds(ICL, board.profile))
    return {
        "complete": True,
        "outcome": verdict.outcome,
        "text": f"{verdict.words()}, at {pairs} paired seeds on the error at σ = {TEN_TIMES}. {verdict.detail}",
    }


def ssa_verdict(board: Board) -> Verdict:
    """SSA against softmax in every column, combined (:func:`ssa_book.verdicts.families.combine`): the front
    page's row. While a column is pending it stays "undecided" (or "holds in part" when the columns
    in already disagree); "not tested" while no column has SSA's cell."""
    name = "SSA's error at the out-of-distribution point is lower than softmax's, on every kind of shift"
    parts = {each.label: cell.verdict for each in COLUMNS if (cell := board.cell("ssa", each.key)) is not None}
    if not parts:
        return Verdict(name, NOT_TESTED, detail="no column has SSA's and softmax's runs complete")
    combined = combine(name, parts)
    pending = [each.label for each in COLUMNS if board.cell("ssa", each.key) is None]
    if not pending:
        return combined
    # parts decided both ways, or one for the claim, stay so whatever the columns still to come show
    outcome = combined.outcome if combined.outcome in (HOLDS_IN_PART, MIXED) else UNDECIDED
    return dataclasses.replace(
        combined, outcome=outcome, detail=f"{combined.detail}; not run yet: {', '.join(pending)}"
    )


def ssa_by_shift(board: Board) -> dict[str, Verdict]:
    """SSA against softmax on each kind of shift (:data:`SHIFT_KINDS`) whose columns have SSA's
    cell, those columns combined by the one tally of a claim of several parts."""
    found = {}
    for benchmark, kind in SHIFT_KINDS.items():
        parts = {
            each.label: cell.verdict
            for each in COLUMNS
            if each.benchmark == benchmark and (cell := board.cell("ssa", each.key)) is not None
        }
        if parts:
            found[kind] = combine(f"SSA's error is lower than softmax's under a shift of {kind}", parts)
    return found


def shift_words(verdict: Verdict, kind: str, note: str = "") -> str:
    """SSA's claim on one kind of shift (:func:`ssa_by_shift`) in words: its word where a column
    decides it, "undecided" while every column is open, its columns counted, then ``note``: "does
    not hold on input and function scale (no difference that matters on 2 of 4, exploratory on 2;
    linear panels only)", "undecided on set size (exploratory on 2 of 2; pair minimum set after
    reading, SSA worse before it)"."""
    inside = "; ".join(filter(None, (verdict.tally() or verdict.label(), note)))
    if verdict.outcome in OPEN:
        return f"{UNDECIDED} on {kind} ({inside})"
    return f"{claim_word(verdict.outcome)} on {kind} ({inside})"


def ssa_cells(board: Board, benchmark: str | None = None) -> list[tuple[Column, Verdict]]:
    """SSA's cells against softmax, column by column (those of ``benchmark`` only, when given)."""
    return [
        (each, cell.verdict)
        for each in COLUMNS
        if benchmark in (None, each.benchmark) and (cell := board.cell("ssa", each.key)) is not None
    ]


def ssa_rests_on(board: Board, benchmark: str | None = None) -> str:
    """What SSA's word (on the columns of ``benchmark``, or on all) rests on, by the one rule for a
    word decided on some tasks only (:func:`ssa_book.claims.only_on`): "linear panels only"."""
    _, decided, open_ = panels_by_task([(each.label, verdict) for each, verdict in ssa_cells(board, benchmark)])
    return only_on(decided, open_)


def ssa_minimums_after_reading(
    board: Board, benchmark: str | None = None, what: str = "pair minimum"
) -> tuple[tuple[str, str], ...]:
    """The pair minimums set after SSA's cells (of ``benchmark``, or all) had been read that left them
    exploratory, each with what they read before it: max retrieval's :data:`RETRIEVAL_MIN_PAIRS`
    (called ``what``) and the one for prompt errors, which flip from seed to seed
    (:func:`ssa_book.claims.minimums_after_reading`): (("pair minimum", "SSA worse"),)."""
    return minimums_after_reading([(each.claim, verdict) for each, verdict in ssa_cells(board, benchmark)], what)


def ssa_shifts_sentence(board: Board) -> str:
    """SSA against softmax kind of shift by kind (:func:`shift_words`), so that a word decided on one
    kind is never read as said of both, each with what its word rests on and what was set after
    reading: "does not hold on input and function scale (...; linear panels only); undecided on set
    size (exploratory on 2 of 2; pair minimum set after reading, SSA worse before it)" ("" before
    any SSA cell)."""
    by_kind = ssa_by_shift(board)
    return "; ".join(
        shift_words(
            by_kind[kind],
            kind,
            "; ".join(
                filter(
                    None,
                    (
                        ssa_rests_on(board, benchmark),
                        *(set_after_reading(*change) for change in ssa_minimums_after_reading(board, benchmark)),
                    ),
                )
            ),
        )
        for benchmark, kind in SHIFT_KINDS.items()
        if kind in by_kind
    )


def false_discovery_sentence(board: Board) -> str:
    """How many of the board's decided directions against softmax survive control of false
    discoveries over all its cells, one family (:func:`ssa_book.verdicts.families.false_discoveries`)."""
    cells = [
        cell.verdict
        for scorer in scorers()[1:]
        for each in COLUMNS
        if (cell := board.cell(scorer, each.key)) is not None
    ]
    tested = [verdict for verdict in cells if verdict.adjusted_p is not None]
    if not tested:
        return "No cell has enough pairs for a signed-rank test yet."
    kept = [verdict for verdict in tested if verdict.outcome in (BETTER, WORSE)]
    lost = [verdict.claim for verdict in tested if verdict.uncontrolled is not None]
    decided = len(kept) + len(lost)
    kept_words = (
        f"the 1 direction the interval and threshold decide {'keeps' if kept else 'does not keep'} an adjusted p below "
        f"{FALSE_DISCOVERY_RATE:g} and its word"
        if decided == 1
        else f"{len(kept)} of the {decided} directions the interval and threshold decide keep an adjusted p below "
        f"{FALSE_DISCOVERY_RATE:g} and their word"
    )
    return (
        f"Controlled for false discoveries over the {len(tested)} tested cells (Benjamini and Hochberg), {kept_words}"
        + (f"; {'it reads' if decided == 1 else 'the others read'} undecided: {'; '.join(lost)}." if lost else ".")
    )


def best_scorers(board: Board) -> dict[str, list[str]]:
    """Per column: the scorers judged better than softmax there (empty when none is)."""
    return {
        each.key: [
            scorer
            for scorer in scorers()[1:]
            if (cell := board.cell(scorer, each.key)) is not None and cell.verdict.outcome == BETTER
        ]
        for each in COLUMNS
    }


def winners_words(board: Board) -> str:
    """The scorers better than softmax by the rule, column by column, in words; a column with
    pending cells says how many of its scorers are judged so far."""
    better, words = best_scorers(board), []
    for each in COLUMNS:
        if board.cell("softmax", each.key) is None:
            continue
        judged = sum(board.cell(scorer, each.key) is not None for scorer in scorers()[1:])
        so_far = (
            "" if judged == len(scorers()) - 1 else f" (so far: {judged} of the {len(scorers()) - 1} scorers judged)"
        )
        named = []
        for scorer in better[each.key]:
            found = board.cell(scorer, each.key)
            rests = rests_on(found)
            # the verdict's own word, so that the direction a page shows is logged from the verdict that decided it
            named.append(
                f"{found.verdict.word()}{f', but it {rests}' if rests else ''} ({found.verdict.estimate('+.3f')}, "
                f"threshold {each.claim.threshold:g})"
            )
        words.append(
            f"{each.label}: {', '.join(named) or 'none'}{so_far}"
            + "".join(
                f" ({said} before the {what} set after reading)" for said, what in better_before_minimum(board, each)
            )
        )
    return "; ".join(words) or "no column is complete yet"


def better_before_minimum(board: Board, column: Column) -> list[tuple[str, str]]:
    """The scorers of ``column`` exploratory only under a pair minimum set after the cells had been
    read that read better than softmax before it (:func:`ssa_book.claims.minimum_moved`), so that a
    column's winners are said whichever way that minimum cut: [("1.5-entmax better", "pair minimum")]
    (the words of the verdict before it)."""
    found = []
    for scorer in scorers()[1:]:
        cell = board.cell(scorer, column.key)
        moved = minimum_moved(column.claim, cell.verdict) if cell is not None else ()
        if moved and moved[1].outcome == BETTER:
            found.append((moved[1].label(), moved[0]))
    return found


def winners_takeaway(board: Board) -> str:
    """The leaderboard figure's takeaway in one sentence: in how many of the complete columns some
    scorer is better than softmax by the rule, and which (with the seeds a verdict rests on)."""
    better = best_scorers(board)
    complete = [each for each in COLUMNS if board.cell("softmax", each.key) is not None]
    if not complete:
        return "No column is complete yet"
    named = [
        f"{scorer_label(scorer)} on {each.label}"
        + (f" ({rests})" if (rests := rests_on(board.cell(scorer, each.key))) else "")
        for each in complete
        for scorer in better[each.key]
    ]
    found = sum(bool(better[each.key]) for each in complete)
    before = [
        f"{said} on {each.label} only before the {what} set after reading"
        for each in complete
        for said, what in better_before_minimum(board, each)
    ]
    also = f"; {'; '.join(before)}" if before else ""
    if not named:
        return f"In none of the {len(complete)} columns is a scorer better than softmax{also}"
    return f"In {found} of {len(complete)} columns a scorer is better than softmax: {'; '.join(named)}{also}"


PANELS_PER_ROW = 3
TITLE_WIDTH = 26  # characters of a panel's title line at 8 points in a third of the column


def plot(board: Board, fig=None):
    """One panel per column: each scorer's mean error (dot) with its 95% interval (bar) and each
    seed (small grey dots), softmax's mean as a dashed line; the dot is filled when the rule finds
    the scorer better than softmax there, hollow when worse, grey-edged otherwise."""
    import matplotlib.pyplot as plt

    names = list(scorers())
    # Three panels a row, so that the figure keeps legible text at a page's width.
    columns = min(PANELS_PER_ROW, len(COLUMNS))
    rows = -(-len(COLUMNS) // columns)
    if fig is None:
        fig = plt.figure(figsize=(COLUMN_WIDTH_IN - 0.3, rows * (0.3 * len(names) + 1.5)))  # the column's width
    axes = np.ravel(fig.subplots(rows, columns, sharey=True, squeeze=False))
    for unused in axes[len(COLUMNS) :]:
        unused.remove()
    positions = {scorer: index for index, scorer in enumerate(names)}
    for ax, each in zip(axes, COLUMNS):
        reference = board.cell("softmax", each.key)
        if reference is not None:
            ax.axvline(reference.mean, color=scorer_color("softmax"), linestyle="--", linewidth=1)
        for scorer in names:
            found = board.cell(scorer, each.key)
            if found is None:
                continue
            y, color = positions[scorer], scorer_color(scorer)
            ax.scatter(found.errors, np.full(len(found.errors), y + 0.22), color="0.55", s=5, linewidths=0, zorder=1)
            if found.interval is not None:
                ax.plot(found.interval, (y, y), color=color, linewidth=2, zorder=2)
            outcome = None if found.verdict is None else found.verdict.outcome
            face = color if outcome in (None, BETTER) else "white"
            edge = color if outcome in (None, BETTER, WORSE) else "0.5"
            ax.scatter([found.mean], [y], s=30, facecolor=face, edgecolor=edge, linewidths=1.2, zorder=3)
        ax.set_title(
            f"{textwrap.fill(each.label, TITLE_WIDTH)}\n({each.shift_label}; training {each.training})", fontsize=8
        )
        ax.set_xlabel(each.error, fontsize=8)
        ax.tick_params(labelsize=8)
        if each.benchmark == RETRIEVAL:
            ax.set_xlim(-0.02, 1.02)
    first = axes[0]
    first.set_yticks(range(len(names)), [scorer_label(scorer) for scorer in names])
    first.invert_yaxis()
    for row_start in axes[::columns]:
        row_start.tick_params(labelleft=True)
    fig.tight_layout()
    return fig
