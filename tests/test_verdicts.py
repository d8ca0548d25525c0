"""The one verdict rule: its outcomes on data of known shape, and its error rates by simulation."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ssa_book.verdicts.words import (
    AGAINST,
    BETTER,
    FOR,
    HOLDS_IN_PART,
    NEGLIGIBLE,
    OPEN,
    OUTCOMES,
    RETIRED_WORDS,
    TOO_FEW_SEEDS,
    UNDECIDED,
    VOCABULARY,
    WORSE,
    claim_phrase,
    claim_word,
    outcome_words,
)
from ssa_book.verdicts.intervals import (
    BOUNDED_GRID,
    METHOD_BOUNDED,
    bounded_mean_interval,
    paired_proportion_interval,
    rate_interval,
    t_interval,
)
from ssa_book.verdicts.claim import Claim, MIN_PAIRS, no_effect_pairs
from ssa_book.verdicts.rule import FALSE_DISCOVERY_RATE, METHOD_BINARY, decide, seeds_to_resolve, signed_rank_p_values
from ssa_book.verdicts.verdict import Verdict, signed_rank_p, withheld_direction
from ssa_book.verdicts.judge import judge, learning_failure, not_learned, not_tested, pair_by_seed, premise_not_shown
from ssa_book.verdicts.families import combine, control_false_discoveries, false_discoveries
from ssa_book.verdicts.robustness import bounded_check, rests_on_words, seeds_it_rests_on
from ssa_book.verdicts.readings import (
    FORM,
    NOT_SEPARATED,
    NO_DIFFERENCE,
    SLOPE,
    effect_placement,
    exploratory_effect_sentence,
    form_or_slope,
    published_effect_sentence,
    slope_sentence,
)
from ssa_book.verdicts.power import (
    FALSE_DIRECTIONAL,
    FALSE_OPPOSITE,
    FALSE_REPRODUCED,
    effect_power_sentence,
    false_reproduction_rate,
    power,
    power_table,
    resampled_null_rates,
    resampled_null_table,
)

ERROR_CLAIM = Claim(
    "SSA lowers the prompt error",
    direction=-1,
    threshold=0.1,
    units="prompt error",
    reason="a tenth of the error scale [0, 1]",
)


def test_a_claim_declares_direction_threshold_and_reason():
    with pytest.raises(ValueError, match="direction"):
        Claim("c", direction=0, threshold=0.1, units="", reason="r")
    with pytest.raises(ValueError, match="threshold"):
        Claim("c", direction=1, threshold=0.0, units="", reason="r")
    with pytest.raises(ValueError, match="reason"):
        Claim("c", direction=1, threshold=0.1, units="", reason=" ")


def test_the_effect_and_interval_are_the_paired_t_interval_in_the_papers_direction():
    ssa_error, softmax_error = np.array([0.1, 0.3, 0.2, 0.05, 0.15, 0.1]), np.array([0.5, 0.6, 0.7, 0.2, 0.45, 0.3])
    verdict = judge(ERROR_CLAIM, ssa_error, softmax_error)
    expected = stats.ttest_rel(softmax_error, ssa_error).confidence_interval(0.95)
    assert verdict.effect == pytest.approx((softmax_error - ssa_error).mean())
    assert verdict.interval == pytest.approx((expected.low, expected.high))
    assert verdict.pairs == 6 and verdict.differences == pytest.approx(tuple(softmax_error - ssa_error))
    assert verdict.outcome == "better"


@pytest.mark.parametrize(
    "differences, outcome",
    [
        ([0.30, 0.35, 0.28, 0.32, 0.31, 0.33], "better"),
        ([-0.30, -0.35, -0.28, -0.32, -0.31, -0.29], "worse"),
        ([0.01, -0.02, 0.00, 0.02, -0.01, 0.01], "no difference that matters"),
        ([0.03, 0.05, 0.04, 0.06, 0.05, 0.04], "no difference that matters"),  # real but below the threshold
        ([0.9, -0.8, 0.7, 0.0, 0.1, -0.5], "undecided"),
        ([0.30, 0.35, 0.28], "exploratory"),  # three seeds decide nothing
        ([0.5, 0.5, 0.5, 0.5, 0.5], "exploratory"),  # identical pairs: too few for a sign test
        ([0.5] * 6, "better"),
        ([0.0] * 8, "no difference that matters"),
    ],
)
def test_outcomes(differences, outcome):
    differences = np.array(differences)
    verdict = judge(ERROR_CLAIM, np.zeros_like(differences), differences)  # error: softmax - ssa
    assert verdict.outcome == outcome, verdict.sentence()
    if outcome == "undecided":
        assert verdict.seeds_to_resolve is not None and verdict.seeds_to_resolve > len(differences)
        assert "pairs would decide it" in verdict.sentence()


def test_seeds_to_resolve_is_the_first_decisive_count():
    needed = seeds_to_resolve(effect=0.2, spread=0.4, threshold=0.1)
    half = lambda n: stats.t.ppf(0.975, n - 1) * 0.4 / math.sqrt(n)
    assert 0.2 - half(needed) > 0 and 0.2 - half(needed - 1) <= 0


def test_other_outcomes_and_combining_parts():
    assert judge(ERROR_CLAIM, [], []).outcome == "not tested" == not_tested(ERROR_CLAIM).outcome
    absent = premise_not_shown(ERROR_CLAIM, "softmax puts at most 0.008 of its weight on the injected value")
    assert absent.outcome == "premise not shown" and "0.008" in absent.sentence()
    with pytest.raises(ValueError, match="measurement"):
        premise_not_shown(ERROR_CLAIM, "")
    yes = judge(ERROR_CLAIM, np.zeros(6), np.full(6, 0.5) + np.linspace(0, 0.01, 6))
    no = judge(ERROR_CLAIM, np.zeros(6), np.array([0.01, -0.02, 0.0, 0.02, -0.01, 0.0]))
    assert combine("both", {"every": yes, "some": yes}).outcome == "better"
    mixed = combine("both", {"every": yes, "some": no})
    assert (
        mixed.outcome == "mixed"
        and mixed.words() == "mixed (SSA better on 1 of 2, no difference that matters on 1)"
        and "every: SSA better" in mixed.detail
        and "some: no difference that matters" in mixed.detail
    )
    undecided = judge(ERROR_CLAIM, [0.1, 0.2, 0.3], [0.3, 0.1, 0.2])
    # nothing decided anywhere is not "holds in part" (which reads as partial support)
    assert undecided.outcome == "exploratory"
    assert combine("both", {"trained": absent, "variant": undecided}).outcome == "exploratory"
    assert combine("both", {"trained": absent, "variant": not_tested(ERROR_CLAIM)}).outcome == "premise not shown"
    assert combine("both", {"trained": absent, "variant": yes}).outcome == "holds in part"
    # parts that differ with none reproduced support no part of the claim: never "holds in part"
    worse = judge(ERROR_CLAIM, np.full(6, 0.5) + np.linspace(0, 0.01, 6), np.zeros(6))
    assert worse.outcome == "worse"
    against = combine("all", {"every": worse, "some": undecided})
    assert against.outcome == "does not hold" and "some: exploratory (3 pairs)" in against.detail
    mixed_against = combine("all", {"every": worse, "some": no, "linear": undecided})
    assert mixed_against.outcome == "does not hold"
    assert mixed_against.tally() == "SSA worse on 1 of 3, no difference that matters on 1, exploratory on 1"
    assert combine("all", {"every": worse, "some": yes}).outcome == "mixed"
    assert combine("all", {"every": yes, "some": undecided}).outcome == "holds in part"
    with pytest.raises(ValueError, match="paired"):
        judge(ERROR_CLAIM, [0.1, 0.2], [0.1])


@pytest.mark.parametrize("parts", list(itertools.product(sorted(set(OUTCOMES)), repeat=3)))
def test_a_combined_claim_never_hides_an_adverse_part(parts):
    found = combine("claim", {f"part {i}": Verdict("claim", outcome) for i, outcome in enumerate(parts)})
    outcomes = set(parts)
    if len(outcomes) == 1:
        assert found.outcome == parts[0]
    elif (outcomes & set(FOR) and outcomes & set(AGAINST)) or "mixed" in outcomes:
        # decided both ways: an adverse part never stands under a favourable word
        assert found.outcome == "mixed"
    elif outcomes & set(FOR):
        assert found.outcome == "holds in part"
    elif outcomes & set(AGAINST):
        # a part decided against the claim, none for it: never a milder word, never "no effect"
        assert found.outcome == "does not hold"
    else:
        assert found.outcome not in AGAINST and found.outcome not in ("holds in part", "mixed")
    assert sum(int(count.split(" on ")[1].split()[0]) for count in found.tally().split(", ")) == 3


def test_rate_interval_is_clopper_pearson():
    rate, low, high = rate_interval(0, 10)
    assert rate == 0 and low == 0 and high == pytest.approx(0.3085, abs=1e-4)
    with pytest.raises(ValueError):
        rate_interval(3, 2)
    rate, low, high = rate_interval(7, 20, method="wilson")  # (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    assert rate == 0.35 and low == pytest.approx(0.1812, abs=1e-4) and high == pytest.approx(0.5671, abs=1e-4)
    with pytest.raises(ValueError, match="method must be exact or wilson"):
        rate_interval(1, 2, method="jeffreys")


@pytest.mark.parametrize("pairs", [3, 5, 10, 20])
def test_no_effect_is_reproduced_at_most_5_percent_of_the_time_normal(pairs):
    def sample(generator, n):
        return generator.normal(0.4, 0.3, n), generator.normal(0.4, 0.3, n)

    assert false_reproduction_rate(ERROR_CLAIM, pairs, sample, simulations=2000) <= 0.05


@pytest.mark.parametrize("generalise", [0.3, 0.5, 0.8])
@pytest.mark.parametrize("pairs", [2, 3, 5, 10, 20])
def test_no_effect_is_reproduced_at_most_5_percent_of_the_time_all_or_nothing(pairs, generalise):
    """In-context learners generalise or fail per seed: an error near 0 or near 1, with the
    same chance for both models (no effect)."""

    def sample(generator, n):
        errors = lambda: np.where(generator.random(n) < generalise, 0.01, 0.9) + generator.normal(0, 0.01, n)
        return errors(), errors()

    assert false_reproduction_rate(ERROR_CLAIM, pairs, sample, simulations=2000) <= 0.05


# A rate estimated from S simulated studies has binomial standard error sqrt(r (1 - r) / S), at most
# 0.0049 for r = 0.05 and S = 2000. The tests of resampled nulls allow 4 of them, taken at the rate
# the bound is about: a one-sided normal tail of 3e-5, so a redrawn seed would fail about once in 30,000.
NULL_SIMULATIONS = 2000
FLIP_CLAIM = Claim(
    "SSA lowers the prompt error",
    direction=-1,
    threshold=0.1,
    units="prompt error",
    reason="a tenth of the error scale [0, 1]",
    largest_flip=1.0,
)


def _four_standard_errors(rate: float, simulations: int = NULL_SIMULATIONS) -> float:
    return 4 * math.sqrt(rate * (1 - rate) / simulations)


@pytest.mark.parametrize("pairs", [10, 20, 40])
def test_a_resampled_normal_null_decides_a_direction_about_5_percent_of_the_time(pairs):
    """Differences drawn from a normal distribution and recentred: the t interval's two tails of
    2.5% each, so at most the nominal 5% plus four standard errors of the simulation."""
    observed = np.random.default_rng(11).normal(0.3, 0.3, 200)
    rates = resampled_null_rates(FLIP_CLAIM, observed, pairs, simulations=NULL_SIMULATIONS, seed=3)
    assert rates[FALSE_DIRECTIONAL] == pytest.approx(rates[FALSE_REPRODUCED] + rates[FALSE_OPPOSITE])
    assert rates[FALSE_DIRECTIONAL] <= 0.05 + _four_standard_errors(0.05)


@pytest.mark.parametrize("pairs", [10, 20, 36, 40])
def test_a_resampled_skewed_flip_prone_null_is_decided_at_most_5_percent_of_the_time(pairs):
    """The shape of the study's own prompt errors: the treatment a little better on most seeds,
    far worse on the few where it fails (a flip). Recentred, the sample is 18 values of
    0.15 - 0.045 = 0.105 and 2 of -0.9 - 0.045 = -0.945, mean 0. A resampled study that draws no
    flip, with probability (1 - 2/20)^N, is N equal differences above the threshold, which the t
    interval alone calls "better": 35% of the time at 10 pairs. So a flip-prone outcome is
    decided in a direction only from no_effect_pairs pairs on (36): below, never; from there, a
    study with one flip or more has a mean below the threshold, and the false rate is about
    (1 - 2/20)^N (2.3% at 36), within 5% plus four standard errors of the simulation."""
    observed = np.r_[np.full(18, 0.15), np.full(2, -0.9)]
    rates = resampled_null_rates(FLIP_CLAIM, observed, pairs, simulations=NULL_SIMULATIONS, seed=5)
    if pairs < no_effect_pairs(FLIP_CLAIM):
        assert rates[FALSE_DIRECTIONAL] == 0.0
    else:
        no_flip = (1 - 2 / 20) ** pairs
        assert rates[FALSE_DIRECTIONAL] <= max(no_flip, 0.05) + _four_standard_errors(0.05)


def test_a_binary_null_keeps_the_discordant_share_with_both_signs_equally_likely():
    """For 0/1 outcomes the null is McNemar's: only the share of pairs that differ is kept, so a
    sample of gains alone and one of gains and losses give the same simulated studies; it decides a
    direction at most the nominal 5% of the time, plus four standard errors."""
    gains_only = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    mixed = [1, -1, 1, -1, 0, 0, 0, 0, 0, 0]
    rates = resampled_null_rates(GENERALISE_CLAIM, gains_only, 20, simulations=NULL_SIMULATIONS, seed=2)
    assert rates == resampled_null_rates(GENERALISE_CLAIM, mixed, 20, simulations=NULL_SIMULATIONS, seed=2)
    assert rates[FALSE_DIRECTIONAL] <= 0.05 + _four_standard_errors(0.05)
    with pytest.raises(ValueError, match="differences must be -1, 0 or \\+1"):
        resampled_null_rates(GENERALISE_CLAIM, [0.5, -0.5, 0.0], 10)


@pytest.mark.parametrize(
    "differences, pairs, simulations, message",
    [
        ([0.1], 10, 100, "differences"),
        ([[0.1, 0.2], [0.3, 0.4]], 10, 100, "differences"),
        ([0.1, np.nan, 0.2], 10, 100, "differences must be finite"),
        ([0.1, np.inf, 0.2], 10, 100, "differences must be finite"),
        ([0.1, 0.2, 0.3], 0, 100, "pairs"),
        ([0.1, 0.2, 0.3], 2.5, 100, "pairs"),
        ([0.1, 0.2, 0.3], 10, 0, "simulations"),
    ],
)
def test_resampled_null_rates_name_bad_input(differences, pairs, simulations, message):
    with pytest.raises(ValueError, match=message):
        resampled_null_rates(FLIP_CLAIM, differences, pairs, simulations=simulations)


def test_resampled_null_rates_repeat_with_the_seed_and_decide_nothing_below_the_fewest_pairs():
    observed = np.r_[np.full(9, 0.12), -0.9, 0.3, -0.2]
    enough = no_effect_pairs(FLIP_CLAIM)
    first = resampled_null_rates(FLIP_CLAIM, observed, enough, simulations=500, seed=4)
    assert first == resampled_null_rates(FLIP_CLAIM, observed, enough, simulations=500, seed=4)
    assert first != resampled_null_rates(FLIP_CLAIM, observed, enough, simulations=500, seed=9)
    assert set(resampled_null_rates(FLIP_CLAIM, observed, MIN_PAIRS - 1).values()) == {0.0}
    assert set(resampled_null_rates(FLIP_CLAIM, observed, enough - 1, simulations=500).values()) == {0.0}


def test_the_resampled_null_table_has_a_row_per_verdict_at_its_pairs_and_the_largest_rate():
    skewed = judge(FLIP_CLAIM, np.zeros(20), -np.r_[np.full(18, 0.15), np.full(2, -0.9)])  # error: ssa - softmax
    spread = judge(FLIP_CLAIM, np.zeros(10), -np.random.default_rng(1).normal(0.0, 0.3, 10))
    table, largest = resampled_null_table(
        [(FLIP_CLAIM, skewed), (FLIP_CLAIM, spread), (FLIP_CLAIM, not_tested(FLIP_CLAIM))], simulations=500, seed=6
    )
    assert table["pairs"].tolist() == [20, 10]
    assert table.iloc[0].to_dict() == {"pairs": 20, **resampled_null_rates(FLIP_CLAIM, skewed.differences, 20, 500, 6)}
    assert largest == table[FALSE_DIRECTIONAL].max() == table.iloc[0][FALSE_DIRECTIONAL]
    empty, none = resampled_null_table([(FLIP_CLAIM, not_tested(FLIP_CLAIM))])
    assert empty.empty and none is None


GENERALISE_CLAIM = Claim(
    "more seeds generalise", direction=1, threshold=0.2, units="share of seeds", reason="one seed in five", binary=True
)


def _tango_score_by_likelihood(gains: int, losses: int, pairs: int, delta: float) -> float:
    """Tango's score at ``delta`` with the restricted maximum-likelihood rate of control-only
    successes found numerically, not from the closed form the package uses."""
    from scipy import optimize

    def negative_log_likelihood(p_loss):
        p_gain, p_same = p_loss + delta, 1 - 2 * p_loss - delta
        terms = [(gains, p_gain), (losses, p_loss), (pairs - gains - losses, p_same)]
        return -sum(count * math.log(p) for count, p in terms if count)

    p_loss = optimize.minimize_scalar(
        negative_log_likelihood,
        bounds=(max(0.0, -delta) + 1e-15, (1 - delta) / 2 - 1e-15),
        method="bounded",
        options={"xatol": 1e-13},
    ).x
    return (gains - losses - pairs * delta) / math.sqrt(pairs * (2 * p_loss + delta * (1 - delta)))


@pytest.mark.parametrize(
    "gains, losses, pairs", [(3, 0, 10), (7, 1, 21), (1, 7, 21), (5, 5, 10), (2, 1, 40), (9, 4, 40)]
)
def test_the_binary_interval_is_tangos_score_interval(gains, losses, pairs):
    low, high = (
        float(end[0]) for end in paired_proportion_interval(np.array([gains]), np.array([losses]), np.array([pairs]))
    )
    z = stats.norm.ppf(0.975)
    assert low < (gains - losses) / pairs < high
    assert _tango_score_by_likelihood(gains, losses, pairs, low) == pytest.approx(z, abs=1e-5)
    assert _tango_score_by_likelihood(gains, losses, pairs, high) == pytest.approx(-z, abs=1e-5)


@pytest.mark.parametrize(
    "pairs, outcome", [(10, "undecided"), (16, "no difference that matters"), (40, "no difference that matters")]
)
def test_agreeing_binary_pairs_are_not_a_point(pairs, outcome):
    """Every seed generalises under both or fails under both: the t interval would be the point 0;
    Tango's is +-z^2 / (N + z^2), inside the threshold 0.2 from 16 pairs on."""
    both = np.array([1.0, 0.0] * (pairs // 2))
    verdict = judge(GENERALISE_CLAIM, both, both)
    z2 = stats.norm.ppf(0.975) ** 2
    assert verdict.interval == pytest.approx((-z2 / (pairs + z2), z2 / (pairs + z2)))
    assert verdict.outcome == outcome and verdict.method == METHOD_BINARY
    if outcome == "undecided":
        assert verdict.seeds_to_resolve == 16


@pytest.mark.parametrize(
    "gains, losses, pairs, message",
    [(-1, 0, 10, "gains"), (0, np.nan, 10, "losses"), (0, 0, 0, "pairs"), (6, 5, 10, "at most pairs")],
)
def test_the_paired_proportion_interval_names_a_bad_count(gains, losses, pairs, message):
    with pytest.raises(ValueError, match=message):
        paired_proportion_interval(gains, losses, pairs)


def test_a_binary_claim_takes_only_0_and_1():
    with pytest.raises(ValueError, match="treatment and control must be 0 or 1"):
        judge(GENERALISE_CLAIM, np.full(6, 0.5), np.zeros(6))
    with pytest.raises(ValueError, match="binary"):
        Claim("c", direction=1, threshold=0.1, units="", reason="r", binary="yes")


def test_binary_decisions_need_the_signed_rank_test_too():
    gains = np.array([1.0] * 6 + [0.0] * 4)  # six gains, four agreeing failures
    assert judge(GENERALISE_CLAIM, gains, np.zeros(10)).outcome == "better"
    assert judge(GENERALISE_CLAIM, np.zeros(10), gains).outcome == "worse"
    assert judge(GENERALISE_CLAIM, gains[:5], np.zeros(5)).outcome == "exploratory"


@pytest.mark.parametrize("generalise", [0.3, 0.5, 0.8])
@pytest.mark.parametrize("pairs", [6, 10, 20, 40])
def test_no_effect_is_reproduced_at_most_5_percent_of_the_time_binary(pairs, generalise):
    def sample(generator, n):
        return (generator.random(n) < generalise).astype(float), (generator.random(n) < generalise).astype(float)

    assert false_reproduction_rate(GENERALISE_CLAIM, pairs, sample, simulations=2000) <= 0.05


FLIP_CLAIM = Claim(
    "SSA lowers the prompt error",
    direction=-1,
    threshold=0.1,
    units="prompt error",
    reason="a tenth of the error scale [0, 1]",
    largest_flip=1.0,
)


@pytest.mark.parametrize("threshold, flip", [(0.1, 1.0), (0.1, 0.9), (0.2, 1.0), (0.05, 1.0)])
def test_no_effect_pairs_are_the_fewest_that_show_a_flip_frequent_enough_to_matter(threshold, flip):
    needed = no_effect_pairs(Claim("c", -1, threshold, "u", "r", largest_flip=flip))
    unseen = lambda pairs: (1 - threshold / flip) ** pairs
    assert unseen(needed) <= 0.025 < unseen(needed - 1)


def test_no_effect_pairs_are_the_rules_minimum_without_flips():
    assert no_effect_pairs(ERROR_CLAIM) == MIN_PAIRS
    assert no_effect_pairs(Claim("c", -1, 0.5, "u", "r", largest_flip=0.4)) == MIN_PAIRS  # a flip cannot reach it
    with pytest.raises(ValueError, match="largest_flip"):
        Claim("c", -1, 0.1, "u", "r", largest_flip=0.0)


def test_outcomes_that_flip_need_enough_pairs_for_no_effect():
    generator = np.random.default_rng(3)
    needed = no_effect_pairs(FLIP_CLAIM)
    for pairs, outcome in ((10, "exploratory"), (needed - 1, "exploratory"), (needed, "no difference that matters")):
        differences = generator.normal(0.0, 0.01, pairs)
        assert judge(ERROR_CLAIM, np.zeros(pairs), differences).outcome == "no difference that matters"
        verdict = judge(FLIP_CLAIM, np.zeros(pairs), differences)
        assert verdict.outcome == outcome
        if outcome == "exploratory":
            assert (
                verdict.seeds_to_resolve == needed and f"the rule decides from {needed} pairs on" in verdict.sentence()
            )
            assert verdict.words() == f"exploratory ({pairs} pairs; the rule decides from {needed})"
    flipped = np.r_[np.full(12, 0.9), generator.normal(0.0, 0.01, 28)]  # a direction needs no more pairs than before
    assert (
        judge(FLIP_CLAIM, np.zeros(40), flipped).outcome
        == judge(ERROR_CLAIM, np.zeros(40), flipped).outcome
        == "better"
    )


@pytest.mark.parametrize("pairs", [10, 20])
def test_rare_flips_are_not_called_no_effect(pairs):
    """Seeds flip (one arm generalises, the other fails: a difference of 1) in a tenth of the
    pairs, so the true effect is the threshold. The t interval alone calls that "no effect"
    whenever no pair flipped, (0.9)^N of the time; the declared flips forbid it below 36 pairs."""

    def sample(generator, shape):
        flips = generator.random(shape) < FLIP_CLAIM.threshold / FLIP_CLAIM.largest_flip
        return np.zeros(shape), np.where(flips, 1.0, 0.0) + generator.normal(0.0, 0.01, shape)

    def no_effect_rate(claim):
        treatment, control = sample(np.random.default_rng(0), (2000, pairs))
        differences = claim.direction * (treatment - control)
        return np.mean(
            decide(differences, claim.threshold, no_effect_from=no_effect_pairs(claim))[3]
            == "no difference that matters"
        )

    assert no_effect_rate(ERROR_CLAIM) > 0.05 and no_effect_rate(FLIP_CLAIM) == 0.0


def test_power_grows_with_seeds():
    low = power(ERROR_CLAIM, pairs=6, effect=0.2, spread=0.2, simulations=1000)
    high = power(ERROR_CLAIM, pairs=20, effect=0.2, spread=0.2, simulations=1000)
    assert low < 0.5 < 0.8 < high


def test_combined_and_few_seed_verdicts_have_sentences():
    agreeing = combine(
        "both",
        {
            "a": judge(ERROR_CLAIM, np.zeros(6), np.full(6, 0.5) + np.linspace(0, 0.01, 6)),
            "b": judge(ERROR_CLAIM, np.zeros(6), np.full(6, 0.4) + np.linspace(0, 0.01, 6)),
        },
    )
    assert agreeing.outcome == "better" and agreeing.sentence() == "both: the claim holds (SSA better on 2 of 2)."
    few = judge(ERROR_CLAIM, np.zeros(3), np.array([0.2, 0.5, 0.3]))
    assert few.outcome == "exploratory" and few.seeds_to_resolve >= MIN_PAIRS
    assert few.seeds_to_resolve == seeds_to_resolve(few.effect, float(np.std(few.differences, ddof=1)), 0.1)


def test_estimate_is_the_effect_and_its_interval():
    found = judge(ERROR_CLAIM, np.zeros(6), np.full(6, 0.5) + np.linspace(0, 0.01, 6))
    low, high = found.interval
    assert found.estimate() == f"{found.effect:+.2f} [{low:+.2f}, {high:+.2f}]"
    assert not_tested(ERROR_CLAIM).estimate() == ""
    # an effect that rounds to zero carries no sign it does not have; an interval's end keeps its own,
    # so that an interval reaching below zero never reads as excluding it
    near_zero = dataclasses.replace(found, effect=-0.0002, interval=(-0.0004, 0.0008))
    assert near_zero.estimate("+.3f") == "+0.000 [-0.000, +0.001]" and near_zero.estimate() == "+0.00 [-0.00, +0.00]"
    assert dataclasses.replace(found, effect=0.08, interval=(-0.0019, 0.16)).estimate() == "+0.08 [-0.00, +0.16]"
    assert dataclasses.replace(found, interval=(-0.0006, 0.1)).estimate("+.3f").endswith("[-0.001, +0.100]")


def test_pair_by_seed_keeps_the_seeds_both_sides_have_in_order():
    seeds, treatment, control = pair_by_seed({2: 0.3, 0: 0.1, 5: 0.9}, {0: 0.5, 2: 0.4, 7: 0.0})
    assert seeds == (0, 2) and treatment.tolist() == [0.1, 0.3] and control.tolist() == [0.5, 0.4]


def test_power_at_zero_spread_is_the_one_study_judged_once():
    claim = Claim("x", 1, 0.1, "u", "test")
    assert power(claim, 10, 0.5, 0.0) == 1.0  # every simulated study reproduces
    assert power(claim, 10, 0.05, 0.0) == 0.0  # below the threshold: never
    assert power(claim, 3, 0.5, 0.0) == 0.0  # fewer than MIN_PAIRS pairs decide nothing


def test_simulated_studies_are_judged_as_judge_judges_each_one():
    """The simulations judge thousands of studies at once; each must get the outcome and interval
    that ``judge`` gives it alone, including studies with tied or zero differences (for which
    scipy's signed-rank test switches method)."""
    generator = np.random.default_rng(7)
    normal = generator.normal(0.0, 0.25, (60, 8)) + np.linspace(-0.3, 0.3, 60)[:, None]
    all_or_nothing = np.where(generator.random((20, 8)) < 0.5, 0.0, 0.9) - np.where(
        generator.random((20, 8)) < 0.5, 0.0, 0.9
    )
    constant = np.array([[-0.3] * 8, [0.3] * 8])
    for differences in (normal, all_or_nothing, constant, np.vstack([normal, all_or_nothing, constant])):
        effect, low, high, outcome = decide(-differences, ERROR_CLAIM.threshold)  # paper's direction
        for row, study in enumerate(differences):
            alone = judge(ERROR_CLAIM, study, np.zeros_like(study), resolve=False)
            assert alone.outcome == outcome[row]
            assert alone.interval == (low[row], high[row]) and alone.effect == effect[row]
    binary = np.sign(all_or_nothing)
    effect, low, high, outcome = decide(binary, GENERALISE_CLAIM.threshold, binary=True)
    for row, study in enumerate(binary):
        alone = judge(GENERALISE_CLAIM, (study > 0).astype(float), (study < 0).astype(float), resolve=False)
        assert (alone.outcome, alone.interval, alone.effect) == (outcome[row], (low[row], high[row]), effect[row])
    outcomes = set(decide(-np.vstack([normal, all_or_nothing, constant]), ERROR_CLAIM.threshold)[3])
    assert {
        "better",
        "worse",
        "undecided",
    } <= outcomes  # the comparison covered the outcomes that need the signed-rank test


def test_form_or_slope_names_a_source_only_when_every_fact_it_predicts_holds():
    def v(outcome):
        return Verdict("a claim", outcome)

    opposite, no_effect, unsure = v(WORSE), v(NEGLIGIBLE), v(UNDECIDED)
    # the sharper softmax loses as the scorer does, and the scorer is decided no different from it
    assert form_or_slope(opposite, opposite, no_effect) == SLOPE
    # an open comparison carries no attribution
    assert form_or_slope(opposite, opposite, unsure) == NOT_SEPARATED
    assert form_or_slope(opposite, opposite, no_effect, gentler=no_effect) == SLOPE
    assert form_or_slope(opposite, opposite, unsure, gentler=unsure) == NOT_SEPARATED
    assert form_or_slope(opposite, opposite, opposite) == NOT_SEPARATED  # worse than the slope alone
    # the slope alone changes nothing, and the scorer loses to it too
    assert form_or_slope(opposite, no_effect, opposite) == FORM
    assert form_or_slope(opposite, unsure, opposite) == NOT_SEPARATED
    assert form_or_slope(unsure, opposite, opposite) == NO_DIFFERENCE
    assert "deficit goes with its form" in slope_sentence(FORM, opposite, "SSA")
    # the sharper softmax's verdict in its own words: a difference below the threshold, never equality
    assert f"a softmax with that slope shows {NEGLIGIBLE} from softmax" in slope_sentence(FORM, opposite, "SSA")
    assert "advantage goes with its starting slope" in slope_sentence(SLOPE, v(BETTER), "SSA")
    # an earlier rule's reading is said as what that rule read, never in the present of a mechanism
    assert slope_sentence(FORM, opposite, "SSA", past=True).startswith(
        "the rule read SSA's deficit as going with its form"
    )
    assert slope_sentence(SLOPE, v(BETTER), "SSA", past=True).startswith("the rule read SSA's advantage as going with")
    assert slope_sentence(NOT_SEPARATED, opposite, past=True).startswith("These comparisons did not separate")
    for reading in (SLOPE, FORM, NOT_SEPARATED, NO_DIFFERENCE):
        assert not {"goes", "shows", "differs", "is", "do"} & set(
            slope_sentence(reading, opposite if reading != NO_DIFFERENCE else unsure, past=True).split()
        )
    with pytest.raises(ValueError, match="reading must be one of"):
        slope_sentence("its colour", opposite)


def _rare_flips(generator, pairs):
    """Differences in [-1, 1]: a flip of 1 in a tenth of the pairs (mean 0.1), else near 0."""
    return np.clip(np.where(generator.random(pairs) < 0.1, 1.0, 0.0) + generator.normal(0.0, 0.01, pairs), -1, 1)


def test_the_bounded_interval_covers_the_mean_where_rare_flips_fool_the_t_interval():
    """150 seeded samples of 20 pairs whose mean is 0.1: a 95% interval may miss it in at most 5%
    of samples, plus three binomial standard errors of a 150-sample rate (0.053)."""
    generator = np.random.default_rng(11)
    samples = [_rare_flips(generator, 20) for _ in range(150)]
    missed = [not (low <= 0.1 <= high) for low, high in (bounded_mean_interval(d, 1.0) for d in samples)]
    t_missed = [not (low <= 0.1 <= high) for low, high in zip(*t_interval(np.array(samples)))]
    assert np.mean(missed) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 150)
    assert np.mean(t_missed) > 0.1  # the samples with no flip: 0.9^20 = 12% of them


def test_the_bounded_interval_holds_the_mean_narrows_with_pairs_and_ignores_order():
    generator = np.random.default_rng(5)
    differences = np.clip(generator.normal(0.05, 0.2, 40), -1, 1)
    low, high = bounded_mean_interval(differences, 1.0)
    assert low < differences.mean() < high and -1 <= low and high <= 1
    assert bounded_mean_interval(differences[::-1], 1.0) == (low, high)
    step = 2.0 / (BOUNDED_GRID - 1)  # one grid step at bound 1: rounding may move an endpoint by one
    assert bounded_mean_interval(differences / 2, 0.5) == pytest.approx((low / 2, high / 2), abs=step / 2)
    widths = [np.subtract(*bounded_mean_interval(np.zeros(n), 1.0))[()] for n in (10, 40, 160)]
    assert widths[0] < widths[1] < widths[2] < 0  # low - high: narrower with more pairs
    zero_low, zero_high = bounded_mean_interval(np.zeros(40), 1.0)
    assert zero_low == pytest.approx(-zero_high, abs=step)


@pytest.mark.parametrize(
    "differences, bound, message",
    [
        ([0.1, 0.2], 0.0, "bound"),
        ([0.1, 0.2], math.inf, "bound"),
        ([0.1], 1.0, "differences"),
        ([0.1, 1.5], 1.0, "within"),
        ([0.1, math.nan], 1.0, "finite"),
        ([[0.1, 0.2]], 1.0, "differences"),
    ],
)
def test_the_bounded_interval_names_bad_input(differences, bound, message):
    with pytest.raises(ValueError, match=message):
        bounded_mean_interval(differences, bound)


def test_the_bounded_check_decides_again_with_the_bounded_interval():
    generator = np.random.default_rng(2)
    quiet = generator.normal(0.0, 0.01, 40)  # no flip among 40 pairs: "no effect" by the t interval
    verdict = judge(FLIP_CLAIM, np.zeros(40), quiet)
    assert verdict.outcome == "no difference that matters"
    checked = bounded_check(verdict, 1.0)
    assert checked.outcome == "undecided" and checked.method == METHOD_BOUNDED
    assert checked.interval == bounded_mean_interval(verdict.differences, 1.0) and checked.effect == verdict.effect
    strong = judge(FLIP_CLAIM, np.zeros(40), np.clip(generator.normal(-0.8, 0.05, 40), -1, 1))
    assert strong.outcome == bounded_check(strong, 1.0).outcome == "worse"
    few = judge(FLIP_CLAIM, np.zeros(3), np.zeros(3))
    assert bounded_check(few, 1.0) is few


@pytest.mark.parametrize("pairs", [1, 2, 5, 6, 10, 13, 14, 20])
def test_signed_rank_p_values_are_scipys_for_each_row_alone(pairs):
    generator = np.random.default_rng(pairs)
    rows = [
        generator.integers(-3, 4, pairs) / 4,  # ties and zeros
        generator.choice([-1.0, 0.0, 1.0], pairs),  # a binary claim's differences
        generator.normal(0.3, 1.0, pairs),  # no ties: scipy's exact distribution
        np.zeros(pairs),
        np.full(pairs, 0.5),
        np.r_[0.0, np.full(pairs - 1, -0.25)],
    ]
    if pairs <= 6:  # scipy's own test takes about a second a row at 2**13 flips: few rows there
        rows += [generator.integers(-2, 3, pairs).astype(float) for _ in range(20)]
    elif pairs == 13:
        rows = rows[1:2] + rows[-1:]
    differences = np.stack(rows)
    expected = [stats.wilcoxon(row).pvalue if np.any(row != 0) else 1.0 for row in differences]
    assert signed_rank_p_values(differences).tolist() == expected


def test_the_words_name_the_treatment_and_say_the_direction():
    other = Claim(
        "x beats softmax", direction=-1, threshold=0.1, units="error", reason="a tenth", treatment="entmax-1.5"
    )
    assert judge(other, np.zeros(6), np.full(6, 0.5) + np.linspace(0, 0.01, 6)).words() == "entmax-1.5 better"
    assert judge(other, np.full(6, 0.5) + np.linspace(0, 0.01, 6), np.zeros(6)).words() == "entmax-1.5 worse"
    assert judge(ERROR_CLAIM, np.zeros(6), np.full(6, 0.5) + np.linspace(0, 0.01, 6)).words() == "SSA better"
    open_ = judge(ERROR_CLAIM, np.zeros(6), np.array([0.9, -0.8, 0.7, 0.0, 0.1, -0.5]))
    assert (
        open_.outcome == "undecided"
        and open_.words() == f"undecided (about {open_.seeds_to_resolve:,} seeds would decide)"
    )
    assert not_learned(ERROR_CLAIM, "softmax's error at sigma 1 is 0.9").words() == "not learned"
    with pytest.raises(ValueError, match="reason"):
        not_learned(ERROR_CLAIM, " ")


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_every_outcome_says_what_it_means_for_the_claim(outcome):
    word = claim_word(outcome)
    assert word in ("holds", "does not hold", "holds in part", "mixed", "undecided", "premise not shown", "not tested")
    assert (word == "does not hold") == (outcome in AGAINST)
    assert (word == "undecided") == (outcome in OPEN)
    assert word in VOCABULARY and outcome_words(outcome) in {f"SSA {w}" for w in VOCABULARY} | set(VOCABULARY)
    assert not any(retired in outcome_words(outcome) for retired in RETIRED_WORDS)
    with pytest.raises(ValueError, match="outcome must be one of"):
        claim_word("reproduced")


def test_false_discoveries_adjust_the_signed_rank_p_within_the_family():
    from scipy import stats

    generator = np.random.default_rng(4)
    claim = Claim("x", 1, 0.1, "u", "a tenth")
    family = [judge(claim, generator.normal(shift, 0.1, 12), np.zeros(12)) for shift in (0.5, 0.3, 0.0, 0.05, -0.4)]
    family.append(judge(claim, [1.0, 2.0], [0.0, 0.0]))  # too few pairs: no test, no part of the family
    found = false_discoveries(family)
    assert found[-1] is None
    raw = [signed_rank_p(v) for v in family[:-1]]
    assert [f["p"] for f in found[:-1]] == raw
    assert [f["adjusted p"] for f in found[:-1]] == pytest.approx(stats.false_discovery_control(raw, method="bh"))
    for verdict, f in zip(family, found[:-1]):
        # only a decided direction can survive, and only with its adjusted p below the rate
        assert f["survives"] == (verdict.outcome in ("better", "worse") and f["adjusted p"] < FALSE_DISCOVERY_RATE)
    assert found[0]["survives"] and found[4]["survives"] and not found[2]["survives"]
    assert false_discoveries([]) == []


def test_a_claim_phrase_carries_the_claim_word_in_a_sentence():
    assert claim_phrase(WORSE) == "the claim does not hold"
    assert claim_phrase(HOLDS_IN_PART) == "the claim holds in part"
    assert claim_phrase(BETTER) == "the claim holds"
    assert claim_phrase(TOO_FEW_SEEDS) == "undecided"
    with pytest.raises(ValueError, match="outcome must be one of"):
        claim_phrase("reproduced")


def test_an_interval_never_reads_wider_than_the_scale_of_a_bounded_outcome():
    unbounded = Claim("accuracy is higher", 1, 0.1, "accuracy", "a tenth")
    bounded = dataclasses.replace(unbounded, bound=1.0)
    few = ([0.9, 0.1, 0.95], [0.0, 0.9, 0.05])  # three seeds that disagree: the t interval passes +-1
    wide, clipped = judge(unbounded, *few), judge(bounded, *few)
    assert wide.interval[0] < -1 and wide.interval[1] > 1
    assert clipped.interval == (-1.0, 1.0) and clipped.effect == wide.effect and clipped.outcome == wide.outcome
    many = ([0.9, 0.1, 0.95, 0.2, 0.8, 0.1], [0.0, 0.9, 0.05, 0.9, 0.1, 0.8])
    assert judge(bounded, *many).outcome == judge(unbounded, *many).outcome
    assert judge(bounded, *many).interval == tuple(max(min(end, 1.0), -1.0) for end in judge(unbounded, *many).interval)
    with pytest.raises(ValueError, match="bound must be None or a finite number > 0"):
        Claim("x", 1, 0.1, "u", "r", bound=0)


def test_learning_failure_names_every_model_that_did_not_learn():
    assert learning_failure({"softmax": True, "SSA": True}, "error below 0.5") is None
    assert (
        learning_failure({"softmax": False, "SSA": True}, "error below 0.5")
        == "softmax did not learn the task (error below 0.5)"
    )
    assert learning_failure({"a": False, "b": False, "c": False}, "e").startswith("a, b and c did not learn")
    with pytest.raises(ValueError, match="learned must name"):
        learning_failure({}, "e")
    with pytest.raises(ValueError, match="evidence must say"):
        learning_failure({"a": False}, " ")


def test_the_power_sentence_reads_the_power_table_for_the_named_effect():
    claim = Claim("gain", direction=1, threshold=1.0, units="points", reason="test")
    treatment = np.array([12.0, 9.0, 11.0, 10.5, 9.5, 11.5])
    found = {"gain": judge(claim, treatment, np.zeros(6))}
    table = power_table(found, [6], effects={"gain": {"the paper's gain": 10.0}}, simulations=200)
    sentence = effect_power_sentence(table, 6, "the paper's gain", {"gain": "the mean"}, "points")
    expected = table.loc[("gain", "the paper's gain"), "6 seeds"]
    assert sentence == (
        f'with 6 paired seeds, the chance that the rule says "SSA better" if the true effect were the paper\'s '
        f"gain: the mean (10 points) {expected:.0%}"
    )
    with pytest.raises(ValueError, match="pairs"):
        effect_power_sentence(table, 7, "the paper's gain", {"gain": "the mean"}, "points")
    with pytest.raises(ValueError, match="names"):
        effect_power_sentence(table, 6, "the paper's gain", {"other": "x"}, "points")
    assert effect_power_sentence(table, 1, "the paper's gain", {}, "points") == (
        "with 1 paired seed, the rule's power cannot be estimated: no claim has the two paired differences a spread needs"
    )


def test_a_published_effect_is_placed_against_each_interval():
    below, inside = Verdict("a", UNDECIDED, interval=(-1.0, 2.0)), Verdict("b", UNDECIDED, interval=(5.0, 12.0))
    assert effect_placement(below, 10.0) == "above" and effect_placement(inside, 10.0) == "inside"
    assert effect_placement(inside, 4.0) == "below" and effect_placement(Verdict("c", UNDECIDED), 1.0) is None
    sentence = published_effect_sentence({"first": (below, 10.0), "second": (inside, 10.0)}, "points", spec="+.1f")
    assert sentence == (
        "the paper's gain lies above our interval (first: interval [-1.0, +2.0], the paper's 10.0 points): at this "
        "scale the 95% interval excludes an effect of the paper's size, not one of the threshold's; the paper's "
        "gain lies inside our interval (second: interval [+5.0, +12.0], the paper's 10.0 points)"
    )
    assert published_effect_sentence({"none": (Verdict("c", UNDECIDED), 1.0)}, "points") == ""


def test_the_rule_is_symmetric_a_direction_needs_the_threshold_both_ways():
    small = np.array([0.05, 0.06, 0.04, 0.05, 0.07, 0.05])  # decided, but within the 0.1 threshold
    for sign, word in ((1, "better"), (-1, "worse")):
        verdict = judge(ERROR_CLAIM, np.zeros(6), sign * small)
        assert verdict.outcome == "no difference that matters"
        assert verdict.label() == f"no difference that matters; SSA slightly {word}"
        large = judge(ERROR_CLAIM, np.zeros(6), sign * (small + 0.2))
        assert large.outcome == word and large.label() == f"SSA {word}"
    # an interval reaching past the threshold with an estimate inside it decides nothing, either way
    for sign in (1, -1):
        wide = judge(ERROR_CLAIM, np.zeros(6), sign * np.array([0.01, 0.02, 0.16, 0.01, 0.17, 0.03]))
        assert wide.outcome == "undecided", wide.sentence()


def test_false_discovery_control_turns_a_direction_that_does_not_survive_into_undecided():
    decided = judge(ERROR_CLAIM, np.zeros(6), np.full(6, 0.5) + np.linspace(0, 0.01, 6))  # signed-rank p = 0.031
    assert decided.outcome == "better"
    alone = control_false_discoveries([decided])
    assert alone[0].outcome == "better" and alone[0].adjusted_p == pytest.approx(0.03125) and alone[0].family_size == 1
    nulls = [judge(ERROR_CLAIM, np.zeros(6), np.array([0.1, -0.1, 0.2, -0.2, 0.05, -0.05]) * k) for k in (1, 2, 3)]
    family = control_false_discoveries([decided, *nulls])
    assert family[0].outcome == "undecided" and family[0].adjusted_p == pytest.approx(4 * 0.03125)
    assert "does not survive false-discovery control" in family[0].words() and family[0].effect == decided.effect
    assert [v.outcome for v in family[1:]] == [v.outcome for v in nulls]


def test_a_verdict_names_the_seeds_it_rests_on():
    steady = judge(ERROR_CLAIM, np.zeros(8), np.full(8, 0.5) + np.linspace(0, 0.02, 8))
    assert steady.outcome == "better" and seeds_it_rests_on(steady, range(100, 108)) == ()
    # seven pairs just below the threshold, one far above it: without that seed the mean falls below it
    leaning = np.r_[np.full(7, 0.09) + np.linspace(0, 0.005, 7), 0.3]
    verdict = judge(ERROR_CLAIM, np.zeros(8), leaning)
    assert verdict.outcome == "better", verdict.sentence()
    assert seeds_it_rests_on(verdict, range(100, 108)) == (107,)
    assert rests_on_words((107,)) == "rests on seed 107" and rests_on_words((1, 2, 3)) == "rests on seeds 1, 2 and 3"
    assert rests_on_words(tuple(range(26))) == "leaving out any one of 26 seeds moves it"
    assert seeds_it_rests_on(judge(ERROR_CLAIM, np.zeros(6), np.array([0.9, -0.8, 0.7, 0.0, 0.1, -0.5]))) == ()  # open
    with pytest.raises(ValueError, match="seeds must name each"):
        seeds_it_rests_on(verdict, range(3))


def test_a_published_effect_is_placed_against_exploratory_intervals_only_as_an_estimate():
    few = Verdict("SSA beats softmax", TOO_FEW_SEEDS, 0.5, (-4.0, 5.0), 8, 2.0)
    assert effect_placement(few, 10.0) is None  # an exploratory interval decides nothing
    said = exploratory_effect_sentence({"mean": (few, 10.0), "one": (few, -20.0)}, "points")
    assert said.startswith(
        "every interval is exploratory (8 pairs), so none decides against the paper's gain; as estimates, "
        "the paper's gain lies above 1 of the 2 intervals, below 1 of the 2 intervals (mean: ["
    )
    assert said.endswith("points, the paper's 10.00)")
    decided = dataclasses.replace(few, outcome=UNDECIDED)
    assert exploratory_effect_sentence({"mean": (few, 10.0), "other": (decided, 10.0)}, "points") == ""
    assert exploratory_effect_sentence({}, "points") == ""


def test_a_verdict_that_says_no_direction_beyond_zero_names_the_step_of_the_rule_it_fails():
    def made(outcome, effect, interval, differences, **extra):
        return Verdict(
            "SSA beats softmax",
            outcome,
            effect,
            interval,
            len(differences),
            0.1,
            differences=tuple(differences),
            **extra,
        )

    mixed_signs = (-0.5, -0.4, -0.3, -0.2, 0.05, -0.1)  # signed-rank p above 0.05 on 6 pairs
    assert signed_rank_p(made(UNDECIDED, -0.24, (-0.45, -0.03), mixed_signs)) >= 0.05
    assert withheld_direction(made(UNDECIDED, -0.24, (-0.45, -0.03), mixed_signs)) == (
        "its interval excludes 0 and its estimate reaches the threshold, but the signed-rank test does not agree: p = "
        f"{signed_rank_p(made(UNDECIDED, -0.24, (-0.45, -0.03), mixed_signs)):.2g}, and a direction needs it "
        "below 0.05"
    )
    controlled = made(
        UNDECIDED, -0.25, (-0.44, -0.05), (-0.3,) * 5 + (-0.2,), adjusted_p=0.097, family_size=37, uncontrolled=WORSE
    )
    assert withheld_direction(controlled).endswith(
        "the direction fails false-discovery control: adjusted p = 0.097 over the 37 comparisons judged with it, and a "
        "direction needs it below 0.05"
    )
    assert withheld_direction(made(UNDECIDED, -0.07, (-0.12, -0.02), (-0.07,) * 6)) == (
        "its interval excludes 0, but its estimate -0.07 is short of the threshold 0.1"
    )
    assert withheld_direction(made(NEGLIGIBLE, -0.05, (-0.09, -0.01), mixed_signs)).startswith(
        "its interval excludes 0, but no direction is said: signed-rank p = "
    )
    assert withheld_direction(made(UNDECIDED, -0.1, (-0.3, 0.1), mixed_signs)) == ""  # reaches 0
    assert withheld_direction(made(WORSE, -0.3, (-0.4, -0.2), (-0.3,) * 6)) == ""  # says a direction


def test_a_verdict_with_its_evidence_says_its_pairs_and_what_would_decide_it_once():
    few = Verdict("SSA beats softmax", TOO_FEW_SEEDS, 0.5, (-4.0, 5.0), 8, 2.0)
    said = few.with_evidence()
    assert said.startswith("exploratory (effect +0.5") and said.count("8 pair") == 1
    assert "the rule decides from" in said and said.count("decides from") == 1
    open_ = dataclasses.replace(few, outcome=UNDECIDED, seeds_to_resolve=25)
    assert open_.with_evidence().count("25") == 1 and open_.with_evidence().startswith("undecided (effect")
