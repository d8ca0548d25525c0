"""What the pages show of the study: the plan, its cost and the progress of its runs as tables and
sentences, the verdicts as tables, the chapter's summary (:func:`summary`), and what a task's
chapter shows of its comparison (:func:`chapter_answer`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from ssa_book.verdicts.words import (
    BETTER,
    NEGLIGIBLE,
    NOT_RUN_YET,
    NOT_TESTED,
    TOO_FEW_SEEDS,
    WORSE,
    claim_phrase,
    not_run_yet,
)
from ssa_book.verdicts.intervals import bounded_mean_interval, rate_interval
from ssa_book.verdicts.claim import MIN_PAIRS
from ssa_book.verdicts.rule import FALSE_DISCOVERY_RATE
from ssa_book.verdicts.verdict import Verdict, withheld_direction
from ssa_book.verdicts.judge import judge
from ssa_book.verdicts.robustness import rests_on_words, seeds_it_rests_on
from ssa_book.icl.study.conduct import StudyCache, comparison, length_trend, regenerate_command
from ssa_book.icl.study.design import (
    ARMS,
    BINARY_ENDPOINT,
    COMPARISONS,
    ENDPOINTS,
    GENERALISES_BELOW,
    LENGTH_TREND,
    LENGTH_TREND_ENDPOINT,
    LENGTH_TREND_TASK,
    LONGER_TRAINING,
    PRIMARY_SEEDS,
    Comparison,
    check_plan,
    error_at,
    generalises,
    needed,
    runs,
)
from ssa_book.icl.study.judging import (
    STARTING_POINT,
    bounded_check_words,
    bounded_checks,
    claim_verdict,
    starting_point_reading,
    verdict,
    verdict_rows,
)
from ssa_book.icl.tasks import QUANTIFIERS, get_task
from ssa_book.icl.verdicts import PROMPT_ERROR_FLIP, error_curve, trivial_baseline
from ssa_book.results.provenance import total_wall_time


def plan_table(comparisons: Sequence[Comparison] = COMPARISONS, *, profile: str = "cpu"):
    """The plan as a table: one row per comparison, with its arms, tasks, seeds and endpoints."""
    import pandas as pd

    check_plan(comparisons, profile=profile)
    return pd.DataFrame(
        [
            {
                "comparison": comparison.name,
                "question": comparison.question,
                "treatment": ARMS[comparison.treatment].description,
                "control": ARMS[comparison.control].description,
                "tasks": ", ".join(comparison.tasks),
                "seeds": f"{comparison.seed_list()[0]}-{comparison.seed_list()[-1]}",
                "endpoints": "; ".join(comparison.endpoints),
                "primary": comparison.primary,
            }
            for comparison in comparisons
        ]
    ).set_index("comparison")


def endpoint_table():
    """The endpoints with the claims they test: direction, threshold, units and reason."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "endpoint": endpoint.name,
                "tasks": ", ".join(endpoint.tasks),
                "claim for the treatment": endpoint.claim.name,
                "threshold": f"{endpoint.claim.threshold:g} {endpoint.claim.units}",
                "why this size": endpoint.claim.reason,
            }
            for endpoint in ENDPOINTS.values()
        ]
    ).set_index("endpoint")


def budget(
    comparisons: Sequence[Comparison] = COMPARISONS,
    seconds_per_run: Mapping[str, float] | None = None,
    *,
    cache: "StudyCache | None" = None,
):
    """A table of each comparison's new runs (those no earlier comparison needs), their cost in
    chapter runs (:meth:`Arm.cost`), and, given ``seconds_per_run`` (``{task: seconds of one
    chapter run on one thread}``), their core-hours; given a ``cache``, the one-thread hours the
    cached ones took (their entries' wall times, training and evaluation). The last row sums them."""
    import pandas as pd

    seen: set[tuple[str, str, int]] = set()
    rows = []
    profile = "cpu" if cache is None else cache.profile
    for planned in comparisons:
        new = [run for run in runs([planned], profile=profile) if run not in seen]
        seen.update(new)
        cost = sum(ARMS[arm].cost() for arm, _, _ in new)
        row = {"comparison": planned.name, "new runs": len(new), "cost (chapter runs)": cost}
        if seconds_per_run is not None:
            row["core-hours"] = sum(ARMS[arm].cost() * seconds_per_run[task] for arm, task, _ in new) / 3600
        if cache is not None:
            found = [found for found in (cache.run(*run) for run in new) if found is not None]
            row["hours on one thread"] = (total_wall_time([run.provenance for run in found]) or 0.0) / 3600
        rows.append(row)
    table = pd.DataFrame(rows).set_index("comparison")
    table.loc["all"] = table.sum(numeric_only=True)
    return table


