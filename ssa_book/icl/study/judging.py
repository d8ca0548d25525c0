"""The study's verdicts, read from the cache: one per comparison, task and endpoint
(:func:`verdict_rows`), a comparison's answer (:func:`claim_verdict`), whether SSA's difference
goes with its form or its starting slope (:func:`starting_point_reading`), and the checks of the
rule: the verdicts its two amendments changed (:func:`rule_amendment_changes`), the bounded
interval (:func:`bounded_checks`), control of false discoveries (:func:`false_discovery_rows`) and
nulls resampled from the study's own differences (:func:`resampled_nulls`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ssa_book.verdicts.words import BETTER, NEGLIGIBLE, NOT_TESTED, OPEN, TOO_FEW_SEEDS, WORSE, not_run_yet
from ssa_book.verdicts.claim import MIN_PAIRS, Claim, no_effect_pairs
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge as rule_judge, not_tested
from ssa_book.verdicts.families import combine, control_false_discoveries, false_discoveries
from ssa_book.verdicts.robustness import bounded_check
from ssa_book.verdicts.intervals import bounded_mean_interval
from ssa_book.verdicts.rule import no_effect
from ssa_book.verdicts.readings import NO_DIFFERENCE, NOT_SEPARATED, form_or_slope, slope_sentence
from ssa_book.verdicts.words import counted_words
from ssa_book.claims import before_flip_minimum_verdict, without_minimums
from ssa_book.verdicts.power import FALSE_DIRECTIONAL, SIMULATIONS, resampled_null_rates, resampled_null_table
from ssa_book.icl.study.conduct import StudyCache, comparison, plan
from ssa_book.icl.study.design import (
    ABLATION_SEEDS,
    BINARY_ENDPOINT,
    ENDPOINTS,
    LENGTH_AND_SIZE_COMPARISONS,
    REGIME_COMPARISONS,
    SSA_SLOPE_AT_ZERO,
    Comparison,
    judge,
    needed,
    outcomes,
)
from ssa_book.icl.tasks import get_task


def verdict_rows(comparisons: Sequence[Comparison], cache: StudyCache) -> list[dict]:
    """One row per comparison x task x endpoint, in the plan's order: the verdict of the rule
    (:func:`judge`) once every run of the comparison on that task is cached, else "not tested"
    with how many are. Each row: ``comparison, task, endpoint, verdict, seeds`` (the seeds of its
    pairs, in order)."""
    return [
        {
            "comparison": compared.name,
            "task": task,
            "endpoint": endpoint,
            "verdict": verdict,
            "seeds": compared.seed_list(),
        }
        for compared in comparisons
        for task in compared.tasks
        for endpoint, verdict in _task_verdicts(compared, task, cache).items()
    ]


# The families of false-discovery control: the pre-declared primary comparisons, and all the others
# (chosen after the study's results were read: ssa_book.analysis_changes, 0ef9865).
FAMILIES = ("primary", "other comparisons")


def family(compared: Comparison) -> str:
    """The family whose false discoveries are controlled together: the pre-declared primary
    comparisons, or all the others."""
    return FAMILIES[0] if compared.primary else FAMILIES[1]


def controlled_verdicts(cache: StudyCache) -> dict[tuple[str, str, str], Verdict]:
    """Every comparison x task x endpoint of the plan whose runs are complete, judged
    (:func:`judge`) with false discoveries controlled in the words within its :func:`family`
    (:func:`ssa_book.verdicts.families.control_false_discoveries`): a direction that does not survive reads
    undecided. Computed once per cache."""
    if getattr(cache, "_controlled", None) is None:
        raw = {
            (compared.name, task, endpoint): (family(compared), judge(compared, task, endpoint, cache))
            for compared in plan(cache.profile, cache=cache)
            for task in compared.tasks
            if cache.complete(compared, task)
            for endpoint in compared.endpoints
        }
        found = {}
        for name in FAMILIES:
            keys = [key for key, (member, _) in raw.items() if member == name]
            found.update(zip(keys, control_false_discoveries([raw[key][1] for key in keys])))
        cache._controlled = found
    return cache._controlled


def verdict(compared: Comparison, task: str, endpoint: str, cache: StudyCache) -> Verdict:
    """The verdict of ``compared`` on ``task`` at ``endpoint`` as the pages give it: from
    :func:`controlled_verdicts`, or judged alone for a comparison the plan at the cache's profile
    leaves out."""
    return controlled_verdicts(cache).get((compared.name, task, endpoint)) or judge(compared, task, endpoint, cache)


def _task_verdicts(compared: Comparison, task: str, cache: StudyCache) -> dict[str, Verdict]:
    """``{endpoint: verdict}`` of ``compared`` on ``task``: judged when its runs there are complete."""
    if cache.complete(compared, task):
        return {endpoint: verdict(compared, task, endpoint, cache) for endpoint in compared.endpoints}
    missing = not_run_yet(cache.cached(compared, task), needed(compared, task))
    return {
        endpoint: dataclasses.replace(not_tested(ENDPOINTS[endpoint].claim), detail=missing)
        for endpoint in compared.endpoints
    }


def _as_planned(claim: Claim) -> Claim:
    """``claim`` as the plan first judged it: the paired t interval, "no effect" from the rule's
    fewest pairs (before the two changes to the rule for outcomes that flip: ssa_book.analysis_changes)."""
    return dataclasses.replace(claim, binary=False, largest_flip=None)


def rule_amendment_changes(comparisons: Sequence[Comparison], cache: StudyCache):
    """The verdicts that the amendments to the rule for outcomes that flip changed from what the plan's
    rule gave (:func:`_as_planned`): a table with both outcomes and intervals, each named by its own
    treatment, one row per comparison, task, endpoint and pairs where they differ before control of
    false discoveries (a word that control alone moved is not these amendments'; empty when none
    differs). "as judged" is the verdict as the pages give it, after that control. A comparison whose
    seeds were raised after reading (:data:`RAISED_AFTER_READING`) has its verdicts on the
    :data:`ABLATION_SEEDS` seeds read before the raise as rows of their own, at those pairs, once they are
    cached, whether or not its raised runs are: the amendments moved them before the raise."""
    import pandas as pd

    rows = []
    for compared in comparisons:
        read = dataclasses.replace(compared, seeds=min(ABLATION_SEEDS, compared.seeds))
        for task in compared.tasks:
            judged_at = []
            if compared.name in RAISED_AFTER_READING and read.seeds < compared.seeds and cache.complete(read, task):
                judged_at.append((read, judge))  # no false-discovery family holds the ten-seed verdicts
            if cache.complete(compared, task):
                judged_at.append((compared, verdict))
            for judged_by, judging in judged_at:
                for endpoint in compared.endpoints:
                    judged = judging(judged_by, task, endpoint, cache)
                    claim = dataclasses.replace(
                        _as_planned(ENDPOINTS[endpoint].claim), treatment=compared.treatment_label
                    )
                    as_planned = rule_judge(claim, *outcomes(judged_by, task, endpoint, cache))
                    amended = (
                        judged.uncontrolled or judged.outcome
                    )  # the amended rule's word, before false-discovery control
                    # "undecided" and "too few seeds to decide" were one word under the plan's rule
                    if as_planned.outcome != amended and not {as_planned.outcome, amended} <= set(OPEN):
                        rows.append(
                            {
                                "comparison": compared.name,
                                "task": get_task(task).title,
                                "endpoint": endpoint,
                                "pairs": judged_by.seeds,
                                "as first planned": f"{as_planned.words()} {as_planned.estimate()}",
                                "as judged": f"{judged.words()} {judged.estimate()}",
                            }
                        )
    return pd.DataFrame(rows, columns=["comparison", "task", "endpoint", "pairs", "as first planned", "as judged"])


def claim_verdict(compared: Comparison, cache: StudyCache) -> Verdict | None:
    """The study's answer to ``compared``'s question, as the chapters and the front page give it:
    its endpoints on every task whose runs are complete, combined (:func:`ssa_book.verdicts.families.combine`,
    one part per task and endpoint); the tasks still incomplete are named in its detail, with how
    many of their runs are cached. ``None`` while no task is complete."""
    parts, pending = {}, []
    for task in compared.tasks:
        if cache.complete(compared, task):
            parts.update(
                {
                    f"{get_task(task).title}, {endpoint}": verdict
                    for endpoint, verdict in _task_verdicts(compared, task, cache).items()
                }
            )
        else:
            pending.append(
                f"{get_task(task).title}: {not_run_yet(cache.cached(compared, task), needed(compared, task))}"
            )
    if not parts:
        return None
    combined = combine(f"{compared.name}: {compared.question}", parts)
    return dataclasses.replace(combined, detail="; ".join([combined.detail, *pending]))


# The comparisons that separate SSA's functional form from its starting slope (n0 b0 at zero), in
# the order :func:`starting_point_reading` names them.
STARTING_POINT = ("SSA vs softmax", "SSA from b = 1 vs softmax", "sharper softmax vs softmax", "SSA vs sharper softmax")
STARTING_POINT_ENDPOINT = "error at σ = 10"


# The day the pair minimum for directions on outcomes that flip was made (its entry in
# ssa_book.analysis_changes.CHANGES, ssa_book.claims.FLIP_MINIMUM_SET_AFTER_READING): ten-seed verdicts read
# before it were read by the rule before it.
FLIP_MINIMUM_MADE_ON = "2026-12-04"


@dataclasses.dataclass(frozen=True)
class SeedAmendment:
    """An amendment that raised comparisons' seeds from :data:`ABLATION_SEEDS` after their verdicts at
    that count had been read."""

    commit: str  # its entry in ssa_book.analysis_changes.CHANGES
    comparisons: tuple[str, ...]
    # the day the ten-seed verdicts of its comparisons were read (the results commits that recorded them),
    # which decides the rule they were read by: not the day of the raise, which may come after a change of rule
    read_on: str

    @property
    def before_flip_minimum(self) -> bool:
        """Whether its ten-seed verdicts were read before the pair minimum for directions on outcomes
        that flip, and so by the rule before it (:func:`ssa_book.claims.before_flip_minimum_verdict`)."""
        return self.read_on < FLIP_MINIMUM_MADE_ON


# The record of the seed amendments, the one source of the comparisons whose seeds were raised after reading.
# Their ten seeds were all read on days before the flip minimum's (4e737d3, 2026-12-04), although 3db5f6e
# raised the last two after it: the starting point's in 6d42749, warm-up + cosine in d71c95b and lr 1e-4 in
# 3ec9f33 and 71847cd, 3 x steps in d71c95b and 4 x parameters in 91e900e ("SSA worse" then, both).
SEED_AMENDMENTS = (
    SeedAmendment("70fbf62", STARTING_POINT[1:], "2026-12-02"),
    SeedAmendment("dd6a276", REGIME_COMPARISONS, "2026-12-03"),
    SeedAmendment("3db5f6e", LENGTH_AND_SIZE_COMPARISONS, "2026-12-03"),
)
RAISED_AFTER_READING = tuple(name for amendment in SEED_AMENDMENTS for name in amendment.comparisons)


def _amendment(name: str) -> SeedAmendment:
    """The seed amendment that raised comparison ``name``; ValueError naming ``name`` for one none raised."""
    found = next((one for one in SEED_AMENDMENTS if name in one.comparisons), None)
    if found is None:
        raise ValueError(
            f"name must be a comparison whose seeds an amendment raised ({', '.join(RAISED_AFTER_READING)}); got {name!r}"
        )
    return found


def read_before_raise(cache: StudyCache, name: str, task: str, endpoint: str) -> Verdict | None:
    """The verdict of comparison ``name`` (one of :data:`RAISED_AFTER_READING`) on ``task`` at
    ``endpoint`` as it was read before its seeds were raised: on its first :data:`ABLATION_SEEDS` seeds,
    by the rule of the day they were read (:func:`ssa_book.claims.before_flip_minimum_verdict` for those
    read before that minimum: :attr:`SeedAmendment.before_flip_minimum`); None where those seeds' runs are not all cached or the plan lacks it."""
    amendment = _amendment(name)
    compared = comparison(name, cache.profile)
    if compared is None:
        return None
    before = dataclasses.replace(compared, seeds=min(ABLATION_SEEDS, compared.seeds))
    if not cache.complete(before, task):
        return None
    read = judge(before, task, endpoint, cache)
    return before_flip_minimum_verdict(ENDPOINTS[endpoint].claim, read) if amendment.before_flip_minimum else read


