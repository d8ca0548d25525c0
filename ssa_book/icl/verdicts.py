"""From cached results to the numbers the in-context-learning chapters quote and to their verdicts.

Every verdict comes from the book's one rule, :mod:`ssa_book.verdicts`: a claim of the paper is
declared below as a :class:`~ssa_book.verdicts.claim.Claim` (direction, threshold, and why the threshold has
its size), and judged by :func:`ssa_book.verdicts.judge.judge` on outcomes **paired by seed**: seed ``i``
trains the softmax and the SSA model on the same batches (:mod:`ssa_book.icl.train` draws the batch of
step ``t`` from ``(seed, t)`` alone), and both are evaluated on the same test prompts. Claims about
one model along a sweep (softmax's error grows with sigma) pair each seed's model with itself.

Two verdicts are not judged:

* **not learned**: a model did not learn the task in distribution (its error at sigma 1 is not
  below :data:`LEARNED_FRACTION` times the trivial baseline's), so a shift tests nothing;
* **premise not shown**: the collapse claims start from a mechanism (an extreme value captures most
  of softmax's attention; larger inputs give larger attention logits). When the measurement stays
  below its cut in every seed, the verdict says so with the numbers, including any step of the
  mechanism that did occur (:func:`collapse_premise`).

Errors are made comparable across tasks and scales: quantification errors are the paper's
prompt-level error (a fraction of prompts); linear errors are *normalised*: the model's mean
squared error divided by that of the zero predictor on the same prompts (0 = exact, 1 = no better
than predicting 0), since raw squared errors grow with sigma^2 for any imperfect predictor.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from ssa_book.verdicts.words import NOT_LEARNED, NOT_TESTED, OPEN, PREMISE_NOT_SHOWN, claim_word
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.claim import Claim, MIN_PAIRS, no_effect_pairs
from ssa_book.verdicts.rule import MAX_SEEDS
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge, learning_failure, not_learned, not_tested, premise_not_shown
from ssa_book.verdicts.families import combine, control_false_discoveries
from ssa_book.verdicts.power import SIMULATIONS, power_table as rule_power_table
from ssa_book.icl.records import ICLRun, LogitSpread
from ssa_book.icl.tasks import QUANTIFIERS, get_task

# The thresholds, set after the chapters' first results had been read (each claim's reason says so).
MIN_EFFECT = 0.1  # smallest effect that matters: in error units, attention weight, or logit units
LEARNED_FRACTION = 0.5  # in distribution, a model must beat the trivial baseline by this factor
# From what "collapse onto one token" means, not from the data: most of a head's attention on that
# token. Declared after the results had been read (the analysis-changes page lists it).
COLLAPSE_SHARE = 0.5

_ABSOLUTE = (
    f"the threshold of {MIN_EFFECT:g}, set when every chapter moved to the one rule, after the chapters' "
    "first results had been read (one absolute threshold per claim)"
)
_ERROR_REASON = (
    f"{_ABSOLUTE}: a tenth of the error scale, 0 (exact) to 1 (every prompt wrong, or as far off as predicting 0)"
)

# An in-context learner generalises or fails from seed to seed, so its prompt error, in [0, 1], can
# differ by up to 1 between two runs of one seed: a flip (ssa_book.verdicts, Claim.largest_flip).
PROMPT_ERROR_FLIP = 1.0

QUANTIFICATION_SHIFT = Claim(
    "SSA's mean prompt error over the shifted scales (σ > 1) is lower than softmax's",
    -1,
    MIN_EFFECT,
    "prompt error",
    _ERROR_REASON + "; one test prompt in ten",
    largest_flip=PROMPT_ERROR_FLIP,
    bound=1.0,
)
QUANTIFICATION_DEGRADES = Claim(
    "softmax's prompt error grows from the smallest to the largest σ",
    1,
    MIN_EFFECT,
    "prompt error",
    _ERROR_REASON + "; one test prompt in ten more wrong",
    largest_flip=PROMPT_ERROR_FLIP,
    directions=("softmax's error grows", "softmax's error shrinks"),
)
QUANTIFICATION_LENGTH = Claim(
    "on prompts longer than in training, SSA's mean prompt error is lower than softmax's",
    -1,
    MIN_EFFECT,
    "prompt error",
    _ERROR_REASON + "; one test prompt in ten",
    largest_flip=PROMPT_ERROR_FLIP,
    bound=1.0,
)
LINEAR_SHIFT = Claim(
    "SSA's mean normalised error over the shifted scales (σ > 1) is lower than softmax's",
    -1,
    MIN_EFFECT,
    "normalised MSE",
    _ERROR_REASON + "; a tenth of the zero predictor's squared error",
)
LINEAR_DEGRADES = Claim(
    "softmax's normalised error grows from the smallest to the largest σ",
    1,
    MIN_EFFECT,
    "normalised MSE",
    _ERROR_REASON + "; a tenth of the zero predictor's squared error",
    directions=("softmax's error grows", "softmax's error shrinks"),
)
LINEAR_LENGTH = Claim(
    "on prompts longer than in training, SSA's mean normalised error is lower than softmax's",
    -1,
    MIN_EFFECT,
    "normalised MSE",
    _ERROR_REASON + "; a tenth of the zero predictor's squared error",
)

LOGITS_GROW = Claim(
    "larger inputs give softmax larger attention logits (spread from the smallest to the largest σ)",
    1,
    MIN_EFFECT,
    "logit",
    f"{_ABSOLUTE}: a logit gap larger by {MIN_EFFECT:g} multiplies softmax's weight ratio of "
    f"two keys by {math.exp(MIN_EFFECT):.2f}",
    directions=("softmax's logits spread more", "softmax's logits spread less"),
)
SOFTMAX_CONCENTRATES = Claim(
    "softmax's maximum attention weight grows from the smallest to the largest σ",
    1,
    MIN_EFFECT,
    "attention weight",
    f"{_ABSOLUTE}: a tenth of the weight of a query row",
    bound=1.0,
    directions=("softmax's maximum weight grows", "softmax's maximum weight shrinks"),
)
SSA_CONCENTRATES_LESS = Claim(
    "SSA's maximum attention weight grows less than softmax's from the smallest to the largest σ",
    -1,
    MIN_EFFECT,
    "attention weight",
    f"{_ABSOLUTE}: a tenth of the weight of a query row",
    bound=1.0,
)
INJECTION_SHARE = Claim(
    "SSA puts less of its attention on an injected extreme value than softmax",
    -1,
    MIN_EFFECT,
    "attention share",
    f"{_ABSOLUTE}: a tenth of the weight of a query row",
    bound=1.0,
)
INJECTION_HARM = Claim(
    "an injected extreme value raises SSA's error less than softmax's",
    -1,
    MIN_EFFECT,
    "error",
    _ERROR_REASON + " (prompt error for quantification, normalised MSE for linear functions)",
)
# On "every" and "some" the harm is a prompt error, which flips from seed to seed: decided only
# from the pairs its flips need (ssa_book.verdicts.claim.no_effect_pairs), as the chapters' prompt errors are.
INJECTION_HARM_PROMPT_ERROR = dataclasses.replace(INJECTION_HARM, largest_flip=PROMPT_ERROR_FLIP)
COLLAPSE = Claim(
    "softmax's attention collapses onto one extreme value, and SSA's less so",
    1,
    COLLAPSE_SHARE,
    "attention share",
    f"collapse onto one token needs most of the weight on it: with a share of at least "
    f"{COLLAPSE_SHARE:g} the token outweighs all the other keys together; the share is taken for the most "
    f"affected head, so one collapsing head is enough. Like the other claims' threshold of {MIN_EFFECT:g}, this cut "
    "was declared after the results had been read; it comes from the meaning of collapse, not from the data",
    bound=1.0,
)

CLAIMS = {
    "quantification": (QUANTIFICATION_SHIFT, QUANTIFICATION_DEGRADES, QUANTIFICATION_LENGTH),
    "linear": (LINEAR_SHIFT, LINEAR_DEGRADES, LINEAR_LENGTH),
    # The collapse chapter's judged claims; its premise (COLLAPSE) is measured, not judged.
    "collapse": (LOGITS_GROW, SOFTMAX_CONCENTRATES, SSA_CONCENTRATES_LESS, INJECTION_SHARE, INJECTION_HARM),
}
POWER_SEEDS = (10, 20)  # seed counts at which the chapters report the rule's power


# ---------------------------------------------------------------------------------------------
# Data accessors (other modules use these; names and signatures stay).


def trivial_baseline(task: str) -> str:
    """The predictor that knows nothing about the prompt: the majority class, or predicting 0."""
    return get_task(task).uninformed


def error_curve(
    runs: Sequence[ICLRun], task: str, shift: str, predictor: str = "model", normalise: bool = True
) -> np.ndarray:
    """``(seeds, sigmas)`` errors of ``predictor`` along a sigma sweep (normalised for linear
    unless ``normalise=False``: then the raw mean squared error, as the paper plots it)."""
    values = np.array([run.sweep(shift).error(predictor) for run in runs], dtype=float)
    if get_task(task).classification or not normalise:
        return values
    return values / np.array([run.sweep(shift).error("zero") for run in runs], dtype=float)


def length_curve(runs: Sequence[ICLRun], task: str, predictor: str = "model") -> np.ndarray:
    """``(seeds, lengths)`` errors along the prompt-length sweep (normalised for linear)."""
    values = np.array([run.length.error(predictor) for run in runs], dtype=float)
    if get_task(task).classification:
        return values
    return values / np.array([run.length.error("zero") for run in runs], dtype=float)


def learned(runs_by_scorer: dict[str, list[ICLRun]], task: str) -> dict[str, bool]:
    """Whether each scorer's models (mean over seeds) learned the task at sigma 1."""
    return {
        scorer: bool(
            error_curve(runs, task, "sigma_x")[:, 0].mean()
            < LEARNED_FRACTION * error_curve(runs, task, "sigma_x", trivial_baseline(task))[:, 0].mean()
        )
        for scorer, runs in runs_by_scorer.items()
    }


