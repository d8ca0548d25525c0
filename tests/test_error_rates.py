"""The per-chapter error rates: measured on what each chapter judges, by the code that judges it."""

import numpy as np
import pytest

from ssa_book import error_rates
from ssa_book.verdicts.claim import Claim
from ssa_book.verdicts.judge import judge as rule_judge, judged
from ssa_book.verdicts.families import control_false_discoveries
from ssa_book.verdicts.power import FALSE_DIRECTIONAL, resampled_null_rates

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


def test_a_judged_block_records_each_verdict_with_its_claim_and_each_as_its_family_reads_it():
    with judged() as found:
        decided = rule_judge(CLAIM, np.zeros(6), np.full(6, 0.5) + np.linspace(0, 0.01, 6))
        null = rule_judge(CLAIM, np.zeros(6), np.array([0.1, -0.1, 0.2, -0.2, 0.05, -0.05]))
        control_false_discoveries([decided, null, null, null])
    assert [record.kind for record in found] == ["judged", "judged", "controlled", "controlled", "controlled", "controlled"]
    assert found[0].claim is CLAIM and found[0].verdict is decided
    assert found[2].verdict is decided and found[2].after.outcome == "undecided" and found[2].after.uncontrolled == "better"
    assert found[3].verdict is null and found[3].after.uncontrolled is None and found[3].after.adjusted_p is not None
