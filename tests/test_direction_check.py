"""The check that every direction word a page shows stands on a decided verdict
(ssa_book.direction_check), on verdicts the rule judges here and on hand-made page text."""

import dataclasses
import json

import numpy as np
import pytest

from built_book import built_book
from ssa_book import direction_check
from ssa_book.verdicts.words import BETTER, NEGLIGIBLE, WORSE
from ssa_book.verdicts.claim import Claim
from ssa_book.verdicts.verdict import DIRECTION_LOG_ENV, Verdict
from ssa_book.verdicts.judge import judge

CLAIM = Claim("error at sigma 10", direction=-1, threshold=0.1, units="error", reason="a tenth of the scale")


def _log(tmp_path, monkeypatch, *said):
    """The entries the ``said`` verdicts' words log, as a notebook's execution writes them."""
    path = tmp_path / "log.jsonl"
    monkeypatch.setenv(DIRECTION_LOG_ENV, str(path))
    for verdict in said:
        verdict.label()
    return direction_check.read_log(path)


def _judged(shift: float, pairs: int = 12) -> Verdict:
    noise = np.random.default_rng(0).normal(0.0, 0.05, pairs)
    return judge(CLAIM, 0.5 + shift + noise, np.full(pairs, 0.5))


def test_a_decided_direction_is_logged_without_problems_and_backs_its_words(tmp_path, monkeypatch):
    worse = _judged(+0.3)  # SSA's error higher: SSA worse
    assert worse.outcome == WORSE
    entries = _log(tmp_path, monkeypatch, worse)
    assert [entry["words"] for entry in entries] == ["SSA worse"] and entries[0]["problems"] == []
    text = f"under shift SSA worse, {worse.estimate()} over 12 seeds"
    assert direction_check.unbacked_directions(text, entries, {"SSA"}) == []


def test_a_direction_the_rule_does_not_back_is_reported_with_what_it_lacks(tmp_path, monkeypatch):
    worse = _judged(+0.3)
    uncontrolled = dataclasses.replace(worse, adjusted_p=0.2, family_size=3)  # shown before control
    entries = _log(tmp_path, monkeypatch, uncontrolled)
    assert "does not survive false-discovery control" in entries[0]["problems"][0]
    assert "does not back" in direction_check.unbacked_directions("SSA worse here", entries, {"SSA"})[0]
    hand_made = Verdict(
        CLAIM.name, BETTER, effect=0.5, interval=(0.1, 0.9), pairs=3, threshold=0.1, differences=(0.4, 0.5, 0.6)
    )
    assert "no paired differences the rule decides from" in _log(tmp_path, monkeypatch, hand_made)[-1]["problems"][0]


def test_a_direction_word_no_verdict_said_or_beside_another_estimate_is_reported(tmp_path, monkeypatch):
    worse = _judged(+0.3)
    entries = _log(tmp_path, monkeypatch, worse)
    assert "no verdict behind it" in direction_check.unbacked_directions("so SSA better overall", entries, {"SSA"})[0]
    assert (
        "no decided verdict of that name has"
        in direction_check.unbacked_directions("SSA worse, -0.91 [-0.99, -0.80]", entries, {"SSA"})[0]
    )
    # a mention in quotation marks, a treatment not named, and a word inside another word pass
    assert (
        direction_check.unbacked_directions("reads “SSA better” when; generalise better; XSSA better", entries, {"SSA"})
        == []
    )
    assert (
        direction_check.unbacked_directions('a claim reads "mixed (SSA better on 1, SSA worse on 2)"', entries, {"SSA"})
        == []
    )
    assert direction_check.unbacked_directions("“mixed (SSA better on 1)”", entries, {"SSA"}) == []
    # a quotation closed before it, or one in another block of text, does not make it a mention
    assert direction_check.unbacked_directions("“a quote” and then SSA better", entries, {"SSA"})
    assert direction_check.unbacked_directions('"open\nSSA better', entries, {"SSA"})


def test_a_table_row_reads_its_estimate_across_cells_and_the_small_direction_is_backed(tmp_path, monkeypatch):
    small = judge(CLAIM, 0.5 + 0.05 + np.random.default_rng(1).normal(0.0, 0.01, 40), np.full(40, 0.5))
    assert small.outcome == NEGLIGIBLE and small.small_direction() == "SSA slightly worse"
    entries = _log(tmp_path, monkeypatch, small)
    assert entries[0]["words"] == "SSA slightly worse"
    row = f"no difference that matters; SSA slightly worse\n{small.estimate('+.3g')}\n40"
    assert direction_check.unbacked_directions(row, entries, {"SSA"}) == []


def test_named_treatments_come_from_the_logs(tmp_path):
    entries = [{"words": "sharper softmax worse"}, {"words": "SSA slightly better"}, {"words": "softmax's error grows"}]
    assert direction_check.named_treatments(entries) == {"SSA", "sharper softmax"}
    log = tmp_path / "x.jsonl"
    log.write_text(json.dumps({"words": "SSA worse", "problems": [], "effect": -0.2, "interval": [-0.3, -0.1]}) + "\n")
    assert direction_check.read_log(log)[0]["words"] == "SSA worse"
    assert direction_check.read_log(tmp_path / "missing.jsonl") == []


@pytest.mark.parametrize(
    "printed, value, ok",
    [
        ("-0.17", -0.1712, True),
        ("-0.17", -0.176, False),
        ("+0.0879", 0.08794, True),
        ("−0.06", -0.0573, True),
        ("12", 12.4, True),
        ("12", 12.6, False),
    ],
)
def test_a_printed_number_matches_the_value_it_rounds(printed, value, ok):
    assert direction_check._printed_as(printed, value) is ok


def test_the_runner_refuses_a_build_whose_page_shows_a_direction_no_decided_verdict_said(tmp_path):
    from ssa_book import book

    html = built_book(
        tmp_path,
        {"intro": "<p>The book, in short.</p>", "chapter": "<p>Under shift: SSA worse, +0.30 [+0.27, +0.33].</p>"},
    )
    with pytest.raises(
        book.BookBuildFailed,
        match=r"notebooks/chapter.html: a direction word without a decided verdict: 'SSA worse' with no verdict",
    ):
        book.check_built_pages(tmp_path, html)
    log = direction_check.log_path(tmp_path, "chapter")
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps({"words": "SSA worse", "problems": [], "effect": 0.3, "interval": [0.27, 0.33]}) + "\n")
    book.check_built_pages(tmp_path, html)