def head_mean(runs: Sequence[ICLRun], shift: str, statistic: str) -> np.ndarray:
    """``(seeds, sigmas)`` attention statistic averaged over layers and heads."""
    return np.array([run.concentration[shift].statistic(statistic).mean(axis=(1, 2)) for run in runs], dtype=float)


def injection_error(runs: list[ICLRun], task: str, clean: bool = False) -> np.ndarray:
    """Per-seed error on the prompts with one injected extreme value (``clean=True``: the same
    prompts without it), normalised for linear."""
    block = [run.injection.clean if clean else run.injection.injected for run in runs]
    values = np.array([errors["model"].prompt_error for errors in block], dtype=float)
    if get_task(task).classification:
        return values
    return values / np.array([errors["zero"].prompt_error for errors in block], dtype=float)


# ---------------------------------------------------------------------------------------------
# Pairing by seed.


def paired_seeds(
    runs_by_scorer: Mapping[str, Sequence[ICLRun]], scorers: Sequence[str] = ("softmax", "ssa")
) -> tuple[list[int], dict[str, list[ICLRun]]]:
    """``(seeds, {scorer: runs})`` with ``runs[scorer][i]`` all from ``seeds[i]``: the seeds every
    scorer has, in increasing order (a seed only one scorer has is left out). A seed that appears
    twice for one scorer is refused."""
    missing = [scorer for scorer in scorers if scorer not in runs_by_scorer]
    if missing:
        raise ValueError(f"no runs for {', '.join(missing)}")
    for scorer in scorers:
        seeds = [run.seed for run in runs_by_scorer[scorer]]
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"{scorer}: a seed appears twice in {seeds}")
    common = sorted(set.intersection(*({run.seed for run in runs_by_scorer[scorer]} for scorer in scorers)))
    by_seed = {scorer: {run.seed: run for run in runs_by_scorer[scorer]} for scorer in scorers}
    return common, {scorer: [by_seed[scorer][seed] for seed in common] for scorer in scorers}