def rule_then(name: str, endpoint: str) -> str:
    """Which rule :func:`read_before_raise` reads comparison ``name`` by at ``endpoint``, where it is
    not today's: "before the 36-pair minimum" for ten seeds read before the prompt-error minimum, on
    an outcome it covers; "" for today's rule (the rule every other word of the pages is read by)."""
    amendment = _amendment(name)
    claim = ENDPOINTS[endpoint].claim
    if amendment.before_flip_minimum and claim.largest_flip is not None:
        return f"before the {no_effect_pairs(claim)}-pair minimum"
    return ""


def readings_words(readings: Sequence[Verdict], spec: str | None = None) -> str:
    """What ``readings`` (:func:`read_before_raise`) said: "undecided", "both undecided", "undecided
    on 2 of 3, sharper softmax worse on 1"; with ``spec``, where one is exploratory (whose word always
    comes with its estimate) or a direction (whose size the reader needs beside today's word), each
    estimate after them in that format: "SSA worse, -0.455 [-0.721, -0.188]", "exploratory (10 pairs) on
    1 of 2, undecided on 1, -0.450 [...] / -0.080 [...]"."""
    labels = [found.label() for found in readings]
    if len(set(labels)) == 1:
        said = f"{'both' if len(labels) == 2 else f'all {len(labels)}'} {labels[0]}" if len(labels) > 1 else labels[0]
    else:
        said = counted_words([(found.outcome, found.label()) for found in readings])
    estimated = any(found.outcome in (TOO_FEW_SEEDS, BETTER, WORSE) for found in readings)
    return f"{said}, {' / '.join(found.estimate(spec) for found in readings)}" if spec and estimated else said


