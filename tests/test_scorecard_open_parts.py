"""The front page's scorecard and findings say what a decided word rests on where the parts they draw
or name cannot carry it: an open part (exploratory, undecided) is drawn grey, never in the word's colour;
under the word stands its note, and "(not drawn)" where every part drawn is open; the findings name every
decided claim that fits, its note shortened before it is left to the ledger (issue 52, findings 3 and 9)."""

import dataclasses

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from ssa_book import claims, front_page, plotting  # noqa: E402
from ssa_book.studies import PAPER  # noqa: E402
from ssa_book.verdicts.claim import Claim  # noqa: E402
from ssa_book.verdicts.judge import judge  # noqa: E402
from ssa_book.verdicts.words import NEGLIGIBLE, TOO_FEW_SEEDS, WORSE  # noqa: E402

ERROR = Claim("SSA is better", 1, 0.05, "prompt error", "a reason", min_pairs=20)
WORSE_PART = judge(ERROR, [-0.2, -0.25, -0.15, -0.22, -0.18, -0.21, -0.19, -0.2] * 3, [0.0] * 24)
EXPLORATORY = judge(ERROR, [-0.3, -0.2, -0.4, -0.25, -0.35, -0.3, -0.2, -0.3], [0.0] * 8)  # below 0, 8 of 20 pairs
REST_ON = "linear panels only"
ICL = "4 layers of width 64, 1,000 steps at learning rate 0.001 (constant); 10 paired seeds"
SHIFTS = "4 layers of width 64, 1,000 steps at learning rate 0.001 (constant); max retrieval, 2 layers; 10 paired seeds"
MINIMUMS = (("set-size minimum", "SSA worse"), ("prompt-error minimum", "SSA worse on 1 of 2"))


def _row(key, verdict="not tested", profile="cpu", **fields):
    return claims.LedgerRow(key, PAPER[key].claim, "p", "o", profile, (1, 2, 3), verdict, None, None, **fields)


def _rows(**changed):
    """Every claim not tested, the theorems holding, with ``changed`` rows (key -> fields) replaced."""
    found = {key: _row(key) for key in claims.ORDER}
    found.update(
        theorem_1=_row("theorem_1", "better", profile="live"), theorem_2=_row("theorem_2", "better", profile="live")
    )
    for key, fields in changed.items():
        found[key] = _row(key, **fields)
    return [found[key] for key in claims.ORDER]


def test_the_fixtures_are_one_decided_and_one_exploratory_part_below_zero():
    assert WORSE_PART.outcome == WORSE and EXPLORATORY.outcome == TOO_FEW_SEEDS and EXPLORATORY.interval[1] < 0


def _drawn_colours(ax) -> list[str]:
    return [to_hex(line.get_color()) for line in ax.lines if line.get_marker() == "o"]


def test_an_open_part_is_drawn_grey_and_the_word_says_under_it_what_it_rests_on_and_that_it_is_not_drawn():
    rows = _rows(
        across_shifts=dict(
            verdict="does not hold",
            headline=(("every", EXPLORATORY), ("some", EXPLORATORY)),
            word_note=REST_ON,
            after_reading=MINIMUMS,
        ),
        quantification=dict(verdict="does not hold", headline=(("every", WORSE_PART), ("some", EXPLORATORY))),
    )
    fig = front_page.scorecard_figure(rows)
    try:
        by_key = {ax.get_gid(): ax for ax in fig.axes if ax.get_gid()}
        red, grey = front_page.VERDICT_COLOURS["does not hold"].lower(), front_page.OTHER_COLOUR.lower()
        # the decided part in the word's colour, the open one grey, in the row of each
        assert _drawn_colours(by_key["quantification"]) == [red, grey]
        assert _drawn_colours(by_key["across_shifts"]) == [grey, grey]
        texts = " ".join(text.get_text().replace("\n", " ") for text in by_key["across_shifts"].texts)
        assert (
            "does not hold" in texts
            and "linear panels only (not drawn); set-size and prompt-error minimums set after reading" in texts
        )
        # a row a decided part carries says nothing is missing
        assert not any("not drawn" in text.get_text() for text in by_key["quantification"].texts)
        assert "an open part (exploratory, undecided)" in [text.get_text() for text in fig.legends[0].get_texts()]
        assert plotting.figure_problems(fig) == []  # the note within the column's rules (no text under 8 points)
    finally:
        plt.close(fig)