# ---------------------------------------------------------------------------------------------
# Claims of the quantification and linear chapters.


def _named(claim: Claim, label: str) -> Claim:
    return dataclasses.replace(claim, name=f"{label}: {claim.name}")


def _unlearned(runs_by_scorer: dict[str, list[ICLRun]], task: str, scorers=("softmax", "ssa")) -> str | None:
    """Why the claims cannot be tested (a scorer's models did not learn the task), or None."""
    ok = learned({scorer: runs_by_scorer[scorer] for scorer in scorers}, task)
    return learning_failure(
        ok, f"in distribution: error at σ = 1 not below {LEARNED_FRACTION} x the {trivial_baseline(task)} baseline"
    )


def _not_tested(claim: Claim, why: str) -> Verdict:
    return dataclasses.replace(not_tested(claim), detail=why)


def _claims(task: str) -> tuple[Claim, Claim, Claim]:
    return CLAIMS[get_task(task).claim]


def _shifted(runs: list[ICLRun], task: str, shift: str) -> np.ndarray:
    """Per-seed mean error over the shifted sigmas (> 1)."""
    sigmas = np.array(runs[0].sweep(shift).values, dtype=float)
    return error_curve(runs, task, shift)[:, sigmas > 1].mean(axis=1)


def shift_verdicts(runs_by_scorer: dict[str, list[ICLRun]], task: str, shift: str, label: str) -> list[Verdict]:
    """Along a sigma sweep: ``[softmax's error grows (context), SSA's error is lower under shift
    (the paper's claim)]``, each paired by seed."""
    lower, degrades, _ = _claims(task)
    lower, degrades = _named(lower, label), _named(degrades, label)
    why = _unlearned(runs_by_scorer, task)
    if why:
        return [not_learned(degrades, why), not_learned(lower, why)]
    _, paired = paired_seeds(runs_by_scorer)
    softmax = error_curve(paired["softmax"], task, shift)
    return [
        judge(degrades, softmax[:, -1], softmax[:, 0]),
        judge(lower, _shifted(paired["ssa"], task, shift), _shifted(paired["softmax"], task, shift)),
    ]


