"""The per-chapter error rates: measured on what each chapter judges, by the code that judges it."""

import numpy as np
import pytest

from ssa_book import error_rates
from ssa_book.claims import without_minimums
from ssa_book.verdicts.claim import Claim, no_effect_pairs
from ssa_book.verdicts.judge import judge as rule_judge, judged
from ssa_book.verdicts.families import control_false_discoveries
from ssa_book.verdicts.power import FALSE_DIRECTIONAL, resampled_null_rates
from ssa_book.verdicts.rule import decide

CLAIM = Claim("SSA lowers the error", direction=-1, threshold=0.1, units="error", reason="test")


def _chapter(name, differences_by_claim, min_pairs=6):
    def judge(profile):
        for label, differences in differences_by_claim.items():
            d = np.asarray(differences, dtype=float)
            rule_judge(Claim(label, -1, 0.1, "error", "test", min_pairs=min_pairs), np.zeros_like(d), d)

    return error_rates.ChapterVerdicts(name, judge)


def test_the_table_takes_each_chapters_worst_verdict_and_counts_a_shared_one_once(monkeypatch):
    normal = np.random.default_rng(0).normal(0.0, 0.05, 10)
    one_outlier = np.r_[np.full(9, 0.05), -0.45]  # recentred: nine seeds a little ahead, one far behind
    monkeypatch.setattr(
        error_rates,
        "CHAPTERS",
        (
            _chapter("first", {"shared": normal}),
            _chapter("second", {"shared": normal, "skewed": one_outlier}),
            _chapter("empty", {"too few": [0.1, 0.2]}),
        ),
    )  # two pairs decide nothing: a rate of 0, still a row
    table = error_rates.error_rate_table("cpu", draws=400, pair_counts=(6, 40))
    assert list(table.index) == ["first", "second", "empty"]
    assert table.loc["first", "verdicts"] == 1 and table.loc["second", "verdicts"] == 1  # "shared" counts for the first
    assert table.loc["second", "largest at"] == "skewed" and table.loc["empty", "at the pairs used"] == 0
    direct = resampled_null_rates(CLAIM, tuple(one_outlier), 10, simulations=400)[FALSE_DIRECTIONAL]
    assert table.loc["second", "at the pairs used"] == pytest.approx(direct)
    rate, chapter = error_rates.largest(table)
    assert rate == table["at the pairs used"].max() and chapter == table["at the pairs used"].idxmax()
    assert f"at most {100 * rate:.1f}%" in error_rates.sentence(table, draws=400) and chapter in error_rates.sentence(
        table, draws=400
    )
    # a rate per verdict, of false directions only: the sentence says both, with the verdicts counted
    said = error_rates.sentence(table, draws=400)
    assert (
        f"not over the {int(table['verdicts'].sum())} verdicts" in said
        and 'of a false "better" or "worse" only: it does not count the small direction' in said
    )
    assert '("SSA slightly better", "SSA slightly worse")' in said  # both small directions named
    # the false "no difference that matters" rate: per chapter, its largest quoted with its chapter
    missed, where = error_rates.largest(table, error_rates.NO_DIFFERENCE)
    assert table.loc["empty", error_rates.NO_DIFFERENCE] == 0  # two pairs decide nothing
    assert f'the rule says "no difference that matters" at most {100 * missed:.1f}% of the time ({where};' in said
    with pytest.raises(ValueError, match="column must be"):
        error_rates.largest(table, "verdicts")