def seeds_raised_note(cache: StudyCache, cells: Sequence[tuple[str, str]], endpoint: str) -> str:
    """Beside words that rest on ``cells`` (``(comparison, task)``) at ``endpoint``, what the cells
    whose comparison an amendment raised (:data:`SEED_AMENDMENTS`) read before it, and by which rule
    where not today's (:func:`rule_then`): "at 10 seeds, before the 36-pair minimum: undecided on 2 of
    3, sharper softmax worse on 1 (the analysis-changes page lists the raise)" ("" for none, or none
    with its ten-seed runs cached)."""
    by_rule: dict[str, list[Verdict]] = {}
    for name, task in cells:
        if name in RAISED_AFTER_READING and (found := read_before_raise(cache, name, task, endpoint)) is not None:
            by_rule.setdefault(rule_then(name, endpoint), []).append(found)
    if not by_rule:
        return ""
    said = "; ".join(f"{', ' + rule if rule else ''}: {readings_words(readings)}" for rule, readings in by_rule.items())
    return f"at {ABLATION_SEEDS} seeds{said} (the analysis-changes page lists the raise)"


def _noted(sentence: str, note: str) -> str:
    """``sentence`` with "seeds raised after reading" in brackets before its first colon (before its
    full stop without one) and ``note`` after its last clause ("" ``note``: ``sentence``)."""
    if not note:
        return sentence
    at = sentence.find(":") if ":" in sentence else len(sentence.rstrip("."))
    return f"{sentence[:at]} (seeds raised after reading){sentence[at:].rstrip('.')}; {note}."