def length_verdict(
    runs_by_scorer: dict[str, list[ICLRun]], task: str, trained_points: int, label: str | None = None
) -> Verdict:
    """On prompts longer than ``trained_points``, SSA's mean error is lower than softmax's (paired by seed)."""
    claim = _claims(task)[2]
    claim = _named(claim, label) if label else claim
    why = _unlearned(runs_by_scorer, task)
    if why:
        return not_learned(claim, why)
    _, paired = paired_seeds(runs_by_scorer)
    lengths = np.array(paired["softmax"][0].length.values)
    longer = lengths > trained_points
    if not longer.any():
        return _not_tested(claim, f"no evaluated length exceeds the {trained_points} trained points")
    softmax, ssa = (length_curve(paired[name], task)[:, longer].mean(axis=1) for name in ("softmax", "ssa"))
    return judge(claim, ssa, softmax)


LINEAR_SHIFTS = {"sigma_x": "larger inputs", "sigma_ab": "larger functions"}


def quantification_verdict(runs_by_task: dict[str, dict[str, list[ICLRun]]]) -> Verdict:
    """The paper's quantification claim (SSA's error lower than softmax's under the input-scale
    shift), judged on "every" and "some" and combined."""
    parts = {
        f'"{task}"': shift_verdicts(runs_by_task[task], task, "sigma_x", f'"{task}"')[1]
        for task in QUANTIFIERS
        if task in runs_by_task
    }
    if not parts:
        raise ValueError(f"runs_by_task holds none of {QUANTIFIERS}")
    return combine("ICL quantification under input-scale shift", _controlled(parts))


def _controlled(parts: dict[str, Verdict]) -> dict[str, Verdict]:
    """A claim's parts as one family: a direction must survive control of false discoveries over them."""
    return dict(zip(parts, control_false_discoveries(list(parts.values()))))


def linear_verdict(runs: dict[str, list[ICLRun]]) -> Verdict:
    """The paper's linear-function claim (SSA's normalised error lower than softmax's under
    shift), judged for larger inputs and larger functions and combined."""
    parts = {label: shift_verdicts(runs, "linear", shift, label)[1] for shift, label in LINEAR_SHIFTS.items()}
    return combine("ICL linear functions under scale shift", _controlled(parts))


# ---------------------------------------------------------------------------------------------
# The collapse chapter: the premise, then the mechanism.


def _spread(spreads: Sequence[LogitSpread]) -> np.ndarray:
    """``(seeds, sigmas)`` logit spread, mean over layers and heads."""
    return np.array([run.spread.mean(axis=(1, 2)) for run in spreads], dtype=float)


def injected_share(runs: Sequence[ICLRun]) -> np.ndarray:
    """``(seeds, layers, heads)`` share of attention the queries after the injected value put on it."""
    return np.array([run.injection.injected_mass for run in runs], dtype=float)


