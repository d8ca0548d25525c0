"""What a claim's word rests on, said beside it on the front page (issue 52): the alternatives'
statement decided on some panels only, by a tally set after reading; SSA across two kinds of shift
decided on one kind only; max retrieval's fewest pairs set after reading; an open difference's estimate."""

import dataclasses

from ssa_book import analysis_changes
from ssa_book.verdicts.words import NEGLIGIBLE, TOO_FEW_SEEDS, UNDECIDED
from ssa_book.verdicts.claim import Claim
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.families import combine
from ssa_book.verdicts.readings import NO_DIFFERENCE, slope_sentence
from ssa_book.verdicts.claim import MIN_PAIRS
from ssa_book.verdicts.judge import judge
from ssa_book.claims import (
    FLIP_MINIMUM,
    FLIP_MINIMUM_SET_AFTER_READING,
    at_rule_minimum,
    before_flip_minimum,
    before_minimum,
    minimum_notes,
    only_on,
    set_after_reading,
)
from ssa_book.leaderboard import board, claims, findings

CLAIM = Claim("X is better", 1, 0.1, "error", "a reason")


def _verdict(outcome: str) -> Verdict:
    return Verdict(CLAIM.name, outcome)


def _labels(task: str) -> list[str]:
    return [each.label for each in board.COLUMNS if each.task == task]


def test_the_statement_says_which_panels_it_is_decided_on_and_that_its_tally_was_set_after_reading():
    linear, every = _labels("linear"), _labels("every")
    alternative = combine(
        "better everywhere",
        {
            **{label: _verdict("no difference that matters") for label in linear},
            **{label: _verdict("exploratory") for label in every},
        },
    )
    statement = Verdict("none is better", "better", parts=(("one", alternative), ("two", alternative)))
    assert claims.decided_panels_note(statement) == "linear panels only"
    # the tally before 05e486f stayed undecided while a panel was open
    assert claims.tally_after_reading_note(statement) == ("tally", "undecided")
    assert (
        set_after_reading(*claims.tally_after_reading_note(statement)) == "tally set after reading, undecided before it"
    )
    decided = combine("better everywhere", {label: _verdict("no difference that matters") for label in linear + every})
    assert claims.decided_panels_note(Verdict("none", "better", parts=(("one", decided),))) == ""
    assert claims.tally_after_reading_note(Verdict("none", "better", parts=(("one", decided),))) == ()


def test_one_rule_for_a_word_decided_on_some_tasks_and_for_a_change_made_after_reading_whichever_way_it_cut():
    assert only_on(["linear"], ['"every"', '"some"']) == "linear panels only"
    assert only_on(["linear", '"every"'], []) == only_on([], ["linear"]) == ""
    assert set_after_reading("tally", "undecided") == "tally set after reading, undecided before it"
    assert set_after_reading("pair minimum", "SSA worse", short=True) == "pair minimum set after reading"
    assert set_after_reading("pair minimum", "") == ""


def _cells(differences: list[float], min_pairs: int) -> list:
    claim = Claim("SSA's error is lower", -1, 0.05, "share", "a reason", bound=1.0, min_pairs=min_pairs)
    column = type(
        "Column", (), {"claim": claim, "label": "max retrieval, short setup, 256 items", "benchmark": board.RETRIEVAL}
    )
    return [(column, judge(claim, [0.5 + d for d in differences], [0.5] * len(differences)))]


def test_a_pair_minimum_set_after_reading_says_what_the_verdict_read_before_it(monkeypatch):
    worse = [0.2, 0.15, 0.25, 0.18, 0.22, 0.12, 0.3, 0.2, 0.16, 0.21]  # SSA's error higher by about 0.2 on every seed
    cells = _cells(worse, 20)
    assert cells[0][1].outcome == TOO_FEW_SEEDS  # 10 pairs, the chapter decides from 20
    assert before_minimum([(column.claim, verdict) for column, verdict in cells]) == "SSA worse"
    # a minimum no higher than the rule's moved nothing; neither did it move a verdict with fewer pairs than the rule's
    assert before_minimum([(column.claim, verdict) for column, verdict in _cells(worse, MIN_PAIRS)]) == ""
    assert before_minimum([(column.claim, verdict) for column, verdict in _cells(worse[:4], 20)]) == ""
    # the leaderboard says it beside SSA's set-size word, with what that word rests on
    monkeypatch.setattr(
        findings, "ssa_cells", lambda _, benchmark=None: cells if benchmark in (None, board.RETRIEVAL) else []
    )
    monkeypatch.setattr(findings, "ssa_by_shift", lambda _: {"set size": combine("set size", {"short": cells[0][1]})})
    assert findings.ssa_shifts_sentence(None) == (
        "undecided on set size (exploratory on 1 of 1; pair minimum set after reading, SSA worse before it)"
    )
    assert claims.minimums_after_reading(None) == (("set-size minimum", "SSA worse"),)


