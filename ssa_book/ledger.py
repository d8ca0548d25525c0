"""The claims ledger: each headline claim of the paper, the paper's figure, ours, and a verdict.

    rows = ledger(profile="cpu")       # one LedgerRow per claim, read from the result cache
    summary_markdown(rows)             # the front page's table: claim, verdict, one short sentence
    ledger_markdown(rows)              # the full table: the paper's figure and ours, claim by claim
    ledger_frame(rows)                 # the same as a pandas DataFrame

Nothing here trains or evaluates a model. Each row calls its chapter's own package functions
with the result cache *required* (as CI does), so a claim whose results are not cached yet is
"not tested", with the command that creates them; it becomes a verdict as soon as that chapter
commits its results, without any edit here. The theorems are the exception: they are checked
live with :mod:`ssa_book.theory`, in seconds.

The paper's side of every row comes from :data:`PAPER`, one entry per claim with its source.
Published numbers are not copied into it: they stay in the chapter modules that compare against
them (``ssa_book.lm.experiment.PAPER_PERPLEXITY``, ``PAPER_LM_EVAL``,
``ssa_book.encoder.experiment.PAPER_ACCURACIES``), and :data:`PAPER` points to them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import sympy as sp

from ssa_book import leaderboard as leaderboard_study, paths, verdicts
from ssa_book.alternatives import comparison as alternatives_comparison
from ssa_book.encoder import experiment as encoder_experiment
from ssa_book.icl import experiments as icl_experiments, study as icl_study, tasks as icl_tasks, verdicts as icl_verdicts_module
from ssa_book.lm import experiment as lm_experiment
from ssa_book.retrieval import experiment as retrieval_experiment
from ssa_book.profiles import check_profile
from ssa_book.verdicts import OUTCOMES, Verdict
from ssa_book.results import REQUIRE_CACHE_ENV, CacheMissError, Provenance
from ssa_book.lm.experiment import PAPER_LM_EVAL
from ssa_book.encoder.experiment import PAPER_ACCURACIES
from ssa_book import theory
from ssa_book.plotting import scorer_label
from ssa_book.book import toc_documents
from ssa_book.lm.experiment import PAPER_PERPLEXITY

# The outcomes of ssa_book.verdicts, the one verdict rule of the book.
VERDICTS = OUTCOMES
BETTER, NOT_TESTED, HOLDS_IN_PART, WORSE = verdicts.BETTER, verdicts.NOT_TESTED, verdicts.HOLDS_IN_PART, verdicts.WORSE


@dataclasses.dataclass(frozen=True)
class PaperClaim:
    claim: str  # the claim in a few words (the ledger's first column)
    statement: str  # what the paper says; "{...}" fields are filled from `numbers`
    source: str  # where in the paper
    chapter: str  # the book page that tests it: a _toc.yml entry's file name without folder
    numbers: Callable[[], dict] | None = None  # the published numbers, from the chapter module


def _perplexity_numbers(split: str) -> Callable[[], dict]:
    def numbers() -> dict:

        return PAPER_PERPLEXITY[split]

    return numbers


def _benchmark_numbers() -> dict:

    gains = {metric: ssa - softmax for metric, (softmax, ssa) in PAPER_LM_EVAL.items()}
    best = max(gains, key=gains.get)
    return {
        "better": sum(gain > 0 for gain in gains.values()), "metrics": len(gains), "best": best,
        "best_softmax": PAPER_LM_EVAL[best][0], "best_ssa": PAPER_LM_EVAL[best][1],
    }


def _probing_numbers() -> dict:

    gains = [paper["ssa"] - paper["softmax"] for paper in PAPER_ACCURACIES.values()]
    return {"paradigms": len(gains), "low": min(gains), "high": max(gains)}


# One entry per headline claim, in the order of the front page.
PAPER: dict[str, PaperClaim] = {
    "theorem_1": PaperClaim(
        "Theorem 1: global logit magnification",
        "Scaling all logits by λ → ∞ drives softmax to hardmax exponentially fast (non-max weights "
        "~ e^(−λΔ)); SSA concentrates only polynomially and keeps contextual mass.",
        "paper, Theorem 1 (known from its summary; the exact statement is not public)",
        "theory",
    ),
    "theorem_2": PaperClaim(
        "Theorem 2: inner disproportion",
        "When one logit grows far beyond the others, their softmax weight decays exponentially, "
        "their SSA weight only polynomially (~ t^(−n)).",
        "paper, Theorem 2 (known from its summary; the exact statement is not public)",
        "theory",
    ),
    "quantification": PaperClaim(
        "ICL quantification (every / some) under shift",
        "Trained on x ~ N(0, 1) and tested with x ~ σ·N(0, 1), σ up to 29: SSA's error stays low "
        "as σ grows, softmax's does not (numbers not published).",
        "paper, in-context quantification experiments (setting of Garg et al. 2022)",
        "icl_quantification",
    ),
    "collapse": PaperClaim(
        "ICL: collapse from one large value",
        "Softmax fails once one large value appears in the prompt, predicting from that value "
        "alone (attention collapse); SSA does not (numbers not published).",
        "paper, attention-collapse analysis of the ICL models",
        "icl_collapse",
    ),
    "linear": PaperClaim(
        "ICL linear functions f(x) = a·x + b under shift",
        "Tested with a, b ~ N(0, σ) and x ~ N(0, σ_x) for σ up to 10: SSA's error stays low as σ "
        "grows, softmax's does not (numbers not published).",
        "paper, in-context linear-function experiments",
        "icl_linear",
    ),
    "perplexity_id": PaperClaim(
        "Decoder perplexity, in distribution",
        "The paper's decoder on FineWeb-Edu: perplexity {softmax:.2f} with softmax, {ssa:.2f} with SSA.",
        "paper, decoder perplexity table (1000 samples of 1024 tokens)",
        "decoder",
        _perplexity_numbers("id"),
    ),
    "perplexity_ood": PaperClaim(
        "Decoder perplexity, out of distribution",
        "The same models on Wikipedia: perplexity {softmax:.2f} with softmax, {ssa:.2f} with SSA.",
        "paper, decoder perplexity table (1000 samples of 1024 tokens)",
        "decoder",
        _perplexity_numbers("ood"),
    ),
    "benchmarks": PaperClaim(
        "Decoder benchmarks (lm-eval)",
        "SSA scores higher on {better} of {metrics} lm-eval metrics; largest gain {best}: "
        "{best_softmax:.4f} → {best_ssa:.4f}.",
        "paper, lm-eval table (shot count not stated)",
        "decoder",
        _benchmark_numbers,
    ),
    "probing": PaperClaim(
        "Encoder (BabyBERTa) grammatical probing on Zorro",
        "SSA beats softmax on the {paradigms} paradigms it reports, by {low:.2f} to {high:.2f} "
        "accuracy points.",
        "paper, BabyBERTa Zorro table (holistic scoring)",
        "encoder",
        _probing_numbers,
    ),
    "alternatives": PaperClaim(
        "Alternative scorers",
        "Temperature softmax, sparsemax, entmax, cosFormer, SA-softmax and others were tried: "
        "none consistently better than softmax (numbers not published).",
        "paper, discussion of alternative scoring functions",
        "alternative_scorers",
    ),
    "across_shifts": PaperClaim(
        "Beyond the paper: SSA under another kind of shift",
        "The paper's thesis is that SSA generalises better than softmax under distribution shift; it tests "
        "one kind, the scale of the inputs. The leaderboard asks it on that shift and on a second one the "
        "paper does not test, set size in max retrieval (Veličković et al. 2025), beside every other scorer.",
        "paper, abstract (its general claim); the second shift is not in the paper",
        "leaderboard",
    ),
}


def paper_figure(key: str) -> str:
    """The paper's side of a row: its statement, with the published numbers filled in."""
    if key not in PAPER:
        raise ValueError(f"key must be one of {', '.join(PAPER)}; got {key!r}")
    claim = PAPER[key]
    return claim.statement.format(**claim.numbers()) if claim.numbers else claim.statement