def logit_verdict(spreads_by_scorer: dict[str, list[LogitSpread]], label: str) -> Verdict:
    """Larger inputs give softmax larger attention logits: each seed's softmax model, its mean
    logit spread at the largest σ against the smallest."""
    spread = _spread(spreads_by_scorer["softmax"])
    return judge(_named(LOGITS_GROW, label), spread[:, -1], spread[:, 0])


def collapse_verdicts(runs_by_scorer: dict[str, list[ICLRun]], task: str, shift: str, label: str) -> list[Verdict]:
    """``[softmax's maximum weight grows with sigma, SSA's grows less than softmax's]``."""
    claims = (_named(SOFTMAX_CONCENTRATES, label), _named(SSA_CONCENTRATES_LESS, label))
    why = _unlearned(runs_by_scorer, task)
    if why:
        return [not_learned(claim, why) for claim in claims]
    _, paired = paired_seeds(runs_by_scorer)
    softmax, ssa = (head_mean(paired[name], shift, "max_weight") for name in ("softmax", "ssa"))
    return [
        judge(claims[0], softmax[:, -1], softmax[:, 0]),
        judge(claims[1], ssa[:, -1] - ssa[:, 0], softmax[:, -1] - softmax[:, 0]),
    ]


def injection_verdicts(runs_by_scorer: dict[str, list[ICLRun]], task: str, label: str) -> list[Verdict]:
    """``[SSA puts less attention on an injected extreme value, it hurts SSA less]``, paired by seed
    (the harm is each model's error with the value minus without it, on the same prompts)."""
    claims = (_named(INJECTION_SHARE, label), _named(harm_claim(task), label))
    why = _unlearned(runs_by_scorer, task)
    if why:
        return [not_learned(claim, why) for claim in claims]
    _, paired = paired_seeds(runs_by_scorer)
    share = {name: injected_share(paired[name]).mean(axis=(1, 2)) for name in ("softmax", "ssa")}
    harm = {
        name: injection_error(paired[name], task) - injection_error(paired[name], task, clean=True)
        for name in ("softmax", "ssa")
    }
    return [judge(claims[0], share["ssa"], share["softmax"]), judge(claims[1], harm["ssa"], harm["softmax"])]


def harm_claim(task: str) -> Claim:
    """The claim that an injected extreme value hurts SSA less, as ``task`` measures the harm: a
    prompt error, which flips from seed to seed (:data:`INJECTION_HARM_PROMPT_ERROR`), or a
    normalised squared error (:data:`INJECTION_HARM`)."""
    return INJECTION_HARM_PROMPT_ERROR if get_task(task).classification else INJECTION_HARM


def collapse_premise(
    runs_by_scorer: dict[str, list[ICLRun]], spreads_by_scorer: dict[str, list[LogitSpread]] | None = None
) -> dict:
    """The measurements behind the collapse premise, for softmax's models:

    * ``share``: the largest share of attention any head of any seed puts on the injected value
      (mean over the queries after it and the test prompts), ``mean_share`` the largest over
      seeds of the mean over layers and heads; the premise needs ``share >= COLLAPSE_SHARE``;
    * ``spread_growth`` (with ``spreads_by_scorer``): each seed's change of the mean logit spread
      from the smallest to the largest σ; the premise needs a growth of at least
      :data:`MIN_EFFECT` in some seed.

    ``not_shown`` is the measurement in words when the premise was not shown (with the growth of
    the logit spread where it did grow: the mechanism's first step), else ``None``."""
    share = injected_share(runs_by_scorer["softmax"])
    seeds = len(share)
    out = {
        "share": float(share.max()),
        "mean_share": float(share.mean(axis=(1, 2)).max()),
        "seeds": seeds,
        "spread_growth": None,
        "not_shown": None,
    }
    reasons = []
    if out["share"] < COLLAPSE_SHARE:
        reasons.append(
            f"softmax puts at most {out['share']:.3g} of its attention on the injected value (the most "
            f"affected head of any of the {seeds} seeds; {out['mean_share']:.3g} averaged over layers and "
            f"heads), below the cut of {COLLAPSE_SHARE:g} for collapse onto one token, a cut set after the "
            f"results had been read"
        )
    if spreads_by_scorer is not None:
        spread = _spread(spreads_by_scorer["softmax"])
        growth = spread[:, -1] - spread[:, 0]
        out["spread_growth"] = tuple(float(value) for value in growth)
        grew, counted = int((growth >= LOGITS_GROW.threshold).sum()), len(growth)
        if not grew:
            reasons.append(
                f"softmax's mean logit spread changes by {growth.min():+.3g} to {growth.max():+.3g} from the "
                f"smallest to the largest σ, growing by the {LOGITS_GROW.threshold:g} that would matter in "
                f"none of the {counted} seeds"
            )
        elif reasons:
            # what these models did, not what training runs do: below the pairs the rule decides the
            # logit claim from, an estimate
            few = counted < no_effect_pairs(LOGITS_GROW)
            seeds_grown = f"each of the {counted} seeds" if grew == counted else f"{grew} of the {counted} seeds"
            reasons.append(
                f"though its mean logit spread did grow, by {growth.min():+.3g} to {growth.max():+.3g} from the "
                f"smallest to the largest σ, by at least {LOGITS_GROW.threshold:g} in {seeds_grown}"
                + (
                    f" (exploratory: {counted} seeds)"
                    if few
                    else ": the mechanism's first step occurred in these models"
                )
            )
    out["not_shown"] = "; ".join(reasons) or None
    return out