def starting_point_reading(cache: StudyCache, task: str, *, bounded: bool = False) -> str | None:
    """Whether SSA's difference from softmax on ``task`` (at :data:`STARTING_POINT_ENDPOINT`) goes
    with its starting slope rather than its form, read from the four comparisons of
    :data:`STARTING_POINT`; ``None`` until all four are complete on ``task``. ``bounded``: with
    each verdict decided again by :func:`ssa_book.verdicts.robustness.bounded_check` (the robustness check).

    The reading is :func:`ssa_book.verdicts.readings.form_or_slope`'s, with SSA started at b = 1 as the gentler
    start."""
    compared = [comparison(name) for name in STARTING_POINT]
    if not all(cache.complete(c, task) for c in compared):
        return None
    ssa, from_b1, sharper, versus_sharper = (verdict(c, task, STARTING_POINT_ENDPOINT, cache) for c in compared)
    if bounded:
        flip = ENDPOINTS[STARTING_POINT_ENDPOINT].claim.largest_flip
        ssa, from_b1, sharper, versus_sharper = (
            bounded_check(v, flip) for v in (ssa, from_b1, sharper, versus_sharper)
        )

    def said(label: str, verdict: Verdict) -> str:
        # the pairs that would decide are the rule's count (an undecided verdict's words say it already); the
        # bounded interval has none
        deciding = (
            f"; {verdict.pairs_to_decide()} pairs would decide it"
            if verdict.outcome == TOO_FEW_SEEDS and not bounded
            else ""
        )
        return f"{label}: {verdict.words()} ({verdict.estimate()}{deciding})"

    facts = "; ".join(
        [
            said("SSA vs softmax", ssa),
            said("SSA from b = 1 vs softmax", from_b1),
            said(f"softmax of {SSA_SLOPE_AT_ZERO:.2f} x the logits vs softmax", sharper),
            said("SSA vs that sharper softmax", versus_sharper),
        ]
    )
    head = f"Form or starting slope, on {get_task(task).title} ({STARTING_POINT_ENDPOINT}, effects in the paper's direction): {facts}."
    named = {
        "SSA vs softmax": ssa,
        "SSA from b = 1 vs softmax": from_b1,
        "the sharper softmax vs softmax": sharper,
        "SSA vs the sharper softmax": versus_sharper,
    }
    still_open = "; ".join(
        f"{label} is {found.label()} ({found.estimate()})"
        for label, found in named.items()
        if found.outcome not in (BETTER, WORSE, NEGLIGIBLE)
    )
    reading = form_or_slope(ssa, sharper, versus_sharper, gentler=from_b1)
    if reading == NOT_SEPARATED and sharper.outcome == ssa.outcome and from_b1.outcome == NEGLIGIBLE:
        # what is decided is consistent with the slope, no more (the gentler start's word rests on seeds raised
        # after reading, which the note after the sentence says); the open comparison, said first so that no
        # shorter wording drops it, keeps the form possible
        pointing = (
            f"the decided ones are consistent with its starting slope (the sharper softmax vs softmax: "
            f"{sharper.label()} {sharper.estimate()}, SSA from b = 1 vs softmax: {from_b1.label()} {from_b1.estimate()})"
        )
        still_open = "; ".join(filter(None, (still_open, pointing)))
    conclusion = slope_sentence(
        reading,
        ssa,
        gentler=f"SSA started at b = 1 vs softmax reads {from_b1.label()} ({from_b1.estimate()})",
        open_facts=still_open,
    )
    # an attribution rests on the comparisons beside SSA vs softmax, whose seeds were raised after reading
    note = (
        ""
        if reading == NO_DIFFERENCE
        else seeds_raised_note(cache, [(name, task) for name in STARTING_POINT], STARTING_POINT_ENDPOINT)
    )
    return head + " " + _noted(conclusion, note)


