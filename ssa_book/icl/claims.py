"""The paper's in-context claims (quantification, collapse, linear functions) as rows of the
ledger: the chapters' cached runs judged by :mod:`ssa_book.icl.verdicts`, replaced by the powered
study's answer (:mod:`ssa_book.icl.study`) on the tasks where its runs are complete."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from ssa_book.verdicts.words import NOT_TESTED, claim_word, not_run_yet
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.families import combine
from ssa_book.claims import (
    PAPER_REGIME,
    LedgerRow,
    PaperClaim,
    comparison_words,
    differing,
    factored,
    headline_of,
    missing,
    ours,
    paired,
    paper_figure,
    parts_of,
    plural,
    sentence,
    short_summary,
)
from ssa_book.icl import experiments, tasks as icl_tasks, verdicts as icl_verdicts_module
from ssa_book.icl.study import (
    conduct as study_conduct,
    curves as study_curves,
    design as study_design,
    judging as study_judging,
    regimes as study_regimes,
    report as study_report,
)
from ssa_book.results.errors import CacheMissError
from ssa_book.results.provenance import total_wall_time


def _icl_runs(experiments, task: str, profile: str, scorers=("softmax", "ssa")) -> tuple[dict | None, list[dict]]:
    """({scorer: runs} or None if not all cached, provenances)."""
    try:
        runs = experiments.load_runs(task, profile=profile, scorers=scorers, seeds=experiments.SEEDS)
    except CacheMissError:
        return None, []
    return runs, [run.provenance for seed_runs in runs.values() for run in seed_runs]


def _icl_regime(task: str, profile: str) -> str:
    """The in-context chapters' training regime on ``task``, the paper's beside it."""
    return study_design.ARMS["ssa"].regime(task, profile)


def _titles(tasks: Sequence[str]) -> str:
    return ", ".join(icl_tasks.get_task(task).title for task in tasks)


def _tasks_regime(tasks: Sequence[str], profile: str) -> str:
    """The training regime of a row over ``tasks``: the one regime they share, or each regime with
    the tasks trained in it ('... 1,000 steps ... ("every", "some"); ... 1,500 steps ... (linear functions)')."""
    by_regime: dict[str, list[str]] = {}
    for task in tasks:
        by_regime.setdefault(_icl_regime(task, profile), []).append(task)
    if len(by_regime) == 1:
        return next(iter(by_regime))
    return "; ".join(f"{regime} ({_titles(trained)})" for regime, trained in by_regime.items())


def _icl_row(
    key: str, profile: str, tasks: Sequence[str], judge: Callable, numbers: Callable, short: Callable
) -> LedgerRow:
    """A row from the cached ICL runs of every task in ``tasks`` (all must be cached):
    ``judge(icl_verdicts, runs_by_task)`` gives the verdict, ``numbers(icl_verdicts, runs_by_task)``
    a text of our numbers and ``short(icl_verdicts, runs_by_task)`` the few of them the summary gives."""
    icl_verdicts = icl_verdicts_module
    # The tasks' chapter: icl_quantification, icl_linear, or (all three tasks) icl_collapse.
    command = experiments.regenerate_command(profile, tasks[0] if len(tasks) < 3 else None)
    runs_by_task, provenances = {}, []
    for task in tasks:
        runs, provenance = _icl_runs(experiments, task, profile)
        if runs is None:
            return missing(key, CLAIMS[key], profile, command, f"{task}: results not in the cache")
        runs_by_task[task] = runs
        provenances += provenance
    verdict = judge(icl_verdicts, runs_by_task)
    return LedgerRow(
        key,
        CLAIMS[key].claim,
        paper_figure(CLAIMS[key]),
        ours(verdict, numbers(icl_verdicts, runs_by_task)),
        profile,
        tuple(experiments.SEEDS),
        verdict.outcome,
        None,
        command,
        total_wall_time(provenances),
        short_summary(verdict, short(icl_verdicts, runs_by_task)),
        parts_of(verdict),
        f"{_tasks_regime(tasks, profile)}; {paired(experiments.SEEDS)}",
        headline=headline_of(verdict),
    )


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
    """ "mean error under the shift, softmax vs SSA: 0.26 vs 0.60 (every), ..."."""
    parts = []
    for task, runs in runs_by_task.items():
        for shift in shifts:
            means = _shifted_means(icl_verdicts, runs, task, shift)
            where = (
                icl_tasks.get_task(task).title
                if icl_tasks.get_task(task).classification
                else SHIFT_NAMES.get(shift, shift)
            )
            parts.append(f"{means['softmax']:.2f} vs {means['ssa']:.2f} ({where})")
    return "mean error under the shift, softmax vs SSA: " + ", ".join(parts)


def quantification_row(profile: str) -> LedgerRow:
    row = answered_by_study(
        _icl_row(
            "quantification",
            profile,
            icl_tasks.QUANTIFIERS,
            lambda icl_verdicts, runs: icl_verdicts.quantification_verdict(runs),
            lambda icl_verdicts, runs: _shifted_errors(icl_verdicts, runs, "sigma_x"),
            lambda icl_verdicts, runs: _short_errors(icl_verdicts, runs, ("sigma_x",)),
        ),
        "SSA vs softmax",
        profile,
    )
    return dataclasses.replace(row, finding=study_finding(profile), parts_note=distribution_free_note(profile))


def distribution_free_note(profile: str) -> str:
    """What the distribution-free check does to the powered study's decided prompt-error verdicts,
    beside the claim's parts (:func:`ssa_book.icl.study.bounded_check_words`): "a distribution-free check
    keeps 1 of 4 prompt-error directions" ("" until the primary comparison's runs are complete, or when
    it keeps all)."""
    compared = study_conduct.comparison("SSA vs softmax", profile)
    cache = study_conduct.StudyCache(profile, train=False)
    if compared is None or not all(cache.complete(compared, task) for task in compared.tasks):
        return ""
    checks = study_judging.bounded_checks(study_judging.verdict_rows([compared], cache))
    kept = sum(row["checked"].outcome == row["verdict"].outcome for row in checks)
    return f"a distribution-free check {study_judging.bounded_check_words(checks)}" if kept < len(checks) else ""


def study_finding(profile: str) -> str:
    """What the powered study says beside its primary answer, for the front page's findings: what
    SSA's deficit goes with (the form-or-slope reading's conclusion, per quantifier), how many of the
    primary prompt-error verdicts the distribution-free check keeps, and how many directions survive
    control of false discoveries ("" until the primary comparison's runs are complete; the other
    training regimes are in :func:`ssa_book.ledger.regime_map_markdown`)."""
    compared = study_conduct.comparison("SSA vs softmax", profile)
    cache = study_conduct.StudyCache(profile, train=False)
    if compared is None or not all(cache.complete(compared, task) for task in compared.tasks):
        return ""
    text, readings = [], {}
    for task in compared.tasks:
        reading = study_judging.starting_point_reading(cache, task)
        if reading is not None:
            readings.setdefault(reading.rsplit("). ", 1)[-1], []).append(icl_tasks.get_task(task).title)
    text += [
        f"On {' and '.join(tasks)}, {conclusion[0].lower()}{conclusion[1:]}" for conclusion, tasks in readings.items()
    ]
    checks = study_judging.bounded_checks(study_judging.verdict_rows([compared], cache))
    if checks:
        lost = [
            f"{icl_tasks.get_task(row['task']).title}, {row['endpoint']} ({study_judging.not_kept_words(row)})"
            for row in study_judging.not_kept(checks)
        ]
        text.append(
            f"on the decided prompt-error verdicts, a distribution-free check (added after reading) "
            f"{study_judging.bounded_check_words(checks)}" + (f"; it does not keep: {'; '.join(lost)}" if lost else "")
        )
    primary = [row for row in study_judging.verdict_rows([compared], cache) if row["verdict"].adjusted_p is not None]
    lost = [row for row in primary if row["verdict"].uncontrolled is not None]
    if lost:
        text.append(
            f"{len(lost)} of its directions do not survive control of false discoveries over the primary family "
            f"and read undecided"
        )
    return " ".join(sentence(part) for part in text)


def linear_row(profile: str) -> LedgerRow:
    return answered_by_study(
        _icl_row(
            "linear",
            profile,
            ("linear",),
            lambda icl_verdicts, runs: icl_verdicts.linear_verdict(runs["linear"]),
            lambda icl_verdicts, runs: "; ".join(
                _shifted_errors(icl_verdicts, runs, shift) for shift in ("sigma_x", "sigma_ab")
            ),
            lambda icl_verdicts, runs: _short_errors(icl_verdicts, runs, ("sigma_x", "sigma_ab")),
        ),
        "SSA vs softmax, linear functions",
        profile,
    )


def _study_effects(verdict: Verdict, endpoint: str | None = None) -> str:
    """ "every, error at σ = 10: -0.17 [-0.27, -0.07]; ..." for each judged part of ``verdict``,
    or only for the parts at ``endpoint`` when it names some."""
    judged = [(name, part) for name, part in verdict.parts if part.interval is not None]
    chosen = [(name, part) for name, part in judged if endpoint and endpoint in name] or judged
    return factored([(name, part.estimate()) for name, part in chosen])


def answered_by_study(row: LedgerRow, comparison: str, profile: str) -> LedgerRow:
    """``row``, judged on the chapter's few seeds, replaced by the powered study's answer
    (:func:`ssa_book.icl.study.claim_verdict`) on the tasks where the study's runs are complete; while
    none is, ``row`` with how many of the study's runs are cached."""
    compared = study_conduct.comparison(comparison, profile)
    if compared is None:  # not in the plan at this profile
        return row
    cache = study_conduct.StudyCache(profile, train=False)
    verdict = study_judging.claim_verdict(compared, cache)
    if verdict is None:
        pending = f"The powered study ({compared.seeds} paired seeds a task): {study_report.progress_sentence(compared, cache)}."
        return dataclasses.replace(row, ours=f"{row.ours} {pending}")
    provenances = [
        cache.run(arm, task, seed).provenance
        for task in compared.tasks
        if cache.complete(compared, task)
        for seed in compared.seed_list()
        for arm in (compared.treatment, compared.control)
    ]
    chapter = (
        f"The chapter's {plural(len(row.seeds), 'seed')} alone: {comparison_words(row) or claim_word(row.verdict)}."
    )
    numbers = f"Powered study (the chapter '{study_conduct.TITLE}'), {compared.seeds} paired seeds a task"
    pending = "".join(
        f"; {icl_tasks.get_task(task).title}: {not_run_yet(cache.cached(compared, task), study_design.needed(compared, task))}"
        for task in compared.tasks
        if not cache.complete(compared, task)
    )
    return LedgerRow(
        row.key,
        row.claim,
        row.paper,
        f"{ours(verdict, numbers)} {chapter}",
        profile,
        compared.seed_list(),
        verdict.outcome,
        None,
        study_conduct.regenerate_command(profile),
        total_wall_time(provenances),
        short_summary(
            verdict,
            f"powered study (positive: in SSA's favour), {_study_effects(verdict, study_regimes.REGIME_MAP_ENDPOINT)}{pending}",
        ),
        parts_of(verdict),
        f"{study_design.ARMS[compared.treatment].regime(compared.tasks[0], profile)}; {compared.seeds} paired seeds a task",
        headline=headline_of(verdict, study_regimes.REGIME_MAP_ENDPOINT),
    )