def premise_table(
    runs_by_task: dict[str, dict[str, list[ICLRun]]],
    spreads_by_task: dict[str, dict[str, list[LogitSpread]]] | None = None,
):
    """One row per task: the measurements of :func:`collapse_premise` and whether the premise occurred."""
    import pandas as pd

    rows = []
    for task, runs in runs_by_task.items():
        premise = collapse_premise(runs, (spreads_by_task or {}).get(task))
        growth = premise["spread_growth"]
        rows.append(
            {
                "task": _title(task),
                "largest share on the injected value (any head, any seed)": premise["share"],
                "largest mean share over layers and heads (any seed)": premise["mean_share"],
                "logit spread change, smallest to largest σ (each seed)": ""
                if growth is None
                else ", ".join(f"{g:+.2f}" for g in growth),
                "premise": "not shown" if premise["not_shown"] else "shown",
            }
        )
    return pd.DataFrame(rows)


def task_collapse_verdict(
    runs_by_scorer: dict[str, list[ICLRun]],
    task: str,
    label: str,
    spreads_by_scorer: dict[str, list[LogitSpread]] | None = None,
) -> Verdict:
    """One task's collapse claim: not learned (a model did not learn the task), premise not shown (with the
    measurement), or the mechanism claims (:func:`injection_verdicts`) judged and combined."""
    claim = _named(COLLAPSE, label)
    why = _unlearned(runs_by_scorer, task)
    if why:
        return not_learned(claim, why)
    premise = collapse_premise(runs_by_scorer, spreads_by_scorer)
    if premise["not_shown"]:
        return premise_not_shown(claim, premise["not_shown"])
    share, harm = injection_verdicts(runs_by_scorer, task, label)
    return combine(claim.name, {"attention share": share, "harm": harm})


def collapse_verdict(
    runs_by_task: dict[str, dict[str, list[ICLRun]]],
    spreads_by_task: dict[str, dict[str, list[LogitSpread]]] | None = None,
) -> Verdict:
    """The collapse claim over every task in ``runs_by_task``, combined (premise not shown, with each
    task's measurement, when it is absent in all of them). ``spreads_by_task`` (from
    :func:`ssa_book.icl.experiments.load_logit_spreads`) adds the logit-spread part of the premise."""
    if not runs_by_task:
        raise ValueError("runs_by_task holds no task")
    parts = {
        task: task_collapse_verdict(runs, task, _title(task), (spreads_by_task or {}).get(task))
        for task, runs in runs_by_task.items()
    }
    combined = combine(
        "ICL attention collapse onto an extreme value", {_title(task): part for task, part in parts.items()}
    )
    # The parts' measurements (premise not shown) and reasons (not learned, not tested) go into the detail.
    return dataclasses.replace(
        combined, detail="; ".join(_part_detail(_title(task), part) for task, part in parts.items())
    )


def _part_detail(name: str, part: Verdict) -> str:
    if part.outcome in (PREMISE_NOT_SHOWN, NOT_LEARNED, NOT_TESTED) and part.detail:
        return f"{name}: {part.outcome}, {part.detail}"
    return f"{name}: {part.words() if not part.parts else claim_word(part.outcome)}"


