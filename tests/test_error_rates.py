"""The per-chapter error rates: measured on what each chapter judges, by the code that judges it."""

import numpy as np
import pytest

from ssa_book import error_rates
from ssa_book.verdicts.claim import Claim, no_effect_pairs
from ssa_book.verdicts.judge import judge as rule_judge, judged
from ssa_book.verdicts.families import control_false_discoveries
from ssa_book.verdicts.power import FALSE_DIRECTIONAL, resampled_null_rates
from ssa_book.verdicts.rule import decide

CLAIM = Claim("SSA lowers the error", direction=-1, threshold=0.1, units="error", reason="test")


def _chapter(name, differences_by_claim):
    def judge(profile):
        for label, differences in differences_by_claim.items():
            d = np.asarray(differences, dtype=float)
            rule_judge(Claim(label, -1, 0.1, "error", "test"), np.zeros_like(d), d)
    return error_rates.ChapterVerdicts(name, judge)


def test_the_table_takes_each_chapters_worst_verdict_and_counts_a_shared_one_once(monkeypatch):
    normal = np.random.default_rng(0).normal(0.0, 0.05, 10)
    one_outlier = np.r_[np.full(9, 0.05), -0.45]  # recentred: nine seeds a little ahead, one far behind
    monkeypatch.setattr(error_rates, "CHAPTERS", (
        _chapter("first", {"shared": normal}),
        _chapter("second", {"shared": normal, "skewed": one_outlier}),
        _chapter("empty", {"too few": [0.1, 0.2]})))  # two pairs decide nothing: a rate of 0, still a row
    table = error_rates.error_rate_table("cpu", draws=400, pair_counts=(6, 40))
    assert list(table.index) == ["first", "second", "empty"]
    assert table.loc["first", "verdicts"] == 1 and table.loc["second", "verdicts"] == 1  # "shared" counts for the first
    assert table.loc["second", "largest at"] == "skewed" and table.loc["empty", "at the pairs used"] == 0
    direct = resampled_null_rates(CLAIM, tuple(one_outlier), 10, simulations=400)[FALSE_DIRECTIONAL]
    assert table.loc["second", "at the pairs used"] == pytest.approx(direct)
    rate, chapter = error_rates.largest(table)
    assert rate == table["at the pairs used"].max() and chapter == table["at the pairs used"].idxmax()
    assert f"at most {100 * rate:.1f}%" in error_rates.sentence(table, draws=400) and chapter in error_rates.sentence(table, draws=400)
    # a rate per verdict, of false directions only: the sentence says both, with the verdicts counted
    said = error_rates.sentence(table, draws=400)
    assert f"not over the {int(table['verdicts'].sum())} verdicts" in said and "of a false \"better\" or \"worse\" only: it does not count the small direction" in said
    assert "(\"SSA slightly better\", \"SSA slightly worse\")" in said  # both small directions named
    # the false "no difference that matters" rate: per chapter, its largest quoted with its chapter
    missed, where = error_rates.largest(table, error_rates.NO_DIFFERENCE)
    assert table.loc["empty", error_rates.NO_DIFFERENCE] == 0  # two pairs decide nothing
    assert f"the rule says \"no difference that matters\" at most {100 * missed:.1f}% of the time ({where};" in said
    with pytest.raises(ValueError, match="column must be"):
        error_rates.largest(table, "verdicts")


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
        said.append(np.mean(decide(studies, CLAIM.threshold, False, no_effect_pairs(CLAIM))[3] == "no difference that matters"))
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
    assert [record.kind for record in found] == ["judged", "judged", "controlled", "controlled", "controlled", "controlled"]
    assert found[0].claim is CLAIM and found[0].verdict is decided
    assert found[2].verdict is decided and found[2].after.outcome == "undecided" and found[2].after.uncontrolled == "better"
    assert found[3].verdict is null and found[3].after.uncontrolled is None and found[3].after.adjusted_p is not None