@dataclasses.dataclass(frozen=True)
class LedgerRow:
    key: str  # the claim's key in PAPER
    claim: str
    paper: str  # the paper's figure
    ours: str  # what we measured, or why it is not tested
    profile: str  # the profile the numbers come from ("live": computed when the page is built)
    seeds: tuple[int, ...]  # seeds behind `ours` (empty: deterministic, or nothing measured)
    verdict: str  # one of VERDICTS
    section: str | None  # the book page (a _toc.yml file entry), None when the book has no such page
    command: str | None  # the command that (re)creates the cached results behind `ours`
    wall_time_s: float | None = None  # compute time of those results, from their provenance
    summary: str = ""  # `ours` in one short sentence: the key numbers and what the seeds decide
    parts: tuple[str, ...] = ()  # the outcomes of the parts ssa_book.verdicts.combine made the verdict of (empty: none)
    regime: str = ""  # the training regime the verdict holds in (sizes, steps, learning rate, start, seeds)
    seed_counts: tuple[int, ...] = ()  # seeds per part where the parts ran different seeds (empty: len(seeds))

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}; got {self.verdict!r}")


# ----------------------------------------------------------------------------------------------
# Helpers shared by the rows.


def reading_cache(results_dir: str | Path | None):
    """A context in which every chapter reads ``results_dir`` and a cache miss raises instead of
    computing: the ledger never trains."""
    changes = {REQUIRE_CACHE_ENV: "1"}
    if results_dir is not None:
        changes["SSA_RESULTS_DIR"] = str(Path(results_dir).resolve())
    return paths.environment(changes)


def _total_wall_time(provenances: Sequence[Provenance | None]) -> float | None:
    times = [provenance.wall_time_s for provenance in provenances if provenance is not None]
    return float(sum(times)) if times else None


def _missing(key: str, profile: str, command: str, why: str = "results not in the cache", where: str | None = None) -> LedgerRow:
    """A claim without results: ``why``, then ``command`` to run, or ``where`` (MyST) the reader
    finds it when the command is the package's plumbing, kept off the argument's pages."""
    return LedgerRow(key, PAPER[key].claim, paper_figure(key), f"{why}; {where or f'run `{command}`'}", profile, (), NOT_TESTED,
                     None, command, summary=_sentence(why.split(" (")[0]))


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[0].upper() + text[1:] + "." if text else ""


def _parts(verdict: Verdict) -> tuple[str, ...]:
    """The outcomes of the parts ``verdict`` combines (empty for a single verdict)."""
    return tuple(part.outcome for _, part in verdict.parts)


def _judged(verdict: Verdict) -> list[Verdict]:
    """The verdicts judged on paired seeds inside ``verdict``: itself, or its parts' (recursively)."""
    if verdict.parts:
        return [leaf for _, part in verdict.parts for leaf in _judged(part)]
    return [verdict] if verdict.interval is not None else []


def seeds_phrase(verdict: Verdict) -> str:
    """What the seeds decide, in a few words: "3 paired seeds; about 6 to 12 would decide" (at the
    observed mean and spread, :attr:`ssa_book.verdicts.Verdict.seeds_to_resolve`; "" when nothing was
    judged on paired seeds)."""
    judged = _judged(verdict)
    if not judged:
        return ""
    fewest, most = min(v.pairs for v in judged), max(v.pairs for v in judged)
    text = f"{fewest}{'' if fewest == most else f' to {most}'} paired seed{'' if most == 1 else 's'}"
    undecided = [v for v in judged if v.outcome in verdicts.OPEN]
    if not undecided:
        return text
    needed = sorted(v.seeds_to_resolve for v in undecided if v.seeds_to_resolve)
    if needed:
        text += f"; about {needed[0]:,}{'' if needed[0] == needed[-1] else f' to {needed[-1]:,}'} would decide"
    if any(v.seeds_to_resolve is None for v in undecided):
        text += f"; {'some' if needed else 'it'} would need more than {verdicts.MAX_SEEDS:,}"
    return text


def short_summary(verdict: Verdict, numbers: str = "") -> str:
    """A row's summary: its key numbers and what the seeds decide, in one sentence. The parts of a
    claim of several parts are counted in the verdict's own cell (:func:`comparison_words`), so that
    the one word there never stands alone over an adverse part."""
    return _sentence("; ".join(part for part in (numbers, seeds_phrase(verdict)) if part))


# ----------------------------------------------------------------------------------------------
# The theorems: checked live.

THEOREM_LOGITS = (2, 1, 0, -1)  # a maximum, a positive runner-up, a zero and a negative logit
THEOREM_OTHERS = (1, 0, -1)  # the logits that stay fixed while one grows (Theorem 2)
THEOREM_SSA = {"b": 1, "n": 1.5}  # the SSA parameters of the check
THEOREM_SCALES = (1e3, 1e6)  # lambda (and t) range where the slopes are fitted, log-spaced
THEOREM_POINTS = 7
SLOPE_TOLERANCE = 0.01  # a fitted slope within 1% of the derived rate confirms it
THEOREM_DPS = 50  # decimal digits of the mpmath evaluations (float64 underflows e^(-lambda))