def collapse_row(profile: str) -> LedgerRow:
    def numbers(icl_verdicts, runs_by_task):
        masses = ", ".join(
            f"{task} softmax {_mean_mass(runs, 'softmax'):.3g}, SSA {_mean_mass(runs, 'ssa'):.3g}"
            for task, runs in runs_by_task.items()
        )
        return f"attention share on an injected extreme value: {masses}"

    def judge(icl_verdicts, runs_by_task):
        try:  # the logit spreads complete the premise's measurement; without them, the attention shares alone
            spreads = {
                task: experiments.load_logit_spreads(task, profile=profile, seeds=experiments.SEEDS)
                for task in runs_by_task
            }
        except CacheMissError:
            spreads = None
        return icl_verdicts.collapse_verdict(runs_by_task, spreads)

    def short(icl_verdicts, runs_by_task):
        premises = {
            icl_tasks.get_task(task).title: icl_verdicts.collapse_premise(runs) for task, runs in runs_by_task.items()
        }
        shares = ", ".join(f"{premise['share']:.2g} ({title})" for title, premise in premises.items())
        seeds = max(premise["seeds"] for premise in premises.values())
        return (
            f"softmax's most-drawn head gives an injected extreme value {shares} of its attention, against a cut "
            f"of {icl_verdicts.COLLAPSE_SHARE:g} set after reading, over {seeds} seeds"
        )

    return with_premise_made_to_hold(_icl_row("collapse", profile, icl_tasks.TASKS, judge, numbers, short), profile)


