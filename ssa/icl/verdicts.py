"""From cached results to the numbers the chapters quote and to their verdicts.

A verdict is computed, never typed: each claim of the paper is turned into a measurable statement
with the explicit thresholds below, checked on the per-seed results, and labelled

* **reproduced**: the effect has the paper's direction, is at least :data:`MIN_EFFECT` large,
  and its 95% bootstrap band over seeds excludes zero;
* **partly reproduced**: the direction is the paper's and the effect is either large enough or
  clear (band excluding zero), not both;
* **not reproduced at this scale**: the effect is reversed, or neither large enough nor clear;
* **not tested**: a model did not learn the task in distribution (its error at sigma 1 is not
  below :data:`LEARNED_FRACTION` times the trivial baseline's), so a shift tests nothing.

Errors are made comparable across tasks and scales: quantification errors are the paper's
prompt-level error (a fraction of prompts); linear errors are *normalised*: the model's mean
squared error divided by that of the zero predictor on the same prompts (0 = exact, 1 = no better
than predicting 0), since raw squared errors grow with sigma^2 for any imperfect predictor.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ssa.icl.evaluate import bootstrap_band
from ssa.icl.tasks import is_classification

VERDICTS = ("reproduced", "partly reproduced", "not reproduced at this scale", "not tested")
MIN_EFFECT = 0.1  # smallest effect (in error units above, or in attention weight) that counts as reproduced
MIN_RELATIVE_GAIN = 0.25  # "SSA lower than softmax": SSA must remove at least this share of softmax's error
MIN_ABSOLUTE_GAIN = 0.02  # ... and at least this much in absolute terms (about one test prompt in 64)
LEARNED_FRACTION = 0.5  # in distribution, a model must beat the trivial baseline by this factor
LEVEL = 0.95  # bootstrap band level


def trivial_baseline(task: str) -> str:
    """The predictor that knows nothing about the prompt: the majority class, or predicting 0."""
    return "majority class" if is_classification(task) else "zero"


def error_curve(runs: list[dict], task: str, shift: str, predictor: str = "model", normalise: bool = True) -> np.ndarray:
    """``(seeds, sigmas)`` errors of ``predictor`` along a sigma sweep (normalised for linear
    unless ``normalise=False``: then the raw mean squared error, as the paper plots it)."""
    values = np.array([run["shifts"][shift][predictor]["prompt_error"] for run in runs], dtype=float)
    if is_classification(task) or not normalise:
        return values
    zero = np.array([run["shifts"][shift]["zero"]["prompt_error"] for run in runs], dtype=float)
    return values / zero


def length_curve(runs: list[dict], task: str, predictor: str = "model") -> np.ndarray:
    """``(seeds, lengths)`` errors along the prompt-length sweep (normalised for linear)."""
    values = np.array([run["length"][predictor]["prompt_error"] for run in runs], dtype=float)
    if is_classification(task):
        return values
    zero = np.array([run["length"]["zero"]["prompt_error"] for run in runs], dtype=float)
    return values / zero


def learned(runs_by_scorer: dict[str, list[dict]], task: str) -> dict[str, bool]:
    """Whether each scorer's models (mean over seeds) learned the task at sigma 1."""
    return {
        scorer: bool(error_curve(runs, task, "sigma_x")[:, 0].mean() < LEARNED_FRACTION * error_curve(runs, task, "sigma_x", trivial_baseline(task))[:, 0].mean())
        for scorer, runs in runs_by_scorer.items()
    }


def difference_band(first: np.ndarray, second: np.ndarray, *, seed: int = 0, resamples: int = 4000) -> tuple[float, float, float]:
    """mean(first) - mean(second) over seeds, with a bootstrap band that resamples each group's
    seeds independently (the two groups are separately trained models)."""
    first, second = np.asarray(first, float), np.asarray(second, float)
    if not (np.all(np.isfinite(first)) and np.all(np.isfinite(second))):
        raise ValueError("values contain NaN or infinity")
    rng = np.random.default_rng(seed)
    draws = (first[rng.integers(0, len(first), (resamples, len(first)))].mean(1)
             - second[rng.integers(0, len(second), (resamples, len(second)))].mean(1))
    low, high = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(first.mean() - second.mean()), float(low), float(high)