def compute_sentence(comparisons: Sequence[Comparison], cache: "StudyCache", jobs: int = 2) -> str:
    """The study's measured cost: the one-thread time of its cached runs (each entry's wall time,
    training and evaluation), what that is at ``jobs`` runs at a time, and an estimate for the runs
    still missing, at the seconds per unit of :meth:`Arm.cost` measured on each task so far."""
    planned = runs(comparisons, profile=cache.profile)
    seconds: dict[str, float] = {}
    units: dict[str, float] = {}
    missing: list[tuple[str, str, int]] = []
    for arm, task, seed in planned:
        run = cache.run(arm, task, seed)
        wall = None if run is None or run.provenance is None else run.provenance.wall_time_s
        if run is None:
            missing.append((arm, task, seed))
        elif wall is not None:
            seconds[task] = seconds.get(task, 0.0) + float(wall)
            units[task] = units.get(task, 0.0) + ARMS[arm].cost()
    done = sum(seconds.values())
    text = (
        f"The {len(planned) - len(missing)} cached runs took {done / 3600:.1f} h on one thread each (their entries' wall "
        f"times, training and evaluation): about {done / 3600 / jobs:.1f} h of wall time at {jobs} runs at a time on {jobs} cores."
    )
    if missing:
        unmeasured = sorted({task for _, task, _ in missing if not units.get(task)})
        left = sum(ARMS[arm].cost() * seconds[task] / units[task] for arm, task, _ in missing if units.get(task))
        text += (
            f" The {len(missing)} runs still missing need about {left / 3600:.1f} h more on one thread "
            f"({left / 3600 / jobs:.1f} h at {jobs} at a time), at the speed measured so far"
        )
        text += f"; no run of {', '.join(unmeasured)} is cached to time them." if unmeasured else "."
    return text


def length_trend_sentence(cache: "StudyCache") -> str:
    """The contingency in one plain sentence: undecided, not needed, or needed (and how far along)."""
    trend = length_trend(cache)
    three, ten = (comparison(name) for name in LENGTH_TREND)
    if trend is None:
        cached = cache.cached(three, LENGTH_TREND_TASK) + cache.cached(ten, LENGTH_TREND_TASK)
        return (
            f"The length trend cannot be read yet (the 3 x and 10 x comparisons: "
            f"{not_run_yet(cached, needed(three) + needed(ten))})."
        )
    head = f"The length trend: {trend.with_evidence()}."
    if trend.outcome == NEGLIGIBLE:
        return head + " The difference no longer moves, so the 30 x arms are not trained."
    return (
        head + f" The difference may still move, so the plan adds {LONGER_TRAINING.name} with {LONGER_TRAINING.seeds} "
        f"pairs ({plan_progress([LONGER_TRAINING], cache)})."
        + deciding_cost_sentence(LONGER_TRAINING, LENGTH_TREND_TASK, LENGTH_TREND_ENDPOINT, cache)
    )