def bounded_checks(rows: Sequence[dict]) -> list[dict]:
    """The robustness check of the prompt-error verdicts: each decided verdict of ``rows`` whose
    endpoint's outcome flips (its claim declares ``largest_flip``; the binary endpoint has its own
    interval), decided again with :func:`ssa_book.verdicts.robustness.bounded_check`. A prompt error lies in [0, 1],
    so a paired difference lies within the largest flip, :data:`PROMPT_ERROR_FLIP`. Each row:
    ``comparison, task, endpoint, verdict, checked``."""
    decided = (BETTER, WORSE, NEGLIGIBLE)
    return [
        {**row, "checked": bounded_check(row["verdict"], ENDPOINTS[row["endpoint"]].claim.largest_flip)}
        for row in rows
        if row["verdict"].outcome in decided and _prompt_error_flips(row["endpoint"])
    ]


def bounded_check_words(checks: Sequence[dict]) -> str:
    """What the distribution-free check of :func:`bounded_checks` does to ``checks``, counted only
    among the verdicts it can test: "keeps 4 of 8 prompt-error directions (SSA worse: 1 of 4; sharper
    softmax worse: 3 of 4); at 40 pairs it cannot decide "no difference that matters", so those 10 are
    unchecked". A "no difference that matters" is unchecked where even pairs that agree exactly give an
    interval wider than the threshold, so no data could keep it ("" for no check)."""
    directions = [row for row in checks if row["verdict"].outcome in (BETTER, WORSE)]
    negligible = [row for row in checks if row["verdict"].outcome == NEGLIGIBLE]
    unchecked = [row for row in negligible if not _bounded_can_show_no_effect(row)]
    checkable = [row for row in negligible if row not in unchecked]
    said = []
    if directions:
        words = [row["verdict"].word() for row in directions]
        by_word = [
            f"{word}: {_kept(row for row in directions if row['verdict'].word() == word)} of {words.count(word)}"
            for word in dict.fromkeys(words)
        ]
        # named by their endpoint: beside a claim's count of parts, which the check does not all cover
        said.append(
            f"keeps {_kept(directions)} of {len(directions)} prompt-error directions"
            + (f" ({'; '.join(by_word)})" if len(by_word) > 1 else "")
        )
    if checkable:
        said.append(f'keeps {_kept(checkable)} of {len(checkable)} "no difference that matters"')
    if unchecked:
        pairs = sorted({row["verdict"].pairs for row in unchecked})
        at = f"{pairs[0]}" if len(pairs) == 1 else f"{pairs[0]} to {pairs[-1]}"
        said.append(
            f'at {at} pairs it cannot decide "no difference that matters", so those {len(unchecked)} are unchecked'
        )
    return "; ".join(said)