def _title(task: str) -> str:
    return get_task(task).title


# ---------------------------------------------------------------------------------------------
# Tables for the chapters.


def _interval(verdict: Verdict) -> str:
    if verdict.interval is None:
        return ""
    low, high = verdict.interval
    return f"[{low:+.3g}, {high:+.3g}]"


def table(verdicts: Sequence[Verdict]):
    """One row per verdict: claim, outcome, effect (mean paired difference in the paper's
    direction), 95% interval, pairs, and the verdict's sentence."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "claim": verdict.claim,
                "outcome": verdict.label(),
                "effect": "" if verdict.effect is None else f"{verdict.effect:+.3g}",
                "95% interval": _interval(verdict),
                "pairs": verdict.pairs,
                "sentence": verdict.sentence(),
            }
            for verdict in verdicts
        ]
    )


def claims_table(claims: Sequence[Claim]):
    """The declared claims: the sign the paper expects of the paired difference (SSA minus softmax,
    or, along a sweep, the largest σ minus the smallest), the threshold with its units, and
    the reason for its size."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "claim": claim.name,
                "paired difference the paper expects": "positive" if claim.direction > 0 else "negative",
                "threshold": f"{claim.threshold:g} {claim.units}",
                "why this size": claim.reason,
            }
            for claim in claims
        ]
    )


def differences_table(verdicts: Sequence[Verdict], seeds: Sequence):
    """Each judged claim's paired difference per seed (in the paper's direction: positive = as the
    paper says), their mean and the threshold; claims without differences are left out."""
    import pandas as pd

    rows = []
    for verdict in verdicts:
        if not verdict.differences:
            continue
        if len(verdict.differences) != len(seeds):
            raise ValueError(f"{verdict.claim}: {len(verdict.differences)} differences for seeds {list(seeds)}")
        rows.append(
            {
                "claim": verdict.claim,
                **{f"seed {seed}": value for seed, value in zip(seeds, verdict.differences)},
                "mean": verdict.effect,
                "threshold": verdict.threshold,
                "units": verdict.units,
            }
        )
    return pd.DataFrame(rows)


DECIDED_FROM = "decided from"  # the power table's column of the fewest pairs the rule decides each claim from


def decided_from(verdict: Verdict) -> int:
    """The fewest pairs from which the rule decides ``verdict``'s claim (more than
    :data:`ssa_book.verdicts.claim.MIN_PAIRS` for an outcome that flips from seed to seed)."""
    return max(MIN_PAIRS, verdict.no_effect_pairs)


def power_pairs(verdicts: Sequence[Verdict], pairs: Sequence[int] = POWER_SEEDS) -> tuple[int, ...]:
    """``pairs``, with the fewest pairs each claim of ``verdicts`` is decided from where that is
    beyond them: the seed counts at which the rule's power is worth computing for every claim."""
    beyond = {decided_from(verdict) for verdict in verdicts if len(verdict.differences) >= 2} - set(pairs)
    return tuple(sorted({*pairs, *(count for count in beyond if count > max(pairs))}))


def power_table(verdicts: Sequence[Verdict], pairs: Sequence[int], simulations: int = SIMULATIONS):
    """The rule's power for each claim with paired differences (:func:`ssa_book.verdicts.power.power_table`), for a true
    effect of the threshold's size and of twice it, with each number of ``pairs``; the column
    :data:`DECIDED_FROM` holds the fewest pairs the rule decides each claim from. Below them the
    rule gives no verdict, so its rate of "better" there is 0 by construction, not a power."""
    table = rule_power_table(verdicts, pairs, multiples=(1, 2), simulations=simulations)
    minimum = {verdict.claim: decided_from(verdict) for verdict in verdicts}
    table.insert(2, DECIDED_FROM, [minimum[claim] for claim in table.index.get_level_values("claim")])
    return table


