"""The stored rerun comparisons read back and judged again by the rule as it is now: the
reproducing page's table and summary, and the sentence a chapter shows beside its verdicts."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ssa_book import paths
from ssa_book.verdicts.words import NOT_LEARNED, NOT_RUN_YET, NOT_TESTED, PREMISE_NOT_SHOWN, TOO_FEW_SEEDS, UNDECIDED
from ssa_book.verdicts.readings import NO_DIFFERENCE
from ssa_book.plotting import scorer_label
from ssa_book.results.store import StoredEntry
from ssa_book.reruns.comparison import (
    COMPARED,
    SUBSET,
    SubsetRun,
    changed_verdicts,
    difference_text,
    listed,
    machine_label,
    part_name,
    part_of,
    reader_of,
    record_machine,
    stored_records,
)


# ----------------------------------------------------------------------------------------------
# Reading the records.


def rerun_records(profile: str, results_dir: str | Path | None = None) -> list[StoredEntry]:
    """Every machine's rerun record at ``profile`` (the stored entries)."""
    return stored_records(profile, COMPARED, results_dir)


def _signed(value: float) -> str:
    return "0" if value == 0 else f"{value:+.3g}"


def _endpoint_text(rows: Sequence[Mapping]) -> str:
    return "; ".join(
        f"{row['endpoint']}: "
        + ("not tested at this profile" if row["difference"] is None else _signed(row["difference"]))
        for row in rows
    )


def _verdicts_text(changed: Sequence[Mapping]) -> str:
    return (
        "; ".join(f"{_verdict_name(item['verdict'])}: {item['cached']} → {item['rerun']}" for item in changed) or "none"
    )


def _largest_text(numbers: Mapping) -> str:
    text = difference_text(numbers["largest"])
    return text + (f" ({numbers['mismatches']} places differ in kind)" if numbers["mismatches"] else "")


# ----------------------------------------------------------------------------------------------
# The stored comparisons judged again by today's rule.


@runtime_checkable
class EndpointReader(Protocol):
    """A chapter's reader (:class:`ssa_book.chapters.Reader`) whose endpoints give back the numbers
    some of its verdicts read, so that a stored comparison, which keeps a rerun's endpoints and not
    its result, can be judged again by the rule as it is when the book is built (:func:`judged_today`)."""

    def with_endpoints(self, runs: Mapping, run: SubsetRun, endpoints: Mapping[str, float | None], profile: str) -> Any:
        """``run``'s record in ``runs`` (:meth:`cached_runs`) with the numbers behind its endpoints set to ``endpoints``."""

    def endpoint_verdicts(self, runs: Mapping, profile: str) -> dict[str, str]:
        """The verdicts of :meth:`verdicts` that read no number of a record but those :meth:`with_endpoints` sets."""


def _same_numbers(row: Mapping) -> bool:
    """Whether a rerun gave the cached result's numbers (timings apart): then every verdict reads the same."""
    return row["numbers"]["largest"] == 0 and not row["numbers"]["mismatches"]


@dataclasses.dataclass(frozen=True)
class ChapterToday:
    """One chapter's reruns in one setup (``setup``, ``None`` for a chapter of one) in one machine's
    record, judged again by today's rule.

    ``alone``: for each of its rows (in the record's order), the verdicts that change with that
    rerun alone in place of its cached seed (:func:`changed_verdicts`); ``together``: with all of
    them at once; ``None`` where they cannot be judged again from what the record keeps.
    ``judged`` of the chapter's ``verdicts`` were judged again (all of them where every rerun gave
    the cached numbers, and none can change); ``decided`` of those judged again read a decided word
    with the cached seeds, and ``exploratory`` read "exploratory", a word the pairs' count fixes."""

    chapter: str
    rows: tuple[Mapping, ...]
    alone: tuple[tuple[dict, ...] | None, ...]
    together: tuple[dict, ...] | None
    judged: int | None
    verdicts: int | None
    decided: int | None = None
    exploratory: int = 0
    setup: str | None = None

    @property
    def name(self) -> str:
        """The chapter and its setup in words (:func:`ssa_book.reruns.comparison.part_name`)."""
        return part_name(self.chapter, self.setup)

    @property
    def same_numbers(self) -> bool:
        return all(_same_numbers(row) for row in self.rows)