def _theorem_rows(profile: str) -> list[LedgerRow]:
    scales = np.logspace(np.log10(THEOREM_SCALES[0]), np.log10(THEOREM_SCALES[1]), THEOREM_POINTS)
    b, n = (sp.nsimplify(THEOREM_SSA[name]) for name in ("b", "n"))

    def slope(exact, asymptotic, variable, decay: str) -> float:
        return theory.asymptotic_check(exact, asymptotic, variable, scales, decay, THEOREM_SCALES[0], THEOREM_DPS)["slope"]

    def agrees(fitted: float, rate) -> bool:
        return abs(fitted + float(rate)) <= SLOPE_TOLERANCE * abs(float(rate))

    softmax = theory.softmax_magnification(THEOREM_LOGITS)
    ssa = theory.ssa_magnification(THEOREM_LOGITS, b=b, n=n)
    softmax_slope = slope(softmax.non_max_mass, softmax.asymptotic, theory.LAMBDA, "exponential")
    zero, negative = THEOREM_LOGITS.index(0), THEOREM_LOGITS.index(-1)
    ssa_slopes = {i: slope(ssa.weights[i], ssa.asymptotic(i), theory.LAMBDA, "power") for i in (zero, negative)}
    mass = float(ssa.contextual_mass)
    first = all([agrees(softmax_slope, softmax.gap), *(agrees(ssa_slopes[i], ssa.rates[i]) for i in ssa_slopes), mass > 0])
    logits = ", ".join(map(str, THEOREM_LOGITS))
    ours_1 = (f"Logits ({logits}) × λ: softmax's non-max mass decays with semi-log slope {softmax_slope:.4f} "
              f"(derived −Δ = −{float(softmax.gap):g}); SSA (b = {b}, n = {n}): the zero and negative logits' weights "
              f"with log-log slopes {ssa_slopes[zero]:.4f}, {ssa_slopes[negative]:.4f} (derived −n, −2n); "
              f"contextual mass → {mass:.3f}.")

    inner_softmax = theory.softmax_inner_disproportion(THEOREM_OTHERS)
    inner_ssa = theory.ssa_inner_disproportion(THEOREM_OTHERS, b=b, n=n)
    inner_softmax_slope = slope(inner_softmax.others_mass, inner_softmax.asymptotic, theory.T, "exponential")
    inner_ssa_slope = slope(inner_ssa.others_mass, inner_ssa.asymptotic, theory.T, "power")
    second = agrees(inner_softmax_slope, 1) and agrees(inner_ssa_slope, n)
    ours_2 = (f"One logit t grows beside ({', '.join(map(str, THEOREM_OTHERS))}): the others' softmax mass decays "
              f"with semi-log slope {inner_softmax_slope:.4f} (derived −1), their SSA mass with log-log slope "
              f"{inner_ssa_slope:.4f} (derived −n = −{n}).")
    qualifier = (f" Our precise version of the theorem, derived with sympy; slopes fitted for λ from "
                 f"{THEOREM_SCALES[0]:.0e} to {THEOREM_SCALES[1]:.0e} in {THEOREM_DPS}-digit arithmetic.")
    def summary(ok: bool) -> str:
        return (f"Fitted decay rates (exponential for softmax, polynomial for SSA) within {SLOPE_TOLERANCE:.0%} of "
                f"the derived ones." if ok else
                f"A fitted decay rate is more than {SLOPE_TOLERANCE:.0%} off the derived one.")

    return [
        LedgerRow(key, PAPER[key].claim, paper_figure(key), ours + qualifier, "live", (),
                  BETTER if ok else WORSE, None, None, summary=summary(ok))
        for key, ours, ok in (("theorem_1", ours_1, first), ("theorem_2", ours_2, second))
    ]


# ----------------------------------------------------------------------------------------------
# In-context learning: ssa_book.icl's cached runs and its verdict functions.



def _icl():
    experiments = icl_experiments
    icl_verdicts = icl_verdicts_module
    return experiments, icl_verdicts


def _icl_runs(experiments, task: str, profile: str, scorers=("softmax", "ssa")) -> tuple[dict | None, list[dict]]:
    """({scorer: runs} or None if not all cached, provenances)."""
    try:
        runs = experiments.load_runs(task, profile=profile, scorers=scorers, seeds=experiments.SEEDS)
    except CacheMissError:
        return None, []
    return runs, [run.provenance for seed_runs in runs.values() for run in seed_runs]


def _ours(verdict: Verdict, numbers: str = "") -> str:
    """Our side of a row: the numbers, then the verdict's own sentence (its evidence), or for a
    claim of several parts each part's sentence."""
    if verdict.parts:
        sentence = " ".join(part.sentence() for _, part in verdict.parts)
        listing = "; ".join(f"{name}: {part.label()}" for name, part in verdict.parts)
        extra = verdict.detail.removeprefix(listing).strip("; ")  # what the chapter added, e.g. a calibration
        if extra:
            sentence += " " + extra[0].upper() + extra[1:].rstrip(".") + "."
    else:
        sentence = verdict.sentence()
        sentence = sentence.split(": ", 1)[1] if ": " in sentence else sentence
        if verdict.detail and verdict.detail not in sentence:  # e.g. how far the baseline is from its reference
            sentence += " " + verdict.detail.rstrip(".") + "."
    return (f"{numbers}. " if numbers else "") + sentence[0].upper() + sentence[1:]


def _paired(seeds: Sequence[int]) -> str:
    return _count(len(seeds), "paired seed")


def _icl_regime(task: str, profile: str) -> str:
    """The in-context chapters' training regime on ``task``, the paper's beside it."""
    return icl_study.ARMS["ssa"].regime(task, profile)


def _leaderboard_regime(profile: str, seeds: Sequence[int]) -> str:
    retrieval = retrieval_experiment
    model, train, _ = retrieval.PROFILE_SIZES[profile]
    return (f"in-context columns: {_icl_regime('every', profile)}; max retrieval: {model.depth} layers of width "
            f"{model.width}, {train.steps:,} steps at learning rate {train.learning_rate:g}, sets of {train.items} items; "
            f"{_paired(seeds)}")


def _icl_row(key: str, profile: str, tasks: Sequence[str], judge: Callable, numbers: Callable, short: Callable) -> LedgerRow:
    """A row from the cached ICL runs of every task in ``tasks`` (all must be cached):
    ``judge(icl_verdicts, runs_by_task)`` gives the verdict, ``numbers(icl_verdicts, runs_by_task)``
    a text of our numbers and ``short(icl_verdicts, runs_by_task)`` the few of them the summary gives."""
    experiments, icl_verdicts = _icl()
    # The tasks' chapter: icl_quantification, icl_linear, or (all three tasks) icl_collapse.
    command = experiments.regenerate_command(profile, tasks[0] if len(tasks) < 3 else None)
    runs_by_task, provenances = {}, []
    for task in tasks:
        runs, provenance = _icl_runs(experiments, task, profile)
        if runs is None:
            return _missing(key, profile, command, f"{task}: results not in the cache")
        runs_by_task[task] = runs
        provenances += provenance
    verdict = judge(icl_verdicts, runs_by_task)
    return LedgerRow(key, PAPER[key].claim, paper_figure(key), _ours(verdict, numbers(icl_verdicts, runs_by_task)), profile,
                     tuple(experiments.SEEDS), verdict.outcome, None, command, _total_wall_time(provenances),
                     short_summary(verdict, short(icl_verdicts, runs_by_task)), _parts(verdict),
                     f"{_icl_regime(tasks[-1], profile)}; {_paired(experiments.SEEDS)}")


def _shifted_means(icl_verdicts, runs: dict, task: str, shift: str) -> dict[str, float]:
    return {name: float(icl_verdicts.error_curve(runs[name], task, shift)[:, 1:].mean()) for name in ("softmax", "ssa")}


def _shifted_errors(icl_verdicts, runs_by_task: dict, shift: str) -> str:
    parts = []
    for task, runs in runs_by_task.items():
        means = _shifted_means(icl_verdicts, runs, task, shift)
        parts.append(f"{task} ({shift}): error under shift softmax {means['softmax']:.3g}, SSA {means['ssa']:.3g}")
    return "; ".join(parts)


SHIFT_NAMES = {"sigma_x": "larger inputs", "sigma_ab": "larger functions"}