def with_premise_made_to_hold(row: LedgerRow, profile: str) -> LedgerRow:
    """The collapse row, with the study's variant where the premise can hold (no LayerNorm before
    the first attention layer): softmax's first-layer largest weight along sigma there, and
    whether SSA then generalises better (:func:`ssa_book.icl.study.claim_verdict`), as a second part
    of the claim once the variant's runs are complete on a task."""
    compared = study_conduct.comparison(study_design.PREMISE_COMPARISON, profile)
    if compared is None or row.verdict == NOT_TESTED:
        return row
    cache = study_conduct.StudyCache(profile, train=False)
    variant = study_judging.claim_verdict(compared, cache)
    if variant is None:
        pending = (
            f"Where the input's scale reaches the logits (no LayerNorm before the first attention layer), the powered study: "
            f"{study_report.progress_sentence(compared, cache)}."
        )
        return dataclasses.replace(row, ours=f"{row.ours} {pending}")
    weights, last = [], []
    for task in (task for task in compared.tasks if cache.complete(compared, task)):
        curves = study_curves.arm_curves(
            [compared.control], task, compared.seed_list(), study_curves.first_layer(cache, "max_weight")
        )
        _, values = curves[compared.control]
        weights.append(
            f"from {values[:, 0].mean():.2f} to {values[:, -1].mean():.2f} on {icl_tasks.get_task(task).title}"
        )
        last.append(values[:, -1].mean())
    measured = (
        "without its first LayerNorm, softmax's largest first-layer attention weight grows along σ "
        + " and ".join(weights)
    )
    in_short = (
        f"without the first LayerNorm, its largest first-layer weight reaches {max(last):.2f} at the largest σ "
        f"(the share on an injected value was not measured there)"
    )
    combined = combine(
        row.claim,
        {
            "as trained (LayerNorm before every attention layer)": Verdict(row.claim, row.verdict),
            "no first LayerNorm, SSA vs softmax": variant,
        },
    )
    seeds = tuple(sorted(set(row.seeds) | set(compared.seed_list())))
    changed = differing(
        _icl_regime(compared.tasks[0], profile),
        PAPER_REGIME.sub("", study_design.ARMS[compared.treatment].regime(compared.tasks[0], profile)),
    )
    regime = (
        f"{row.regime}; without the first LayerNorm on {_titles(compared.tasks)}"
        f"{'' if changed == 'the same' else f': {changed}'}; {paired(compared.seed_list())}"
    )
    return dataclasses.replace(
        row,
        ours=f"{row.ours} {sentence(measured)} {ours(variant)}",
        verdict=combined.outcome,
        seeds=seeds,
        seed_counts=(len(row.seeds), len(compared.seed_list())),
        summary=sentence(f"{row.summary.rstrip('.')}; {in_short}; variant: {variant.words()}"),
        parts=parts_of(combined),
        regime=regime,
        headline=row.headline or headline_of(variant, study_regimes.REGIME_MAP_ENDPOINT),
    )


def _mean_mass(runs: dict, scorer: str) -> float:
    return float(np.mean([np.mean(run.injection.injected_mass) for run in runs[scorer]]))


CLAIMS: dict[str, PaperClaim] = {
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
}


def in_context_rows(profile: str) -> list[LedgerRow]:
    return [quantification_row(profile), collapse_row(profile), linear_row(profile)]