# The words of a verdict, or of a reading of verdicts (form_or_slope), that decide nothing.
_OPEN_WORDS = (UNDECIDED, TOO_FEW_SEEDS, NOT_LEARNED, NOT_TESTED, PREMISE_NOT_SHOWN, NOT_RUN_YET)


def is_decided(label: str) -> bool:
    """Whether a verdict's words (:meth:`ssa_book.verdicts.verdict.Verdict.label`, as a reader's verdicts give
    them) are decided: a direction or "no difference that matters", or a reading that rests on one."""
    return label != NO_DIFFERENCE and not label.startswith(_OPEN_WORDS)


def judged_today(
    record: StoredEntry, profile: str, results_dir: str | Path | None = None
) -> dict[tuple[str, str | None], ChapterToday]:
    """``{(chapter, setup): ChapterToday}`` for each chapter and setup of a machine's rerun ``record``
    (:attr:`ssa_book.reruns.comparison.SubsetRun.part`; a row of an older record, which names no
    setup, is in its chapter's main one): its reruns judged
    again by the rule as it is now, not as it was when the record was made. A rerun that gave the
    cached numbers changes no verdict; one that did not is put in place of its cached seed through the
    chapter's reader from the endpoints the record keeps (:class:`EndpointReader`), and only the
    verdicts that read nothing else are judged again; a reader that cannot rebuild a run from its
    endpoints leaves the chapter not judged again. The chapter's cached runs are read from
    ``results_dir`` (default: the book's cache) only where a rerun moved a number."""
    found: dict[tuple[str, str | None], ChapterToday] = {}
    by_part: dict[tuple[str, str | None], list[Mapping]] = {}
    for row in record.result["rows"]:
        by_part.setdefault(SubsetRun.of_row(row).part, []).append(row)
    for part, rows in by_part.items():
        chapter, setup = part
        reader = reader_of(chapter, setup)
        if all(_same_numbers(row) for row in rows):
            found[part] = ChapterToday(chapter, tuple(rows), tuple(() for _ in rows), (), None, None, setup=setup)
            continue
        if not isinstance(reader, EndpointReader):
            found[part] = ChapterToday(
                chapter,
                tuple(rows),
                tuple(() if _same_numbers(row) else None for row in rows),
                None,
                None,
                None,
                setup=setup,
            )
            continue
        with paths.environment(
            {"SSA_RESULTS_DIR": str(Path(results_dir).expanduser().resolve())} if results_dir else {}
        ):
            cached = reader.cached_runs(profile)
        before = reader.endpoint_verdicts(cached, profile)
        rebuilt = [
            reader.with_endpoints(
                cached,
                SubsetRun.of_row(row),
                {item["endpoint"]: item["rerun"] for item in row["endpoints"]},
                profile,
            )
            for row in rows
        ]
        alone = tuple(
            tuple(changed_verdicts(before, reader.endpoint_verdicts(reader.swapped(cached, [one]), profile)))
            for one in rebuilt
        )
        together = tuple(changed_verdicts(before, reader.endpoint_verdicts(reader.swapped(cached, rebuilt), profile)))
        found[part] = ChapterToday(
            chapter,
            tuple(rows),
            alone,
            together,
            len(before),
            len(reader.verdicts(cached, profile)),
            sum(map(is_decided, before.values())),
            sum(label.startswith(TOO_FEW_SEEDS) for label in before.values()),
            setup,
        )
    return found


def _today_text(today: ChapterToday, changed: Sequence[Mapping] | None) -> str:
    """A row's verdicts changed, judged again today, in a cell of :func:`rerun_table`."""
    if changed is None:
        return "not judged again: the record keeps the endpoints only"
    text = _verdicts_text(changed)
    if today.judged is not None and today.judged < today.verdicts:
        text += f" ({today.judged} of the chapter's {today.verdicts} verdicts judged again)"
    return text