def deciding_cost_sentence(compared: Comparison, task: str, endpoint: str, cache: "StudyCache", jobs: int = 2) -> str:
    """What deciding an exploratory comparison would cost: the pairs the rule decides from on
    ``endpoint`` (:attr:`ssa_book.verdicts.verdict.Verdict.no_effect_pairs`), the runs still missing for
    them, and their one-thread hours at the mean wall time of each arm's cached runs. Empty while
    the comparison is incomplete at its planned seeds or already has the pairs the rule needs."""
    if not cache.complete(compared, task):
        return ""
    minimum = max(MIN_PAIRS, verdict(compared, task, endpoint, cache).no_effect_pairs)
    extra = minimum - compared.seeds
    if extra <= 0:
        return ""
    seconds = 0.0
    for arm in (compared.treatment, compared.control):
        walls = [
            float(found.provenance.wall_time_s)
            for found in (cache.run(arm, task, seed) for seed in compared.seed_list())
            if found is not None and found.provenance is not None and found.provenance.wall_time_s is not None
        ]
        if not walls:
            return ""
        seconds += extra * float(np.mean(walls))
    return (
        f" Deciding it ({compared.name}) would take the {minimum} pairs the rule decides from on {endpoint}: {extra} more pairs, "
        f"{2 * extra} runs, about {seconds / 3600:.0f} h on one thread at the mean time of its cached runs "
        f"({seconds / 3600 / jobs:.0f} h at {jobs} at a time)."
    )


def progress_table(comparisons: Sequence[Comparison], cache: StudyCache):
    """One row per comparison: its runs, how many are cached, whether it can be judged, and what
    its cached runs cost (:func:`budget`: those no earlier comparison shares, one thread)."""
    import pandas as pd

    cost = budget(comparisons, cache=cache)
    rows = []
    for compared in comparisons:
        found = cache.cached(compared)
        rows.append(
            {
                "comparison": compared.name,
                "tasks": ", ".join(compared.tasks),
                "seeds": compared.seeds,
                "runs": needed(compared),
                "cached": found,
                "complete": found == needed(compared),
                "runs of its own": int(cost.loc[compared.name, "new runs"]),
                "hours on one thread": float(cost.loc[compared.name, "hours on one thread"]),
            }
        )
    return pd.DataFrame(rows).set_index("comparison")


def progress_sentence(compared: Comparison, cache: StudyCache) -> str:
    """ "not run yet: 12 of 80 runs done; `python -m ssa_book regenerate icl_study ...` computes the rest": what a
    page says of a comparison not judged yet."""
    return (
        f"{not_run_yet(cache.cached(compared), needed(compared))}; "
        f"`{regenerate_command(cache.profile)}` computes the rest"
    )


def verdict_table(rows: Sequence[dict]):
    """:func:`verdict_rows` as a table: outcome (with, where its interval excludes 0 and it says no
    direction, the step of the rule that failed: :func:`ssa_book.verdicts.verdict.withheld_direction`), effect
    in the paper's direction with its 95% interval, pairs, the pairs that would decide an
    inconclusive one (or what is missing), and the seeds a decided one rests on."""
    import pandas as pd

    def interval(verdict):
        return "" if verdict.interval is None else f"[{verdict.interval[0]:+.3g}, {verdict.interval[1]:+.3g}]"

    return pd.DataFrame(
        [
            {
                "comparison": row["comparison"],
                "task": get_task(row["task"]).title,
                "endpoint": row["endpoint"],
                "outcome": _outcome(row["verdict"]),
                "effect": "" if row["verdict"].effect is None else f"{row['verdict'].effect:+.3g}",
                "95% interval": interval(row["verdict"]),
                "pairs": row["verdict"].pairs or "",
                "to decide / missing": row["verdict"].pairs_to_decide()
                or (row["verdict"].detail if row["verdict"].outcome == NOT_TESTED else ""),
                "leaving one seed out": _rests_on(row),
            }
            for row in rows
        ]
    )


def _outcome(verdict: Verdict) -> str:
    """The outcome in the glossary's words, with why it says no direction where its interval excludes 0."""
    withheld = withheld_direction(verdict)
    return f"{verdict.label()} ({withheld})" if withheld else verdict.label()