@dataclasses.dataclass(frozen=True)
class Verdict:
    claim: str  # the paper's claim, as we test it
    verdict: str  # one of VERDICTS
    effect: float  # the measured effect in the claim's direction (positive = as the paper says)
    low: float  # its bootstrap band
    high: float
    evidence: str  # one sentence with the numbers

    def as_row(self) -> dict:
        return {"claim": self.claim, "verdict": self.verdict, "evidence": self.evidence}


def _label(effect: float, low: float, large_enough: bool) -> str:
    """Large and clear: reproduced; only one of the two: partly; neither (or reversed): not."""
    clear = low > 0
    if effect <= 0 or not (large_enough or clear):
        return VERDICTS[2]
    return VERDICTS[0] if large_enough and clear else VERDICTS[1]


def not_tested(claim: str, why: str) -> Verdict:
    return Verdict(claim, VERDICTS[3], float("nan"), float("nan"), float("nan"), why)


def grows(claim: str, before: np.ndarray, after: np.ndarray, what: str) -> Verdict:
    """Claim: a per-seed quantity is larger ``after`` a shift than ``before`` it, by >= MIN_EFFECT."""
    effect, low, high = difference_band(after, before)
    return Verdict(claim, _label(effect, low, effect >= MIN_EFFECT), effect, low, high,
                   f"{what} goes from {np.mean(before):.3g} to {np.mean(after):.3g} "
                   f"(change {effect:+.3g}, 95% band [{low:+.3g}, {high:+.3g}] over seeds)")


def lower(claim: str, softmax: np.ndarray, ssa: np.ndarray, what: str) -> Verdict:
    """Claim: SSA's per-seed quantity is lower than softmax's, by at least MIN_RELATIVE_GAIN of
    softmax's and MIN_ABSOLUTE_GAIN (a relative gain on a near-zero error is noise)."""
    effect, low, high = difference_band(softmax, ssa)
    base = float(np.mean(softmax))
    numbers = f"{what}: softmax {base:.3g}, SSA {np.mean(ssa):.3g}"
    if base <= 0:  # softmax shows nothing for SSA to improve on: the premise of the claim is absent
        return Verdict(claim, VERDICTS[2], effect, low, high, f"{numbers}: softmax shows no effect to reduce")
    relative = effect / base
    large = relative >= MIN_RELATIVE_GAIN and effect >= MIN_ABSOLUTE_GAIN
    return Verdict(claim, _label(effect, low, large), effect, low, high,
                   f"{numbers} (difference {effect:+.3g}, {100 * relative:.0f}% of softmax's; "
                   f"95% band [{low:+.3g}, {high:+.3g}])")


def shift_verdicts(runs_by_scorer: dict[str, list[dict]], task: str, shift: str, label: str) -> list[Verdict]:
    """The two claims along a sigma sweep: softmax degrades; SSA's error is lower under shift."""
    degrade = f"{label}: softmax's error grows with the shift"
    better = f"{label}: SSA's error is lower than softmax's under shift"
    why = _unlearned(runs_by_scorer, task)
    if why:
        return [not_tested(degrade, why), not_tested(better, why)]
    softmax, ssa = (error_curve(runs_by_scorer[name], task, shift) for name in ("softmax", "ssa"))
    return [
        grows(degrade, softmax[:, 0], softmax[:, -1], "softmax's error from the smallest to the largest sigma"),
        lower(better, softmax[:, 1:].mean(1), ssa[:, 1:].mean(1), "mean error over the shifted sigmas (> 1)"),
    ]


def length_verdict(runs_by_scorer: dict[str, list[dict]], task: str, trained_points: int) -> Verdict:
    claim = "longer prompts than in training: SSA's error is lower than softmax's"
    why = _unlearned(runs_by_scorer, task)
    if why:
        return not_tested(claim, why)
    lengths = np.array(runs_by_scorer["softmax"][0]["length"]["lengths"])
    longer = lengths > trained_points
    if not longer.any():
        return not_tested(claim, f"no evaluated length exceeds the {trained_points} trained points")
    softmax, ssa = (length_curve(runs_by_scorer[name], task)[:, longer].mean(1) for name in ("softmax", "ssa"))
    return lower(claim, softmax, ssa, f"mean error over lengths {lengths[longer].min()}-{lengths[longer].max()}")