def _short_errors(icl_verdicts, runs_by_task: dict, shifts: Sequence[str]) -> str:
    """"mean error under the shift, softmax vs SSA: 0.26 vs 0.60 (every), ..."."""
    parts = []
    for task, runs in runs_by_task.items():
        for shift in shifts:
            means = _shifted_means(icl_verdicts, runs, task, shift)
            where = icl_tasks.get_task(task).title if icl_tasks.get_task(task).classification else SHIFT_NAMES.get(shift, shift)
            parts.append(f"{means['softmax']:.2f} vs {means['ssa']:.2f} ({where})")
    return "mean error under the shift, softmax vs SSA: " + ", ".join(parts)


def _quantification_row(profile: str) -> LedgerRow:
    return _answered_by_study(_icl_row("quantification", profile, icl_tasks.QUANTIFIERS,
                                       lambda icl_verdicts, runs: icl_verdicts.quantification_verdict(runs),
                                       lambda icl_verdicts, runs: _shifted_errors(icl_verdicts, runs, "sigma_x"),
                                       lambda icl_verdicts, runs: _short_errors(icl_verdicts, runs, ("sigma_x",))),
                              "SSA vs softmax", profile)


def _linear_row(profile: str) -> LedgerRow:
    return _answered_by_study(_icl_row("linear", profile, ("linear",),
                                       lambda icl_verdicts, runs: icl_verdicts.linear_verdict(runs["linear"]),
                                       lambda icl_verdicts, runs: "; ".join(_shifted_errors(icl_verdicts, runs, shift)
                                                                            for shift in ("sigma_x", "sigma_ab")),
                                       lambda icl_verdicts, runs: _short_errors(icl_verdicts, runs, ("sigma_x", "sigma_ab"))),
                              "SSA vs softmax, linear functions", profile)


def _study_effects(verdict: Verdict, endpoint: str | None = None) -> str:
    """"every, error at sigma 10: -0.17 [-0.27, -0.07]; ..." for each judged part of ``verdict``,
    or only for the parts at ``endpoint`` when it names some."""
    judged = [(name, part) for name, part in verdict.parts if part.interval is not None]
    chosen = [(name, part) for name, part in judged if endpoint and endpoint in name] or judged
    return _factored([(name, part.estimate()) for name, part in chosen])


def _factored(named: Sequence[tuple[str, str]]) -> str:
    """"name: value; ..." with what every name shares (comma-separated parts, leading or trailing)
    said once: [("every, error at sigma 10", "-0.17"), ("some, error at sigma 10", "-0.23")] ->
    "error at sigma 10: every -0.17; some -0.23"."""
    parts = [name.split(", ") for name, _ in named]
    if len(parts) < 2:
        return "; ".join(f"{name}: {value}" for name, value in named)
    shortest = min(map(len, parts))
    lead = next((i for i in range(shortest) if len({tuple(p[:i + 1]) for p in parts}) > 1), shortest)
    tail = next((i for i in range(shortest - lead) if len({tuple(p[len(p) - i - 1:]) for p in parts}) > 1), shortest - lead)
    if lead == tail == 0 or any(len(p) == lead + tail for p in parts):
        return "; ".join(f"{name}: {value}" for name, value in named)
    shared = ", ".join(parts[0][:lead] + parts[0][len(parts[0]) - tail:])
    return f"{shared}: " + "; ".join(f"{', '.join(p[lead:len(p) - tail])} {value}" for p, (_, value) in zip(parts, named))


def _answered_by_study(row: LedgerRow, comparison: str, profile: str) -> LedgerRow:
    """``row``, judged on the chapter's few seeds, replaced by the powered study's answer
    (:func:`ssa_book.icl.study.claim_verdict`) on the tasks where the study's runs are complete; while
    none is, ``row`` with how many of the study's runs are cached."""
    study = icl_study
    compared = study.comparison(comparison, profile)
    if compared is None:  # not in the plan at this profile
        return row
    cache = study.StudyCache(profile, train=False)
    verdict = study.claim_verdict(compared, cache)
    if verdict is None:
        pending = f"The powered study ({compared.seeds} paired seeds a task): {study.progress_sentence(compared, cache)}."
        return dataclasses.replace(row, ours=f"{row.ours} {pending}")
    provenances = [cache.run(arm, task, seed).provenance for task in compared.tasks if cache.complete(compared, task)
                   for seed in compared.seed_list() for arm in (compared.treatment, compared.control)]
    chapter = f"The chapter's {_count(len(row.seeds), 'seed')} alone: {comparison_words(row) or verdicts.claim_word(row.verdict)}."
    numbers = f"Powered study (the chapter '{study.TITLE}'), {compared.seeds} paired seeds a task"
    pending = "".join(f"; {icl_tasks.get_task(task).title} not judged yet ({cache.cached(compared, task)} of "
                      f"{study.needed(compared, task)} runs)" for task in compared.tasks if not cache.complete(compared, task))
    return LedgerRow(row.key, row.claim, row.paper, f"{_ours(verdict, numbers)} {chapter}", profile, compared.seed_list(),
                     verdict.outcome, None, study.regenerate_command(profile), _total_wall_time(provenances),
                     short_summary(verdict, f"powered study (positive: SSA better), "
                                            f"{_study_effects(verdict, study.REGIME_MAP_ENDPOINT)}{pending}"),
                     _parts(verdict), f"{study.ARMS[compared.treatment].regime(compared.tasks[0], profile)}; "
                                      f"{compared.seeds} paired seeds a task")


def _collapse_row(profile: str) -> LedgerRow:
    def numbers(icl_verdicts, runs_by_task):
        masses = ", ".join(f"{task} softmax {_mean_mass(runs, 'softmax'):.3g}, SSA {_mean_mass(runs, 'ssa'):.3g}"
                           for task, runs in runs_by_task.items())
        return f"attention share on an injected extreme value: {masses}"

    def judge(icl_verdicts, runs_by_task):
        experiments = icl_experiments
        try:  # the logit spreads complete the premise's measurement; without them, the attention shares alone
            spreads = {task: experiments.load_logit_spreads(task, profile=profile, seeds=experiments.SEEDS) for task in runs_by_task}
        except CacheMissError:
            spreads = None
        return icl_verdicts.collapse_verdict(runs_by_task, spreads)

    def short(icl_verdicts, runs_by_task):
        share = max(icl_verdicts.collapse_premise(runs)["share"] for runs in runs_by_task.values())
        return (f"softmax's most-drawn head gives an injected extreme value {share:.2g} of its attention "
                f"(collapse: {icl_verdicts.COLLAPSE_SHARE:g} or more)")

    return _with_premise_made_to_hold(_icl_row("collapse", profile, icl_tasks.TASKS, judge, numbers, short), profile)


