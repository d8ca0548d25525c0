"""The front page from the ledger's rows: the abstract, the findings bullets with their regime
codes, and the scorecard figure, each within its word limits (:func:`top_problems`)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from ssa_book.verdicts.words import (
    DOES_NOT_HOLD,
    HOLDS,
    HOLDS_IN_PART,
    MIXED,
    NOT_TESTED,
    OPEN,
    TOO_FEW_SEEDS,
    UNDECIDED,
    claim_word,
)
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.claim import MIN_PAIRS
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.readings import effect_placement
from ssa_book.claims import PAPER_REGIME, LedgerRow, plural
from ssa_book.studies import PAPER
from ssa_book.ledger import (
    PAPER_EXPERIMENTS,
    beside_word,
    counted_claims,
    regime_code,
    regime_codes,
    short_name,
    shorter_regime,
    table_cell,
)


# The top of the front page: an abstract, the scorecard figure, a few findings that name each
# regime by a short code, and the table of those codes, all computed from the ledger's rows.
ABSTRACT_WORDS = 120  # at most, in the abstract
BULLET_WORDS = 30  # at most, in one bullet of the findings
BULLETS = 6  # at most, in the findings

# Each claim's name on the scorecard and in the findings (the ledger's first column is longer).
# Each word said of a claim, in the scorecard's colours: holds green, does not hold red, a claim
# partly held or decided both ways ochre, undecided dark grey; the rest (not tested, its premise
# not shown) light grey (OTHER_COLOUR).
VERDICT_COLOURS = {
    HOLDS: "#2E7D32",
    DOES_NOT_HOLD: "#C62828",
    HOLDS_IN_PART: "#9C6B00",
    MIXED: "#9C6B00",
    UNDECIDED: "#555555",
}
OTHER_COLOUR = "#8A8A8A"
# The words that decide a claim one way or another.
DECIDED_WORDS = (HOLDS, DOES_NOT_HOLD, HOLDS_IN_PART, MIXED)


def confidence_words() -> str:
    return f"{100 * CONFIDENCE:.0f}%"


def words(text: str) -> int:
    """The words a reader sees in ``text`` (Markdown's ``**`` and list marks are no words)."""
    return len([word for word in text.replace("**", " ").split() if word not in ("-", "*")])


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
        lines.append("| " + " | ".join(table_cell(cell) for cell in (code, claimed, text)) + " |")
    return "\n".join(lines)


def _scale(row: LedgerRow) -> tuple[str, str] | None:
    """(ours, the paper's): the size and training of the row's models, "4 × 64, 1,000 steps"."""
    match = PAPER_REGIME.search(row.regime)
    if not match:
        return None

    def size(regime: str, lengths: int) -> str:
        parts = regime.split(", ")
        shape = next((part for part in parts if "×" in part), "")
        trained = [re.sub(r" \(.*\)$", "", part) for part in parts if re.match(r"[\d.,]+[kMB]? (steps|tokens)", part)][
            :lengths
        ]
        return ", ".join([shape, *trained] if shape else trained)

    return size(shorter_regime(PAPER_REGIME.sub("", row.regime).split(";")[0]), 1), size(
        shorter_regime(match.group(1)), 1
    )


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
    did = [f"derives versions of the paper's {plural(len(theorems), 'theorem')}"] if theorems else []
    did.append("re-runs its experiments" + (", smaller: " if scales else ""))
    text = f"This book {' and '.join(did)}"
    # the paper's size in the same units as ours, which name them: "4 × 64, 1,000 steps (paper: 12 × 256, 500,000)"
    text += (
        "; ".join(f"{name} {ours} (paper: {paper.removesuffix(' steps')})" for name, (ours, paper) in scales.items())
        + ". "
    )
    found = []
    if experiments:
        holding = sum(claim_word(row.verdict) == HOLDS for row in experiments)
        found.append(
            f"of the paper's {plural(len(experiments), 'experimental claim')}, {'' if holding else 'none holds: '}"
            f"{counted_claims(experiments, brief=True)}"
        )
    if own:
        found.append(f"the book's own {'test' if len(own) == 1 else 'tests'}: {counted_claims(own, brief=True)}")
    if theorems:
        found.append(f"the theorems' versions: {counted_claims(theorems)}")
    if found:
        text += sentence_case("; ".join(found)) + "."
    gap = scale_gap(rows)
    if gap is not None:
        what, ours, paper = gap.baseline
        # what it warns of, in the form of the scales above: how far from the paper's the smaller scale leaves a
        # baseline, and what follows for every verdict above
        text += f" Caveat: {what} is {ours:.3g} (paper: {paper:.3g}), so verdicts may not transfer."
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
    undecided = [row for row in experiments if claim_word(row.verdict) == UNDECIDED]
    excluded = [short_name(row) for row in experiments if row.published_excluded]
    untested: dict[str, list[str]] = {}  # "not tested" or "premise not shown": the claims it is said of
    for row in experiments:
        if claim_word(row.verdict) not in (*DECIDED_WORDS, UNDECIDED):
            untested.setdefault(claim_word(row.verdict), []).append(short_name(row))

    def others_named(coded: bool) -> list[str]:
        # the open claims in one bullet, undecided first, then those not tested or whose premise is not shown,
        # so that every decided claim keeps a bullet of its own where six allow
        still_open = [named(row, coded) for row in undecided] + [
            f"**{word}**: {', '.join(names)}" for word, names in untested.items()
        ]
        return [
            text
            for text in (
                _listing("**Undecided** so far: ", still_open) if still_open else "",
                _listing(
                    f"**The paper's effect excluded** by the {confidence_words()} interval at the book's scale: ",
                    excluded,
                )
                if excluded
                else "",
            )
            if text
        ]

    room = max(0, BULLETS - len(others_named(True)))
    # decided claims that do not fit a bullet each share the last one: none is left out unsaid
    full, rest = (decided, []) if len(decided) <= room else (decided[: max(0, room - 1)], decided[max(0, room - 1) :])
    also, coded = "", True
    if rest:
        # each word with its note, in full until the bullet is too long, then the last ones in short, then in brief (what
        # was set after reading stays), then the same without the regimes' codes (the table of codes names the claims),
        # so that a row is left to "more in the ledger" only where no wording fits
        def decided_words(level: int, shortened: int, coded: bool = True) -> list[str]:
            return [
                f"{named(row, coded)}, {claim_word(row.verdict)}"
                + (
                    f" ({note_at(row, level if i >= len(rest) - shortened else max(0, level - 1))})"
                    if row.note()
                    else ""
                )
                for i, row in enumerate(rest)
            ]

        wordings = [
            (decided_words(level, shortened, with_codes), with_codes)
            for with_codes in (True, False)
            for level, shortened in [
                (0, 0),
                *((level, shortened) for level in (1, 2) for shortened in range(1, len(rest) + 1)),
            ]
        ]
        fits, coded = next(
            (
                (wording, with_codes)
                for wording, with_codes in wordings
                if words("**Also decided**: " + "; ".join(wording) + ".") <= BULLET_WORDS
            ),
            wordings[-1],
        )
        also = _listing("**Also decided**: ", fits)
    # one form in the box: the claims keep their regimes' codes in every bullet, or, where "Also decided" fits only
    # without them, in none
    bullets = []
    for row in full:
        word, found = claim_word(row.verdict), beside_word(row)
        bullet = f"**{named(row, coded)}**: {word}{f' ({found})' if found else ''}."
        # where the parts' words do not fit, the word with its note, in full, short or brief (what was set after
        # reading, and the direction it moved, stays in every form)
        noted = [
            f"**{named(row, coded)}**: {word}{f' ({note_at(row, level)})' if row.note() else ''}."
            for level in (0, 1, 2)
        ]
        bullets.append(next((text for text in (bullet, *noted) if words(text) <= BULLET_WORDS), noted[-1]))
    return (bullets + [also] * bool(also) + others_named(coded))[:BULLETS]


def note_at(row: LedgerRow, level: int) -> str:
    """The row's note (:meth:`LedgerRow.note`) at ``level`` of brevity: 0 in full, 1 short, 2 brief: the
    short note with the kinds of several changes of one kind left out ("linear panels only; minimums set
    after reading, SSA worse before them"; what was set after reading, and the direction it moved, stay)."""
    return row.note(short=level > 0, brief=level > 1)


def key_findings_markdown(rows: Sequence[LedgerRow]) -> str:
    return "\n".join(f"- {bullet}" for bullet in key_findings(rows))


def scorecard_takeaway(rows: Sequence[LedgerRow]) -> str:
    """The scorecard's takeaway, in one sentence: how many of the paper's experimental claims hold
    at the book's scale, and in how many of the rows where the paper publishes an effect the book's
    interval lies below it (excludes it), those whose interval is exploratory (fewer pairs than
    their chapter decides from: it decides nothing) named apart with their pairs."""
    experiments = [row for row in rows if row.profile != "live" and not PAPER[row.key].beyond_paper]
    holding = sum(claim_word(row.verdict) == HOLDS for row in experiments)
    notes = [
        f"{short_name(row)}: {row.note(short=True)}"
        for row in experiments
        if row.note() and claim_word(row.verdict) == HOLDS
    ]
    text = (
        f"{'None' if not holding else holding} of the paper's {plural(len(experiments), 'experimental claim')} "
        f"{'holds' if holding < 2 else 'hold'} here" + (f" ({'; '.join(notes)})" if notes else "")
    )
    published = [row for row in rows if row.paper_effect is not None and row.headline]
    if published:
        excluded = sum(
            any(effect_placement(verdict, row.paper_effect) == "above" for _, verdict in row.headline)
            for row in published
        )
        # an exploratory interval decides nothing, so it is counted among the rows below the effect but named apart
        exploratory = [
            f"{short_name(row)}, {verdict.pairs} of {max(MIN_PAIRS, verdict.no_effect_pairs)} pairs"
            for row in published
            for verdict in _exploratory_excluding(row)
        ]
        below, count = excluded + len(exploratory), len(published)
        effects_said = (
            {1: "the paper's one published effect", 2: "both of the paper's published effects"}.get(
                count, f"all {count} of the paper's published effects"
            )
            if below == count
            else f"{below} of the paper's {count} published effects"
        )
        text += f"; intervals lie below {effects_said}"
        text += f" ({len(exploratory)} exploratory: {'; '.join(exploratory)})" if exploratory else ""
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
    found = [
        verdict
        for _, verdict in row.headline
        if verdict.outcome == TOO_FEW_SEEDS and verdict.interval is not None and row.paper_effect > verdict.interval[1]
    ]
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
    if (
        not drawn
        or claim_word(row.verdict) not in DECIDED_WORDS
        or any(verdict.outcome not in OPEN for verdict in drawn)
    ):
        return note
    basis = row.word_note.split(";")[0]
    return (
        note.replace(basis, f"{basis} (not drawn)", 1)
        if basis
        else "; ".join(filter(None, ("parts it rests on not drawn", note)))
    )


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
    heights = [
        max(0.42, 0.2 + 0.06 * len(row.headline), (0.2 + 0.14 * (note.count("\n") + 1)) if note else 0)
        for row, note in zip(rows, notes)
    ]
    top, bottom = 0.6, 0.25  # inches: the legend above (two lines), the last row's tick labels below
    height = sum(heights) * 1.35 + top + bottom
    fig = plt.figure(figsize=(width, height))
    grid = fig.add_gridspec(
        len(rows),
        1,
        height_ratios=heights,
        left=0.36,
        right=0.76,
        top=1 - top / height,
        bottom=bottom / height,
        hspace=0.35,
    )
    for index, (row, note) in enumerate(zip(rows, notes)):
        ax = fig.add_subplot(grid[index], gid=row.key)
        word = claim_word(row.verdict)
        colour = VERDICT_COLOURS.get(word, OTHER_COLOUR)
        code = regime_code(row, codes)
        units = row.headline[0][1].units if row.headline else ""
        # a claim about SSA is favoured where SSA does better; one that other scorers do not beat softmax (their parts
        # each "the scorer better than softmax") where they do worse: drawn with the sign turned, so that positive
        # favours the claim on every row, and said under the row's name
        turned = bool({verdict.treatment for _, verdict in row.headline} - {"SSA"})
        sign = -1.0 if turned else 1.0
        detail = " · ".join(part for part in (code, units) if part) + ("\npositive: softmax better" if turned else "")
        ax.text(
            -0.03,
            0.5,
            short_name(row),
            transform=ax.transAxes,
            ha="right",
            va="bottom" if detail else "center",
            fontsize=9,
        )
        if detail:
            ax.text(-0.03, 0.45, detail, transform=ax.transAxes, ha="right", va="top", fontsize=8, color="0.35")
        ax.text(
            1.03,
            1.0 if note else 0.5,
            word,
            transform=ax.transAxes,
            ha="left",
            va="top" if note else "center",
            fontsize=9,
            color=colour,
            fontweight="bold",
        )
        if note:
            ax.annotate(
                note,
                (1.03, 1.0),
                xycoords="axes fraction",
                xytext=(0, -13),
                textcoords="offset points",
                ha="left",
                va="top",
                fontsize=8,
                color="0.35",
                linespacing=1.1,
            )
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.grid(False)
        if not row.headline:
            ax.set_xticks([])
            for side in ax.spines.values():
                side.set_visible(False)
            ax.text(
                0.5,
                0.5,
                _without_estimate(row),
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=8,
                color="0.35",
                fontstyle="italic",
            )
            continue
        parts = [verdict for _, verdict in row.headline]
        ys = np.linspace(0.2, 0.8, len(parts)) if len(parts) > 1 else [0.5]
        threshold = parts[0].threshold
        if threshold:
            ax.axvspan(-threshold, threshold, color="0.88", lw=0, zorder=0)
        ax.axvline(0, color="0.45", lw=0.8, zorder=1)
        for y, verdict in zip(ys, parts):
            effect, (low, high) = sign * verdict.effect, sorted(sign * end for end in verdict.interval)
            ax.errorbar(
                [effect],
                [y],
                xerr=[[effect - low], [high - effect]],
                fmt="o",
                color=OTHER_COLOUR if verdict.outcome in OPEN else colour,
                ms=3.5 if len(parts) > 6 else 4.5,
                elinewidth=1.2,
                capsize=0,
                zorder=3,
            )
        extent = [sign * value for verdict in parts for value in verdict.interval] + [0.0]
        if threshold:
            extent += [-threshold, threshold]
        if row.paper_effect is not None:
            published = sign * row.paper_effect
            ax.plot([published], [0.5], marker="D", ms=6, mfc="white", mec="black", mew=1.2, ls="none", zorder=4)
            extent.append(published)
        low, high = min(extent), max(extent)
        pad = 0.08 * (high - low or 1.0)
        ax.set_xlim(low - pad, high + pad)
        ax.locator_params(axis="x", nbins=5)
        ax.tick_params(axis="x", labelsize=8, pad=1, length=2)
    handles = [
        Line2D(
            [], [], marker="o", color="0.3", ls="-", ms=4.5, label=f"the book: estimate, {confidence_words()} interval"
        ),
        Line2D([], [], marker="D", mfc="white", mec="black", ls="none", ms=6, label="the paper's effect"),
        Patch(color="0.88", label="threshold band"),
        Line2D([], [], marker="o", color=OTHER_COLOUR, ls="-", ms=4.5, label="an open part (exploratory, undecided)"),
    ]
    fig.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=2,
        fontsize=8,
        frameon=False,
        handletextpad=0.4,
        columnspacing=1.2,
    )
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
    problems += [
        f"a bullet of {words(bullet)} words (at most {BULLET_WORDS}): {bullet[:60]!r}..."
        for bullet in bullets
        if words(bullet) > BULLET_WORDS
    ]
    drawn = scorecard_keys(fig)
    if drawn != [row.key for row in rows]:
        problems.append(f"the scorecard draws {drawn}, the ledger has {[row.key for row in rows]}")
    return problems