def _prompt_error_cell(flips: list[float]) -> tuple:
    column = next(each for each in board.COLUMNS if each.key == "every")
    return column, judge(column.claim, [0.5 + d for d in flips], [0.5] * len(flips))


def test_the_prompt_error_minimum_set_after_reading_says_what_the_cells_read_before_it(monkeypatch):
    # SSA's prompt error higher on 8 of 10 seeds: a direction from the rule's own minimum, exploratory below 36 pairs
    worse = [0.3, 0.2, 0.4, 0.3, 0.25, 0.35, 0.2, 0.3, 0.0, 0.0]
    column, verdict = _prompt_error_cell(worse)
    assert column.claim.largest_flip is not None and verdict.outcome == TOO_FEW_SEEDS
    assert before_flip_minimum([(column.claim, verdict)]) == "SSA worse"
    assert minimum_notes([(column.claim, verdict)]) == f"{FLIP_MINIMUM} set after reading, SSA worse before it"
    # a cell within the threshold read no direction before it either ("no difference" needed those pairs already)
    _, flat = _prompt_error_cell([0.01, -0.01] * 5)
    assert before_flip_minimum([(column.claim, flat)]) == ""
    assert before_flip_minimum([(column.claim, verdict), (column.claim, flat)]) == "SSA worse on 1 of 2"
    # from 36 pairs on the minimum moves nothing
    _, decided = _prompt_error_cell(worse * 4)
    assert decided.outcome != TOO_FEW_SEEDS and before_flip_minimum([(column.claim, decided)]) == ""
    monkeypatch.setattr(
        findings, "ssa_cells", lambda _, benchmark=None: [(column, verdict)] if benchmark in (None, board.ICL) else []
    )
    assert claims.minimums_after_reading(None) == ((FLIP_MINIMUM, "SSA worse"),)


def test_the_verdict_across_shifts_says_which_tasks_decide_it(monkeypatch):
    columns = {each.key: each for each in board.COLUMNS}
    found = [
        (columns["linear_x"], _verdict("no difference that matters")),
        (columns["every"], _verdict("exploratory")),
        (columns["retrieval"], _verdict("exploratory")),
    ]
    monkeypatch.setattr(
        findings, "ssa_cells", lambda _, benchmark=None: [c for c in found if benchmark in (None, c[0].benchmark)]
    )
    assert findings.ssa_rests_on(None) == "linear panels only"
    assert findings.ssa_rests_on(None, board.ICL) == "linear panels only"
    assert findings.ssa_rests_on(None, board.RETRIEVAL) == ""


def test_the_changes_the_notes_cite_are_in_the_appendix_with_what_they_changed():
    changes = {
        change.commit: change
        for change in analysis_changes.CHANGES
        if change.commit
        in (claims.TALLY_SET_AFTER_READING, claims.RETRIEVAL_MINIMUM_SET_AFTER_READING, FLIP_MINIMUM_SET_AFTER_READING)
    }
    assert (
        claims.TALLY_SET_AFTER_READING in changes and "alternatives" in changes[claims.TALLY_SET_AFTER_READING].change
    )
    assert any(
        change.commit == claims.RETRIEVAL_MINIMUM_SET_AFTER_READING and "max retrieval" in change.change
        for change in analysis_changes.CHANGES
    )
    assert (
        "set after the results were read" in claims.fewest_pairs_note()
        and "original setup from 40" in claims.fewest_pairs_note()
    )
    assert FLIP_MINIMUM_SET_AFTER_READING in changes and changes[FLIP_MINIMUM_SET_AFTER_READING].after_reading


def test_an_open_difference_says_its_estimate_and_which_way_an_interval_clear_of_zero_lies():
    exploratory = Verdict(CLAIM.name, TOO_FEW_SEEDS, -0.13, (-0.18, -0.07), 10, 0.05)
    said = slope_sentence(NO_DIFFERENCE, exploratory)
    assert said == (
        "SSA's difference from softmax is exploratory (-0.13 [-0.18, -0.07], interval against SSA): nothing to attribute."
    )
    straddling = Verdict(CLAIM.name, UNDECIDED, 0.02, (-0.05, 0.09), 10, 0.05)
    assert "is undecided (+0.02 [-0.05, +0.09]): nothing" in slope_sentence(NO_DIFFERENCE, straddling)
    # a difference below the threshold is said in the glossary's words, as a finding, not as something missing
    negligible = Verdict(CLAIM.name, NEGLIGIBLE, 0.01, (-0.02, 0.04), 20, 0.05)
    assert slope_sentence(NO_DIFFERENCE, negligible).startswith(
        "SSA shows no difference that matters from softmax (+0.01 [-0.02, +0.04])"
    )