def _rests_on(row: dict) -> str:
    """Whether a decided verdict of ``row`` survives leaving out any one seed: "survives", or the
    seeds it rests on; "" for an open one."""
    verdict = row["verdict"]
    if verdict.outcome not in (BETTER, WORSE, NEGLIGIBLE):
        return ""
    return rests_on_words(seeds_it_rests_on(verdict, row["seeds"])) or "survives"


def _runs_missing(judged: Verdict) -> str | None:
    """How far the runs of a verdict not judged because some are not cached are ("not run yet: 61 of
    80 runs done", the one state the glossary names for it), else None."""
    detail = judged.detail or ""
    return detail if judged.outcome == NOT_TESTED and detail.startswith(NOT_RUN_YET) else None


def ablation_table(rows: Sequence[dict]):
    """:func:`verdict_rows` in one compact table, the ablation table: one row per comparison, one
    column per task and endpoint, each cell the outcome with its effect and 95% interval in the
    paper's direction ("not run yet: 61 of 80 runs done" while the comparison's runs on that task are
    incomplete; "not tested" where the comparison does not run that task or read that endpoint, the
    glossary's word, as the regime map says it)."""
    import pandas as pd

    table = pd.DataFrame(
        [
            {
                "comparison": row["comparison"],
                "column": f"{get_task(row['task']).title}: {row['endpoint']}",
                "cell": _runs_missing(row["verdict"])
                or f"{row['verdict'].words()} {row['verdict'].estimate()}".rstrip(),
            }
            for row in rows
        ]
    )
    if table.empty:
        return table
    wide = table.pivot(index="comparison", columns="column", values="cell").fillna(NOT_TESTED)
    order = list(dict.fromkeys(row["comparison"] for row in rows))
    columns = list(dict.fromkeys(table["column"]))
    return wide.reindex(index=order, columns=columns)


def chapter_answer(name: str, profile: str) -> dict:
    """What a task's chapter shows of the study's comparison called ``name`` at ``profile``:
    ``{"table": verdict_table(...) or None, "outcome": str, "text": str, "seeds": int}``, the
    outcome and text from :func:`claim_verdict` ("not tested" while no task is complete), with what
    the distribution-free check does to its decided prompt-error verdicts (:func:`bounded_check_words`)."""
    compared = comparison(name, profile)
    if compared is None:
        return {
            "table": None,
            "outcome": NOT_TESTED,
            "seeds": 0,
            "text": f"The study's plan at profile {profile} leaves this comparison out (it trains only the primary "
            'comparison on "every", with the fewest pairs the rule decides on, to exercise the code).',
        }
    cache = StudyCache(profile)
    verdict = claim_verdict(compared, cache)
    if verdict is None:
        outcome, text = NOT_TESTED, f"None of its tasks is complete yet: {progress_sentence(compared, cache)}."
    else:
        outcome, text = verdict.outcome, f"Its answer: **{claim_phrase(verdict.outcome)}** ({verdict.detail})."
    rows = verdict_rows([compared], cache)
    if verdict is not None and (checks := bounded_checks(rows)):
        text += (
            f" On its decided prompt-error verdicts, a check that assumes nothing about how the paired differences are "
            f"distributed (added after reading) {bounded_check_words(checks)}."
        )
    return {"table": verdict_table(rows), "outcome": outcome, "text": text, "seeds": compared.seeds}


def _directions(found: Sequence[dict]) -> list[dict]:
    """The rows of :func:`false_discovery_rows` whose interval and threshold decide a direction: those
    that keep it after control of false discoveries and those that lose it (and read undecided)."""
    return [
        row for row in found if row["verdict"].outcome in (BETTER, WORSE) or row["verdict"].uncontrolled is not None
    ]


