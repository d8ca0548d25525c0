"""SSA against softmax in every training regime the study has (:data:`REGIME_MAP`): the regime
map the chapter and the front page show, its verdict rows and its takeaway."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ssa_book.verdicts.words import NEGLIGIBLE, NOT_RUN_YET, NOT_TESTED, TOO_FEW_SEEDS, not_run_yet, outcome_words
from ssa_book.verdicts.verdict import Verdict, withheld_direction
from ssa_book.verdicts.robustness import rests_on_words, seeds_it_rests_on
from ssa_book.icl.study.conduct import StudyCache, comparison, longer_training_needed
from ssa_book.icl.study.design import (
    _SSA_B0,
    ABLATION_SEEDS,
    ARMS,
    ENDPOINTS,
    FIRST_SEED,
    LONGER_TRAINING,
    SCHEDULE_WORDS,
    Arm,
    Comparison,
    needed,
)
from ssa_book.icl.study.judging import (
    RAISED_AFTER_READING,
    bounded_checks,
    not_kept,
    not_kept_words,
    read_before_raise,
    readings_words,
    rule_then,
    verdict,
    verdict_rows,
)
from ssa_book.icl.tasks import QUANTIFIERS, get_task


# The comparisons of SSA with softmax that differ only in how both are trained or where SSA starts:
# the regimes the primary answer is set against, in the order the regime map lists them.
REGIME_MAP = (
    "SSA vs softmax",
    "SSA from b = 1 vs softmax",
    "SSA vs softmax, 3 x steps",
    "SSA vs softmax, 10 x steps",
    "SSA vs softmax, 30 x steps",
    "SSA vs softmax, 4 x parameters",
    "SSA vs softmax, lr 1e-4, 10 x steps",
    "SSA vs softmax, warm-up + cosine",
)
REGIME_MAP_ENDPOINT = "error at σ = 10"


def _regime_settings(arm: Arm, task: str, profile: str) -> dict[str, str]:
    """The arm's training settings in short, by name: learning rate and schedule, steps, width, SSA's start."""
    train = arm.experiment(task, FIRST_SEED, profile).train
    start = dict(train.model.scorer_kwargs)
    return {
        "learning rate": f"lr {train.learning_rate:g} ({SCHEDULE_WORDS[train.schedule]})",
        "steps": f"{train.train_steps:,} steps",
        "width": f"width {train.model.n_embd}",
        "start": f"SSA from b = {start.get('b', _SSA_B0):.3g}",
    }


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
    found = [
        comparison(name, cache.profile)
        if name != LONGER_TRAINING.name
        else (LONGER_TRAINING if cache.profile != "smoke" and longer_training_needed(cache) else None)
        for name in REGIME_MAP
    ]
    return [compared for compared in found if compared is not None]


def regime_map(cache: "StudyCache", endpoint: str = REGIME_MAP_ENDPOINT):
    """SSA against softmax in every training regime the study has (:data:`REGIME_MAP`), at
    ``endpoint``: one row per regime, its settings in short, its paired seeds (the plan's count, "40
    planned (10 cached)" while its runs are not all cached; for a comparison whose seeds were raised
    after reading, that, which rule read its ten seeds then and what they read, with the estimates of
    an exploratory reading or a direction: :func:`read_before_raise`),
    and per quantifier the verdict in the book's words with its estimate in the table's one format
    (:func:`interval_spec`), or how many runs are cached while it is incomplete. A comparison the plan at the cache's profile leaves out is left out (the 30 x one until the
    length trend calls for it)."""
    import pandas as pd

    found_cells = {
        (compared.name, task): verdict(compared, task, endpoint, cache)
        for compared in _regime_comparisons(cache)
        if endpoint in compared.endpoints
        for task in compared.tasks
        if cache.complete(compared, task)
    }
    spec = interval_spec(list(found_cells.values()), ENDPOINTS[endpoint].claim.threshold)
    rows = []
    for compared in _regime_comparisons(cache):
        if endpoint not in compared.endpoints:
            continue
        chapters = compared.treatment == "ssa"
        regime = _short_regime(
            ARMS[compared.treatment], compared.tasks[0], cache.profile, None if chapters else ARMS["ssa"]
        )
        readings = [
            found
            for task in compared.tasks
            if compared.name in RAISED_AFTER_READING
            and (found := read_before_raise(cache, compared.name, task, endpoint)) is not None
        ]
        # a comparison whose runs are not all cached: its count is the plan's, beside the pairs there are
        incomplete = not all(cache.complete(compared, task) for task in compared.tasks)
        notes = [_cached_pairs(compared, cache)] if incomplete else []
        if readings:
            rule = rule_then(compared.name, endpoint)
            notes.append(
                f"raised after reading; at {ABLATION_SEEDS}{', ' + rule if rule else ''}: {readings_words(readings, spec)}"
            )
        row = {
            "regime": f"the chapters': {regime}" if chapters else regime,
            "comparison": compared.name,
            "paired seeds": f"{compared.seeds}{' planned' if incomplete else ''}"
            + (f" ({'; '.join(notes)})" if notes else ""),
        }
        for task in QUANTIFIERS:
            if task not in compared.tasks:
                row[get_task(task).title] = NOT_TESTED
            elif (compared.name, task) in found_cells:
                found = found_cells[(compared.name, task)]
                lost = not_kept(bounded_checks([{"verdict": found, "endpoint": endpoint}]))
                notes = [
                    note
                    for note in (
                        withheld_direction(found),
                        fragility(found, compared.seed_list()),
                        *map(not_kept_words, lost),
                    )
                    if note
                ]
                row[get_task(task).title] = f"{found.label()}, {found.estimate(spec)}" + (
                    f" ({'; '.join(notes)})" if notes else ""
                )
            else:
                row[get_task(task).title] = not_run_yet(cache.cached(compared, task), needed(compared, task))
        rows.append(row)
    return pd.DataFrame(rows)


def _cached_pairs(compared: Comparison, cache: "StudyCache") -> str:
    """How many of ``compared``'s pairs have both runs cached on the tasks where not all are: "10
    cached", or with the task where another is complete ('30 cached on "some"')."""
    counts = {
        get_task(task).title: sum(
            cache.run(compared.treatment, task, seed) is not None
            and cache.run(compared.control, task, seed) is not None
            for seed in compared.seed_list()
        )
        for task in compared.tasks
        if not cache.complete(compared, task)
    }
    where = len(counts) < len(compared.tasks)
    return ", ".join(f"{count} cached" + (f" on {title}" if where else "") for title, count in counts.items())