def head_mean(runs: list[dict], shift: str, statistic: str) -> np.ndarray:
    """``(seeds, sigmas)`` attention statistic averaged over layers and heads."""
    return np.array([np.mean(run["concentration"][shift][statistic], axis=(1, 2)) for run in runs], dtype=float)


def _unlearned(runs_by_scorer: dict[str, list[dict]], task: str) -> str | None:
    """Why the claims cannot be tested (a scorer's models did not learn the task), or None."""
    ok = learned(runs_by_scorer, task)
    if all(ok.values()):
        return None
    failed = ", ".join(scorer for scorer, good in ok.items() if not good)
    return (f"{failed} did not learn the task in distribution (error at sigma 1 not below "
            f"{LEARNED_FRACTION} x the {trivial_baseline(task)} baseline)")


def collapse_verdicts(runs_by_scorer: dict[str, list[dict]], task: str, shift: str, label: str) -> list[Verdict]:
    """Softmax's attention concentrates (max weight grows) with sigma; SSA's grows less."""
    claims = (f"{label}: softmax attention concentrates as sigma grows", f"{label}: SSA attention concentrates less than softmax's")
    why = _unlearned(runs_by_scorer, task)
    if why:
        return [not_tested(claim, why) for claim in claims]
    softmax, ssa = (head_mean(runs_by_scorer[name], shift, "max_weight") for name in ("softmax", "ssa"))
    return [
        grows(claims[0], softmax[:, 0], softmax[:, -1], "softmax's mean maximum attention weight"),
        lower(claims[1], softmax[:, -1] - softmax[:, 0],
              ssa[:, -1] - ssa[:, 0], "growth of the mean maximum weight from the smallest to the largest sigma"),
    ]


def logit_verdict(spreads_by_scorer: dict[str, list[dict]], label: str) -> Verdict:
    """The premise of the collapse mechanism: larger inputs give softmax larger attention logits
    (spread = largest minus smallest visible logit, mean over layers, heads and rows)."""
    spread = np.array([np.mean(run["logit_spread"], axis=(1, 2)) for run in spreads_by_scorer["softmax"]], dtype=float)
    return grows(f"{label}: larger inputs give softmax larger attention logits", spread[:, 0], spread[:, -1],
                 "softmax's mean logit spread from the smallest to the largest sigma")


def injection_verdicts(runs_by_scorer: dict[str, list[dict]], task: str, label: str) -> list[Verdict]:
    """One extreme value draws more of softmax's attention than SSA's, and hurts softmax more."""
    claims = (f"{label}: SSA puts less attention on an injected extreme value than softmax",
              f"{label}: an injected extreme value hurts SSA less than softmax")
    why = _unlearned(runs_by_scorer, task)
    if why:
        return [not_tested(claim, why) for claim in claims]
    mass = {name: np.array([np.mean(run["injection"]["injected_mass"]) for run in runs]) for name, runs in runs_by_scorer.items()}

    def harm(runs: list[dict]) -> np.ndarray:  # error with the injected value minus without, same prompts, per seed
        return injection_error(runs, task) - injection_error(runs, task, clean=True)

    return [
        lower(claims[0], mass["softmax"], mass["ssa"], "mean attention share on the injected token"),
        lower(claims[1], harm(runs_by_scorer["softmax"]), harm(runs_by_scorer["ssa"]),
              "error increase caused by the injected value"),
    ]


def injection_error(runs: list[dict], task: str, clean: bool = False) -> np.ndarray:
    """Per-seed error on the prompts with one injected extreme value (``clean=True``: the same
    prompts without it), normalised for linear."""
    block = [run["injection"]["clean"] if clean else run["injection"] for run in runs]
    values = np.array([entry["model"]["prompt_error"] for entry in block], dtype=float)
    if is_classification(task):
        return values
    return values / np.array([entry["zero"]["prompt_error"] for entry in block], dtype=float)


def table(verdicts: list[Verdict]):
    """A pandas table of verdicts for display."""
    import pandas as pd

    return pd.DataFrame([verdict.as_row() for verdict in verdicts])
