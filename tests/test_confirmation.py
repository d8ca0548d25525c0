"""The encoder's confirmatory test: judged by its declared rule, on its own seeds only, and read only when complete."""

import numpy as np
import pytest

from ssa_book.verdicts.words import UNDECIDED
from ssa_book.verdicts.claim import no_effect_pairs
from ssa_book.verdicts.verdict import Verdict
from ssa_book.encoder import confirmation, experiment, zorro
from test_encoder import fake_run


def _runs(gain_by_variant, seeds):
    runs = [fake_run("softmax", s, 0.6 + 0.001 * s) for s in seeds]
    return runs + [
        fake_run(variant, s, 0.6 + 0.001 * s + (gain + 0.1 * (s % 3)) / 100)
        for variant, gain in gain_by_variant.items()
        for s in seeds
    ]


def test_the_plan_reads_its_fresh_seeds_only_and_only_once_complete():
    seeds = confirmation.CONFIRMATORY_SEEDS
    runs = _runs({"ssa": 3.0, "ssa_n2": 0.5}, seeds) + _runs(
        {"ssa": -9.0, "ssa_n2": -9.0}, confirmation.EXPLORATORY_SEEDS
    )
    judged = confirmation.judge(runs)
    assert judged["primary"].outcome == "better" and judged["primary"].pairs == len(
        seeds
    )  # seeds 0-7 are not pooled in
    assert judged["secondary"].outcome == "no difference that matters"
    assert confirmation.progress(runs).startswith("complete")
    assert "primary, SSA against softmax: SSA better" in confirmation.sentence(runs)
    assert "the chapter's confirmatory test, on fresh seeds 8-23, found SSA better" in confirmation.reading(runs)
    partial = [run for run in runs if run.seed != seeds[-1]]
    assert (
        confirmation.progress(partial)
        == f"not run yet: {len(confirmation.needed_runs()) - 3} of {len(confirmation.needed_runs())} runs done"
    )
    assert "SSA better" not in confirmation.sentence(partial)  # an incomplete test is not read
    assert "SSA better" not in confirmation.short(partial) and "exploratory until" in confirmation.reading(partial)


def test_the_declared_rule_is_symmetric_and_controls_false_discoveries_over_the_two():
    seeds = confirmation.CONFIRMATORY_SEEDS
    small_loss = confirmation.judge(_runs({"ssa": -1.0, "ssa_n2": -1.0}, seeds))
    assert small_loss["primary"].outcome == "no difference that matters"  # a decided loss within the threshold
    large_loss = confirmation.judge(_runs({"ssa": -3.0, "ssa_n2": 0.0}, seeds))
    assert large_loss["primary"].outcome == "worse" and large_loss["primary"].adjusted_p is not None


def test_the_endpoint_is_the_mean_over_every_paradigm():
    run = fake_run("ssa", 8, {paradigm: 0.5 + 0.01 * i for i, paradigm in enumerate(zorro.PARADIGMS)})
    assert confirmation.endpoint(run) == pytest.approx(
        100 * np.mean([0.5 + 0.01 * i for i in range(len(zorro.PARADIGMS))])
    )


def test_an_open_verdict_is_said_left_open_and_the_papers_gain_placed_against_each_interval():
    seeds = confirmation.CONFIRMATORY_SEEDS
    noisy = [fake_run("softmax", s, 0.6) for s in seeds] + [
        fake_run(variant, s, 0.6 + (0.06 if s % 2 else -0.04)) for variant in ("ssa", "ssa_n2") for s in seeds
    ]
    assert "left it undecided" in confirmation.reading(noisy)
    said = confirmation.sentence(noisy)
    assert "none on this endpoint, which this test therefore neither confirms nor excludes" in said
    # an open verdict's seed count is the plan's rule's, which decides from fewer pairs than the chapter's claims
    plan, chapter = no_effect_pairs(confirmation.PLAN[0].claim), no_effect_pairs(experiment.CLAIMS[experiment.HEADLINE])
    assert (
        plan < chapter
        and f"under the plan's rule, which decides from {plan} pairs; the chapter's own claims decide from {chapter})"
        in said
    )
    gains = list(experiment.paper_gains().values())
    spread = np.mean(gains) * len(gains) / len(zorro.PARADIGMS)  # the paper's gains over every paradigm, none elsewhere
    assert f"they would be {spread:.1f} points, inside both intervals" in said
    smallest = spread

    def judged(primary, secondary):
        claim = confirmation.PLAN[0].claim
        return {
            role: Verdict(claim.name, UNDECIDED, sum(interval) / 2, interval, 16, claim.threshold)
            for role, interval in (("primary", primary), ("secondary", secondary))
        }

    assert confirmation.paper_gain_words(judged((0.0, smallest + 1), (-1.0, smallest - 0.5))).endswith(
        "points, inside the primary interval, above the secondary interval (outside it)"
    )
    assert confirmation.paper_gain_words(judged((smallest + 1, smallest + 2), (smallest + 1, smallest + 3))).endswith(
        "below both intervals (outside them)"
    )


def test_the_result_box_says_both_confirmatory_outcomes_within_the_boxs_words_and_nothing_while_incomplete():
    from ssa_book import result_boxes

    seeds = confirmation.CONFIRMATORY_SEEDS
    runs = _runs({"ssa": 3.0, "ssa_n2": 0.5}, seeds)
    longest, shortest = confirmation.box_bullet(runs)
    assert "SSA: SSA better, +3." in longest and "SSA (n = 2): no difference that matters" in longest
    assert "n = 2" not in shortest and result_boxes.fitting([longest, shortest]) is not None
    partial = [run for run in runs if run.seed != seeds[-1]]
    assert confirmation.box_bullet(partial) == [
        f"**Confirmatory test** (declared before its runs; {len(seeds)} fresh seeds; mean "
        f"over all {len(zorro.PARADIGMS)} paradigms): {confirmation.progress(partial)}."
    ]