def _with_premise_made_to_hold(row: LedgerRow, profile: str) -> LedgerRow:
    """The collapse row, with the study's variant where the premise can hold (no LayerNorm before
    the first attention layer): softmax's first-layer largest weight along sigma there, and
    whether SSA then generalises better (:func:`ssa_book.icl.study.claim_verdict`), as a second part
    of the claim once the variant's runs are complete on a task."""
    study = icl_study
    compared = study.comparison(study.PREMISE_COMPARISON, profile)
    if compared is None or row.verdict == NOT_TESTED:
        return row
    cache = study.StudyCache(profile, train=False)
    variant = study.claim_verdict(compared, cache)
    if variant is None:
        pending = (f"Where the premise is made to hold (no LayerNorm before the first attention layer), the powered study: "
                   f"{study.progress_sentence(compared, cache)}.")
        return dataclasses.replace(row, ours=f"{row.ours} {pending}")
    weights, last = [], []
    for task in (task for task in compared.tasks if cache.complete(compared, task)):
        curves = study.arm_curves([compared.control], task, compared.seed_list(), study.first_layer(cache, "max_weight"))
        _, values = curves[compared.control]
        weights.append(f"from {values[:, 0].mean():.2f} to {values[:, -1].mean():.2f} on {icl_tasks.get_task(task).title}")
        last.append(values[:, -1].mean())
    measured = ("without its first LayerNorm, softmax's largest first-layer attention weight grows along sigma "
                + " and ".join(weights))
    in_short = f"without the first LayerNorm, its largest first-layer weight reaches {max(last):.2f} at the largest sigma"
    combined = verdicts.combine(row.claim, {"as trained (LayerNorm before every attention layer)": Verdict(row.claim, row.verdict),
                                            "no first LayerNorm, SSA vs softmax": variant})
    seeds = tuple(sorted(set(row.seeds) | set(compared.seed_list())))
    variant_regime = _differing(row.regime, _PAPER_REGIME.sub("", study.ARMS[compared.treatment].regime(compared.tasks[0], profile)))
    regime = f"{row.regime}; without the first LayerNorm: {variant_regime}; {_paired(compared.seed_list())}"
    return dataclasses.replace(row, ours=f"{row.ours} {_sentence(measured)} {_ours(variant)}", verdict=combined.outcome,
                               seeds=seeds, seed_counts=(len(row.seeds), len(compared.seed_list())),
                               summary=_sentence(f"{row.summary.rstrip('.')}; {in_short}; variant: {variant.words()}"),
                               parts=_parts(combined), regime=regime)


# Where a regime's parts split: "4 layers of width 64, 1,000 steps at learning rate 0.001 ...; 3 paired seeds".
_REGIME_PARTS = r", | at |; "


def _differing(regime: str, other: str) -> str:
    """The parts of ``other`` (comma-separated, as a regime names them) that ``regime`` lacks, so a
    variant's regime names only what it changes: "1,000 steps"."""
    mine = set(re.split(_REGIME_PARTS, _PAPER_REGIME.sub("", regime)))
    return ", ".join(part for part in re.split(_REGIME_PARTS, other) if part not in mine) or "the same"


def _mean_mass(runs: dict, scorer: str) -> float:
    return float(np.mean([np.mean(run.injection.injected_mass) for run in runs[scorer]]))


def _alternatives_row(profile: str) -> LedgerRow:
    """The Alternative scorers chapter's verdict on the paper's statement (``ssa_book.alternatives``),
    from whatever runs of the alternatives the paper tried are cached (all seeds of a scorer and
    task, next to softmax's)."""
    comparison = alternatives_comparison
    scorers = ("softmax", *comparison.PAPER_ALTERNATIVES)
    command = comparison.regenerate_command(profile)
    leaderboard = leaderboard_study
    board = leaderboard.read(profile, train=False)
    runs, cached, planned = comparison.cached_runs(profile, scorers=scorers)
    if leaderboard.statement_complete(board):
        return _alternatives_row_at_ten_seeds(profile, board, runs)
    if not runs:
        return _missing("alternatives", profile, command, "no alternative scorer's results in the cache")
    verdict = comparison.statement_verdict(runs)
    infos = [run.provenance for by_scorer in runs.values() for seed_runs in by_scorer.values() for run in seed_runs]
    coverage = "" if cached == planned else f" (so far {cached} of the {planned} runs of these scorers; the rest: `{command}`)"
    return LedgerRow("alternatives", PAPER["alternatives"].claim, paper_figure("alternatives"), _ours(verdict) + coverage, profile,
                     tuple(comparison.chapter_seeds(profile)), verdict.outcome, None, command, _total_wall_time(infos),
                     short_summary(verdict, _tally(verdict, "comparison of an alternative with softmax",
                                                   "comparisons of the paper's alternatives with softmax")),
                     regime=f"{_icl_regime('every', profile)}; {_paired(comparison.chapter_seeds(profile))}")


def _leaderboard_row(profile: str) -> LedgerRow:
    """SSA against softmax in every column of the leaderboard (``ssa_book.leaderboard``), combined,
    from whatever cells the cache fills; the scorers better than softmax in each column."""
    leaderboard = leaderboard_study

    command = leaderboard.regenerate_command(profile)
    board = leaderboard.read(profile, train=False)
    if not board.cells:
        return _missing("across_shifts", profile, command, "no cell of the leaderboard in the cache")
    verdict = leaderboard.ssa_verdict(board)
    columns = [each for each in leaderboard.COLUMNS if board.cell("ssa", each.key) is not None]
    numbers = "; ".join(f"{each.label}: SSA {board.cell('ssa', each.key).mean:.3g}, softmax {board.cell('softmax', each.key).mean:.3g}"
                        for each in columns)
    better = leaderboard.best_scorers(board)
    winners = "; ".join(f"{each.label}: {', '.join(scorer_label(s) for s in better[each.key]) or 'none'}"
                        for each in leaderboard.COLUMNS if board.cell("softmax", each.key) is not None)
    text = _ours(verdict, f"Error at the out-of-distribution point ({numbers})")
    text += f" Scorers better than softmax by the rule, per column: {winners}."
    if not board.complete:
        text += " " + board.progress_sentence()
    seeds = tuple(sorted({seed for cell in board.cells.values() for seed in cell.seeds}))
    short = f"SSA against softmax on {len(columns)} of {len(leaderboard.COLUMNS)} kinds of shift"
    return LedgerRow("across_shifts", PAPER["across_shifts"].claim, paper_figure("across_shifts"), text, profile, seeds,
                     verdict.outcome, None, command, board.wall_time_s or None, short_summary(verdict, short), _parts(verdict),
                     _leaderboard_regime(profile, leaderboard.seeds(leaderboard.ICL, profile)))


def _alternatives_row_at_ten_seeds(profile: str, board, chapter_runs: dict) -> LedgerRow:
    """The paper's statement as the leaderboard reads it (every in-context cell of the paper's
    alternatives filled, :func:`ssa_book.leaderboard.statement_complete`): its seeds replace the
    chapter's three; the chapter's outcome is kept as a note."""
    leaderboard = leaderboard_study
    comparison = alternatives_comparison
    verdict = leaderboard.statement_verdict(board)
    chapter = (f" The Alternative scorers chapter, on its {len(comparison.chapter_seeds(profile))} seeds and the mean error over "
               f"the shifted sigmas, says {comparison.statement_verdict(chapter_runs).words()}." if chapter_runs else "")
    seeds = leaderboard.seeds(leaderboard.ICL, profile)
    text = (f"Read by the leaderboard at {len(seeds)} paired seeds, on the error at sigma = {leaderboard.TEN_TIMES} of the four "
            f"in-context panels. " + _ours(verdict) + chapter)
    return LedgerRow("alternatives", PAPER["alternatives"].claim, paper_figure("alternatives"), text, profile, tuple(seeds),
                     verdict.outcome, None, leaderboard.regenerate_command(profile), board.wall_time_s or None,
                     short_summary(verdict, _tally(verdict, "comparison of an alternative with softmax",
                                                   "comparisons of the paper's alternatives with softmax") + f" at σ = {leaderboard.TEN_TIMES}"),
                     regime=f"{_icl_regime('every', profile)}; {_paired(seeds)}")