def false_discovery_table(found: Sequence[dict]):
    """The directions the interval and threshold decide among :func:`false_discovery_rows`, as a
    table: raw and adjusted p, whether the direction survives the adjustment, and the verdict after it."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "comparison": row["comparison"],
                "task": get_task(row["task"]).title,
                "endpoint": row["endpoint"],
                "family": row["family"],
                "verdict": row["verdict"].label(),
                "p": f"{row['p']:.2g}",
                "adjusted p": f"{row['adjusted p']:.2g}",
                "survives adjustment": "yes" if row["survives"] else "no",
            }
            for row in _directions(found)
        ],
        columns=["comparison", "task", "endpoint", "family", "verdict", "p", "adjusted p", "survives adjustment"],
    )


def false_discovery_sentence(found: Sequence[dict]) -> str:
    """Per family, how many of the directions the interval and threshold decide keep their word
    under control of false discoveries, and how many lose it and read undecided."""
    if not found:
        return "No verdict of the study has enough pairs for a signed-rank test yet."
    parts = []
    for family in ("primary", "other comparisons"):
        members = [row for row in found if row["family"] == family]
        if not members:
            continue
        directions = _directions(members)
        lost = sum(row["verdict"].uncontrolled is not None for row in directions)
        parts.append(
            f"{'the primary comparisons' if family == 'primary' else 'the other comparisons'}: "
            + (
                f"the 1 direction the interval and threshold decide {'does not keep' if lost else 'keeps'} "
                if len(directions) == 1
                else f"{len(directions) - lost} of the {len(directions)} directions the interval and threshold decide keep "
            )
            + f"an adjusted p below {FALSE_DISCOVERY_RATE:g} ({len(members)} tests)"
            + (f", {lost} read undecided" if lost and len(directions) > 1 else "")
        )
    return (
        "Controlling false discoveries within each family of tests (Benjamini and Hochberg), " + "; ".join(parts) + "."
    )


def bounded_check_table(checks: Sequence[dict]):
    """:func:`bounded_checks` as a table: each verdict by the rule and under the bounded interval,
    with its effect and interval."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "comparison": row["comparison"],
                "task": get_task(row["task"]).title,
                "endpoint": row["endpoint"],
                "by the rule": f"{row['verdict'].words()} {row['verdict'].estimate()}",
                "bounded interval": f"{row['checked'].words()} {row['checked'].estimate()}",
            }
            for row in checks
        ],
        columns=["comparison", "task", "endpoint", "by the rule", "bounded interval"],
    )


def bounded_check_sentence(checks: Sequence[dict], cache: StudyCache) -> str:
    """How many verdicts of :func:`bounded_checks` keep their outcome, the interval the bounded
    check gives :data:`PRIMARY_SEEDS` pairs that agree exactly, and the starting-point reading on
    each quantifier with the four verdicts checked that way."""
    if not checks:
        return "No verdict on a prompt-error endpoint is decided yet."
    low, high = bounded_mean_interval(np.zeros(PRIMARY_SEEDS), PROMPT_ERROR_FLIP)
    text = (
        f"On the decided prompt-error verdicts, the check {bounded_check_words(checks)}. "
        f"Its price for assuming nothing: {PRIMARY_SEEDS} pairs that agree exactly give [{low:+.2f}, {high:+.2f}], "
        f'wider than the threshold, so no {PRIMARY_SEEDS}-pair comparison can be "no difference that matters" under it.'
    )
    for task in QUANTIFIERS:
        checked = starting_point_reading(cache, task, bounded=True)
        if checked is not None:
            text += f" With the four verdicts of the form-or-slope reading checked this way, on {get_task(task).title}: {checked}"
    return text


def plan_progress(comparisons: Sequence[Comparison], cache: StudyCache) -> str:
    """How far the runs of ``comparisons`` are, in the book's one wording: "not run yet: 826 of 992
    runs" (:func:`ssa_book.verdicts.words.not_run_yet`), or "all 992 runs cached"."""
    every_run = runs(comparisons, profile=cache.profile)
    found = sum(cache.run(arm, task, seed) is not None for arm, task, seed in every_run)
    return not_run_yet(found, len(every_run)) if found < len(every_run) else f"all {len(every_run)} runs cached"


