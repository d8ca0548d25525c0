"""The encoder chapter's confirmatory test, declared before any of its runs.

The chapter's exploratory reading found one signal in SSA's favour: on the mean Zorro accuracy
over *all* paradigms (not the paper's four, the pre-declared endpoint) SSA with learned b and n
gained over softmax on every one of seeds 0-7. That endpoint was picked after reading, from
several, so it is evidence of nothing until fresh seeds confirm it. This module is the plan of
that confirmation, fixed here before any of its runs exist:

* endpoint: the mean holistic Zorro accuracy over every paradigm (:data:`ENDPOINT`), in points;
* comparisons: SSA with learned b and n against softmax (primary) and SSA with n = 2 against
  softmax (secondary), paired by seed;
* seeds: 8-23 (16 pairs), fresh; the chapter's configuration (``EncoderConfig`` at the profile)
  unchanged; seeds 0-7 are not pooled in;
* threshold: the chapter's 2.0 accuracy points;
* rule: "SSA better" needs the 95% paired t interval above zero, the mean gain at least 2.0, the
  two-sided Wilcoxon signed-rank p below 0.05 and its Benjamini-Hochberg adjusted p over the two
  comparisons below 0.05; "SSA worse" the mirror image (interval below zero, mean at most -2.0,
  the same tests); "no difference that matters" an interval inside (-2.0, +2.0); otherwise
  undecided. Every verdict is reported, whatever it says.

:func:`plan_power` gives the design's power at the exploratory estimate and at the lower end of
its interval, by the rule's own simulation (:func:`ssa_book.verdicts.power.power`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from ssa_book.verdicts.words import OPEN, not_run_yet
from ssa_book.verdicts.claim import Claim, no_effect_pairs
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge as rule_judge, pair_by_seed
from ssa_book.verdicts.families import control_false_discoveries
from ssa_book.verdicts.readings import effect_placement
from ssa_book.verdicts.power import SIMULATIONS, power as rule_power
from ssa_book.encoder import experiment, zorro
from ssa_book.encoder.experiment import CHAPTER, GAIN_THRESHOLD, run
from ssa_book.encoder.records import EncoderRun
from ssa_book.plotting import scorer_label
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError

ENDPOINT = "mean holistic Zorro accuracy over every paradigm"
PRIMARY = ("ssa", "softmax")  # SSA with learned b and n against softmax
SECONDARY = ("ssa_n2", "softmax")  # SSA with n fixed at 2 against softmax
COMPARISONS = {"primary": PRIMARY, "secondary": SECONDARY}
EXPLORATORY_SEEDS = tuple(range(0, 8))  # the chapter's seeds, read before this plan
CONFIRMATORY_SEEDS = tuple(range(8, 24))  # fresh: none run before this plan was committed
DECLARED = "2026-12-07"
REASON = (
    f"{GAIN_THRESHOLD:g} accuracy points: the chapter's own threshold for the paper's claim, kept so that the "
    "confirmation asks the question the chapter asks"
)


@dataclasses.dataclass(frozen=True)
class PlannedComparison:
    """One comparison of the plan: ``treatment`` against ``control`` on :data:`ENDPOINT`."""

    role: str  # "primary" or "secondary"
    treatment: str
    control: str

    @property
    def claim(self) -> Claim:
        return Claim(
            f"{self.treatment} beats {self.control} on the {ENDPOINT}",
            direction=1,
            threshold=GAIN_THRESHOLD,
            units="accuracy points",
            reason=REASON,
            bound=100.0,
        )


PLAN = tuple(PlannedComparison(role, treatment, control) for role, (treatment, control) in COMPARISONS.items())


def endpoint(run: EncoderRun) -> float | None:
    """The endpoint of one run, in points (None when the run does not score every paradigm)."""
    overall = run.overall(zorro.PARADIGMS)
    return None if overall is None else 100 * overall


def differences(
    runs: Sequence[EncoderRun], comparison: PlannedComparison, seeds: Sequence[int]
) -> tuple[tuple[int, ...], np.ndarray]:
    """``(seeds, treatment minus control)`` in points, for the ``seeds`` both sides have."""
    by_variant: dict[str, dict[int, float]] = {comparison.treatment: {}, comparison.control: {}}
    for encoder_run in runs:
        value = endpoint(encoder_run)
        if encoder_run.scorer in by_variant and encoder_run.seed in seeds and value is not None:
            if encoder_run.seed in by_variant[encoder_run.scorer]:
                raise ValueError(
                    f"runs: two {encoder_run.scorer} runs with seed {encoder_run.seed}; each seed must give one pair"
                )
            by_variant[encoder_run.scorer][encoder_run.seed] = value
    paired, treatment, control = pair_by_seed(by_variant[comparison.treatment], by_variant[comparison.control])
    return paired, treatment - control


def exploratory(runs: Sequence[EncoderRun], comparison: PlannedComparison) -> Verdict:
    """The exploratory reading that motivated the plan: the endpoint on seeds 0-7."""
    _, found = differences(runs, comparison, EXPLORATORY_SEEDS)
    return rule_judge(comparison.claim, found, np.zeros_like(found))


def plan_power(runs: Sequence[EncoderRun], comparison: PlannedComparison, simulations: int = SIMULATIONS) -> dict:
    """The plan's power: the rate of "SSA better" with :data:`CONFIRMATORY_SEEDS` pairs when the
    true gain is the exploratory estimate, and when it is the lower end of its 95% interval, at the
    exploratory seeds' spread (normal differences, the rule's own simulation)."""
    reading = exploratory(runs, comparison)
    spread = float(np.std(reading.differences, ddof=1))
    pairs = len(CONFIRMATORY_SEEDS)
    return {
        "estimate": reading.effect,
        "low": reading.interval[0],
        "high": reading.interval[1],
        "spread": spread,
        "pairs": pairs,
        "power at the estimate": rule_power(comparison.claim, pairs, reading.effect, spread, simulations),
        "power at the lower end": rule_power(comparison.claim, pairs, reading.interval[0], spread, simulations),
    }


def plan_frame(runs: Sequence[EncoderRun]):
    """The plan as a table: one row per comparison, with its exploratory reading and its power."""
    import pandas as pd

    rows = []
    for comparison in PLAN:
        power = plan_power(runs, comparison)
        rows.append(
            {
                "comparison": comparison.role,
                "SSA variant": comparison.treatment,
                "against": comparison.control,
                "seeds": f"{CONFIRMATORY_SEEDS[0]}-{CONFIRMATORY_SEEDS[-1]} ({power['pairs']} pairs)",
                "threshold (points)": GAIN_THRESHOLD,
                "exploratory gain (seeds 0-7)": f"{power['estimate']:+.2f} [{power['low']:+.2f}, {power['high']:+.2f}]",
                "power if the gain is the estimate": power["power at the estimate"],
                "power if the gain is its lower end": power["power at the lower end"],
            }
        )
    return pd.DataFrame(rows).set_index("comparison")


def needed_runs() -> list[tuple[str, int]]:
    """Every (variant, seed) run the plan needs."""
    variants = dict.fromkeys(name for comparison in PLAN for name in (comparison.treatment, comparison.control))
    return [(variant, seed) for seed in CONFIRMATORY_SEEDS for variant in variants]


def regenerate_command(profile: str = "cpu") -> str:
    """The command that computes the plan's runs."""
    variants = list(dict.fromkeys(variant for variant, _ in needed_runs()))
    return (
        CHAPTER.command(profile, scorers=variants, seeds=list(CONFIRMATORY_SEEDS)) + " --scorers " + " ".join(variants)
    )