def test_max_retrieval_notes_its_pair_minimum_on_the_claim_each_verdict_was_judged_on():
    from ssa_book.retrieval import analysis

    gains = [0.09, 0.08, 0.1, 0.07, 0.11, 0.09, 0.08, 0.1, 0.09, 0.09]  # a gain of about 0.09 on every seed, 10 pairs
    claim = analysis.ADAPTIVE_TEMPERATURE_REPLICATION
    replication = judge(claim, [0.5 + g * claim.direction for g in gains], [0.5] * len(gains))
    assert replication.outcome == TOO_FEW_SEEDS
    assert analysis.minimum_note(replication, claim) == (
        f"pair minimum set after reading, {at_rule_minimum(claim, replication).label()} before it"
    )
    assert at_rule_minimum(claim, replication).threshold == claim.threshold
    # the page's words for it carry the same note, whichever scorer the verdict judges
    assert (
        analysis.noted_words(replication, claim)
        == f"{replication.words()}; {analysis.minimum_note(replication, claim)}"
    )
    # with its evidence, the pairs and the fewest that decide said once each, then the note
    evidence = analysis.noted_evidence(replication, claim)
    assert evidence == f"{replication.with_evidence()}; {analysis.minimum_note(replication, claim)}"
    assert evidence.count("10 pair") == 1 and evidence.count(f"from {analysis.CHAPTER_MIN_PAIRS}") == 1
    assert replication.sentence() == f"{replication.claim}: {replication.with_evidence()}."


def test_the_winners_of_a_column_name_a_scorer_better_only_before_a_minimum_set_after_reading():
    column = next(each for each in board.COLUMNS if each.key == "retrieval")
    gains = [
        0.09,
        0.08,
        0.1,
        0.07,
        0.11,
        0.09,
        0.08,
        0.1,
        0.09,
        0.09,
    ]  # error lower by about 0.09 on every seed, 10 pairs
    verdict = judge(
        dataclasses.replace(column.claim, treatment="1.5-entmax"), [0.5 - g for g in gains], [0.5] * len(gains)
    )
    assert verdict.outcome == TOO_FEW_SEEDS and column.claim.min_pairs > len(gains)
    cells = {("entmax15", column.key): type("Cell", (), {"verdict": verdict})()}
    found = type("Board", (), {"cell": lambda self, scorer, key: cells.get((scorer, key))})()
    assert findings.better_before_minimum(found, column) == [("1.5-entmax better", "pair minimum")]
    # a worse reading before the minimum is not a winner
    cells[("entmax15", column.key)] = type(
        "Cell",
        (),
        {
            "verdict": judge(
                dataclasses.replace(column.claim, treatment="1.5-entmax"), [0.5 + g for g in gains], [0.5] * len(gains)
            )
        },
    )()
    assert findings.better_before_minimum(found, column) == []
    # the count table's note counts it among the cells the minimums left exploratory
    assert findings.before_minimums_sentence(found).startswith(
        "Before the pair minimums set after the cells had been read"
    )
    assert "1 read worse than softmax, of the 1 cell those" in findings.before_minimums_sentence(found)


def test_max_retrieval_counts_its_scorers_again_as_they_read_before_the_pair_minimum():
    from ssa_book.retrieval import analysis

    losses = [
        0.2,
        0.15,
        0.25,
        0.18,
        0.22,
        0.12,
        0.3,
        0.2,
        0.16,
        0.21,
    ]  # accuracy lower by about 0.2 on every seed, 10 pairs
    worse = judge(
        dataclasses.replace(analysis.SHIFTED_ACCURACY, treatment="SSA"), [0.5 - d for d in losses], [0.5] * len(losses)
    )
    assert worse.outcome == TOO_FEW_SEEDS
    assert analysis.outcome_counts_words({"ssa": worse}) == "1 exploratory"
    assert analysis.outcome_counts_words({"ssa": worse}, analysis.SHIFTED_ACCURACY) == (
        "1 exploratory (pair minimum set after reading; before it 1 scorer worse than softmax)"
    )