def _tally(verdict: Verdict, one: str, many: str) -> str:
    """"24 comparisons ...: 20 undecided, 4 no difference that matters" over the judged parts,
    in the book's words (the treatment named where the word has a direction)."""
    judged = _judged(verdict)
    counts: dict[str, int] = {}
    for part in judged:
        word = part.label()
        counts[word] = counts.get(word, 0) + 1
    return f"{len(judged)} {one if len(judged) == 1 else many}: " + ", ".join(f"{n} {word}" for word, n in counts.items())


# ----------------------------------------------------------------------------------------------
# Decoder: ssa_book.lm's cached runs and its verdict.


def _decoder_rows(profile: str) -> list[LedgerRow]:
    experiment = lm_experiment
    command = experiment.regenerate_command(profile)
    benchmark_command = experiment.paper_commands()["lm-eval benchmarks"]
    benchmarks = _missing("benchmarks", profile, benchmark_command,
                          "not measured: the book caches no lm-eval results (at the book's cpu scale the models would score at chance)",
                          "the commands that run them on GPUs are on the {ref}`reproducing page <paper-on-gpus>`")
    try:
        runs = experiment.results(profile)
    except CacheMissError:
        return [_missing("perplexity_id", profile, command), _missing("perplexity_ood", profile, command), benchmarks]
    provenances = [run.provenance for run in runs]
    claims = experiment.claim_verdicts(runs, profile=profile)
    summary = experiment.verdict(runs)
    seeds = tuple(sorted({run.seed for run in runs}))
    rows = []
    for key, split in (("perplexity_id", "in distribution"), ("perplexity_ood", "out of distribution")):
        means = {scorer: float(sum(getattr(run, key) for run in runs if run.scorer == scorer) / max(1, sum(run.scorer == scorer for run in runs)))
                 for scorer in ("softmax", "ssa")}
        numbers = (f"{summary['parameters'] / 1e6:.3g}M parameters, {summary['tokens_trained'] / 1e6:.3g}M tokens: perplexity "
                   f"{means['softmax']:.2f} with softmax, {means['ssa']:.2f} with SSA {split}")
        short = f"perplexity {means['softmax']:.1f} with softmax, {means['ssa']:.1f} with SSA, at {summary['parameters'] / 1e6:.3g}M parameters"
        rows.append(LedgerRow(key, PAPER[key].claim, paper_figure(key), _ours(claims[key], numbers), profile, seeds,
                              claims[key].outcome, None, command, _total_wall_time(provenances), short_summary(claims[key], short),
                              regime=f"{experiment.regime(profile)}; {_paired(seeds)}"))
    return rows + [benchmarks]


# ----------------------------------------------------------------------------------------------
# Encoder: ssa_book.encoder's cached runs and its verdict.


def _encoder_row(profile: str) -> LedgerRow:
    experiment = encoder_experiment
    command = experiment.regenerate_command(profile)
    try:
        runs = experiment.run_all(profile, progress=False)
    except CacheMissError:
        return _missing("probing", profile, command)
    verdict = experiment.probing_verdict(runs)
    provenances = [run.provenance for run in runs]
    headline = verdict.parts[0][1] if verdict.parts else verdict
    short = (f"SSA's mean gain over softmax on the paper's paradigms: {headline.effect:+.2g} {headline.units}"
             if headline.effect is not None else "")
    return LedgerRow("probing", PAPER["probing"].claim, paper_figure("probing"), _ours(verdict), profile,
                     tuple(sorted({run.seed for run in runs})), verdict.outcome, None, command,
                     _total_wall_time(provenances), short_summary(verdict, short), _parts(verdict),
                     f"{experiment.regime(profile)}; {_paired(sorted({run.seed for run in runs}))}")


# ----------------------------------------------------------------------------------------------
# The ledger.


def _chapter_unavailable(keys: Sequence[str], profile: str, error: Exception) -> list[LedgerRow]:
    module = getattr(error, "name", None) or str(error)
    return [LedgerRow(key, PAPER[key].claim, paper_figure(key), f"the chapter's code is not in this version of the package ({module})",
                      profile, (), NOT_TESTED, None, None, summary="The chapter's code is not in this version of the package.")
            for key in keys]


def _sections(root: Path | None) -> dict[str, str]:
    """chapter name -> its _toc.yml entry (``theory`` -> ``notebooks/theory``), whichever page exists."""
    if root is None or not (root / "_toc.yml").is_file():
        return {}

    return {Path(document).stem: document for document in toc_documents(root / "_toc.yml")}


def ledger(profile: str = "cpu", *, results_dir: str | Path | None = None, theorems: bool = True,
           root: Path | None = None) -> list[LedgerRow]:
    """Every row of the ledger, in :data:`PAPER` order, from the cache at ``profile``.

    ``theorems=False`` skips the live theorem checks (seconds of sympy) and reports them as not
    tested. ``root`` is the checkout whose ``_toc.yml`` gives the section links (default: this
    package's checkout, if any)."""
    check_profile(profile)
    groups: list[tuple[tuple[str, ...], Callable[[], list[LedgerRow]]]] = [
        (("theorem_1", "theorem_2"), (lambda: _theorem_rows(profile)) if theorems else
         (lambda: [LedgerRow(key, PAPER[key].claim, paper_figure(key), "not checked (theorems=False)", "live", (), NOT_TESTED, None, None,
                             summary="Not checked.") for key in ("theorem_1", "theorem_2")])),
        (("quantification",), lambda: [_quantification_row(profile)]),
        (("collapse",), lambda: [_collapse_row(profile)]),
        (("linear",), lambda: [_linear_row(profile)]),
        (("perplexity_id", "perplexity_ood", "benchmarks"), lambda: _decoder_rows(profile)),
        (("probing",), lambda: [_encoder_row(profile)]),
        (("alternatives",), lambda: [_alternatives_row(profile)]),
        (("across_shifts",), lambda: [_leaderboard_row(profile)]),
    ]
    rows: list[LedgerRow] = []
    with reading_cache(results_dir):
        for keys, compute in groups:
            try:
                rows += compute()
            except ImportError as error:  # a chapter whose package code has not landed yet
                rows += _chapter_unavailable(keys, profile, error)
    sections = _sections(root if root is not None else paths.repository_root())
    return [dataclasses.replace(row, section=sections.get(PAPER[row.key].chapter)) for row in rows]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def markdown_table(frame, columns: Sequence[str] | Mapping[str, str] | None = None) -> str:
    """``frame`` (or its ``columns``) as a whole MyST table, every row and cell, nothing cut, for
    ``{glue:md}``: a page's table that prose may surround. ``frame`` may be a list of dicts;
    ``columns`` a mapping gives each column its header."""
    import pandas as pd

    frame = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(list(frame))
    headers = dict(columns) if isinstance(columns, Mapping) else None
    columns = [str(column) for column in (frame.columns if columns is None else columns)]
    lines = ["| " + " | ".join(headers[column] if headers else column for column in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(str(value)) for value in row) + " |"
              for row in frame[columns].itertuples(index=False)]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _seeds_text(row: LedgerRow) -> str:
    if row.profile == "live":
        return "computed live, deterministic"
    if not row.seeds:
        return f"profile {row.profile}"
    return f"profile {row.profile}, {_count(len(row.seeds), 'seed')}: {', '.join(map(str, row.seeds))}"


