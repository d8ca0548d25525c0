"""What a claim's word rests on, said beside it on the front page (issue 52): the alternatives'
statement decided on some panels only, by a tally set after reading; SSA across two kinds of shift
decided on one kind only; max retrieval's fewest pairs set after reading; an open difference's estimate."""

from ssa_book import analysis_changes
from ssa_book.verdicts.words import TOO_FEW_SEEDS, UNDECIDED
from ssa_book.verdicts.claim import Claim
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.families import combine
from ssa_book.verdicts.readings import NO_DIFFERENCE, slope_sentence
from ssa_book.verdicts.claim import MIN_PAIRS
from ssa_book.verdicts.judge import judge
from ssa_book.claims import at_rule_minimum, before_minimum, only_on, set_after_reading
from ssa_book.leaderboard import board, claims

CLAIM = Claim("X is better", 1, 0.1, "error", "a reason")


def _verdict(outcome: str) -> Verdict:
    return Verdict(CLAIM.name, outcome)


def _labels(task: str) -> list[str]:
    return [each.label for each in board.COLUMNS if each.task == task]


def test_the_statement_says_which_panels_it_is_decided_on_and_that_its_tally_was_set_after_reading():
    linear, every = _labels("linear"), _labels("every")
    alternative = combine("better everywhere", {**{label: _verdict("no difference that matters") for label in linear},
                                                **{label: _verdict("exploratory") for label in every}})
    statement = Verdict("none is better", "better", parts=(("one", alternative), ("two", alternative)))
    assert claims.decided_panels_note(statement) == "linear panels only"
    # the tally before 05e486f stayed undecided while a panel was open
    assert claims.tally_after_reading_note(statement) == ("tally", "undecided")
    assert set_after_reading(*claims.tally_after_reading_note(statement)) == "tally set after reading, undecided before it"
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
    column = type("Column", (), {"claim": claim, "label": "max retrieval, short setup, 256 items", "benchmark": board.RETRIEVAL})
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
    monkeypatch.setattr(board, "ssa_cells", lambda _, benchmark=None: cells if benchmark in (None, board.RETRIEVAL) else [])
    monkeypatch.setattr(board, "ssa_by_shift", lambda _: {"set size": combine("set size", {"short": cells[0][1]})})
    assert board.ssa_shifts_sentence(None) == ("set size not decided (exploratory on 1 of 1; pair minimum set after reading, "
                                               "SSA worse before it)")
    assert claims.set_size_after_reading(None) == ("set-size minimum", "SSA worse")


def test_the_verdict_across_shifts_says_which_tasks_decide_it(monkeypatch):
    columns = {each.key: each for each in board.COLUMNS}
    found = [(columns["linear_x"], _verdict("no difference that matters")), (columns["every"], _verdict("exploratory")),
             (columns["retrieval"], _verdict("exploratory"))]
    monkeypatch.setattr(board, "ssa_cells", lambda _, benchmark=None: [c for c in found if benchmark in (None, c[0].benchmark)])
    assert board.ssa_rests_on(None) == "linear panels only"
    assert board.ssa_rests_on(None, board.ICL) == "linear panels only"
    assert board.ssa_rests_on(None, board.RETRIEVAL) == ""


def test_the_changes_the_notes_cite_are_in_the_appendix_with_what_they_changed():
    changes = {change.commit: change for change in analysis_changes.CHANGES if change.commit in
               (claims.TALLY_SET_AFTER_READING, claims.RETRIEVAL_MINIMUM_SET_AFTER_READING)}
    assert claims.TALLY_SET_AFTER_READING in changes and "alternatives" in changes[claims.TALLY_SET_AFTER_READING].change
    assert any(change.commit == claims.RETRIEVAL_MINIMUM_SET_AFTER_READING and "max retrieval" in change.change
               for change in analysis_changes.CHANGES)
    assert "a minimum set after its results were read" in claims.fewest_pairs_note()


def test_an_open_difference_says_its_estimate_and_which_way_an_interval_clear_of_zero_lies():
    exploratory = Verdict(CLAIM.name, TOO_FEW_SEEDS, -0.13, (-0.18, -0.07), 10, 0.05)
    said = slope_sentence(NO_DIFFERENCE, exploratory)
    assert "not established (exploratory: -0.13 [-0.18, -0.07], interval against SSA)" in said
    straddling = Verdict(CLAIM.name, UNDECIDED, 0.02, (-0.05, 0.09), 10, 0.05)
    assert "(undecided: +0.02 [-0.05, +0.09])" in slope_sentence(NO_DIFFERENCE, straddling)


def test_max_retrieval_notes_its_pair_minimum_on_the_claim_each_verdict_was_judged_on():
    from ssa_book.retrieval import analysis

    gains = [0.09, 0.08, 0.1, 0.07, 0.11, 0.09, 0.08, 0.1, 0.09, 0.09]  # a gain of about 0.09 on every seed, 10 pairs
    claim = analysis.ADAPTIVE_TEMPERATURE_REPLICATION
    replication = judge(claim, [0.5 + g * claim.direction for g in gains], [0.5] * len(gains))
    assert replication.outcome == TOO_FEW_SEEDS
    assert analysis.minimum_note(replication, claim) == (
        f"pair minimum set after reading, {at_rule_minimum(claim, replication).label()} before it")
    assert at_rule_minimum(claim, replication).threshold == claim.threshold