def test_the_table_gives_the_rates_without_the_pair_minimums_set_after_reading_beside_the_rule_as_applied(monkeypatch):
    one_outlier = np.r_[np.linspace(0.15, 0.25, 9), -1.8]  # recentred: nine seeds beyond the threshold, one far behind
    monkeypatch.setattr(
        error_rates,
        "CHAPTERS",
        (
            _chapter("own minimum", {"skewed": one_outlier}),
            _chapter("raised minimum", {"skewed too": one_outlier}, min_pairs=20),
        ),
    )  # 10 pairs: exploratory as applied
    table = error_rates.error_rate_table("cpu", draws=400, pair_counts=(6, 40))
    assert list(table["fewest pairs for a direction"]) == ["6", "20"]
    raised = table.loc["raised minimum"]
    bare = without_minimums(Claim("x", -1, 0.1, "error", "test", min_pairs=20, largest_flip=1.0))
    assert bare.min_pairs == 6 and bare.largest_flip is None
    rate = resampled_null_rates(bare, tuple(one_outlier), 10, simulations=400)[FALSE_DIRECTIONAL]
    # as applied the rule decides nothing at 10 pairs; without the minimum it errs as the chapter with the rule's own
    assert raised[error_rates.USED] == 0 and rate > error_rates.LIMIT
    assert raised[error_rates.WITHOUT_USED] == pytest.approx(rate) == table.loc["own minimum", error_rates.WITHOUT_USED]
    assert raised[error_rates.WITHOUT_WHERE] == "skewed too"
    at_six = resampled_null_rates(bare, tuple(one_outlier), 6, simulations=400)[FALSE_DIRECTIONAL]
    assert raised[error_rates.without_at(6)] == pytest.approx(at_six) and at_six > error_rates.LIMIT
    said = error_rates.without_minimums_sentence(table)
    assert (
        f"up to {100 * rate:.1f}% of the time (own minimum: skewed)" in said and "above 5% in 2 of the 2 rows: " in said
    )
    applied, without = error_rates.page_tables(table)
    assert list(without.columns) == ["pairs used", "at the pairs used", "at 6 pairs", "at 40 pairs", "largest at"]
    assert without.loc["raised minimum", "at the pairs used"] == f"{100 * rate:.1f}%"
    assert applied.loc["raised minimum", "at the pairs used"] == "0.0%"
    # the rule as applied only, and beside it the rates without the minimums at the pairs used only (the front page's)
    assert error_rates.WITHOUT_USED not in error_rates.error_rate_table("cpu", draws=400, pair_counts=None).columns
    front = error_rates.error_rate_table("cpu", draws=400, pair_counts=())
    assert list(front.columns[-3:]) == [error_rates.WITHOUT_USED, error_rates.WITHOUT_WHERE, error_rates.NOTED]
    # the raised minimum left "skewed too" exploratory, but the rule read it "undecided" before: no direction to note
    assert list(front[error_rates.NOTED]) == [False, False]
    ahead = np.r_[np.linspace(0.3, 0.4, 9), -0.1]  # "better" from the rule's own 6 pairs, exploratory below 20
    assert error_rates.moved_a_direction(
        [
            (
                Claim("ahead", -1, 0.1, "error", "test", min_pairs=20),
                rule_judge(Claim("ahead", -1, 0.1, "error", "test", min_pairs=20), np.zeros_like(ahead), ahead),
            )
        ]
    )
    assert front.loc["raised minimum", error_rates.WITHOUT_USED] == pytest.approx(rate)


def test_the_front_page_and_the_glossary_give_the_error_rate_of_the_rule_behind_the_notes_before_a_minimum(monkeypatch):
    one_outlier = np.r_[np.linspace(0.15, 0.25, 9), -1.8]
    ahead = np.r_[np.linspace(0.3, 0.4, 9), -0.1]  # read "better" before the minimum: a direction the notes give
    monkeypatch.setattr(
        error_rates, "CHAPTERS", (_chapter("raised minimum", {"skewed": one_outlier, "ahead": ahead}, min_pairs=20),)
    )
    table = error_rates.error_rate_table("cpu", draws=400, pair_counts=())
    assert table.loc["raised minimum", error_rates.NOTED]
    rate = table.loc["raised minimum", error_rates.WITHOUT_USED]
    assert table.loc["raised minimum", error_rates.USED] == 0 and rate > error_rates.LIMIT  # exploratory as applied
    notes = error_rates.notes_sentence(table, draws=400)
    assert notes.startswith(
        'The notes "... minimum set after reading, ... before it" give what the rule said without the pair minimums'
    )
    assert (
        f"up to {100 * rate:.1f}% of the time where those minimums moved a direction: raised minimum ({100 * rate:.1f}%), "
        "each the largest over its row's own verdicts at the seeds they use (Monte Carlo standard error of the largest"
    ) in notes
    nominal = error_rates.nominal_interval_sentence(table)
    assert nominal.startswith("Its 95% is nominal: with fewer pairs than a minimum set after reading")
    assert (
        f"up to {100 * rate:.1f}% of the time (raised minimum), where a 95% interval misses it 5% of the time."
        in nominal
    )
    # not measured (the rule as applied only), or no larger than the rule's as applied: nothing to add
    applied_only = error_rates.error_rate_table("cpu", draws=400, pair_counts=None)
    assert error_rates.notes_sentence(applied_only) == error_rates.nominal_interval_sentence(applied_only) == ""
    monkeypatch.setattr(error_rates, "CHAPTERS", (_chapter("own minimum", {"skewed": one_outlier}),))
    same = error_rates.error_rate_table("cpu", draws=400, pair_counts=())
    assert error_rates.notes_sentence(same) == error_rates.nominal_interval_sentence(same) == ""


