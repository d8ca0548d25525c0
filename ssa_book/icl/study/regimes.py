"""SSA against softmax in every training regime the study has (:data:`REGIME_MAP`): the regime
map the chapter and the front page show, its verdict rows and its takeaway."""

from __future__ import annotations

from collections.abc import Sequence

from ssa_book.verdicts.words import NEGLIGIBLE, NOT_RUN_YET, NOT_TESTED, TOO_FEW_SEEDS, not_run_yet, outcome_words
from ssa_book.verdicts.verdict import Verdict, withheld_direction
from ssa_book.verdicts.robustness import rests_on_words, seeds_it_rests_on
from ssa_book.icl.study.conduct import StudyCache, comparison, longer_training_needed
from ssa_book.icl.study.design import _SSA_B0, ARMS, FIRST_SEED, LONGER_TRAINING, SCHEDULE_WORDS, Arm, Comparison, needed
from ssa_book.icl.study.judging import bounded_checks, not_kept, not_kept_words, verdict, verdict_rows
from ssa_book.icl.tasks import QUANTIFIERS, get_task


# The comparisons of SSA with softmax that differ only in how both are trained or where SSA starts:
# the regimes the primary answer is set against, in the order the regime map lists them.
REGIME_MAP = ("SSA vs softmax", "SSA from b = 1 vs softmax", "SSA vs softmax, 3 x steps", "SSA vs softmax, 10 x steps",
              "SSA vs softmax, 30 x steps", "SSA vs softmax, 4 x parameters", "SSA vs softmax, lr 1e-4, 10 x steps",
              "SSA vs softmax, warm-up + cosine")
REGIME_MAP_ENDPOINT = "error at σ = 10"


def _regime_settings(arm: Arm, task: str, profile: str) -> dict[str, str]:
    """The arm's training settings in short, by name: learning rate and schedule, steps, width, SSA's start."""
    train = arm.experiment(task, FIRST_SEED, profile).train
    start = dict(train.model.scorer_kwargs)
    return {"learning rate": f"lr {train.learning_rate:g} ({SCHEDULE_WORDS[train.schedule]})", "steps": f"{train.train_steps:,} steps",
            "width": f"width {train.model.n_embd}", "start": f"SSA from b = {start.get('b', _SSA_B0):.3g}"}


def _short_regime(arm: Arm, task: str, profile: str, reference: Arm | None = None) -> str:
    """The arm's settings in short; with ``reference``, only those that differ from its ("as the
    chapters'" when none does)."""
    settings = _regime_settings(arm, task, profile)
    if reference is not None:
        theirs = _regime_settings(reference, task, profile)
        settings = {name: value for name, value in settings.items() if value != theirs[name]}
        if not settings:
            return "as the chapters'"
    return ", ".join(settings.values())


def _regime_comparisons(cache: "StudyCache") -> list[Comparison]:
    """The comparisons of :data:`REGIME_MAP` the plan at the cache's profile carries out (the
    30 x one once the length trend calls for it)."""
    found = [comparison(name, cache.profile) if name != LONGER_TRAINING.name else (
        LONGER_TRAINING if cache.profile != "smoke" and longer_training_needed(cache) else None) for name in REGIME_MAP]
    return [compared for compared in found if compared is not None]


def regime_map(cache: "StudyCache", endpoint: str = REGIME_MAP_ENDPOINT):
    """SSA against softmax in every training regime the study has (:data:`REGIME_MAP`), at
    ``endpoint``: one row per regime, its settings in short, and per quantifier the verdict in the
    book's words with its estimate and pairs, or how many runs are cached while it is incomplete.
    A comparison the plan at the cache's profile leaves out is left out (the 30 x one until the
    length trend calls for it)."""
    import pandas as pd

    rows = []
    for compared in _regime_comparisons(cache):
        if endpoint not in compared.endpoints:
            continue
        chapters = compared.treatment == "ssa"
        regime = _short_regime(ARMS[compared.treatment], compared.tasks[0], cache.profile, None if chapters else ARMS["ssa"])
        row = {"regime": f"the chapters': {regime}" if chapters else regime,
               "comparison": compared.name, "paired seeds": compared.seeds}
        for task in QUANTIFIERS:
            if task not in compared.tasks:
                row[get_task(task).title] = NOT_TESTED
            elif cache.complete(compared, task):
                found = verdict(compared, task, endpoint, cache)
                lost = not_kept(bounded_checks([{"verdict": found, "endpoint": endpoint}]))
                notes = [note for note in (withheld_direction(found), fragility(found, compared.seed_list()),
                                           *map(not_kept_words, lost)) if note]
                row[get_task(task).title] = f"{found.label()}, {found.estimate()}" + (f" ({'; '.join(notes)})" if notes else "")
            else:
                row[get_task(task).title] = not_run_yet(cache.cached(compared, task), needed(compared, task))
        rows.append(row)
    return pd.DataFrame(rows)