def power_summary(power, pairs: Sequence[int] = POWER_SEEDS) -> str:
    """One sentence: the range of the power over the claims of ``power`` (:func:`power_table`)
    with each number of ``pairs``, over the claims the rule decides with that many; those it does
    not decide with some of them are counted apart, since the rule gives them no verdict there."""
    if power.empty:
        return "No claim was judged here, so there is no observed spread to compute a power from."
    claims = power.index.unique("claim")
    minimum = power[DECIDED_FROM].groupby(level="claim").first()
    parts = []
    for label, what in (
        ("the threshold", "an effect of the threshold's size"),
        ("2 x the threshold", "one of twice that size"),
    ):
        rows = power.xs(label, level="true effect")
        ranges = []
        for count in pairs:
            decided = rows.loc[rows[DECIDED_FROM] <= count, f"{count} seeds"]
            if len(decided):
                low, high = f"{decided.min():.2f}", f"{decided.max():.2f}"
                ranges.append(
                    f"{low if low == high else f'from {low} to {high}'} with {count}{' seeds' if not ranges else ''}"
                )
        if ranges:
            parts.append(f"for {what}, {', '.join(ranges[:-1])}{' and ' if len(ranges) > 1 else ''}{ranges[-1]}")
    text = (
        f"Over the {len(claims)} claims with a spread of paired differences, the power is, {'; '.join(parts)}."
        if parts
        else ""
    )
    for count in sorted(set(minimum[minimum > min(pairs)])):
        short = int((minimum == count).sum())
        below = [str(seeds) for seeds in pairs if seeds < count]
        listed = below[0] if len(below) == 1 else ", ".join(below[:-1]) + " or " + below[-1]
        who = (
            "The claim is"
            if len(claims) == 1
            else f"All {short} claims are"
            if short == len(claims)
            else f"{short} of the {len(claims)} claims {'are' if short > 1 else 'is'}"
        )
        text += (
            f" {who} decided only from {count} pairs on: with {listed} seeds the rule gives {'them' if short > 1 else 'it'} "
            f"no verdict, so no power"
            + (
                f", and the ranges above leave {'them' if short > 1 else 'it'} out."
                if parts and short < len(claims)
                else "."
            )
        )
    return text.strip()


def resolve_summary(verdicts: Sequence[Verdict]) -> str:
    """One sentence: how many seeds would decide the open verdicts (undecided, or too few seeds to
    decide), if their observed mean and spread held (:attr:`ssa_book.verdicts.verdict.Verdict.seeds_to_resolve`)."""
    open_ = [verdict for verdict in verdicts if verdict.outcome in OPEN]
    if not open_:
        return "Every verdict here is decided."
    known = [verdict.seeds_to_resolve for verdict in open_ if verdict.seeds_to_resolve is not None]
    beyond = len(open_) - len(known)
    text = ""
    if known:
        if len(open_) == 1:
            which = "the open claim"
        else:
            which = (
                f"all {len(open_)}" if len(known) == len(open_) else f"{len(known)} of the {len(open_)}"
            ) + " open claims"
        span = f"{min(known)}" if min(known) == max(known) else f"{min(known)} to {max(known)}"
        text = f"If the observed means and spreads held, {span} seeds would decide {which}"
    if beyond:
        text += ("; " if text else "") + f"{beyond} would need more than {MAX_SEEDS} seeds"
    return text + "."


def rule_numbers() -> dict[str, float]:
    """The numbers the chapters quote about the rule and this module's thresholds."""
    return {
        "confidence_pct": round(100 * CONFIDENCE),
        "wilcoxon_pct": round(100 * (1 - CONFIDENCE)),
        "min_pairs": MIN_PAIRS,
        "min_effect": MIN_EFFECT,
        "learned_fraction": LEARNED_FRACTION,
        "collapse_share": COLLAPSE_SHARE,
        "power_simulations": SIMULATIONS,
        "power_seeds_low": POWER_SEEDS[0],
        "power_seeds_high": POWER_SEEDS[1],
    }


def seed_statement(n_seeds: int) -> str:
    """What the chapter's number of seeds allows the rule to decide, in one sentence."""
    if n_seeds < MIN_PAIRS:
        return (
            f"With {n_seeds} seeds no claim can be decided: the rule needs at least {MIN_PAIRS} pairs ({no_effect_pairs(CLAIMS['quantification'][0])} "
            "for prompt errors, which flip from seed to seed), so every claim here is exploratory, an estimate without a "
            "verdict, whatever its numbers"
        )
    return f"With {n_seeds} seeds the rule can decide a claim (it needs at least {MIN_PAIRS} pairs)"
