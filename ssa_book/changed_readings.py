"""The readings each analysis change made after reading moved, computed from the cache (the
record of the changes is :mod:`ssa_book.analysis_changes`): the seed amendments' verdicts at the
seeds read and at the amended count, the pair minimums' and the prompt-error minimum's, the
symmetric rule's, the superseded rules', and the replications' against the published effects."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ssa_book import claims
from ssa_book.analysis_changes import as_then
from ssa_book.verdicts.words import (
    DOES_NOT_HOLD,
    NEGLIGIBLE,
    NOT_TESTED,
    TOO_FEW_SEEDS,
    UNDECIDED,
    WORSE,
    not_run_yet,
    outcome_words,
)
from ssa_book.verdicts.intervals import CONFIDENCE
from ssa_book.verdicts.claim import MIN_PAIRS
from ssa_book.verdicts.verdict import Verdict, signed_rank_p
from ssa_book.verdicts.judge import Judged
from ssa_book.icl.study import conduct as study_conduct, design as study_design, judging as study_judging
from ssa_book.icl.tasks import get_task
from ssa_book.encoder import experiment as encoder
from ssa_book.lm import experiment as lm
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError
from ssa_book.retrieval import analysis as retrieval
from ssa_book.retrieval.experiment import SETUPS
from ssa_book.leaderboard import board as leaderboard
from ssa_book.plotting import scorer_label

if TYPE_CHECKING:
    import pandas as pd


def seed_amendment_changes(cache, names: Sequence[str]) -> "pd.DataFrame":
    """The comparisons ``names`` of the powered study (raised after reading:
    :data:`ssa_book.icl.study.judging.SEED_AMENDMENTS`), judged on their first
    :data:`~ssa_book.icl.study.design.ABLATION_SEEDS` seeds by the rule of the amendment's time
    (:func:`~ssa_book.icl.study.judging.read_before_raise`, naming it:
    :func:`~ssa_book.icl.study.judging.rule_then`) and by today's rule, and at their amended count
    (once cached on a task; else how many runs are): one row per comparison, task and prompt-error
    endpoint whose verdict the amendment changed from either reading, or has not yet decided. The
    amended verdict is the one the pages give, after control of false discoveries within the study's
    families (:func:`ssa_book.icl.study.judging.verdict`)."""
    import pandas as pd

    read_at = study_design.ABLATION_SEEDS
    columns = ["comparison", "task", "endpoint", f"at {read_at}, by the rule then", f"at {read_at}, by today's rule"]
    records = []
    for name in names:
        compared = study_conduct.comparison(name, cache.profile)
        if compared is None:
            continue
        before = dataclasses.replace(compared, seeds=min(read_at, compared.seeds))
        for task in compared.tasks:
            if not cache.complete(before, task):
                continue
            complete = cache.complete(compared, task)
            for endpoint in compared.endpoints:
                then = study_judging.read_before_raise(cache, name, task, endpoint)
                today = study_design.judge(before, task, endpoint, cache)
                if complete:
                    now = study_judging.verdict(compared, task, endpoint, cache)
                    if now.outcome == then.outcome == today.outcome:
                        continue
                    after = f"{now.words()} {now.estimate()} ({now.pairs} pairs)"
                else:
                    after = not_run_yet(cache.cached(compared, task), study_design.needed(compared, task))
                records.append(
                    dict(
                        zip(
                            columns,
                            (
                                name,
                                get_task(task).title,
                                endpoint,
                                f"{then.label()} {then.estimate()} ({study_judging.rule_then(name, endpoint) or 'as today'})",
                                f"{today.label()} {today.estimate()}",
                            ),
                        ),
                        amended=after,
                    )
                )
    return pd.DataFrame(records, columns=[*columns, "amended"])


def pair_minimum_changes(cache) -> "pd.DataFrame":
    """The powered study's verdicts that the pair minimum for directions on flip-prone outcomes
    (4e737d3) changed: one row per comparison, task, endpoint and pairs whose word before it differs
    from its word under it before control of false discoveries (a word that control alone moved is
    that change's, in :func:`symmetric_rule_changes`), each named by its own treatment; "now" is the
    verdict as the pages give it. A comparison whose ten seeds were read before the minimum and raised
    after (:attr:`~ssa_book.icl.study.judging.SeedAmendment.before_flip_minimum`) has those ten-seed
    verdicts as rows of their own, whether or not its raised runs are all cached ("now": today's rule
    at those pairs, then the raised count's verdict or how far its runs are)."""
    import pandas as pd

    records = []

    def moved(name: str, task: str, endpoint: str, verdict: Verdict, now: str) -> None:
        claim = study_design.ENDPOINTS[endpoint].claim
        before = claims.before_flip_minimum_verdict(claim, verdict).outcome
        if before != as_then(verdict.uncontrolled or verdict.outcome):
            records.append(
                {
                    "comparison": name,
                    "task": get_task(task).title,
                    "endpoint": endpoint,
                    "pairs": verdict.pairs,
                    "before": f"{outcome_words(before, verdict.treatment)} {verdict.estimate()}",
                    "now": now,
                }
            )

    for row in study_judging.verdict_rows(study_conduct.plan(cache.profile, cache=cache), cache):
        name, task, endpoint, verdict = row["comparison"], row["task"], row["endpoint"], row["verdict"]
        amendment = next((one for one in study_judging.SEED_AMENDMENTS if name in one.comparisons), None)
        compared = study_conduct.comparison(name, cache.profile)
        read = dataclasses.replace(compared, seeds=min(study_design.ABLATION_SEEDS, compared.seeds))
        if (
            amendment is not None
            and amendment.before_flip_minimum
            and read.seeds < compared.seeds
            and cache.complete(read, task)
        ):
            today = study_design.judge(read, task, endpoint, cache)
            raised = f"{verdict.words()} ({verdict.pairs} pairs)" if verdict.outcome != NOT_TESTED else verdict.detail
            moved(name, task, endpoint, today, f"{today.words()}; at {compared.seeds}: {raised}")
        if verdict.outcome != NOT_TESTED and verdict.differences:
            moved(name, task, endpoint, verdict, verdict.words())
    return pd.DataFrame(records, columns=["comparison", "task", "endpoint", "pairs", "before", "now"])


def leaderboard_flip_minimum_changes(profile: str) -> "pd.DataFrame":
    """The leaderboard's cells against softmax that the pair minimum for directions on outcomes that
    flip (4e737d3) left exploratory while the rule before it read them otherwise
    (:func:`ssa_book.claims.minimum_moved`): one row per scorer and column, its pairs, the word before
    it with its estimate, and the cell's word now."""
    import pandas as pd

    board = leaderboard.read(profile, train=False)
    rows = []
    for scorer in leaderboard.scorers()[1:]:
        for column in leaderboard.COLUMNS:
            cell = board.cell(scorer, column.key)
            moved = claims.minimum_moved(column.claim, cell.verdict) if cell is not None else ()
            if moved and moved[0] == claims.FLIP_MINIMUM and moved[1].outcome != as_then(cell.verdict.outcome):
                rows.append(
                    {
                        "scorer": scorer_label(scorer),
                        "column": column.label,
                        "pairs": cell.verdict.pairs,
                        "before": f"{moved[1].label()} {cell.verdict.estimate()}",
                        "now": cell.verdict.words(),
                    }
                )
    return pd.DataFrame(rows, columns=["scorer", "column", "pairs", "before", "now"])


def asymmetric_outcome(verdict: Verdict) -> str:
    """The outcome the rule gave ``verdict`` before it was symmetric: "worse" needed no threshold,
    only an interval below zero (from the pairs the rule decides from) and the signed-rank test,
    and took precedence over "no difference that matters"."""
    if verdict.interval is None or verdict.outcome not in (NEGLIGIBLE, UNDECIDED) or verdict.adjusted_p is not None:
        return verdict.outcome
    enough = verdict.pairs >= max(MIN_PAIRS, verdict.no_effect_pairs)
    below = verdict.interval[1] < 0 and enough and (signed_rank_p(verdict) or 1.0) < 1 - CONFIDENCE
    return WORSE if below else verdict.outcome


def symmetric_rule_changes(judged: Iterable[Judged]) -> "pd.DataFrame":
    """Every verdict the symmetric rule, false-discovery control in the words and the chapters' minimum
    pairs moved, from the records of a :func:`ssa_book.verdicts.judge.judged` block around the pages'
    computations: one row per claim (each once), its estimate and pairs, the word before and after,
    and which change moved it."""
    import pandas as pd

    judged = list(judged)
    # A verdict as its chapter shows it: within its false-discovery family where it was judged in
    # one (the family's adjusted p also decides a small direction beside "no difference that matters").
    in_family = {id(record.verdict): record.after for record in judged if record.kind == "controlled"}
    rows, seen = [], set()
    for record in judged:
        verdict = record.verdict
        shown = in_family.get(id(verdict), verdict)
        if (
            record.kind == "judged"
            and record.claim is not None
            and record.claim.min_pairs > MIN_PAIRS
            and verdict.outcome == TOO_FEW_SEEDS
        ):
            without = claims.at_rule_minimum(record.claim, verdict) if len(verdict.differences) else verdict
            before, now, why = asymmetric_outcome(without), verdict, "the chapter's minimum pairs"
        elif record.kind == "judged":
            before, now, why = asymmetric_outcome(verdict), verdict, "the threshold for worse"
        else:
            before, now, why = verdict.outcome, record.after, "false-discovery control"
        key = (verdict.claim, verdict.pairs, verdict.effect, why)
        if before == now.outcome or key in seen:  # this change did not move it (another row says what did)
            continue
        seen.add(key)
        rows.append(
            {
                "claim": verdict.claim,
                "pairs": verdict.pairs,
                "estimate": verdict.estimate("+.3g"),
                "why": why,
                "before": outcome_words(before, verdict.treatment),
                "after": shown.label(),
            }
        )
    columns = ["claim", "pairs", "estimate", "why", "before", "after"]
    return (
        pd.DataFrame(rows, columns=columns).sort_values(["why", "claim"], ignore_index=True)
        if rows
        else pd.DataFrame(columns=columns)
    )


def _decoder_gain_against_spread(runs, key: str) -> tuple[str, str]:
    """The decoder's test before f0ea705 on claim ``key``: SSA's gain in mean perplexity (raw, not its
    log) or BLiMP accuracy over softmax's, against the largest range of one scorer's seeds; in today's
    words, with the numbers."""
    values = {scorer: [lm.measure(run, key) for run in runs if run.scorer == scorer] for scorer in ("softmax", "ssa")}
    if key != "blimp":
        values = {scorer: list(np.exp(found)) for scorer, found in values.items()}
    spread = max(max(found) - min(found) for found in values.values())
    gain = lm.CLAIMS[key].direction * (np.mean(values["ssa"]) - np.mean(values["softmax"]))
    word = "SSA better" if gain > spread else "SSA worse" if gain < -spread else NEGLIGIBLE
    return word, f"gain {gain:+.3g} against a seed range of {spread:.3g}"


def superseded_rule_readings(profile: str) -> "pd.DataFrame":
    """What the chapters' own tests that the one rule replaced (f0ea705, 7e238a6) read on today's
    cached runs, beside today's verdicts: the decoder's gain against the seed range, and the
    encoder's "at least the threshold on all four paradigms" (all four: holds; one to three: holds
    in part; none: does not hold). Empty where the runs are not cached."""
    import pandas as pd

    columns = ["chapter", "claim", "superseded test", "its reading", "today's verdict"]
    rows = []
    with cache_required():
        try:
            decoder_runs = lm.results(profile)
        except CacheMissError:
            decoder_runs = []
        try:
            encoder_runs = encoder.run_all(profile, progress=False)
        except CacheMissError:
            encoder_runs = []
    if decoder_runs:
        today = lm.claim_verdicts(decoder_runs, profile=profile)
        for key, claim in lm.CLAIMS.items():
            word, numbers = _decoder_gain_against_spread(decoder_runs, key)
            rows.append(
                {
                    "chapter": "decoder",
                    "claim": claim.name,
                    "superseded test": "gain larger than the seed range",
                    "its reading": f"{word} ({numbers})",
                    "today's verdict": f"{today[key].label()} {today[key].estimate()}",
                }
            )
    if encoder_runs:
        gains = encoder.gain_table(encoder_runs)
        paradigms = [part for part in encoder.PAPER_ACCURACIES if part in gains.index]
        reached = int(sum(gains.loc[part, "mean gain"] >= encoder.GAIN_THRESHOLD for part in paradigms))
        word = "holds" if reached == len(paradigms) else "holds in part" if reached else DOES_NOT_HOLD
        rows.append(
            {
                "chapter": "encoder",
                "claim": encoder.PROBING_CLAIM,
                "superseded test": f"a mean gain of at least {encoder.GAIN_THRESHOLD:g} points on all four paradigms",
                "its reading": f"{word} ({reached} of {len(paradigms)} paradigms)",
                "today's verdict": encoder.probing_verdict(encoder_runs).words(),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def _pairs_unsaid(verdict: Verdict) -> str:
    """ "(10 pairs)" where ``verdict``'s words do not already say its pairs ("" without pairs)."""
    said = f"{verdict.pairs} pairs"
    return f"({said})" if verdict.pairs and said not in verdict.words() else ""


def replication_changes(profile: str) -> "pd.DataFrame":
    """Adaptive temperature on max retrieval before and after it was judged as a replication
    (75a550b), in each setup the chapter runs (short, then original): the chapter's claim for every
    scorer, and the replication claim, each verdict with the note on a pair minimum set after reading
    that the chapter gives it (:func:`ssa_book.retrieval.analysis.minimum_note`); a setup whose runs are not cached at
    ``profile`` is left out."""
    import pandas as pd

    columns = ["setup", "claim", "threshold", "verdict"]
    rows = []
    for setup in SETUPS:
        try:
            with cache_required():
                runs = retrieval.load_whole_seeds(
                    profile, ("softmax", "adaptive_temperature"), device="cpu", setup=setup
                )
        except CacheMissError:
            continue
        if not all(runs.values()):
            continue
        train_items = retrieval.train_items(profile, setup)
        judged = (
            (
                retrieval.SHIFTED_ACCURACY,
                retrieval.versus(
                    runs, "adaptive_temperature", "softmax", retrieval.SHIFTED_ACCURACY, "accuracy", train_items
                ),
                "the chapter's, for every scorer",
            ),
            (
                retrieval.ADAPTIVE_TEMPERATURE_REPLICATION,
                retrieval.adaptive_temperature_replication(runs, train_items),
                "the replication's",
            ),
        )
        for claim, verdict, whose in judged:
            said = " ".join(filter(None, (verdict.words(), verdict.estimate("+.3f"), _pairs_unsaid(verdict))))
            rows.append(
                {
                    "setup": setup,
                    "claim": f"{whose}: {claim.name}",
                    "threshold": f"{verdict.threshold:g} {verdict.units}",
                    "verdict": "; ".join(filter(None, (said, retrieval.minimum_note(verdict, claim)))),
                }
            )
    return pd.DataFrame(rows, columns=columns)
