"""Rerun a fixed subset of the cached runs through the reader's command in a fresh folder, and
compare each rerun with the committed entry: its endpoints, every number, and the verdicts
re-judged with it (the package's docstring says where the records are stored)."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


from ssa_book import paths
from ssa_book.studies import READERS
from ssa_book.code_versions import computation_of, version
from ssa_book.profiles import check_profile
from ssa_book.results.cache import record_entry
from ssa_book.results.keys import entry_path
from ssa_book.results.provenance import Provenance, instruction_sets, processor_name
from ssa_book.results.store import StoredEntry, entries_of, read_entry

COMPARED = "reruns/compared"  # the cache folder of the rerun records
PROG = "python -m ssa_book reruns"
# Variables that would let a rerun read the book's cache instead of computing: dropped.
CACHE_ENVIRONMENT = ("SSA_REQUIRE_CACHE", "SSA_RESULTS_MIRROR")
# Where a rerun writes, inside its fresh folder ("": the folder itself), as tests/test_reruns.py
# sets them for the same-machine check.
THROWAWAY_FOLDERS = {"SSA_RESULTS_DIR": "", "SSA_CHECKPOINT_DIR": "checkpoints", "SSA_RUNS_DIR": "runs"}


@runtime_checkable
class SetupReader(Protocol):
    """A chapter's reader (:class:`ssa_book.chapters.Reader`) whose runs come in several setups, each
    cached apart and judged by verdicts of its own (max retrieval's short and original setups)."""

    setups: tuple[str, ...]  # the first: the chapter's main setup, which a run naming none is in

    def in_setup(self, setup: str) -> Any:
        """The reader of the chapter's runs in ``setup``."""


def setups_of(chapter: str) -> tuple[str, ...]:
    """The setups of ``chapter``'s runs (:class:`SetupReader`); empty for a chapter of one setup."""
    reader = READERS[chapter]
    return tuple(reader.setups) if isinstance(reader, SetupReader) else ()


def part_of(chapter: str, setup: str | None = None) -> tuple[str, str | None]:
    """``(chapter, setup)``, the chapter's main setup for ``None`` (:func:`setups_of`); ``ValueError``
    naming ``setup`` when the chapter has no such setup."""
    setups = setups_of(chapter)
    if setup is None:
        return chapter, setups[0] if setups else None
    if setup not in setups:
        raise ValueError(
            f"setup: the {chapter} chapter's runs "
            + (f"are in one of {', '.join(setups)}" if setups else "have none")
            + f"; got {setup!r}"
        )
    return chapter, setup


def part_name(chapter: str, setup: str | None) -> str:
    """``"max_retrieval (original setup)"``; the chapter alone for a chapter of one setup."""
    return chapter + (f" ({setup} setup)" if setup else "")


@dataclasses.dataclass(frozen=True)
class SubsetRun:
    """One cached run of a chapter: its scorer and seed, for an in-context chapter its task, and for
    a chapter of several setups (:class:`SetupReader`) its setup, the chapter's first when none is
    named (as in the rows of records made before a chapter had setups)."""

    chapter: str
    scorer: str
    seed: int
    task: str | None = None
    setup: str | None = None

    def __post_init__(self) -> None:
        if self.chapter not in READERS:
            raise ValueError(f"chapter must be one of {', '.join(READERS)}; got {self.chapter!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an int >= 0; got {self.seed!r}")
        if (self.task is None) != (READERS[self.chapter].tasks == ()):
            raise ValueError(
                f"task: the {self.chapter} chapter's runs "
                + (
                    f"need one of {', '.join(READERS[self.chapter].tasks)}"
                    if READERS[self.chapter].tasks
                    else "have none"
                )
                + f"; got {self.task!r}"
            )
        # One spelling per run, so that a row naming no setup matches the run of the main one.
        object.__setattr__(self, "setup", part_of(self.chapter, self.setup)[1])

    @classmethod
    def of_row(cls, row: Mapping) -> SubsetRun:
        """The run of a stored comparison's row (:func:`compare_run`; a row of an older record names no setup)."""
        return cls(row["chapter"], row["scorer"], row["seed"], row.get("task"), row.get("setup"))

    @property
    def part(self) -> tuple[str, str | None]:
        """(chapter, setup): the runs one reader judges together."""
        return self.chapter, self.setup

    @property
    def reader(self) -> Any:
        """The reader of the run's chapter, in the run's setup."""
        return reader_of(self.chapter, self.setup)

    @property
    def label(self) -> str:
        return (
            f"{part_name(self.chapter, self.setup)}{f' ({self.task!r})' if self.task else ''} / {self.scorer} / "
            f"seed {self.seed}"
        )

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


# The subset that every machine reruns: seed 0 of softmax and SSA in two chapters whose models
# train in minutes at the cpu profile, on the direct attention path; seed 0 of softmax in max
# retrieval's original setup, whose training is fifteen times the short setup's, so that rounding
# differences have many more steps to grow; and seed 0 of softmax and the paper's two SSA variants
# in the encoder chapter, on the blockwise path, whose vectorised tiles differ from CPU to CPU by
# instruction set. The max-retrieval command computes the original setup's SSA run as well; it is
# compared as one of the record's other entries.
SUBSET: tuple[SubsetRun, ...] = (
    SubsetRun("icl_quantification", "softmax", 0, "every"),
    SubsetRun("icl_quantification", "ssa", 0, "every"),
    SubsetRun("max_retrieval", "softmax", 0),
    SubsetRun("max_retrieval", "ssa", 0),
    SubsetRun("max_retrieval", "softmax", 0, setup="original"),
    *(SubsetRun("encoder", variant, 0) for variant in ("softmax", "ssa_n1.5", "ssa_n2")),
)


def listed(names: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""


def describe_subset(subset: Sequence[SubsetRun] = SUBSET) -> str:
    """The subset in words, part by part: ``max_retrieval (short setup): softmax and ssa, seed 0``."""
    parts = []
    for (chapter, setup), (scorers, seeds, tasks) in check_parts(subset).items():
        quoted = [f'"{task}"' for task in tasks if task is not None]
        named = part_name(chapter, setup) + (f" ({listed(quoted)} task)" if quoted else "")
        parts.append(
            f"{named}: {listed(scorers)}, seed{'s' if len(seeds) > 1 else ''} {listed([str(seed) for seed in seeds])}"
        )
    return "; ".join(parts)


# ----------------------------------------------------------------------------------------------
# Comparing numbers.


def is_timing(key: str) -> bool:
    """Whether a result's ``key`` holds a time, which differs from run to run by nature."""
    return "time" in key or "timing" in key or key.endswith(("_per_s", "_seconds")) or key in ("created_utc", "seconds")


def timeless(value: Any) -> Any:
    """``value`` without its timings (:func:`is_timing`), NaN written ``"nan"`` (so that two NaNs
    compare equal)."""
    if isinstance(value, Mapping):
        return {key: timeless(item) for key, item in value.items() if not is_timing(key)}
    if isinstance(value, list):
        return [timeless(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number_differences(cached: Any, rerun: Any, *, shown: int = 5) -> dict:
    """Every number of ``cached`` against the one at the same place in ``rerun`` (timings left out,
    :func:`timeless`): ``largest`` absolute difference (``None`` when no number is shared),
    ``numbers`` compared, ``differing`` ones, and ``mismatches``: how many places hold something
    other than two numbers that agree in kind (a key or item one side lacks, a NaN against a
    number, a changed label), with the first ``shown`` of them in ``mismatched_at``."""
    found = {"largest": None, "numbers": 0, "differing": 0, "mismatches": 0, "mismatched_at": []}

    def mismatch(where: str) -> None:
        found["mismatches"] += 1
        if len(found["mismatched_at"]) < shown:
            found["mismatched_at"].append(where or "(the whole result)")

    def walk(left: Any, right: Any, where: str) -> None:
        if isinstance(left, Mapping) and isinstance(right, Mapping):
            for key in sorted(set(left) | set(right)):
                if key in left and key in right:
                    walk(left[key], right[key], f"{where}/{key}")
                else:
                    mismatch(f"{where}/{key}")
        elif isinstance(left, list) and isinstance(right, list):
            if len(left) != len(right):
                mismatch(f"{where} (lengths {len(left)} and {len(right)})")
            for index, (one, other) in enumerate(zip(left, right)):
                walk(one, other, f"{where}[{index}]")
        elif _is_number(left) and _is_number(right):
            difference = abs(float(right) - float(left))
            if not math.isfinite(difference):
                if not (left == right):  # equal infinities are the same number
                    mismatch(where)
                return
            found["numbers"] += 1
            found["differing"] += difference > 0
            found["largest"] = difference if found["largest"] is None else max(found["largest"], difference)
        elif left != right:
            mismatch(where)

    walk(timeless(cached), timeless(rerun), "")
    return found


def _finite_or_none(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def endpoint_differences(reader, cached_record, rerun_record, profile: str) -> list[dict]:
    """One row per endpoint of the chapter: ``endpoint``, ``cached``, ``rerun`` and ``difference``
    (rerun minus cached; ``None`` where the profile does not test the endpoint)."""
    cached, rerun = reader.endpoints(cached_record, profile), reader.endpoints(rerun_record, profile)
    rows = []
    for name, before in cached.items():
        after = rerun.get(name)
        difference = None if before is None or after is None else after - before
        rows.append(
            {
                "endpoint": name,
                "cached": _finite_or_none(before),
                "rerun": _finite_or_none(after),
                "difference": _finite_or_none(difference),
            }
        )
    return rows


def changed_verdicts(before: Mapping[str, str], after: Mapping[str, str]) -> list[dict]:
    """The verdicts whose outcome differs: ``verdict``, its ``cached`` and ``rerun`` outcome."""
    return [
        {"verdict": claim, "cached": before.get(claim, "not judged"), "rerun": after.get(claim, "not judged")}
        for claim in dict.fromkeys([*before, *after])
        if before.get(claim) != after.get(claim)
    ]


def _machine_of(provenance: Provenance) -> dict:
    """``{processor, instruction_sets}`` of an entry's provenance (``None`` where not recorded)."""
    return {"processor": provenance.processor or None, "instruction_sets": provenance.instruction_sets}


def compare_run(
    run: SubsetRun,
    cached_entry: StoredEntry,
    rerun_entry: StoredEntry,
    cached_runs: Mapping,
    *,
    profile: str,
    path: str = "",
    verdicts_before: Mapping[str, str] | None = None,
) -> dict:
    """The comparison of one rerun entry with the cached one: the machines of both, the chapter's endpoints, the largest
    difference over every number of the result, and the verdicts that change when the rerun
    replaces the cached seed in ``cached_runs`` (the runs of the chapter in the run's setup,
    :meth:`cached_runs`); ``verdicts_before``: the verdicts of ``cached_runs``, when already judged."""
    reader = run.reader
    if cached_entry.config != rerun_entry.config:
        raise ValueError(f"rerun_entry: {run.label} was computed from another config than the cached entry")
    cached_record = reader.record(run, cached_entry.result, cached_entry.provenance)
    rerun_record = reader.record(run, rerun_entry.result, rerun_entry.provenance)
    before = reader.verdicts(cached_runs, profile) if verdicts_before is None else verdicts_before
    after = reader.verdicts(reader.swapped(cached_runs, [rerun_record]), profile)
    return {
        **run.as_dict(),
        "entry": path,
        "cached_on": _machine_of(cached_entry.provenance),
        "rerun_on": _machine_of(rerun_entry.provenance),
        "cached_commit": cached_entry.provenance.git_commit,
        "rerun_commit": rerun_entry.provenance.git_commit,
        "endpoints": endpoint_differences(reader, cached_record, rerun_record, profile),
        "numbers": number_differences(cached_entry.result, rerun_entry.result),
        "verdicts_changed": changed_verdicts(before, after),
    }


# ----------------------------------------------------------------------------------------------
# Rerunning the subset.


def machine_identity() -> dict:
    """What names this machine in a record's key: its CPU model and the vector code ATen picked
    for it (:func:`ssa_book.results.provenance.processor_name`, :func:`ssa_book.results.provenance.instruction_sets`)."""

    return {"processor": processor_name("cpu"), "aten_cpu_capability": instruction_sets("cpu")["aten_cpu_capability"]}


def machine_label(processor: str | None, capability: str | None) -> str:
    """``"AMD EPYC (AVX2)"``; ``"not recorded"`` for an entry made before provenance held them."""
    if not processor and not capability:
        return "not recorded"
    return f"{processor or 'unknown CPU'} ({capability or 'capability not recorded'})"


def record_machine(record: StoredEntry) -> str:
    """The :func:`machine_label` of a record's key (:func:`machine_identity`)."""
    machine = record.config["machine"]
    return machine_label(machine["processor"], machine["aten_cpu_capability"])


Axes = tuple[tuple[str, ...], tuple[int, ...], tuple[str | None, ...]]  # scorers, seeds, tasks


def check_parts(subset: Sequence[SubsetRun]) -> dict[tuple[str, str | None], Axes]:
    """``{(chapter, setup): (scorers, seeds, tasks)}`` of ``subset``; ``ValueError`` unless the runs
    of each chapter in each setup are every scorer x seed (x task) named, which is what one
    regenerate command computes."""
    if not subset:
        raise ValueError("subset must name at least one run")
    grouped: dict[tuple[str, str | None], list[SubsetRun]] = {}
    for run in subset:
        grouped.setdefault(run.part, []).append(run)
    found = {}
    for (chapter, setup), runs in grouped.items():
        scorers = tuple(dict.fromkeys(run.scorer for run in runs))
        seeds = tuple(dict.fromkeys(run.seed for run in runs))
        tasks = tuple(dict.fromkeys(run.task for run in runs))
        if len(set(runs)) != len(scorers) * len(seeds) * len(tasks) or len(set(runs)) != len(runs):
            raise ValueError(
                f"subset: the {chapter} runs{f' of the {setup} setup' if setup else ''} must be each of its "
                "scorers x seeds (x tasks) once, as one regenerate command computes them"
            )
        found[chapter, setup] = (scorers, seeds, tasks)
    return found


def check_subset(subset: Sequence[SubsetRun]) -> dict[str, Axes]:
    """``{chapter: (scorers, seeds, tasks)}``: what each chapter's regenerate command is asked for,
    the scorers and seeds of its runs in every setup (:func:`check_parts`, whose ``ValueError`` it
    raises): a chapter's command computes the runs of every setup it plans for them."""
    found: dict[str, Axes] = {}
    for (chapter, _), (scorers, seeds, tasks) in check_parts(subset).items():
        before = found.get(chapter, ((), (), ()))
        found[chapter] = tuple(tuple(dict.fromkeys((*old, *new))) for old, new in zip(before, (scorers, seeds, tasks)))
    return found


def regenerate_arguments(
    chapter: str, profile: str, scorers: Sequence[str], seeds: Sequence[int], jobs: int = 1
) -> list[str]:
    """The arguments of ``python -m ssa_book`` that a reader runs to compute ``chapter``'s runs of
    ``scorers`` x ``seeds`` on the CPU (the in-context chapter's command computes both its tasks)."""
    arguments = [
        "regenerate",
        chapter,
        "--profile",
        check_profile(profile),
        "--scorers",
        *scorers,
        "--seeds",
        *map(str, seeds),
        "--device",
        "cpu",
    ]
    return arguments + (["--jobs", str(jobs)] if jobs > 1 else [])


def throwaway_environment(folder: Path) -> dict[str, str]:
    """This process's environment with the result, checkpoint and run folders inside ``folder``,
    one torch thread, and nothing that would let the book's cache stand in for a computation."""
    environment = {name: value for name, value in os.environ.items() if name not in CACHE_ENVIRONMENT}
    return {
        **environment,
        **{name: str(folder / relative) if relative else str(folder) for name, relative in THROWAWAY_FOLDERS.items()},
        "OMP_NUM_THREADS": "1",
    }


def package_root() -> Path:
    """The folder holding this copy of the package: a started ``python -m ssa_book`` imports it."""
    return Path(__file__).resolve().parent.parent


def run_reader_command(command: Sequence[str], environment: Mapping[str, str]) -> None:
    """Run ``command`` (:func:`training_command`) in a fresh process with ``environment``, its
    output shown; ``subprocess.CalledProcessError`` when it fails."""
    subprocess.run(list(command), cwd=package_root(), env=dict(environment), check=True)


@contextlib.contextmanager
def fresh_folder(folder: str | Path | None = None) -> Iterator[Path]:
    """``folder`` (created; it must be empty or absent, and is kept), or a temporary one (deleted after)."""
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="ssa-reruns-") as temporary:
            yield Path(temporary)
        return
    folder = Path(folder).expanduser().resolve()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ValueError(f"folder must be an empty folder or a path that does not exist yet; {folder} is not")
    folder.mkdir(parents=True, exist_ok=True)
    yield folder


def written_entries(folder: Path, profile: str) -> dict[str, Path]:
    """``{path relative to the results folder: file}`` of every entry written under ``folder``."""
    root = folder / profile
    return {path.relative_to(folder).as_posix(): path for path in sorted(root.rglob("*.json"))} if root.is_dir() else {}


def reader_of(chapter: str, setup: str | None = None) -> Any:
    """The reader of ``chapter``'s runs in ``setup`` (``None``: the chapter has one setup)."""
    reader = READERS[chapter]
    return reader if setup is None else reader.in_setup(setup)


def compare_folder(
    folder: Path,
    profile: str,
    subset: Sequence[SubsetRun],
    cached_runs: Mapping[tuple[str, str | None], Any],
    book_cache: Path,
) -> dict:
    """The comparison of every entry the rerun wrote under ``folder`` with the book cache's entry at
    the same relative path: one row per run of ``subset`` (:func:`compare_run`), the verdicts that
    change when all of a chapter's reruns in one setup replace their cached seeds at once (by
    :func:`part_name`), and for the other entries the commands wrote (logit spreads, the in-context
    chapter's other task, the runs of another setup) their largest difference. ``cached_runs``:
    ``{(chapter, setup): the runs its reader judges}`` (:attr:`SubsetRun.part`)."""

    written = written_entries(folder, profile)
    rows, records, used = [], {}, set()
    verdicts_before = {part: reader_of(*part).verdicts(runs, profile) for part, runs in cached_runs.items()}
    for run in subset:
        reader = run.reader
        experiment, config = reader.experiment(run, profile)
        relative = entry_path(experiment, config, profile=profile, results_dir=folder).relative_to(folder).as_posix()
        if relative not in written:
            raise RuntimeError(f"the rerun of {run.label} wrote no entry at {relative}")
        committed = book_cache / relative
        if not committed.is_file():
            raise RuntimeError(f"the book's cache has no entry at {relative} to compare {run.label} with")
        rerun_entry = read_entry(written[relative])
        rows.append(
            compare_run(
                run,
                read_entry(committed),
                rerun_entry,
                cached_runs[run.part],
                profile=profile,
                path=relative,
                verdicts_before=verdicts_before[run.part],
            )
        )
        records.setdefault(run.part, []).append(reader.record(run, rerun_entry.result, rerun_entry.provenance))
        used.add(relative)
    together = {
        part_name(*part): changed_verdicts(
            verdicts_before[part],
            reader_of(*part).verdicts(reader_of(*part).swapped(cached_runs[part], found), profile),
        )
        for part, found in records.items()
    }
    others = []
    for relative, path in written.items():
        if relative in used:
            continue
        committed = book_cache / relative
        numbers = (
            number_differences(read_entry(committed).result, read_entry(path).result) if committed.is_file() else None
        )
        others.append({"entry": relative, "in_book_cache": committed.is_file(), "numbers": numbers})
    return {"rows": rows, "verdicts_changed_all_replaced": together, "other_entries": others}


def _code_versions(subset: Sequence[SubsetRun], profile: str) -> dict[str, int]:
    """The code versions (:mod:`ssa_book.code_versions`) of the computations that made ``subset``'s entries."""

    names = {computation_of(run.reader.experiment(run, profile)[0]) for run in subset}
    return {name: version(name) for name in sorted(names - {None})}


# ----------------------------------------------------------------------------------------------
# Adding the runs a machine's record lacks.


def machine_record(profile: str, machine: Mapping, results_dir: str | Path | None = None) -> StoredEntry | None:
    """The stored record of ``machine`` (:func:`machine_identity`) at ``profile``, or ``None``."""
    return next(
        (record for record in stored_records(profile, COMPARED, results_dir) if record.config["machine"] == machine),
        None,
    )


def _is_current(row: Mapping, code_versions: Mapping[str, int], profile: str) -> bool:
    """Whether a stored row still stands for the run's entry in the book's cache: it compared the
    entry the run's config names today, made by the code version of today."""
    run = SubsetRun.of_row(row)
    experiment, config = run.reader.experiment(run, profile)
    relative = entry_path(experiment, config, profile=profile, results_dir=Path(".")).as_posix()
    name = computation_of(experiment)
    return row["entry"] == relative and (name is None or code_versions.get(name) == version(name))


def lacking(
    record: StoredEntry | None, subset: Sequence[SubsetRun], profile: str
) -> tuple[tuple[SubsetRun, ...], tuple[Mapping, ...]]:
    """``(runs to rerun, rows to keep)``: the runs of ``subset`` whose part (:attr:`SubsetRun.part`)
    a machine's ``record`` (``None``: it has none) lacks a current row of (:func:`_is_current`), all
    of that part's runs, as one regenerate command computes them; and the record's current rows of
    every other part."""
    rows = record.result["rows"] if record is not None else []
    versions = record.result.get("code_versions", {}) if record is not None else {}
    current = {SubsetRun.of_row(row): row for row in rows if _is_current(row, versions, profile)}
    parts = {run.part for run in subset if run not in current}
    return (
        tuple(run for run in subset if run.part in parts),
        tuple(row for run, row in current.items() if run.part not in parts),
    )


def _part_keys(part: tuple[str, str | None]) -> set[str]:
    """The keys a record's ``verdicts_changed_all_replaced`` gives ``part``: its :func:`part_name`,
    and in a record made before its chapter had setups, the chapter's name for its main setup."""
    chapter, setup = part
    return {part_name(chapter, setup)} | ({chapter} if setup in (None, *setups_of(chapter)[:1]) else set())


def merged(
    previous: StoredEntry, found: Mapping, kept: Sequence[Mapping], profile: str, subset: Sequence[SubsetRun] = SUBSET
) -> dict:
    """This session's comparison ``found`` (:func:`rerun`'s result) with ``kept``, the rows of the
    machine's ``previous`` record it did not rerun (:func:`lacking`), each with the commit it was
    rerun at, the rows in ``subset``'s order; ``kept_from``: what each earlier session that rows are
    kept from ran, oldest first."""
    earlier = previous.result
    commit = previous.provenance.git_commit
    rows = [{**row, "rerun_commit": row.get("rerun_commit", commit)} for row in kept]
    order = {run: index for index, run in enumerate(subset)}  # runs outside it after
    rows = sorted([*rows, *found["rows"]], key=lambda row: order.get(SubsetRun.of_row(row), len(order)))
    runs = {SubsetRun.of_row(row) for row in kept}
    sessions = [
        *earlier.get("kept_from", []),
        {
            "git_commit": commit,
            "created_utc": previous.provenance.created_utc,
            **{key: earlier[key] for key in ("commands", "jobs", "rerun_wall_time_s") if key in earlier},
            "subset": earlier["subset"],
        },
    ]
    kept_from = []
    for session in sessions:
        staying = [item for item in session["subset"] if SubsetRun(**item) in runs]
        if staying:
            kept_from.append({**session, "subset": staying})
    renewed = {item["entry"] for item in found["other_entries"]}
    rerun_keys = set().union(*(_part_keys(SubsetRun(**item).part) for item in found["subset"]))
    return {
        **found,
        "code_versions": _code_versions([SubsetRun.of_row(row) for row in rows], profile),
        "rows": rows,
        "verdicts_changed_all_replaced": {
            **{
                key: value
                for key, value in earlier.get("verdicts_changed_all_replaced", {}).items()
                if key not in rerun_keys
            },
            **found["verdicts_changed_all_replaced"],
        },
        "other_entries": [
            *(item for item in earlier.get("other_entries", []) if item["entry"] not in renewed),
            *found["other_entries"],
        ],
        "kept_from": kept_from,
    }


def rerun(
    profile: str,
    *,
    jobs: int = 1,
    folder: str | Path | None = None,
    subset: Sequence[SubsetRun] = SUBSET,
    results_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
    missing: bool = False,
):
    """Recompute ``subset`` at ``profile`` into a fresh, empty results folder (``folder``, else a
    temporary one) through the reader's regenerate command, ``jobs`` runs at a time, compare it
    with the book's cache (``results_dir``, default :func:`ssa_book.paths.results_dir`) and store the
    comparison as this machine's record (replacing its old one); the stored entry
    (:class:`ssa_book.results.store.StoredEntry`). With ``missing``, only the runs the machine's
    record lacks are recomputed (:func:`lacking`) and its other rows kept (:func:`merged`); the
    record as it is when it lacks none.

    Before any training, every run the chapters' verdicts read is read from the book's cache: a
    missing one stops the command with the command that computes it. The book's cache receives
    nothing but the record: the commands write into the fresh folder."""

    check_profile(profile)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an int >= 1; got {jobs!r}")
    book_cache = Path(results_dir).expanduser().resolve() if results_dir is not None else paths.results_dir()
    machine = machine_identity()
    previous, kept, whole = None, (), tuple(subset)
    if missing:
        previous = machine_record(profile, machine, book_cache)
        named = machine_label(machine["processor"], machine["aten_cpu_capability"])
        subset, kept = lacking(previous, whole, profile)
        if not subset:
            log(f"the record of {named} holds a current row of every run of the subset: none rerun")
            return previous
        log(
            f"rerunning what the record of {named} lacks: {'; '.join(run.label for run in subset)}"
            if previous is not None
            else f"{named} has no record yet: rerunning the whole subset"
        )
    commands = check_subset(subset)
    with paths.environment({"SSA_RESULTS_DIR": str(book_cache)}):
        cached_runs = {part: reader_of(*part).cached_runs(profile) for part in check_parts(subset)}

    def compute() -> dict:
        with fresh_folder(folder) as work:
            environment = throwaway_environment(work)
            started = time.perf_counter()
            run_commands = []
            for chapter, (scorers, seeds, _) in commands.items():
                arguments = regenerate_arguments(chapter, profile, scorers, seeds, jobs)
                run_commands.append(" ".join(["python -m ssa_book", *arguments]))
                log(f"rerunning: {run_commands[-1]}")
                run_reader_command(training_command(arguments), environment)
            training_s = time.perf_counter() - started
            with paths.environment({"SSA_RESULTS_DIR": str(book_cache)}):
                compared = compare_folder(work, profile, subset, cached_runs, book_cache)
        found = {
            "subset": [run.as_dict() for run in subset],
            "commands": run_commands,
            "jobs": jobs,
            "environment": {
                "OMP_NUM_THREADS": "1",
                **{name: f"<fresh folder>/{relative}".rstrip("/") for name, relative in THROWAWAY_FOLDERS.items()},
            },
            "code_versions": _code_versions(subset, profile),
            "rerun_wall_time_s": round(training_s, 3),
            **compared,
        }
        return found if previous is None or not kept else merged(previous, found, kept, profile, whole)

    return record_entry(COMPARED, {"machine": machine}, compute, profile=profile, results_dir=book_cache, device="cpu")


# Runs the reader's command line with deterministic algorithms switched on first: torch has no
# environment variable for them, so this is the only way a started command gets them.
_DETERMINISTIC_LAUNCH = (
    "import sys, torch; torch.use_deterministic_algorithms(True); "
    "from ssa_book.__main__ import main; sys.exit(main(sys.argv[1:]))"
)


def training_command(arguments: Sequence[str], deterministic: bool = False) -> list[str]:
    """The command line that runs ``python -m ssa_book ARGUMENTS`` (with deterministic algorithms)."""
    if deterministic:
        return [sys.executable, "-c", _DETERMINISTIC_LAUNCH, *arguments]
    return [sys.executable, "-m", "ssa_book", *arguments]


def stored_records(profile: str, folder: str, results_dir: str | Path | None = None) -> list[StoredEntry]:
    """The stored entries of ``folder`` at ``profile``, ordered by machine."""
    return sorted(entries_of(folder, profile, results_dir), key=record_machine)


def difference_text(value: float | None) -> str:
    if value is None:
        return "—"
    return "0 (same bits)" if value == 0 else f"{value:.3g}"