def pending_cells_sentence(names: Sequence[str], cache: StudyCache) -> str:
    """Which cells (comparison and task) of the comparisons ``names`` are still incomplete, so that a
    page shows them as not run yet: "1 of their 4 cells is not run yet and shows below with how many
    of its runs are in (SSA vs softmax, lr 1e-4, 10 x steps on "some": 57 of 80)." ("All their runs
    are cached." for none; a comparison the plan at the cache's profile leaves out is left out)."""
    planned = [found for name in names if (found := comparison(name, cache.profile)) is not None]
    cells = [(compared, task) for compared in planned for task in compared.tasks]
    pending = [(compared, task) for compared, task in cells if not cache.complete(compared, task)]
    if not pending:
        return "All their runs are cached."
    one = len(pending) == 1
    listed = "; ".join(
        f"{compared.name} on {get_task(task).title}: {cache.cached(compared, task)} of {needed(compared, task)}"
        for compared, task in pending
    )
    return (
        f"{len(pending)} of their {len(cells)} cells {'is' if one else 'are'} not run yet and "
        f"{'shows' if one else 'show'} below with how many of {'its' if one else 'their'} runs are in ({listed})."
    )


def outcome_counts(found: Sequence[Verdict]) -> str:
    """``found`` counted by what the rule made of them, the decided apart from the open, an exploratory
    one never among the decided: "25 decided (5 SSA worse, 16 no difference that matters, 4 sharper
    softmax worse), 20 undecided, 20 exploratory (fewer pairs than the rule decides from: estimates,
    no verdict), 9 not run yet"."""
    counts: dict[str, dict[str, int]] = {}
    for judged in found:
        kind = "decided" if judged.outcome in (BETTER, WORSE, NEGLIGIBLE) else judged.outcome
        word = judged.word()
        if _runs_missing(judged):
            kind = word = NOT_RUN_YET
        counts.setdefault(kind, {})
        counts[kind][word] = counts[kind].get(word, 0) + 1
    said = []
    if "decided" in counts:
        said.append(
            f"{sum(counts['decided'].values())} decided ("
            + ", ".join(f"{n} {word}" for word, n in counts.pop("decided").items())
            + ")"
        )
    for kind, words in counts.items():
        note = " (fewer pairs than the rule decides from: estimates, no verdict)" if kind == TOO_FEW_SEEDS else ""
        said.append(", ".join(f"{n} {word}" for word, n in words.items()) + note)
    return ", ".join(said)


def summary(comparisons: Sequence[Comparison], cache: StudyCache) -> str:
    """The chapter's summary: how many of the plan's verdicts have their runs cached and their outcomes
    (:func:`outcome_counts`),
    the primary question's answer, on each quantifier where they are complete whether SSA's
    difference goes with its starting slope (:func:`starting_point_reading`), and how many decided
    prompt-error verdicts the bounded check keeps (:func:`bounded_checks`)."""
    rows = verdict_rows(comparisons, cache)
    text = (
        f"Of the {len(rows)} verdicts the plan names at profile {cache.profile}, "
        f"{sum(row['verdict'].outcome != NOT_TESTED for row in rows)} have their runs cached (the plan: "
        f"{plan_progress(comparisons, cache)}): {outcome_counts([row['verdict'] for row in rows])}."
    )
    primary = [row for row in rows if row["comparison"] == comparisons[0].name and row["verdict"].outcome != NOT_TESTED]
    if primary:
        text += " The primary question: " + " ".join(row["verdict"].sentence() for row in primary)
    else:
        text += (
            " The primary question is not answered yet: its runs are still being computed, and none of its verdicts "
            "is read before all its seeds are in on a task."
        )
    if all(comparison(name, cache.profile) is not None for name in STARTING_POINT):
        readings = [starting_point_reading(cache, task) for task in QUANTIFIERS]
        text += "".join(f" {reading}" for reading in readings if reading)
    checks = bounded_checks(rows)
    if checks:
        checked_primary = [
            f"{get_task(row['task']).title}, {row['endpoint']}: {row['checked'].words()}"
            for row in checks
            if row["comparison"] == comparisons[0].name
        ]
        text += (
            f" A check that assumes nothing about how the paired differences are distributed (the bounded interval, "
            f"after the verdicts), on the decided prompt-error verdicts, {bounded_check_words(checks)}"
            + (f"; the primary question's under it: {'; '.join(checked_primary)}." if checked_primary else ".")
        )
    return text