def test_the_glossary_says_the_prompt_error_minimum_was_set_after_reading_for_no_difference_and_for_a_direction():
    from ssa_book import claims as book_claims, ledger

    assert 36 in ledger.flip_minimums()
    # both halves came after reading: "no difference that matters" first, then directions
    changes = {change.commit: change for change in analysis_changes.CHANGES}
    for commit in (book_claims.FLIP_NO_DIFFERENCE_SET_AFTER_READING, book_claims.FLIP_MINIMUM_SET_AFTER_READING):
        assert changes[commit].after_reading and "flips from seed to seed" in changes[commit].change
    said = ledger.decision_minimums_sentence()
    assert "36, set after reading, for a prompt error" in said and "for a direction" not in said
    assert ledger.thresholds_declared().startswith("fixed before the results were read in the powered study")


def test_the_thresholds_said_set_after_reading_are_the_threshold_changes_the_analysis_changes_page_lists():
    from ssa_book import ledger

    after = [change for change in analysis_changes.CHANGES if change.kind == "threshold" and change.after_reading]
    # every threshold set after reading is said so, and nothing is said set after reading that the record lacks
    assert {commit for _, commit in ledger.THRESHOLDS_AFTER} == {change.commit for change in after}
    for where, commit in ledger.THRESHOLDS_AFTER:
        subject = where.removeprefix("the ").split()[0].split("'")[0]  # "decoder", "collapse", "max"
        assert subject in " ".join(change.change for change in after if change.commit == commit), (where, commit)
    # max retrieval's replication threshold (its authors' smallest gain) came after the short setup's results were
    # read; its claim for every scorer, and the original setup, planned later, did not
    said = ledger.thresholds_declared()
    before, _, set_after = said.partition("; set after a first reading in ")
    assert "max retrieval's claim for every scorer" in before and "replication" not in before
    assert "max retrieval's original setup" in before
    assert "max retrieval's replication of adaptive temperature in the short setup" in set_after


def test_a_word_decided_on_some_tasks_only_draws_the_panels_it_rests_on():
    assert claims.rests_on_panels(["linear"], ['"every"', '"some"']) == "linear, "
    assert (
        claims.rests_on_panels(["linear"], []) is None
        and claims.rests_on_panels(["linear", '"every"'], ['"some"']) is None
    )
    inner = Verdict("on linear", "no difference that matters", 0.01, (-0.02, 0.04), 10, 0.1, units="error")
    other = Verdict("on every", TOO_FEW_SEEDS, -0.2, (-0.5, 0.1), 10, 0.1, units="prompt error")
    nested = Verdict(
        "all", "better", parts=(("a", Verdict("a", "does not hold", parts=(("every", other), ("linear, x", inner)))),)
    )
    from ssa_book.claims import headline_of

    assert [name for name, _ in headline_of(nested, "linear, ")] == ["a, linear, x"]
    assert [name for name, _ in headline_of(nested)] == ["a, every"]


def test_a_short_note_keeps_the_word_before_a_change_that_moved_the_claims_word_or_a_direction_of_its_parts():
    from ssa_book.claims import LedgerRow

    def row(verdict, after_reading):
        return LedgerRow(
            "alternatives",
            "c",
            "p",
            "o",
            "cpu",
            (1,),
            verdict,
            None,
            None,
            word_note="linear panels only; more",
            after_reading=after_reading,
        )

    # the tally moved the claim's word (undecided -> holds): which way it cut stays beside the word in every form
    moved = row("better", (("tally", "undecided"),))
    assert moved.moved_claim_word("undecided") and not moved.moved_claim_word("holds")
    assert moved.note(short=True) == "linear panels only; tally set after reading, undecided before it"
    assert moved.note() == "linear panels only; more; tally set after reading, undecided before it"
    # minimums that moved parts only (the claim does not hold before them too): the short form says that they were set
    # and the one direction they moved, whichever way it cut; an open word before them only in full
    parts = row("does not hold", (("set-size minimum", "SSA worse"), ("prompt-error minimum", "SSA worse on 1 of 2")))
    assert not parts.moved_claim_word("SSA worse")
    assert parts.note(short=True) == (
        "linear panels only; set-size and prompt-error minimums set after reading, SSA worse before them"
    )
    assert parts.note(brief=True) == "linear panels only; minimums set after reading, SSA worse before them"
    assert "set-size minimum set after reading, SSA worse before it" in parts.note()
    opened = row("does not hold", (("set-size minimum", "exploratory"), ("prompt-error minimum", "exploratory")))
    assert opened.note(short=True) == "linear panels only; set-size and prompt-error minimums set after reading"
    # directions of either sign, or several, are each said with their change
    mixed = row("does not hold", (("set-size minimum", "SSA worse"), ("prompt-error minimum", "SSA better on 1 of 2")))
    assert mixed.note(short=True) == (
        "linear panels only; set-size minimum set after reading, SSA worse before it; prompt-error minimum set after "
        "reading, SSA better on 1 of 2 before it"
    )