def test_the_note_under_the_word_is_the_rows_short_note_and_not_drawn_only_where_no_drawn_part_decides():
    exploratory_only = _row(
        "alternatives",
        "better",
        headline=(("a", EXPLORATORY),),
        word_note=REST_ON + "; more",
        after_reading=(("tally", "undecided"),),
    )
    # the tally moved the claim's word (undecided before it), so its short note keeps the word before it
    assert (
        front_page.scorecard_note(exploratory_only)
        == "linear panels only (not drawn); tally set after reading, undecided before it"
    )
    carried = dataclasses.replace(exploratory_only, headline=(("a", EXPLORATORY), ("b", WORSE_PART)))
    assert front_page.scorecard_note(carried) == "linear panels only; tally set after reading, undecided before it"
    # an open word is not said to rest on anything; a decided word without a note still says its parts are not drawn
    assert (
        front_page.scorecard_note(
            dataclasses.replace(exploratory_only, verdict="undecided", word_note="", after_reading=())
        )
        == ""
    )
    assert (
        front_page.scorecard_note(dataclasses.replace(exploratory_only, word_note="", after_reading=()))
        == "parts it rests on not drawn"
    )
    assert front_page.scorecard_note(_row("linear", NEGLIGIBLE, headline=(("", WORSE_PART),))) == ""


def test_the_caption_says_what_grey_dots_are_only_where_the_scorecard_draws_one():
    assert front_page.scorecard_key(_rows(linear=dict(verdict="worse", headline=(("", WORSE_PART),)))) == (
        "Positive favours the claim."
    )
    assert front_page.scorecard_key(_rows(linear=dict(verdict="worse", headline=(("", EXPLORATORY),)))) == (
        "Positive favours the claim; grey dots: open parts."
    )


def test_the_findings_give_each_decided_claim_its_own_bullet_with_its_note_and_the_open_claims_one():
    rows = _rows(
        quantification=dict(verdict="does not hold", headline=(("", WORSE_PART),), regime=ICL),
        linear=dict(verdict="worse", headline=(("", WORSE_PART),)),
        alternatives=dict(verdict="better", word_note=REST_ON, after_reading=(("tally", "undecided"),), regime=ICL),
        across_shifts=dict(verdict="does not hold", word_note=REST_ON, after_reading=MINIMUMS, regime=SHIFTS),
        collapse=dict(verdict="undecided"),
        perplexity_id=dict(verdict="undecided", published_excluded=True),
        benchmarks=dict(verdict="premise not shown"),
    )
    bullets = front_page.key_findings(rows)
    assert all(front_page.words(bullet) <= front_page.BULLET_WORDS for bullet in bullets)
    assert not any(bullet.startswith("**Also decided**") for bullet in bullets)
    # what was set after reading stays beside each word, with the word or the direction it moved
    assert (
        "**Alternative scorers (R1)**: holds (linear panels only; tally set after reading, undecided before it)."
        in (bullets)
    )
    own = next(bullet for bullet in bullets if bullet.startswith("**Own test: two shifts"))
    assert own.endswith("minimums set after reading, SSA worse before them).")
    # the open claims in one bullet: the undecided, then the others by their word
    assert any(
        bullet.startswith("**Undecided** so far: ") and bullet.endswith("; **premise not shown**: Decoder benchmarks.")
        for bullet in bullets
    )


def test_a_row_whose_parts_are_other_scorers_against_softmax_is_drawn_so_that_positive_favours_its_claim():
    # "none of the alternatives is better than softmax": a part's "better" is against the claim, so its sign turns
    better = dataclasses.replace(
        WORSE_PART,
        treatment="sparsemax",
        effect=-WORSE_PART.effect,
        interval=tuple(sorted(-end for end in WORSE_PART.interval)),
    )
    rows = _rows(
        alternatives=dict(verdict="does not hold", headline=(("sparsemax, linear", better),)),
        quantification=dict(verdict="does not hold", headline=(("every", WORSE_PART),)),
    )
    fig = front_page.scorecard_figure(rows)
    try:
        by_key = {ax.get_gid(): ax for ax in fig.axes if ax.get_gid()}

        def drawn(ax):
            return [line.get_xdata()[0] for line in ax.lines if line.get_marker() == "o"]

        assert drawn(by_key["alternatives"]) == [-better.effect] and -better.effect < 0  # against the claim: left
        assert drawn(by_key["quantification"]) == [WORSE_PART.effect]  # SSA's own sign
        labels = " ".join(text.get_text() for text in by_key["alternatives"].texts)
        assert "positive: softmax better" in labels
        assert "positive: softmax better" not in " ".join(text.get_text() for text in by_key["quantification"].texts)
    finally:
        plt.close(fig)