def test_the_notes_rate_is_of_the_rows_whose_words_a_minimum_moved_and_the_glossarys_of_every_row():
    import pandas as pd

    table = pd.DataFrame(
        {
            error_rates.USED: [0.02, 0.03, 0.01],
            error_rates.WITHOUT_USED: [0.30, 0.19, 0.07],
            error_rates.NOTED: [False, True, True],
        },
        index=pd.Index(["no note", "leaderboard", "retrieval"], name="chapter"),
    )
    notes = error_rates.notes_sentence(table)
    # the 30% of a row without such notes is not theirs: the noted rows' rates, largest first
    assert (
        "up to 19.0% of the time where those minimums moved a direction: leaderboard (19.0%), retrieval (7.0%),"
        in notes
    )
    assert "30.0%" not in notes and "no note" not in notes
    # the glossary's is of any verdict below a minimum set after reading
    assert "up to 30.0% of the time (no note)" in error_rates.nominal_interval_sentence(table)
    said = error_rates.without_minimums_sentence(table.assign(**{error_rates.WITHOUT_WHERE: "x"}))
    assert (
        "in the rows where those minimums moved a direction (leaderboard, retrieval) they are the error rates" in said
    )
    # nothing to add where the noted rows' rates are no larger than the rule's as applied
    assert error_rates.notes_sentence(table.assign(**{error_rates.USED: 0.2})) == ""


def test_the_readings_before_a_raise_are_left_out_of_the_verdicts_counted():
    import pandas as pd

    table = pd.DataFrame(
        {error_rates.USED: [0.02, 0.01, 0.03], error_rates.NO_DIFFERENCE: 0.0, "verdicts": [66, 6, 14]},
        index=pd.Index(["study", error_rates.READINGS_BEFORE_RAISE, "in-context"], name="chapter"),
    )
    said = error_rates.sentence(table)
    assert "not over the 80 verdicts of the 2 chapters together (nor the 6 readings before a raise of seeds)" in said
    alone = table.drop(index=error_rates.READINGS_BEFORE_RAISE)
    assert "not over the 80 verdicts of the 2 chapters together, and" in error_rates.sentence(alone)


def _rates(used, no_difference):
    import pandas as pd

    return pd.DataFrame(
        {error_rates.USED: used, error_rates.NO_DIFFERENCE: no_difference, "verdicts": 1},
        index=pd.Index([f"chapter {i}" for i in range(len(used))], name="chapter"),
    )


def test_the_sentence_under_the_table_says_which_rate_stays_within_the_limit_and_the_front_pages_sets_the_nominal_beside():
    table = _rates([0.049, 0.02], [0.101, 0.04])
    said = error_rates.limit_sentence(table)
    # 4.9% from 4,000 draws: within two Monte Carlo standard errors of 5%, said with its error
    assert (
        "Every row's rate of false directions at the seed counts it uses stays within two Monte Carlo standard errors "
        "of 5%, or below (largest 4.9%, chapter 0; Monte Carlo standard error 0.3 points)."
    ) in said
    assert "Every row's" in error_rates.limit_sentence(_rates([0.053, 0.02], [0.0, 0.0]))  # 0.3 points above: within
    # against the 2.5% the rule aims at, the yardstick of the front page's sentence, beyond two Monte Carlo standard errors
    assert (
        "exceeds the 2.5% the rule aims at (by more than two Monte Carlo standard errors) in 2 of the 2 rows: "
        "chapter 0 (10.1%), chapter 1 (4.0%)."
    ) in said
    assert "in 1 of the 2 rows: chapter 0 (10.1%)." in error_rates.limit_sentence(_rates([0.049, 0.02], [0.101, 0.027]))
    assert (
        f"at most 10.1% of the time (chapter 0; Monte Carlo standard error 0.5 points), "
        f"{0.101 / error_rates.NOMINAL_NO_DIFFERENCE:.1f} times the 2.5% the rule aims at there"
    ) in error_rates.sentence(table)
    within = _rates([0.06, 0.02], [0.026, 0.01])
    assert (
        "Above 5% at the seed counts used (by more than two Monte Carlo standard errors), the rate of false "
        "directions: chapter 0 (6.0%)"
        in error_rates.limit_sentence(within)
        and (
            "stays within two Monte Carlo standard errors of, or below, the 2.5% the rule aims at (largest 2.6%, chapter 0)"
            in error_rates.limit_sentence(within)
        )
    )
    assert (
        "within two Monte Carlo standard errors of, or below, the 2.5% the rule aims at there"
        in error_rates.sentence(within)
    )
    assert error_rates.limit_sentence(_rates([], [])) == ""