def largest_move(rows: Sequence[Mapping]) -> tuple[float, Mapping, str] | None:
    """The largest move of one endpoint of one seed over ``rows`` (stored comparisons' rows):
    ``(rerun minus cached, the row, the endpoint's name)``; ``None`` when no endpoint was compared."""
    moves = [
        (item["difference"], row, item["endpoint"])
        for row in rows
        for item in row["endpoints"]
        if item["difference"] is not None
    ]
    return max(moves, key=lambda move: abs(move[0])) if moves else None


def _run_name(row: Mapping) -> str:
    """ "SSA seed 0" ("SSA seed 0 on \"every\"" for an in-context run)."""
    return f"{scorer_label(row['scorer'])} seed {row['seed']}" + (f' on "{row["task"]}"' if row.get("task") else "")


def _move_text(move: tuple[float, Mapping, str]) -> str:
    difference, row, endpoint = move
    return f"{abs(difference):.3g} ({_run_name(row)}'s {endpoint}, {_signed(difference)})"


# What the table and the summary say of a run of the subset that a machine's record holds no row of.
NOT_IN_RECORD = "not in this record's subset"


def missing_runs(record: StoredEntry, subset: Sequence[SubsetRun] = SUBSET) -> list[SubsetRun]:
    """The runs of ``subset`` a machine's ``record`` holds no row of (as a record made before they joined the subset)."""
    present = {SubsetRun.of_row(row) for row in record.result["rows"]}
    return [run for run in subset if run not in present]


def _chapter_text(run: SubsetRun) -> str:
    return part_name(run.chapter, run.setup) + (f' ("{run.task}")' if run.task else "")


def rerun_table(profile: str, results_dir: str | Path | None = None, subset: Sequence[SubsetRun] = SUBSET):
    """One row per machine x rerun run at ``profile``: the machine (and the commit it reran the
    run at), the run, the machine its cached entry was computed on, the largest absolute difference
    over every number of the result, the differences of the chapter's endpoints (rerun minus cached),
    and the verdicts that change when the rerun replaces the cached seed, judged again by today's rule
    (:func:`judged_today`: "none" or which, from what to what); and one row per run of ``subset``
    that a machine's record holds none of, saying so (:data:`NOT_IN_RECORD`) with no number. An
    empty frame (with these columns) when no machine has a record."""
    import pandas as pd

    columns = [
        "machine",
        "reran commit",
        "chapter",
        "scorer",
        "seed",
        "cached on",
        "largest absolute difference",
        "endpoint differences (rerun − cached)",
        "verdicts changed (today's rule)",
    ]
    rows = []
    order = {run: index for index, run in enumerate(subset)}
    for record in rerun_records(profile, results_dir):
        today = judged_today(record, profile, results_dir)
        position = {part: 0 for part in today}
        found = []
        for row in record.result["rows"]:
            run = SubsetRun.of_row(row)
            part = today[run.part]
            changed = part.alone[position[run.part]]
            position[run.part] += 1
            cached_sets = row["cached_on"].get("instruction_sets") or {}
            # A row names the commit it was rerun at (a record keeps rows of earlier sessions, reruns run
            # --missing); a row of an older record does not, and was rerun at the record's.
            commit = row.get("rerun_commit") or record.provenance.git_commit
            found.append(
                (
                    run,
                    {
                        "machine": record_machine(record),
                        "reran commit": (commit or "")[:10] or "not recorded",
                        "chapter": _chapter_text(run),
                        "scorer": row["scorer"],
                        "seed": row["seed"],
                        "cached on": machine_label(
                            row["cached_on"].get("processor"), cached_sets.get("aten_cpu_capability")
                        ),
                        "largest absolute difference": _largest_text(row["numbers"]),
                        "endpoint differences (rerun − cached)": _endpoint_text(row["endpoints"]),
                        "verdicts changed (today's rule)": _today_text(part, changed),
                    },
                )
            )
        found += [
            (
                run,
                {
                    "machine": record_machine(record),
                    "reran commit": "—",
                    "chapter": _chapter_text(run),
                    "scorer": run.scorer,
                    "seed": run.seed,
                    "cached on": "—",
                    "largest absolute difference": NOT_IN_RECORD,
                    "endpoint differences (rerun − cached)": "—",
                    "verdicts changed (today's rule)": "—",
                },
            )
            for run in missing_runs(record, subset)
        ]
        # A machine's rows in the subset's order, runs outside it after (sorted() keeps the record's order).
        rows += [item for _, item in sorted(found, key=lambda pair: order.get(pair[0], len(order)))]
    return pd.DataFrame(rows, columns=columns)