def interval_spec(found: Sequence[Verdict], threshold: float, fewest: int = 2, most: int = 6) -> str:
    """The one format of a table's estimates (``"+.2f"``, ``"+.3f"``, ...): the fewest decimals, from
    ``fewest``, at which no interval end of ``found`` that lies inside ``threshold`` rounds onto or past
    it (-0.0988 against 0.1 needs "+.3f": "-0.10" would read as a bound on the threshold)."""
    if threshold <= 0:
        raise ValueError(f"threshold must be positive; got {threshold!r}")
    ends = [end for one in found if one.interval is not None for end in one.interval if abs(end) < threshold]
    for decimals in range(fewest, most + 1):
        if all(abs(round(end, decimals)) < threshold for end in ends):
            return f"+.{decimals}f"
    return f"+.{most}f"


def fragility(found: Verdict, seeds: Sequence[int]) -> str:
    """ "it rests on seed 104" (or "leaving out any one of 26 of its 40 seeds alone changes its word")
    when leaving one of ``seeds`` out (the seeds of ``found``'s pairs, in order) changes a decided
    verdict's word (:func:`ssa_book.verdicts.robustness.seeds_it_rests_on`); "" otherwise."""
    rests = seeds_it_rests_on(found, seeds)
    if len(rests) > 3:
        return f"leaving out any one of {len(rests)} of its {len(seeds)} seeds alone changes its word"
    return f"it {rests_on_words(rests)}" if rests else ""


def regime_rows(cache: "StudyCache", endpoint: str = REGIME_MAP_ENDPOINT) -> list[dict]:
    """The verdict rows (:func:`verdict_rows`) of the regime map's comparisons at ``endpoint``, on
    the quantifiers each runs on: judged where complete, "not tested" with what is missing; a row of a
    comparison whose seeds were raised after reading and whose runs are not all cached carries what its
    first seeds read before the raise under ``"read_before_raise"`` (:func:`read_before_raise`), so a
    figure can draw them."""
    rows = [row for row in verdict_rows(_regime_comparisons(cache), cache) if row["endpoint"] == endpoint]
    for row in rows:
        if row["verdict"].outcome == NOT_TESTED and row["comparison"] in RAISED_AFTER_READING:
            row["read_before_raise"] = read_before_raise(cache, row["comparison"], row["task"], endpoint)
    return rows