PROFILE = "cpu"  # the profile whose configuration the plan runs


def cached_runs(profile: str) -> list[EncoderRun]:
    """The plan's runs that are cached at ``profile`` (none at a profile other than :data:`PROFILE`)."""
    if profile != PROFILE:
        return []
    found = []
    with cache_required():
        for variant, seed in needed_runs():
            try:
                found.append(run(profile, variant, seed, device="cpu", progress=False))
            except CacheMissError:
                continue
    return found


def progress(runs: Sequence[EncoderRun]) -> str:
    """How far the plan's runs are: "not run yet: 4 of 48 runs done", or "complete: 48 runs"."""
    total = len(needed_runs())
    done = len({(run.scorer, run.seed) for run in runs} & set(needed_runs()))
    return f"complete: {total} runs" if done == total else not_run_yet(done, total)


def judge(runs: Sequence[EncoderRun]) -> dict[str, Verdict]:
    """The plan's verdicts on :data:`CONFIRMATORY_SEEDS`, by the declared rule, keyed by role: each
    comparison judged by :func:`ssa_book.verdicts.judge.judge` on its pairs (symmetric: a direction needs
    the threshold on its side), and a direction kept only when its Benjamini-Hochberg adjusted p
    over the two comparisons is below 0.05 (:func:`ssa_book.verdicts.families.control_false_discoveries`)."""
    judged = {}
    for comparison in PLAN:
        _, found = differences(runs, comparison, CONFIRMATORY_SEEDS)
        judged[comparison.role] = rule_judge(comparison.claim, found, np.zeros_like(found))
    return dict(zip(judged, control_false_discoveries(list(judged.values()))))