def fragility(found: Verdict, seeds: Sequence[int]) -> str:
    """"it rests on seed 104" (or "leaving out any one of 26 of its 40 seeds alone changes its word")
    when leaving one of ``seeds`` out (the seeds of ``found``'s pairs, in order) changes a decided
    verdict's word (:func:`ssa_book.verdicts.robustness.seeds_it_rests_on`); "" otherwise."""
    rests = seeds_it_rests_on(found, seeds)
    if len(rests) > 3:
        return f"leaving out any one of {len(rests)} of its {len(seeds)} seeds alone changes its word"
    return f"it {rests_on_words(rests)}" if rests else ""


def regime_rows(cache: "StudyCache", endpoint: str = REGIME_MAP_ENDPOINT) -> list[dict]:
    """The verdict rows (:func:`verdict_rows`) of the regime map's comparisons at ``endpoint``, on
    the quantifiers each runs on: judged where complete, "not tested" with what is missing."""
    return [row for row in verdict_rows(_regime_comparisons(cache), cache) if row["endpoint"] == endpoint]


def _beside(rows: Sequence[dict], outcome: str, detail: bool = True) -> str:
    """What goes beside the count of the cells of ``rows`` judged ``outcome``: for directions, how
    many the distribution-free check keeps where it does not keep all it can test (with ``detail``);
    for "no difference that matters", those whose interval excludes 0 with (``detail``) their regimes
    and how many a single seed left out changes: " (1 kept by the distribution-free check)", " (2 below
    0 (warm-up + cosine), 1 changed by dropping a seed)", without ``detail`` " (2 below 0, 1 changed
    by dropping a seed)" ("" for none)."""
    found = [row for row in rows if row["verdict"].outcome == outcome]
    said = []
    if outcome != NEGLIGIBLE:
        checks = bounded_checks(found)
        lost = not_kept(checks)
        if detail and lost:
            said.append(f"{len(checks) - len(lost)} kept by the distribution-free check")
    else:
        below = [row for row in found if row["verdict"].interval[1] < 0]
        above = [row for row in found if row["verdict"].interval[0] > 0]
        for side, excluding in (("below", below), ("above", above)):
            if excluding:
                regimes = ", ".join(dict.fromkeys(row["comparison"].split(", ", 1)[-1] for row in excluding))
                changed = sum(bool(seeds_it_rests_on(row["verdict"], row["seeds"])) for row in excluding)
                said.append(f"{len(excluding)} {side} 0" + (f" ({regimes})" if detail else "")
                            + (f", {changed} changed by dropping a seed" if changed else ""))
    return f" ({'; '.join(said)})" if said else ""


def regime_takeaway(rows: Sequence[dict], detail: bool = True) -> str:
    """The regime map in one sentence, from :func:`regime_rows`: how many of its cells have SSA
    worse, better or no different from softmax, each with what goes beside it (:func:`_beside`: how
    many directions the distribution-free check keeps, how many "no difference that matters"
    intervals exclude 0 and how many of these a seed left out changes), and how many are still open."""
    outcomes = [row["verdict"].outcome for row in rows if row["verdict"].outcome != NOT_TESTED]
    if not outcomes:
        return "No regime of the study is complete yet."
    pending = sum(row["verdict"].outcome == NOT_TESTED for row in rows)
    counted = [f"{outcomes.count(outcome)} {outcome_words(outcome, 'SSA')}" + ("" if outcome == TOO_FEW_SEEDS else _beside(rows, outcome, detail))
               for outcome in sorted(set(outcomes), key=lambda outcome: (outcome == TOO_FEW_SEEDS, outcomes.index(outcome)))]
    return f"Of {len(rows)} regime-and-task cells, {', '.join(counted)}" + (f"; {pending} {NOT_RUN_YET}." if pending else ".")