def not_kept(checks: Sequence[dict]) -> list[dict]:
    """The rows of :func:`bounded_checks` whose outcome the distribution-free check does not keep,
    among those it can test (a "no difference that matters" it cannot decide at its pairs is unchecked)."""
    return [
        row
        for row in checks
        if row["checked"].outcome != row["verdict"].outcome
        and (row["verdict"].outcome != NEGLIGIBLE or _bounded_can_show_no_effect(row))
    ]


def not_kept_words(row: dict) -> str:
    """A row of :func:`not_kept` in words: "SSA worse by the t interval, undecided by the distribution-free one"."""
    return f"{row['verdict'].label()} by the t interval, {row['checked'].label()} by the distribution-free one"


def _kept(rows) -> int:
    return sum(row["checked"].outcome == row["verdict"].outcome for row in rows)


def _bounded_can_show_no_effect(row: dict) -> bool:
    """Whether the bounded interval could read "no difference that matters" at ``row``'s pairs at all:
    pairs that agree exactly, its narrowest case, give an interval within the threshold."""
    found = row["verdict"]
    low, high = bounded_mean_interval(np.zeros(found.pairs), ENDPOINTS[row["endpoint"]].claim.largest_flip)
    return bool(no_effect(low, high, found.threshold, found.pairs, MIN_PAIRS))


def _prompt_error_flips(endpoint: str) -> bool:
    """Whether ``endpoint`` is a prompt error that flips from seed to seed (its claim declares
    ``largest_flip``), not the 0/1 endpoint, which has an interval of its own."""
    claim = ENDPOINTS[endpoint].claim
    return claim.largest_flip is not None and not claim.binary


def false_discovery_rows(comparisons: Sequence[Comparison], rows: Sequence[dict]) -> list[dict]:
    """The study's tested verdicts (:func:`verdict_rows`) with the two-sided p-value of the rule's
    signed-rank test, raw and adjusted for false discoveries (:func:`ssa_book.verdicts.families.false_discoveries`)
    within two families chosen after the results were read: the pre-declared primary comparisons, and all the
    others. Each row: ``comparison, task, endpoint, family, verdict, p, adjusted p, survives``."""
    primary = {compared.name for compared in comparisons if compared.primary}
    found = []
    for family, members in (
        ("primary", [row for row in rows if row["comparison"] in primary]),
        ("other comparisons", [row for row in rows if row["comparison"] not in primary]),
    ):
        for row, tested in zip(members, false_discoveries([row["verdict"] for row in members])):
            if tested is not None:
                found.append({**row, "family": family, **tested})
    return found