def _changes(today: ChapterToday) -> list[Mapping]:
    """Every verdict change of a chapter's reruns, alone or together (those judged again)."""
    return [item for changed in (*today.alone, today.together) if changed for item in changed]


def rerun_summary(profile: str, results_dir: str | Path | None = None, subset: Sequence[SubsetRun] = SUBSET) -> str:
    """One sentence: how many machines reran the subset at ``profile``, by how much the chapters'
    endpoints (with the largest move of one seed) and any number moved, and whether any verdict
    changes when today's rule judges them again (:func:`judged_today`: a rerun alone, or all of a
    machine's together, in place of the cached seeds); and which runs of ``subset`` a machine's
    record holds none of (:func:`missing_runs`)."""
    records = rerun_records(profile, results_dir)
    if not records:
        return f"No machine has rerun the subset at profile {profile} yet."
    machines = [record_machine(record) for record in records]
    rows = [row for record in records for row in record.result["rows"]]
    largest = [row["numbers"]["largest"] for row in rows if row["numbers"]["largest"] is not None]
    today = [chapter for record in records for chapter in judged_today(record, profile, results_dir).values()]
    counted = f"{len(records)} machine" + ("s" if len(records) > 1 else "")
    if max(largest, default=0.0) == 0 and not any(row["numbers"]["mismatches"] for row in rows):
        moved = "gave the cached results bit for bit (timings apart)"
    else:
        move = largest_move(rows)
        moved = (
            f"moved one seed's endpoint by at most {_move_text(move) if move else '0'} and any number of a result by at most "
            f"{max(largest, default=0.0):.3g}"
        )
    claims = sorted(
        {
            _verdict_name(item["verdict"]) + (f" in {chapter.chapter}'s {chapter.setup} setup" if chapter.setup else "")
            for chapter in today
            for item in _changes(chapter)
        }
    )
    changed = (
        f"{len(claims)} of the chapters' verdicts changed ({'; '.join(claims)})"
        if claims
        else "no verdict the chapters compute changed"
    )
    notes = []
    for chapter in today:
        if chapter.same_numbers:
            continue
        if chapter.judged is None:
            notes.append(
                f"{chapter.name}'s verdicts cannot be judged again from the record, which keeps the endpoints only"
            )
        elif chapter.judged < chapter.verdicts:
            notes.append(
                f"of {chapter.name}'s {chapter.verdicts} verdicts, the {chapter.judged} that read only the endpoints the "
                f"record keeps were judged again ({_decided_text(chapter)}), the other {chapter.verdicts - chapter.judged} "
                "cannot be"
            )
        else:
            notes.append(f"{chapter.name}'s {chapter.verdicts} verdicts were judged again ({_decided_text(chapter)})")
    same = sum(_same_numbers(row) for row in rows)
    if same:
        notes.insert(0, f"{same} of the reruns gave the cached numbers, which no rule can read otherwise")
    for record in records:
        missing = missing_runs(record, subset)
        if missing:
            notes.append(
                f"the record of {record_machine(record)} holds no rerun of {listed([run.label for run in missing])}: "
                f"{NOT_IN_RECORD}"
            )
    return (
        f"On {counted} ({', '.join(machines)}), the {len(rows)} reruns {moved}; judged again by today's rule, with one rerun "
        f"or all of a machine's in place of the cached seeds, {changed}"
        + (f" ({'; '.join(notes)})" if notes else "")
        + "."
    )