def test_the_nominal_false_no_difference_rate_is_what_the_rule_gives_on_normal_differences_at_the_threshold():
    # a 95% interval within the threshold when the true effect is at it: half of the 5% it leaves out
    normal = np.random.default_rng(2).normal(0.0, 0.2, 4000)
    rate = error_rates.false_no_difference_rate(CLAIM, normal, 40, draws=20000)
    assert error_rates.NOMINAL_NO_DIFFERENCE == pytest.approx(0.025)
    assert rate == pytest.approx(error_rates.NOMINAL_NO_DIFFERENCE, abs=0.005)


def test_the_false_no_difference_rate_draws_the_verdicts_shape_at_the_threshold_and_is_judged_by_the_rule():
    rng = np.random.default_rng(1)
    tight = rng.normal(0.0, 0.02, 40)  # a spread small beside the threshold: the interval is narrow
    rate = error_rates.false_no_difference_rate(CLAIM, tight, 40, draws=2000)
    # with the true effect at the threshold the interval lies within it only when the mean falls well short: about 2.5%
    assert 0.0 < rate < 0.06
    # the rule's own judgement of every study drawn (the rate leaves out only studies whose estimate reaches the threshold)
    generator, said = np.random.default_rng(0), []
    for mean in (CLAIM.threshold, -CLAIM.threshold):
        studies = (tight - tight.mean() + mean)[generator.integers(0, 40, size=(2000, 40))]
        said.append(
            np.mean(decide(studies, CLAIM.threshold, False, no_effect_pairs(CLAIM))[3] == "no difference that matters")
        )
    assert rate == pytest.approx(max(said))
    # the same seed gives the same rate; below the pairs "no difference" needs, the rule cannot say it
    assert error_rates.false_no_difference_rate(CLAIM, tight, 40, draws=2000) == rate
    assert error_rates.false_no_difference_rate(CLAIM, tight, 5, draws=2000) == 0.0
    # a yes-or-no outcome keeps its discordant share, with the signs split to give a mean of the threshold
    binary = Claim("more seeds generalise", 1, 0.2, "share of seeds", "test", binary=True)
    flips = np.r_[np.ones(6), -np.ones(4), np.zeros(30)]
    assert 0.0 <= error_rates.false_no_difference_rate(binary, flips, 40, draws=2000) < 0.1
    for bad in (dict(differences=[0.1]), dict(differences=[0.1, np.nan]), dict(pairs=0), dict(draws=True)):
        arguments = dict(claim=CLAIM, differences=tight, pairs=40, draws=100) | bad
        with pytest.raises(ValueError, match=next(iter(bad))):
            error_rates.false_no_difference_rate(**arguments)


def test_a_judged_block_records_each_verdict_with_its_claim_and_each_as_its_family_reads_it():
    with judged() as found:
        decided = rule_judge(CLAIM, np.zeros(6), np.full(6, 0.5) + np.linspace(0, 0.01, 6))
        null = rule_judge(CLAIM, np.zeros(6), np.array([0.1, -0.1, 0.2, -0.2, 0.05, -0.05]))
        control_false_discoveries([decided, null, null, null])
    assert [record.kind for record in found] == [
        "judged",
        "judged",
        "controlled",
        "controlled",
        "controlled",
        "controlled",
    ]
    assert found[0].claim is CLAIM and found[0].verdict is decided
    assert (
        found[2].verdict is decided
        and found[2].after.outcome == "undecided"
        and found[2].after.uncontrolled == "better"
    )
    assert found[3].verdict is null and found[3].after.uncontrolled is None and found[3].after.adjusted_p is not None