def resampled_nulls(
    comparisons: Sequence[Comparison], cache: StudyCache, simulations: int = SIMULATIONS, seed: int = 0
) -> tuple[Any, str]:
    """The rule's false decisions under nulls drawn from the study's own data: for each comparison,
    task and prompt-error endpoint (:func:`_prompt_error_flips`) whose runs are complete, the
    per-seed paired differences of its verdict recentred to a mean of zero and resampled
    (:func:`ssa_book.verdicts.power.resampled_null_rates`, ``simulations`` studies at the pairs it was judged
    with). ``(table, sentence)``: the table indexed by (comparison, task, endpoint) with the pairs
    and the rates of a false "better", a false "worse" and their sum; the sentence names the
    largest false directional rate and where it is, with its Monte Carlo standard error."""
    import pandas as pd

    judged = [
        row
        for row in verdict_rows(comparisons, cache)
        if _prompt_error_flips(row["endpoint"]) and row["verdict"].outcome != NOT_TESTED
    ]
    table, largest = resampled_null_table(
        [(ENDPOINTS[row["endpoint"]].claim, row["verdict"]) for row in judged], simulations=simulations, seed=seed
    )
    kept = [
        row for row in judged if len(row["verdict"].differences) >= 2
    ]  # the rows resampled_null_table keeps, in order
    table.index = pd.MultiIndex.from_tuples(
        [(row["comparison"], get_task(row["task"]).title, row["endpoint"]) for row in kept],
        names=["comparison", "task", "endpoint"],
    )
    if largest is None:
        return table, "No prompt-error comparison is complete yet, so there are no per-seed differences to resample."
    comparison_name, task_title, endpoint = table[FALSE_DIRECTIONAL].idxmax()
    error = math.sqrt(largest * (1 - largest) / simulations)
    sentence = (
        f"Under nulls resampled from the study's own per-seed differences, recentred to a mean of zero, the rule's false "
        f"'better'/'worse' rate on its prompt-error verdicts is at most {largest:.1%} ({comparison_name}, {task_title}, "
        f"{endpoint}), at the seed counts used ({simulations} simulated studies each, Monte Carlo standard error "
        f'{error:.1%}). The 0/1 endpoint "{BINARY_ENDPOINT}" is not resampled here; the reproducing page\'s rate '
        f"covers it with the study's other verdicts."
    )
    return table, sentence


def rates_without_minimums(
    comparisons: Sequence[Comparison],
    cache: StudyCache,
    pair_counts: Sequence[int],
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> dict[int, float]:
    """``{pairs: rate}``: the largest false direction rate over the study's verdicts with paired
    differences (:func:`verdict_rows`, each once), at each of ``pair_counts`` pairs, by the rule without
    the pair minimums set after reading (:func:`ssa_book.claims.without_minimums`), under nulls resampled
    from each verdict's own differences (:func:`ssa_book.verdicts.power.resampled_null_rates`)."""
    if not pair_counts or any(
        isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1 for pairs in pair_counts
    ):
        raise ValueError(f"pair_counts must hold positive whole numbers of pairs; got {pair_counts!r}")
    judged = {
        (row["verdict"].claim, row["verdict"].differences): (ENDPOINTS[row["endpoint"]].claim, row["verdict"])
        for row in verdict_rows(comparisons, cache)
        if len(row["verdict"].differences) >= 2
    }
    return {
        pairs: max(
            (
                resampled_null_rates(
                    without_minimums(claim), found.differences, pairs, simulations=simulations, seed=seed
                )[FALSE_DIRECTIONAL]
                for claim, found in judged.values()
            ),
            default=0.0,
        )
        for pairs in pair_counts
    }
