"""What a claim's word rests on, said beside it on the front page (issue 52): the alternatives'
statement decided on some panels only, by a tally set after reading; SSA across two kinds of shift
decided on one kind only; max retrieval's fewest pairs set after reading; an open difference's estimate."""

from ssa_book import analysis_changes
from ssa_book.verdicts.words import TOO_FEW_SEEDS, UNDECIDED
from ssa_book.verdicts.claim import Claim
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.families import combine
from ssa_book.verdicts.readings import NO_DIFFERENCE, slope_sentence
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
    assert claims.decided_panels_note(statement) == "linear panels only; tally set after reading"
    decided = combine("better everywhere", {label: _verdict("no difference that matters") for label in linear + every})
    assert claims.decided_panels_note(Verdict("none", "better", parts=(("one", decided),))) == ""


def test_the_verdict_across_shifts_says_which_kinds_decide_it(monkeypatch):
    kinds = {"input and function scale": _verdict("does not hold"), "set size": _verdict("undecided")}
    monkeypatch.setattr(board, "ssa_by_shift", lambda _: kinds)
    assert claims.shifts_note(None) == "set size not decided; on input and function scale"
    kinds["set size"] = _verdict("does not hold")
    assert claims.shifts_note(None) == ""


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