# The page that defines every verdict word (a _toc.yml file entry); each verdict links to it.
GLOSSARY = "notebooks/glossary"


def verdict_link(word: str) -> str:
    """``word`` as a MyST link to the glossary page."""
    return f"{{doc}}`{word} </{GLOSSARY}>`"


def _verdict_cell(row: LedgerRow) -> str:
    """What the row found of the paper's claim, linked to the glossary, with the comparison's own
    words beside it when they say more: "does not hold (SSA worse on 5 of 6 parts, ...)"."""
    words = comparison_words(row)
    claim = verdicts.claim_word(row.verdict)
    return verdict_link(claim) + (f" ({words})" if words and words != claim else "")


def ledger_markdown(rows: Sequence[LedgerRow]) -> str:
    """A MyST table (glue it with ``{glue:md}`` and ``:format: myst``): each claim links to its
    page with a ``{doc}`` role, its verdict to the glossary, and our side ends with the profile
    and seeds it comes from."""
    lines = ["| claim | the paper's claim | paper | ours |", "|---|---|---|---|"]
    for row in rows:
        claim = f"{{doc}}`{row.claim} </{row.section}>`" if row.section else row.claim
        ours = f"{row.ours} *({_seeds_text(row)}{f'; regime: {row.regime}' if row.regime else ''})*"
        lines.append("| " + " | ".join(_cell(text) for text in (claim, _verdict_cell(row), row.paper, ours)) + " |")
    return "\n".join(lines)


_SHORTER = ((r"(\d+) layers of width (\d+)", r"\1 × \2"), (r" at learning rate ", ", lr "), (r"(\d) steps at (\d)", r"\1 steps, lr \2"),
            (r" paired seed", " seed"))
# A row's regime names the paper's beside it: "... n = 1.49 (the paper: 12 layers of width 256, ...); 40 paired seeds".
_PAPER_REGIME = re.compile(r" \(the paper: ([^()]*)\)")
# Which of the paper's experiments each row re-runs, to name the paper's regimes once under the front page's table.
PAPER_EXPERIMENTS = {"quantification": "in-context models", "collapse": "in-context models", "linear": "in-context models",
                     "alternatives": "in-context models", "across_shifts": "in-context models",
                     "perplexity_id": "decoder", "perplexity_ood": "decoder", "probing": "encoder"}


def _shorter(regime: str) -> str:
    for pattern, replacement in _SHORTER:
        regime = re.sub(pattern, replacement, regime)
    return regime


def short_regime(regime: str) -> str:
    """A row's regime in fewer words, for the front page, without the paper's (which
    :func:`paper_regimes_sentence` names once): "4 × 64, 1,000 steps, lr 0.001 (constant), SSA
    from b = 2.72, n = 1.49; 40 seeds a task" (layers × width)."""
    return _shorter(_PAPER_REGIME.sub("", regime))


def paper_regimes_sentence(rows: Sequence[LedgerRow]) -> str:
    """The paper's regimes, once each, for the rows that name one: "The paper trains its in-context
    models 12 × 256, 500,000 steps, lr 0.0001; its decoder ..." ("" when no row names one)."""
    regimes: dict[str, str] = {}
    for row in rows:
        match = _PAPER_REGIME.search(row.regime)
        if match:
            regimes.setdefault(PAPER_EXPERIMENTS.get(row.key, row.claim), _shorter(match.group(1)))
    if not regimes:
        return ""
    return "The paper trains " + "; ".join(f"its {name} {regime}" for name, regime in regimes.items()) + "."


def summary_markdown(rows: Sequence[LedgerRow]) -> str:
    """The front page's table (glue it with ``{glue:md}`` and ``:format: myst``): per claim, a
    ``{doc}`` link to its page, what the book found of the claim (linked to the glossary, with the
    comparison's words), :attr:`LedgerRow.summary` (one short sentence) and the regime in short
    (:func:`short_regime`); :func:`ledger_markdown` has the full rows."""
    lines = ["| claim | the paper's claim | in short | regime (layers × width, training, SSA's start, seeds) |",
             "|---|---|---|---|"]
    for row in rows:
        claim = f"{{doc}}`{row.claim} </{row.section}>`" if row.section else row.claim
        regime = short_regime(row.regime) if row.regime else ("computed live" if row.profile == "live" else "")
        lines.append("| " + " | ".join(_cell(text) for text in (claim, _verdict_cell(row), row.summary or row.ours, regime)) + " |")
    return "\n".join(lines)


def ledger_frame(rows: Sequence[LedgerRow]):
    """The ledger as a pandas DataFrame, one row per claim."""
    import pandas as pd

    return pd.DataFrame([dataclasses.asdict(row) for row in rows]).set_index("key")


# What a count of claims does, by :func:`ssa_book.verdicts.claim_word`: (one, several).
_PREDICATES = {
    verdicts.HOLDS: ("holds", "hold"),
    verdicts.DOES_NOT_HOLD: ("does not hold", "do not hold"),
    verdicts.HOLDS_IN_PART: ("holds in part", "hold in part"),
    verdicts.UNDECIDED: ("is undecided", "are undecided"),
    verdicts.PREMISE_ABSENT: ("lacks its premise", "lack their premise"),
    verdicts.NOT_TESTED: ("is not tested", "are not tested"),
}


def verdict_counts(rows: Sequence[LedgerRow]) -> dict[str, int]:
    """How many rows' claims hold, do not hold, ... (:func:`ssa_book.verdicts.claim_word`), every word counted."""
    words = [verdicts.claim_word(row.verdict) for row in rows]
    return {word: words.count(word) for word in _PREDICATES}