def generalising_table(comparisons: Sequence[Comparison], cache: StudyCache):
    """For each comparison read at "generalises at σ = 10", each task where its runs are
    complete (every run of both arms cached, as for its verdicts), and each arm: how many seeds generalise (prompt error below :data:`GENERALISES_BELOW` at sigma
    10), the share and its 95% Wilson interval (:func:`ssa_book.verdicts.intervals.rate_interval`)."""
    import pandas as pd

    rows = []
    for compared in comparisons:
        if "generalises at σ = 10" not in compared.endpoints:
            continue
        for task in (task for task in compared.tasks if cache.complete(compared, task)):
            for arm in (compared.treatment, compared.control):
                found = [cache.run(arm, task, seed) for seed in compared.seed_list()]
                successes = int(sum(generalises(run, task) for run in found))
                share, low, high = rate_interval(successes, len(found), method="wilson")
                rows.append(
                    {
                        "comparison": compared.name,
                        "task": get_task(task).title,
                        "arm": arm,
                        "generalise": successes,
                        "seeds": len(found),
                        "share": share,
                        "95% low": low,
                        "95% high": high,
                    }
                )
    return pd.DataFrame(
        rows, columns=["comparison", "task", "arm", "generalise", "seeds", "share", "95% low", "95% high"]
    )


GENERALISATION_CUTS = (0.05, GENERALISES_BELOW, 0.2)  # the cuts the binary endpoint is shown at


def generalisation_cut_table(compared: Comparison, cache: StudyCache, cuts: Sequence[float] = GENERALISATION_CUTS):
    """How the binary endpoint "generalises at σ = 10" of ``compared`` moves with the cut that
    defines it (prompt error below ``cut`` at σ = 10), on each task where its runs are complete:
    each arm's share of seeds that generalise, the verdict by the rule at that cut, and the prompt
    error of the predictor that ignores the prompt (the majority class) at σ = 10, the cut
    below which "generalises" means doing better than knowing nothing. The declared cut is
    :data:`GENERALISES_BELOW`."""
    import pandas as pd

    claim = ENDPOINTS[BINARY_ENDPOINT].claim
    rows = []
    for task in (task for task in compared.tasks if cache.complete(compared, task) and task in QUANTIFIERS):
        arms = {
            arm: [cache.run(arm, task, seed) for seed in compared.seed_list()]
            for arm in (compared.treatment, compared.control)
        }
        errors = {arm: np.array([error_at(10.0)(run, task) for run in found]) for arm, found in arms.items()}
        sigmas = np.asarray(arms[compared.control][0].sweep("sigma_x").values, dtype=float)
        trivial = float(
            error_curve(arms[compared.control], task, "sigma_x", trivial_baseline(task))[:, sigmas == 10.0].mean()
        )
        for cut in cuts:
            treated, controlled = ((errors[arm] < cut).astype(float) for arm in (compared.treatment, compared.control))
            named = dataclasses.replace(
                claim,
                name=f"{compared.name}, {get_task(task).title}: generalises below {cut:g}",
                treatment=compared.treatment_label,
            )
            verdict = judge(named, treated, controlled)
            rows.append(
                {
                    "task": get_task(task).title,
                    "cut": f"{cut:g}" + (" (declared)" if cut == GENERALISES_BELOW else ""),
                    f"{compared.treatment_label} generalise": f"{int(treated.sum())} of {len(treated)}",
                    f"{compared.control} generalise": f"{int(controlled.sum())} of {len(controlled)}",
                    "verdict": verdict.label(),
                    "effect": verdict.estimate(),
                    "majority class's error at σ = 10": f"{trivial:.3f}",
                }
            )
    return pd.DataFrame(rows)