def _beside(
    rows: Sequence[dict], outcome: str, seed_note: bool = True, checked_above: Collection[str] = (), brief: bool = False
) -> str:
    """What goes beside the count of the cells of ``rows`` judged ``outcome``: for directions, how
    many the distribution-free check keeps where it does not keep all it can test (unless every cell it
    does not keep is of a comparison in ``checked_above``, whose check a sentence before this one
    states); for "no difference that matters", whether their seeds were raised after reading
    (:data:`~ssa_book.icl.study.judging.SEED_AMENDMENTS`), the small directions said beside it, how many
    intervals exclude 0 with no direction said (the rule's tests withhold it:
    :func:`~ssa_book.verdicts.verdict.withheld_direction`) and (with ``seed_note``) how many of these a
    single seed left out changes: " (1 kept by the distribution-free check)", " (seeds raised after
    reading; 2 intervals excluding 0, no direction said; 1 that one left-out seed changes)";
    ``brief``: " (...; 2 excluding 0, no direction said; 1 seed-dependent)" ("" for none)."""
    found = [row for row in rows if row["verdict"].outcome == outcome]
    said = []
    if outcome != NEGLIGIBLE:
        checks = bounded_checks(found)
        lost = not_kept(checks)
        if lost and not all(row["comparison"] in checked_above for row in lost):
            said.append(f"{len(checks) - len(lost)} kept by the distribution-free check")
        return f" ({'; '.join(said)})" if said else ""
    raised = sum(row["comparison"] in RAISED_AFTER_READING for row in found)
    if raised:
        said.append(("" if raised == len(found) else f"{raised} with ") + "seeds raised after reading")
    small = [direction for row in found if (direction := row["verdict"].small_direction())]
    said.extend(f"{small.count(direction)} {direction}" for direction in dict.fromkeys(small))
    withheld = [row for row in found if withheld_direction(row["verdict"])]
    if withheld:
        intervals = "" if brief else " interval" + "s" * (len(withheld) > 1)
        said.append(f"{len(withheld)}{intervals} excluding 0, no direction said")
    changed = sum(bool(seeds_it_rests_on(row["verdict"], row["seeds"])) for row in found)
    if changed and seed_note:
        said.append(f"{changed} {'seed-dependent' if brief else 'that one left-out seed changes'}")
    return f" ({'; '.join(said)})" if said else ""


def regime_takeaway(
    rows: Sequence[dict], detail: bool = True, seed_note: bool | None = None, checked_above: Collection[str] = ()
) -> str:
    """The regime map in one sentence, from :func:`regime_rows`: how many of its cells have SSA
    worse, better or no different from softmax, each with what goes beside it (:func:`_beside`, with
    ``seed_note``, by default ``detail``, and ``checked_above``), and
    how many are still open; with ``detail`` counted among all the map's cells, those the plan does
    not test named ("2 SSA worse (...), ...; 3 not run yet, 4 not tested.", a figure's caption, whose
    cells the counts add up to), without it the planned ones' counts alone, the notes beside them in
    brief ("2 SSA worse (...), ...; 3 not run yet."), for a box of few words."""
    seed_note = detail if seed_note is None else seed_note
    outcomes = [row["verdict"].outcome for row in rows if row["verdict"].outcome != NOT_TESTED]
    if not outcomes:
        return "No regime of the study is complete yet."
    pending = sum(row["verdict"].outcome == NOT_TESTED for row in rows)
    compared = [
        LONGER_TRAINING if name == LONGER_TRAINING.name else comparison(name)
        for name in {row["comparison"] for row in rows}
    ]
    unplanned = sum(len(set(QUANTIFIERS) - set(found.tasks)) for found in compared)
    counted = [
        f"{outcomes.count(outcome)} {outcome_words(outcome, 'SSA')}"
        + ("" if outcome == TOO_FEW_SEEDS else _beside(rows, outcome, seed_note, checked_above, brief=not detail))
        for outcome in sorted(set(outcomes), key=lambda outcome: (outcome == TOO_FEW_SEEDS, outcomes.index(outcome)))
    ]
    still_open = [f"{pending} {NOT_RUN_YET}"] * bool(pending) + [f"{unplanned} {NOT_TESTED}"] * bool(
        detail and unplanned
    )
    return ", ".join(counted) + (f"; {', '.join(still_open)}." if still_open else ".")