def _listed(phrases: Sequence[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _counted(rows: Sequence[LedgerRow]) -> str:
    """"2 do not hold, 5 are undecided and 1 is not tested" (the words that occur, in :data:`_PREDICATES` order)."""
    return _listed([f"{count} {_PREDICATES[word][count != 1]}" for word, count in verdict_counts(rows).items() if count])


def counts_sentence(rows: Sequence[LedgerRow]) -> str:
    """The claims counted by what the book found of them, the experiments apart from the theorems
    (rows computed live): "Of the 9 experimental claims, none holds: 3 do not hold, 5 are
    undecided and 1 is not tested. The 2 theorems (derivations, checked live): 2 hold."."""
    theorems = [row for row in rows if row.profile == "live"]
    experiments = [row for row in rows if row.profile != "live"]
    sentences = []
    if experiments:
        holding = sum(verdicts.claim_word(row.verdict) == verdicts.HOLDS for row in experiments)
        head = f"Of the {_count(len(experiments), 'experimental claim')}"
        if holding:
            sentences.append(f"{head}, {_counted(experiments)}.")
        else:
            sentences.append(f"{head}, none holds: {_counted(experiments)}.")
    if theorems:
        noun = "The theorem" if len(theorems) == 1 else f"The {len(theorems)} theorems"
        sentences.append(f"{noun} (derivations, checked live): {_counted(theorems)}.")
    return " ".join(sentences)


# The rows whose verdicts compare SSA with softmax (the alternatives row judges a statement about
# other scorers, and the theorem rows are derivations).
SSA_ROWS = ("quantification", "collapse", "linear", "perplexity_id", "perplexity_ood", "probing", "across_shifts")
DECIDED_AGAINST = (verdicts.DOES_NOT_HOLD, verdicts.WORSE, verdicts.NEGLIGIBLE)


def comparison_words(row: LedgerRow) -> str:
    """What the row's comparison found, in the book's words, its parts counted: "SSA worse on 5
    of 6 parts, undecided on 1"; "SSA worse" for a row of one comparison; for a row that compares
    no treatment with softmax (the theorems, the alternatives' statement), its parts counted in
    the claim's words where they differ, else ""."""
    if row.key not in SSA_ROWS:
        if len(set(row.parts)) < 2:
            return ""
        return verdicts.counted_words([(outcome, verdicts.outcome_words(outcome, "")) for outcome in row.parts], of=" parts")
    if not row.parts:
        return verdicts.outcome_words(row.verdict)
    return verdicts.counted_words([(outcome, verdicts.outcome_words(outcome)) for outcome in row.parts], of=" parts")


def _study_caveats(profile: str) -> str:
    """What the powered study says beside its primary answer: what SSA's deficit goes with (the
    form-or-slope reading's conclusion, per quantifier), how many of the primary prompt-error
    verdicts the distribution-free check keeps, and how many directions survive control of false
    discoveries (the other training regimes are in :func:`regime_map_markdown`)."""
    study = icl_study
    compared = study.comparison("SSA vs softmax", profile)
    cache = study.StudyCache(profile, train=False)
    if compared is None or not all(cache.complete(compared, task) for task in compared.tasks):
        return ""
    text, readings = [], {}
    for task in compared.tasks:
        reading = study.starting_point_reading(cache, task)
        if reading is not None:
            readings.setdefault(reading.rsplit("). ", 1)[-1], []).append(icl_tasks.get_task(task).title)
    text += [f"On {' and '.join(tasks)}: {conclusion}" for conclusion, tasks in readings.items()]
    checks = study.bounded_checks(study.verdict_rows([compared], cache))
    if checks:
        kept = sum(row["checked"].outcome == row["verdict"].outcome for row in checks)
        text.append(f"a distribution-free check keeps {kept} of the {len(checks)} decided prompt-error verdicts")
    planned = study.plan(profile, cache=cache)
    primary = [row for row in study.false_discovery_rows(planned, study.verdict_rows(planned, cache))
               if row["comparison"] == compared.name and row["verdict"].outcome in (verdicts.BETTER, verdicts.WORSE)]
    if primary:
        text.append(f"{sum(row['survives'] for row in primary)} of its {len(primary)} decided directions survive control of "
                    f"false discoveries")
    return " ".join(_sentence(part) for part in text)


def regime_map_markdown(profile: str) -> str:
    """The powered study's regime map (:func:`ssa_book.icl.study.regime_map`) as a whole MyST table:
    SSA against softmax in every training regime the study has ("" when the plan at ``profile``
    has only its primary comparison)."""
    study = icl_study
    frame = study.regime_map(study.StudyCache(profile, train=False))
    if len(frame) < 2:
        return ""
    return markdown_table(frame, [column for column in frame.columns if column != "comparison"])


def _rule_error_sentence(profile: str) -> str:
    """The rule's largest false 'better'/'worse' rate under nulls resampled from the powered
    study's own per-seed differences (:func:`ssa_book.icl.study.resampled_nulls`), at the seed counts
    the study judges with; where it exceeds 5%, the verdicts at that seed count are provisional."""
    study = icl_study
    cache = study.StudyCache(profile, train=False)
    table, _ = study.resampled_nulls(study.plan(profile, cache=cache), cache)
    if not len(table):
        return ""
    rates = table[verdicts.FALSE_DIRECTIONAL]
    text = (f"The rule's false 'better'/'worse' rate, under nulls resampled from the study's own seeds, is at most "
            f"{rates.max():.0%}")
    above = sorted(set(table.loc[rates > 1 - verdicts.CONFIDENCE, "pairs"]))
    if above:
        text += f"; above 5% at {', '.join(map(str, above))} pairs, so verdicts on that many seeds are provisional"
    return text + "."


def _seed_counts_text(row: LedgerRow) -> str:
    """"10 seeds", or for a row whose parts ran different seeds "3 and 10 seeds"."""
    counts = row.seed_counts or (len(row.seeds),)
    return _count(counts[0], "seed") if len(counts) == 1 else f"{_listed([str(count) for count in counts])} seeds"


def findings(rows: Sequence[LedgerRow]) -> list[str]:
    """What the book found, in at most six Markdown bullets computed from the rows: the claims
    counted (experiments apart from theorems); each claim decided against the paper, with its parts
    in direction-explicit words and the regime it holds in; the undecided claims with their seeds;
    the claims not tested or whose premise is absent."""
    experiments = [row for row in rows if row.profile != "live"]
    profile = next((row.profile for row in experiments if row.profile in ("smoke", "cpu", "paper")), None)
    caveat = _rule_error_sentence(profile) if profile is not None and any(row.key == "quantification" for row in rows) else ""
    bullets = [f"{counts_sentence(rows)} {caveat}".strip()]
    for row in experiments:
        if row.verdict in DECIDED_AGAINST and len(bullets) < 4:
            regime = f" Regime: {short_regime(row.regime)}." if row.regime else f" Seeds: {len(row.seeds)}, profile {row.profile}."
            caveats = f" {_study_caveats(row.profile)}" if row.key == "quantification" else ""
            found = comparison_words(row) or row.summary.rstrip(".")
            bullets.append(f"**{row.claim}**: the paper's claim does not hold here{f' ({found})' if found else ''}.{regime}{caveats}")
    in_part = [row for row in experiments if row.verdict == verdicts.HOLDS_IN_PART]
    if in_part:
        bullets.append("**Holds in part**: " + "; ".join(f"{row.claim} ({comparison_words(row) or row.summary.rstrip('.')})"
                                                        for row in in_part) + ".")
    undecided = [row for row in experiments if row.verdict in verdicts.OPEN]
    if undecided:
        listed = "; ".join(f"{row.claim} ({_seed_counts_text(row)}{', too few to decide' if row.verdict == verdicts.TOO_FEW_SEEDS else ''})"
                           for row in undecided)
        bullets.append(f"**Undecided**, at the seeds run so far: {listed}. Each row says how many seeds would decide it.")
    untested = [row for row in experiments if row.verdict in (verdicts.NOT_TESTED, verdicts.NOT_LEARNED, verdicts.PREMISE_ABSENT)]
    if untested:
        bullets.append("**Not tested or premise absent**: " + "; ".join(f"{row.claim} ({verdicts.claim_word(row.verdict)})" for row in untested) + ".")
    return bullets[:6]


def findings_markdown(rows: Sequence[LedgerRow]) -> str:
    return "\n".join(f"- {bullet}" for bullet in findings(rows))