def paper_gain_words(judged: Mapping[str, Verdict]) -> str:
    """What the plan's intervals say of the paper's gains. The paper reports gains only on its four
    paradigms, none on this endpoint (the mean over every paradigm), so the test can neither confirm
    nor exclude them; the one figure on this endpoint they imply is their mean spread over every
    paradigm with no gain on the others, placed against the intervals: "the paper reports gains only
    on its 4 paradigms, 8.7 to 12.8 points, none on this endpoint, which this test therefore neither
    confirms nor excludes; spread over the 23 paradigms with no gain on the others they would be 1.8
    points, inside both intervals"."""
    gains = sorted(experiment.paper_gains().values())
    spread = float(np.mean(gains)) * len(gains) / len(zorro.PARADIGMS)
    head = (
        f"the paper reports gains only on its {len(gains)} paradigms, {gains[0]:.1f} to {gains[-1]:.1f} points, "
        f"none on this endpoint, which this test therefore neither confirms nor excludes; spread over the "
        f"{len(zorro.PARADIGMS)} paradigms with no gain on the others they would be {spread:.1f} points"
    )
    placed = {role: effect_placement(verdict, spread) for role, verdict in judged.items()}
    placed = {role: where for role, where in placed.items() if where is not None}
    if not placed:
        return head
    if len(placed) > 1 and len(set(placed.values())) == 1:
        return f"{head}, " + _PLACED[next(iter(placed.values()))].format("both intervals", "them")
    return f"{head}, " + ", ".join(
        _PLACED[where].format(f"the {role} interval", "it") for role, where in placed.items()
    )


_PLACED = {"above": "above {} (outside {})", "inside": "inside {}", "below": "below {} (outside {})"}


def sentence(runs: Sequence[EncoderRun]) -> str:
    """The confirmatory test in one sentence: its verdicts, with the paper's gains placed against
    their intervals (:func:`paper_gain_words`), once every run of the plan is cached, else how many
    are (an incomplete test is not read)."""
    head = (
        f"The confirmatory test, declared before its runs (fresh seeds {CONFIRMATORY_SEEDS[0]}-{CONFIRMATORY_SEEDS[-1]}, "
        f"the mean accuracy over every Zorro paradigm)"
    )
    if not progress(runs).startswith("complete"):
        return f"{head}: {progress(runs)}."
    judged = judge(runs)
    said = "; ".join(
        f"{comparison.role}, {scorer_label(comparison.treatment)} against {scorer_label(comparison.control)}: "
        f"{judged[comparison.role].words()} {judged[comparison.role].estimate()} points"
        for comparison in PLAN
    )
    return f"{head}: {said}{_seed_counts_rule(judged)}; {paper_gain_words(judged)}."


def _seed_counts_rule(judged: Mapping[str, Verdict]) -> str:
    """Under which rule an open verdict's "about N seeds would decide" is counted: the plan's, which
    decides from fewer pairs than the chapter's own claims ("" when every verdict is decided)."""
    if not any(verdict.outcome in OPEN for verdict in judged.values()):
        return ""
    plan, chapter = no_effect_pairs(PLAN[0].claim), no_effect_pairs(experiment.CLAIMS[experiment.HEADLINE])
    return (
        f" (seeds counted under the plan's rule, which decides from {plan} pairs; the chapter's own claims decide "
        f"from {chapter})"
    )


def short(runs: Sequence[EncoderRun]) -> str:
    """The primary comparison in a few words, for the front page's summary (the secondary is in the
    full row): "confirmatory test, all paradigms, 16 fresh seeds: SSA undecided +0.91 [-0.55, +2.36]"
    (its progress until complete)."""
    if not progress(runs).startswith("complete"):
        return f"confirmatory test, all paradigms: {progress(runs)}"
    primary, comparison = judge(runs)["primary"], PLAN[0]
    return (
        f"confirmatory test, all paradigms, {len(CONFIRMATORY_SEEDS)} fresh seeds: {scorer_label(comparison.treatment)} "
        f"{primary.word()} {primary.estimate()}"
    )


def box_bullet(runs: Sequence[EncoderRun]) -> list[str]:
    """The confirmatory test for the chapter's result box, its wordings longest first: both
    comparisons' outcomes with their estimates once every run is cached, else its progress."""
    head = (
        f"**Confirmatory test** (declared before its runs; {len(CONFIRMATORY_SEEDS)} fresh seeds; mean over all "
        f"{len(zorro.PARADIGMS)} paradigms)"
    )
    if not progress(runs).startswith("complete"):
        return [f"{head}: {progress(runs)}."]
    judged = judge(runs)
    said = [
        f"{scorer_label(comparison.treatment)}: {judged[comparison.role].word()}, {judged[comparison.role].estimate()} points"
        for comparison in PLAN
    ]
    return [f"{head}: {'; '.join(said)}.", f"{head}: {said[0]}."]


def reading(runs: Sequence[EncoderRun], short: bool = False) -> str:
    """What the exploratory gain on the mean over every paradigm is now, for the chapter's prose:
    exploratory until the plan is complete, then what the confirmatory test said of it (``short``:
    without its seeds and estimate, for a figure's caption)."""
    if not progress(runs).startswith("complete"):
        return "a difference found after reading, exploratory until the chapter's confirmatory test on fresh seeds decides it"
    primary = judge(runs)["primary"]
    found = f"left it {primary.word()}" if primary.outcome in OPEN else f"found {primary.word()}"
    if short:
        return f"a difference found after reading; the confirmatory test {found}"
    return (
        f"a difference found after reading; the chapter's confirmatory test, on fresh seeds {CONFIRMATORY_SEEDS[0]}-"
        f"{CONFIRMATORY_SEEDS[-1]}, {found}: {primary.estimate()} points"
    )