def _decided_text(chapter: ChapterToday) -> str:
    """How many of a chapter's verdicts judged again were decided, and how many read "exploratory",
    which a rerun cannot move (the pairs' count fixes it): a check that moves no decided verdict
    says so rather than reading as a test that every verdict passed."""
    decided = (
        f"{chapter.decided or 'none'} of them decided"
        if chapter.decided is not None
        else "how many were decided unknown"
    )
    return decided + (f", {chapter.exploratory} exploratory" if chapter.exploratory else "")


def _verdict_name(name: str) -> str:
    """A recorded verdict's name for a reader: "accuracy vs softmax: entmax15" -> "1.5-entmax's
    accuracy against softmax"; other names as recorded."""
    what, versus, scorer = name.partition(" vs softmax: ")
    return f"{scorer_label(scorer)}'s {what} against softmax" if versus else name


def rerun_sentence(
    chapter: str,
    profile: str,
    results_dir: str | Path | None = None,
    where: str = "this page",
    setup: str | None = None,
) -> str:
    """One sentence for a page that shows ``chapter``'s verdicts in ``setup`` (default: the chapter's
    main one, :func:`ssa_book.reruns.comparison.part_of`) or reads its runs (``where`` names the
    chapter on another page): how far the reruns on other machines moved one seed's endpoint at
    most, and which of the chapter's verdicts change, from what to what, when today's rule judges them
    again with a rerun in place of its cached seed (:func:`judged_today`); "" when no machine has
    rerun the chapter's runs in that setup."""
    part = part_of(chapter, setup)
    rows, machines, changes, counts, unjudged, decided = [], [], [], set(), False, set()
    for record in rerun_records(profile, results_dir):
        today = judged_today(record, profile, results_dir).get(part)
        if today is None:
            continue
        rows += today.rows
        machines.append(record_machine(record))
        unjudged |= any(changed is None for changed in today.alone)
        if today.judged is not None:
            counts.add((today.judged, today.verdicts))
            decided.add((today.decided, today.exploratory))
        for row, changed in zip(today.rows, today.alone):
            changes += [
                f'{_verdict_name(item["verdict"])} reads "{item["cached"]}" with the cached seeds and "{item["rerun"]}" '
                f"with {_run_name(row)} rerun on {record_machine(record)} in its place"
                for item in changed or ()
            ]
    if not rows:
        return ""
    reran = sorted({(row["scorer"], row["seed"]) for row in rows}, key=lambda pair: (pair[1], pair[0]))
    seeds = sorted({seed for _, seed in reran})
    runs = (
        f"{listed(list(dict.fromkeys(scorer_label(scorer) for scorer, _ in reran)))} seed{'s' if len(seeds) > 1 else ''} "
        f"{listed([str(seed) for seed in seeds])}"
    )
    move = largest_move(rows)
    text = (
        f"Rerun on another machine ({', '.join(dict.fromkeys(machines))}; the reproducing page has the reruns), {runs} of "
        f"{where} moved by up to {_move_text(move) if move else '0'} in one endpoint; judged again by today's rule with each "
        "rerun in place of its cached seed, "
    )
    if changes:
        text += (
            f"{'a verdict' if len(changes) == 1 else f'{len(changes)} verdicts'} change{'s' if len(changes) == 1 else ''}: "
            + "; ".join(changes)
            + ". Its margin is within what rounding differences between CPUs move."
        )
    elif unjudged:
        text += "whether a verdict changes cannot be said: the record keeps the endpoints only."
    else:
        partial = [(judged, total) for judged, total in counts if judged < total]  # the chapter's reader: one count
        judged = (
            f"the {partial[0][0]} verdicts that read only the endpoints the record keeps" if partial else "the verdicts"
        )
        others = f" (the other {partial[0][1] - partial[0][0]} cannot be judged again)" if partial else ""
        undecided = [exploratory for count, exploratory in decided if count == 0]
        if undecided and len(decided) == 1:
            text += (
                f"{judged} include no decided one ({undecided[0]} are exploratory), so the check cannot move a decided "
                f"verdict{others}."
            )
        else:
            text += f"none of {judged} changes{others}." if partial else "no verdict changes."
    return text
