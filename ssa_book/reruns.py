"""Do reruns match the book? How far a rerun on another machine moves the cached numbers, and
whether any verdict would change.

A float32 training run rounds differently on CPUs with other vector units (ATen and MKL pick
their kernels by CPU), and the differences grow through training, so a rerun elsewhere gives other
per-seed numbers. Two measurements say by how much, each stored as a cache entry of its own, one
per machine (:func:`ssa_book.results.cache.record_entry`, keyed by the CPU model and ATen's CPU capability;
a new measurement on a machine replaces its old one, and those of other machines accumulate):

* ``python -m ssa_book reruns run --profile cpu [--jobs 2]`` recomputes :data:`SUBSET`, a fixed subset
  of the cached runs, into a fresh, empty results folder through the command a reader uses
  (``python -m ssa_book regenerate CHAPTER ...``), and compares each rerun entry with the committed
  one: the chapter's endpoints, the largest difference over every number of the result, and the
  chapter's verdicts re-judged with the rerun in place of the cached seed
  (:func:`compare_run`). Stored under ``results/<profile>/reruns/compared/``; read by
  :func:`rerun_table` and :func:`rerun_summary`; ``python -m ssa_book reruns table`` prints them.
* ``python -m ssa_book reruns bitwise --profile smoke`` trains one short run of each chapter of the
  subset again and again, each in a fresh process, under the settings of
  :data:`BITWISE_SETTINGS` (ATen's capability pinned, MKL's conditional numerical
  reproducibility, deterministic algorithms) and says which give the same bits
  (:func:`bitwise`). Stored under ``results/cpu/reruns/bitwise/`` (see
  :data:`BITWISE_RECORD_PROFILE`); read by :func:`bitwise_table` and :func:`bitwise_summary`.

This is a book-layer module: it reads the chapters' own modules, and nothing in the library
(:mod:`ssa.scoring`, :mod:`ssa.attention`, :mod:`ssa.kernels`, :mod:`ssa.hf`) imports it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch

from ssa_book import paths
from ssa_book.verdicts.words import NOT_LEARNED, NOT_RUN_YET, NOT_TESTED, PREMISE_NOT_SHOWN, TOO_FEW_SEEDS, UNDECIDED
from ssa_book.verdicts.readings import NO_DIFFERENCE
from ssa_book.studies import READERS
from ssa_book.code_versions import computation_of, version
from ssa_book.plotting import scorer_label
from ssa_book.profiles import check_profile
from ssa_book.results.cache import record_entry
from ssa_book.results.keys import canonical_json, entry_path
from ssa_book.results.provenance import Provenance, instruction_sets, processor_name
from ssa_book.results.store import StoredEntry, entries_of, read_entry

COMPARED = "reruns/compared"  # the cache folder of the rerun records
BITWISE = "reruns/bitwise"  # the cache folder of the bitwise records
# Smoke results are never committed (.gitignore) and `make clean` deletes them, but the bitwise
# record is what the book shows: it lives beside the committed cpu cache, whatever the profile of
# the short runs it measured (stored in its config as ``runs_profile``).
BITWISE_RECORD_PROFILE = "cpu"
PROG = "python -m ssa_book reruns"
# Variables that would let a rerun read the book's cache instead of computing: dropped.
CACHE_ENVIRONMENT = ("SSA_REQUIRE_CACHE", "SSA_RESULTS_MIRROR")
# Where a rerun writes, inside its fresh folder ("": the folder itself), as tests/test_reruns.py
# sets them for the same-machine check.
THROWAWAY_FOLDERS = {"SSA_RESULTS_DIR": "", "SSA_CHECKPOINT_DIR": "checkpoints", "SSA_RUNS_DIR": "runs"}


@dataclasses.dataclass(frozen=True)
class SubsetRun:
    """One cached run of a chapter: its scorer and seed, and for an in-context chapter its task."""

    chapter: str
    scorer: str
    seed: int
    task: str | None = None

    def __post_init__(self) -> None:
        if self.chapter not in READERS:
            raise ValueError(f"chapter must be one of {', '.join(READERS)}; got {self.chapter!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an int >= 0; got {self.seed!r}")
        if (self.task is None) != (READERS[self.chapter].tasks == ()):
            raise ValueError(f"task: the {self.chapter} chapter's runs "
                             + (f"need one of {', '.join(READERS[self.chapter].tasks)}" if READERS[self.chapter].tasks else "have none")
                             + f"; got {self.task!r}")

    @property
    def label(self) -> str:
        return f"{self.chapter}{f' ({self.task!r})' if self.task else ''} / {self.scorer} / seed {self.seed}"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


# The subset that every machine reruns: seed 0 of softmax and SSA in two chapters whose models
# train in minutes at the cpu profile, on the direct attention path, and seed 0 of softmax and
# the paper's two SSA variants in the encoder chapter, on the blockwise path, whose vectorised
# tiles differ from CPU to CPU by instruction set.
SUBSET: tuple[SubsetRun, ...] = (
    SubsetRun("icl_quantification", "softmax", 0, "every"),
    SubsetRun("icl_quantification", "ssa", 0, "every"),
    SubsetRun("max_retrieval", "softmax", 0),
    SubsetRun("max_retrieval", "ssa", 0),
    *(SubsetRun("encoder", variant, 0) for variant in ("softmax", "ssa_n1.5", "ssa_n2")),
)


def _listed(names: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""


def describe_subset(subset: Sequence[SubsetRun] = SUBSET) -> str:
    """The subset in words, chapter by chapter: ``max_retrieval: softmax and ssa, seed 0``."""
    parts = []
    for chapter, (scorers, seeds, tasks) in check_subset(subset).items():
        quoted = [f'"{task}"' for task in tasks if task is not None]
        named = chapter + (f" ({_listed(quoted)} task)" if quoted else "")
        parts.append(f"{named}: {_listed(scorers)}, seed{'s' if len(seeds) > 1 else ''} {_listed([str(seed) for seed in seeds])}")
    return "; ".join(parts)


# ----------------------------------------------------------------------------------------------
# Comparing numbers.


def is_timing(key: str) -> bool:
    """Whether a result's ``key`` holds a time, which differs from run to run by nature."""
    return ("time" in key or "timing" in key or key.endswith(("_per_s", "_seconds"))
            or key in ("created_utc", "seconds"))


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
        rows.append({"endpoint": name, "cached": _finite_or_none(before), "rerun": _finite_or_none(after),
                     "difference": _finite_or_none(difference)})
    return rows


def changed_verdicts(before: Mapping[str, str], after: Mapping[str, str]) -> list[dict]:
    """The verdicts whose outcome differs: ``verdict``, its ``cached`` and ``rerun`` outcome."""
    return [{"verdict": claim, "cached": before.get(claim, "not judged"), "rerun": after.get(claim, "not judged")}
            for claim in dict.fromkeys([*before, *after]) if before.get(claim) != after.get(claim)]


def _machine_of(provenance: Provenance) -> dict:
    """``{processor, instruction_sets}`` of an entry's provenance (``None`` where not recorded)."""
    return {"processor": provenance.processor or None, "instruction_sets": provenance.instruction_sets}


def compare_run(run: SubsetRun, cached_entry: StoredEntry, rerun_entry: StoredEntry, cached_runs: Mapping, *, profile: str,
                path: str = "", verdicts_before: Mapping[str, str] | None = None) -> dict:
    """The comparison of one rerun entry with the cached one: the machines of both, the chapter's endpoints, the largest
    difference over every number of the result, and the verdicts that change when the rerun
    replaces the cached seed in ``cached_runs`` (the chapter's runs, :meth:`cached_runs`);
    ``verdicts_before``: the verdicts of ``cached_runs``, when already judged."""
    reader = READERS[run.chapter]
    if cached_entry.config != rerun_entry.config:
        raise ValueError(f"rerun_entry: {run.label} was computed from another config than the cached entry")
    cached_record = reader.record(run, cached_entry.result, cached_entry.provenance)
    rerun_record = reader.record(run, rerun_entry.result, rerun_entry.provenance)
    before = reader.verdicts(cached_runs, profile) if verdicts_before is None else verdicts_before
    after = reader.verdicts(reader.swapped(cached_runs, [rerun_record]), profile)
    return {**run.as_dict(), "entry": path,
            "cached_on": _machine_of(cached_entry.provenance), "rerun_on": _machine_of(rerun_entry.provenance),
            "cached_commit": cached_entry.provenance.git_commit,
            "endpoints": endpoint_differences(reader, cached_record, rerun_record, profile),
            "numbers": number_differences(cached_entry.result, rerun_entry.result),
            "verdicts_changed": changed_verdicts(before, after)}


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


def check_subset(subset: Sequence[SubsetRun]) -> dict[str, tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...]]]:
    """``{chapter: (scorers, seeds, tasks)}`` of ``subset``; ``ValueError`` unless each chapter's
    runs are every scorer x seed (x task) named, which is what one regenerate command computes."""
    if not subset:
        raise ValueError("subset must name at least one run")
    grouped: dict[str, list[SubsetRun]] = {}
    for run in subset:
        grouped.setdefault(run.chapter, []).append(run)
    found = {}
    for chapter, runs in grouped.items():
        scorers = tuple(dict.fromkeys(run.scorer for run in runs))
        seeds = tuple(dict.fromkeys(run.seed for run in runs))
        tasks = tuple(dict.fromkeys(run.task for run in runs))
        if len(set(runs)) != len(scorers) * len(seeds) * len(tasks) or len(set(runs)) != len(runs):
            raise ValueError(f"subset: the {chapter} runs must be each of its scorers x seeds (x tasks) once, "
                             "as one regenerate command computes them")
        found[chapter] = (scorers, seeds, tasks)
    return found


def regenerate_arguments(chapter: str, profile: str, scorers: Sequence[str], seeds: Sequence[int], jobs: int = 1) -> list[str]:
    """The arguments of ``python -m ssa_book`` that a reader runs to compute ``chapter``'s runs of
    ``scorers`` x ``seeds`` on the CPU (the in-context chapter's command computes both its tasks)."""
    arguments = ["regenerate", chapter, "--profile", check_profile(profile), "--scorers", *scorers,
                 "--seeds", *map(str, seeds), "--device", "cpu"]
    return arguments + (["--jobs", str(jobs)] if jobs > 1 else [])


def throwaway_environment(folder: Path) -> dict[str, str]:
    """This process's environment with the result, checkpoint and run folders inside ``folder``,
    one torch thread, and nothing that would let the book's cache stand in for a computation."""
    environment = {name: value for name, value in os.environ.items() if name not in CACHE_ENVIRONMENT}
    return {**environment, **{name: str(folder / relative) if relative else str(folder)
                              for name, relative in THROWAWAY_FOLDERS.items()}, "OMP_NUM_THREADS": "1"}


def _package_root() -> Path:
    """The folder holding this copy of the package: a started ``python -m ssa_book`` imports it."""
    return Path(__file__).resolve().parent.parent


def run_reader_command(command: Sequence[str], environment: Mapping[str, str]) -> None:
    """Run ``command`` (:func:`training_command`) in a fresh process with ``environment``, its
    output shown; ``subprocess.CalledProcessError`` when it fails."""
    subprocess.run(list(command), cwd=_package_root(), env=dict(environment), check=True)


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


def _written_entries(folder: Path, profile: str) -> dict[str, Path]:
    """``{path relative to the results folder: file}`` of every entry written under ``folder``."""
    root = folder / profile
    return {path.relative_to(folder).as_posix(): path for path in sorted(root.rglob("*.json"))} if root.is_dir() else {}


def compare_folder(folder: Path, profile: str, subset: Sequence[SubsetRun], cached_runs: Mapping[str, Any],
                   book_cache: Path) -> dict:
    """The comparison of every entry the rerun wrote under ``folder`` with the book cache's entry at
    the same relative path: one row per run of ``subset`` (:func:`compare_run`), the verdicts that
    change when all of a chapter's reruns replace their cached seeds at once, and for the other
    entries the commands wrote (logit spreads, the in-context chapter's other task) their largest
    difference."""

    written = _written_entries(folder, profile)
    rows, records, used = [], {}, set()
    verdicts_before = {chapter: READERS[chapter].verdicts(runs, profile) for chapter, runs in cached_runs.items()}
    for run in subset:
        reader = READERS[run.chapter]
        experiment, config = reader.experiment(run, profile)
        relative = entry_path(experiment, config, profile=profile, results_dir=folder).relative_to(folder).as_posix()
        if relative not in written:
            raise RuntimeError(f"the rerun of {run.label} wrote no entry at {relative}")
        committed = book_cache / relative
        if not committed.is_file():
            raise RuntimeError(f"the book's cache has no entry at {relative} to compare {run.label} with")
        rerun_entry = read_entry(written[relative])
        rows.append(compare_run(run, read_entry(committed), rerun_entry, cached_runs[run.chapter], profile=profile, path=relative,
                                verdicts_before=verdicts_before[run.chapter]))
        records.setdefault(run.chapter, []).append(reader.record(run, rerun_entry.result, rerun_entry.provenance))
        used.add(relative)
    together = {chapter: changed_verdicts(verdicts_before[chapter],
                                          READERS[chapter].verdicts(READERS[chapter].swapped(cached_runs[chapter], found), profile))
                for chapter, found in records.items()}
    others = []
    for relative, path in written.items():
        if relative in used:
            continue
        committed = book_cache / relative
        numbers = number_differences(read_entry(committed).result, read_entry(path).result) if committed.is_file() else None
        others.append({"entry": relative, "in_book_cache": committed.is_file(), "numbers": numbers})
    return {"rows": rows, "verdicts_changed_all_replaced": together, "other_entries": others}


def _code_versions(subset: Sequence[SubsetRun], profile: str) -> dict[str, int]:
    """The code versions (:mod:`ssa_book.code_versions`) of the computations that made ``subset``'s entries."""

    names = {computation_of(READERS[run.chapter].experiment(run, profile)[0]) for run in subset}
    return {name: version(name) for name in sorted(names - {None})}


def rerun(profile: str, *, jobs: int = 1, folder: str | Path | None = None, subset: Sequence[SubsetRun] = SUBSET,
          results_dir: str | Path | None = None, log: Callable[[str], None] = print):
    """Recompute ``subset`` at ``profile`` into a fresh, empty results folder (``folder``, else a
    temporary one) through the reader's regenerate command, ``jobs`` runs at a time, compare it
    with the book's cache (``results_dir``, default :func:`ssa_book.paths.results_dir`) and store the
    comparison as this machine's record (replacing its old one); the stored entry
    (:class:`ssa_book.results.store.StoredEntry`).

    Before any training, every run the chapters' verdicts read is read from the book's cache: a
    missing one stops the command with the command that computes it."""

    check_profile(profile)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an int >= 1; got {jobs!r}")
    commands = check_subset(subset)
    book_cache = Path(results_dir).expanduser().resolve() if results_dir is not None else paths.results_dir()
    with paths.environment({"SSA_RESULTS_DIR": str(book_cache)}):
        cached_runs = {chapter: READERS[chapter].cached_runs(profile) for chapter in commands}
    machine = machine_identity()

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
        return {"subset": [run.as_dict() for run in subset], "commands": run_commands, "jobs": jobs,
                "environment": {"OMP_NUM_THREADS": "1", **{name: f"<fresh folder>/{relative}".rstrip("/")
                                                           for name, relative in THROWAWAY_FOLDERS.items()}},
                "code_versions": _code_versions(subset, profile), "rerun_wall_time_s": round(training_s, 3), **compared}

    return record_entry(COMPARED, {"machine": machine}, compute, profile=profile, results_dir=book_cache, device="cpu")


# ----------------------------------------------------------------------------------------------
# Reading the records.


def _records(profile: str, folder: str, results_dir: str | Path | None = None) -> list[StoredEntry]:
    """The stored entries of ``folder`` at ``profile``, ordered by machine."""
    return sorted(entries_of(folder, profile, results_dir), key=record_machine)


def rerun_records(profile: str, results_dir: str | Path | None = None) -> list[StoredEntry]:
    """Every machine's rerun record at ``profile`` (the stored entries)."""
    return _records(profile, COMPARED, results_dir)


def _difference_text(value: float | None) -> str:
    if value is None:
        return "—"
    return "0 (same bits)" if value == 0 else f"{value:.3g}"


def _signed(value: float) -> str:
    return "0" if value == 0 else f"{value:+.3g}"


def _endpoint_text(rows: Sequence[Mapping]) -> str:
    return "; ".join(f"{row['endpoint']}: " + ("not tested at this profile" if row["difference"] is None else _signed(row["difference"]))
                     for row in rows)


def _verdicts_text(changed: Sequence[Mapping]) -> str:
    return "; ".join(f"{_verdict_name(item['verdict'])}: {item['cached']} → {item['rerun']}" for item in changed) or "none"


def _largest_text(numbers: Mapping) -> str:
    text = _difference_text(numbers["largest"])
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
    """One chapter's reruns in one machine's record, judged again by today's rule.

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

    @property
    def same_numbers(self) -> bool:
        return all(_same_numbers(row) for row in self.rows)


# The words of a verdict, or of a reading of verdicts (form_or_slope), that decide nothing.
_OPEN_WORDS = (UNDECIDED, TOO_FEW_SEEDS, NOT_LEARNED, NOT_TESTED, PREMISE_NOT_SHOWN, NOT_RUN_YET)


def is_decided(label: str) -> bool:
    """Whether a verdict's words (:meth:`ssa_book.verdicts.verdict.Verdict.label`, as a reader's verdicts give
    them) are decided: a direction or "no difference that matters", or a reading that rests on one."""
    return label != NO_DIFFERENCE and not label.startswith(_OPEN_WORDS)


def judged_today(record: StoredEntry, profile: str, results_dir: str | Path | None = None) -> dict[str, ChapterToday]:
    """``{chapter: ChapterToday}`` for each chapter of a machine's rerun ``record``: its reruns judged
    again by the rule as it is now, not as it was when the record was made. A rerun that gave the
    cached numbers changes no verdict; one that did not is put in place of its cached seed through the
    chapter's reader from the endpoints the record keeps (:class:`EndpointReader`), and only the
    verdicts that read nothing else are judged again; a reader that cannot rebuild a run from its
    endpoints leaves the chapter not judged again. The chapter's cached runs are read from
    ``results_dir`` (default: the book's cache) only where a rerun moved a number."""
    found: dict[str, ChapterToday] = {}
    by_chapter: dict[str, list[Mapping]] = {}
    for row in record.result["rows"]:
        by_chapter.setdefault(row["chapter"], []).append(row)
    for chapter, rows in by_chapter.items():
        reader = READERS[chapter]
        if all(_same_numbers(row) for row in rows):
            found[chapter] = ChapterToday(chapter, tuple(rows), tuple(() for _ in rows), (), None, None)
            continue
        if not isinstance(reader, EndpointReader):
            found[chapter] = ChapterToday(chapter, tuple(rows), tuple(() if _same_numbers(row) else None for row in rows), None,
                                          None, None)
            continue
        with paths.environment({"SSA_RESULTS_DIR": str(Path(results_dir).expanduser().resolve())} if results_dir else {}):
            cached = reader.cached_runs(profile)
        before = reader.endpoint_verdicts(cached, profile)
        rebuilt = [reader.with_endpoints(cached, SubsetRun(row["chapter"], row["scorer"], row["seed"], row.get("task")),
                                         {item["endpoint"]: item["rerun"] for item in row["endpoints"]}, profile) for row in rows]
        alone = tuple(tuple(changed_verdicts(before, reader.endpoint_verdicts(reader.swapped(cached, [one]), profile)))
                      for one in rebuilt)
        together = tuple(changed_verdicts(before, reader.endpoint_verdicts(reader.swapped(cached, rebuilt), profile)))
        found[chapter] = ChapterToday(chapter, tuple(rows), alone, together, len(before), len(reader.verdicts(cached, profile)),
                                      sum(map(is_decided, before.values())),
                                      sum(label.startswith(TOO_FEW_SEEDS) for label in before.values()))
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
    moves = [(item["difference"], row, item["endpoint"]) for row in rows for item in row["endpoints"] if item["difference"] is not None]
    return max(moves, key=lambda move: abs(move[0])) if moves else None


def _run_name(row: Mapping) -> str:
    """"SSA seed 0" ("SSA seed 0 on \"every\"" for an in-context run)."""
    return f"{scorer_label(row['scorer'])} seed {row['seed']}" + (f' on "{row["task"]}"' if row.get("task") else "")


def _move_text(move: tuple[float, Mapping, str]) -> str:
    difference, row, endpoint = move
    return f"{abs(difference):.3g} ({_run_name(row)}'s {endpoint}, {_signed(difference)})"


def rerun_table(profile: str, results_dir: str | Path | None = None):
    """One row per machine x rerun run at ``profile``: the machine (and the commit it reran),
    the run, the machine its cached entry was computed on, the largest absolute difference over
    every number of the result, the differences of the chapter's endpoints (rerun minus cached), and
    the verdicts that change when the rerun replaces the cached seed, judged again by today's rule
    (:func:`judged_today`: "none" or which, from what to what). An empty frame (with these columns)
    when no machine has a record."""
    import pandas as pd

    columns = ["machine", "reran commit", "chapter", "scorer", "seed", "cached on", "largest absolute difference",
               "endpoint differences (rerun − cached)", "verdicts changed (today's rule)"]
    rows = []
    for record in rerun_records(profile, results_dir):
        commit = (record.provenance.git_commit or "")[:10] or "not recorded"
        today = judged_today(record, profile, results_dir)
        position = {chapter: 0 for chapter in today}
        for row in record.result["rows"]:
            chapter = today[row["chapter"]]
            changed = chapter.alone[position[row["chapter"]]]
            position[row["chapter"]] += 1
            cached_sets = row["cached_on"].get("instruction_sets") or {}
            rows.append({"machine": record_machine(record), "reran commit": commit,
                         "chapter": row["chapter"] + (f' ("{row["task"]}")' if row.get("task") else ""),
                         "scorer": row["scorer"], "seed": row["seed"],
                         "cached on": machine_label(row["cached_on"].get("processor"), cached_sets.get("aten_cpu_capability")),
                         "largest absolute difference": _largest_text(row["numbers"]),
                         "endpoint differences (rerun − cached)": _endpoint_text(row["endpoints"]),
                         "verdicts changed (today's rule)": _today_text(chapter, changed)})
    return pd.DataFrame(rows, columns=columns)


def _changes(today: ChapterToday) -> list[Mapping]:
    """Every verdict change of a chapter's reruns, alone or together (those judged again)."""
    return [item for changed in (*today.alone, today.together) if changed for item in changed]


def rerun_summary(profile: str, results_dir: str | Path | None = None) -> str:
    """One sentence: how many machines reran the subset at ``profile``, by how much the chapters'
    endpoints (with the largest move of one seed) and any number moved, and whether any verdict
    changes when today's rule judges them again (:func:`judged_today`: a rerun alone, or all of a
    machine's together, in place of the cached seeds)."""
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
        moved = (f"moved one seed's endpoint by at most {_move_text(move) if move else '0'} and any number of a result by at most "
                 f"{max(largest, default=0.0):.3g}")
    claims = sorted({_verdict_name(item["verdict"]) for chapter in today for item in _changes(chapter)})
    changed = (f"{len(claims)} of the chapters' verdicts changed ({'; '.join(claims)})" if claims else
               "no verdict the chapters compute changed")
    notes = []
    for chapter in today:
        if chapter.same_numbers:
            continue
        if chapter.judged is None:
            notes.append(f"{chapter.chapter}'s verdicts cannot be judged again from the record, which keeps the endpoints only")
        elif chapter.judged < chapter.verdicts:
            notes.append(f"of {chapter.chapter}'s {chapter.verdicts} verdicts, the {chapter.judged} that read only the endpoints the "
                         f"record keeps were judged again ({_decided_text(chapter)}), the other {chapter.verdicts - chapter.judged} "
                         "cannot be")
        else:
            notes.append(f"{chapter.chapter}'s {chapter.verdicts} verdicts were judged again ({_decided_text(chapter)})")
    same = sum(_same_numbers(row) for row in rows)
    if same:
        notes.insert(0, f"{same} of the reruns gave the cached numbers, which no rule can read otherwise")
    return (f"On {counted} ({', '.join(machines)}), the {len(rows)} reruns {moved}; judged again by today's rule, with one rerun "
            f"or all of a machine's in place of the cached seeds, {changed}" + (f" ({'; '.join(notes)})" if notes else "") + ".")


def _decided_text(chapter: ChapterToday) -> str:
    """How many of a chapter's verdicts judged again were decided, and how many read "exploratory",
    which a rerun cannot move (the pairs' count fixes it): a check that moves no decided verdict
    says so rather than reading as a test that every verdict passed."""
    decided = f"{chapter.decided or 'none'} of them decided" if chapter.decided is not None else "how many were decided unknown"
    return decided + (f", {chapter.exploratory} exploratory" if chapter.exploratory else "")


def _verdict_name(name: str) -> str:
    """A recorded verdict's name for a reader: "accuracy vs softmax: entmax15" -> "1.5-entmax's
    accuracy against softmax"; other names as recorded."""
    what, versus, scorer = name.partition(" vs softmax: ")
    return f"{scorer_label(scorer)}'s {what} against softmax" if versus else name


def rerun_sentence(chapter: str, profile: str, results_dir: str | Path | None = None, where: str = "this page") -> str:
    """One sentence for a page that shows ``chapter``'s verdicts or reads its runs (``where`` names
    the chapter on another page): how far the reruns on other machines moved one seed's endpoint at
    most, and which of the chapter's verdicts change, from what to what, when today's rule judges them
    again with a rerun in place of its cached seed (:func:`judged_today`); "" when no machine has
    rerun the chapter's runs."""
    rows, machines, changes, counts, unjudged, decided = [], [], [], set(), False, set()
    for record in rerun_records(profile, results_dir):
        today = judged_today(record, profile, results_dir).get(chapter)
        if today is None:
            continue
        rows += today.rows
        machines.append(record_machine(record))
        unjudged |= any(changed is None for changed in today.alone)
        if today.judged is not None:
            counts.add((today.judged, today.verdicts))
            decided.add((today.decided, today.exploratory))
        for row, changed in zip(today.rows, today.alone):
            changes += [f"{_verdict_name(item['verdict'])} reads \"{item['cached']}\" with the cached seeds and \"{item['rerun']}\" "
                        f"with {_run_name(row)} rerun on {record_machine(record)} in its place" for item in changed or ()]
    if not rows:
        return ""
    reran = sorted({(row["scorer"], row["seed"]) for row in rows}, key=lambda pair: (pair[1], pair[0]))
    seeds = sorted({seed for _, seed in reran})
    runs = (f"{_listed(list(dict.fromkeys(scorer_label(scorer) for scorer, _ in reran)))} seed{'s' if len(seeds) > 1 else ''} "
            f"{_listed([str(seed) for seed in seeds])}")
    move = largest_move(rows)
    text = (f"Rerun on another machine ({', '.join(dict.fromkeys(machines))}; the reproducing page has the reruns), {runs} of "
            f"{where} moved by up to {_move_text(move) if move else '0'} in one endpoint; judged again by today's rule with each "
            "rerun in place of its cached seed, ")
    if changes:
        text += (f"{'a verdict' if len(changes) == 1 else f'{len(changes)} verdicts'} change{'s' if len(changes) == 1 else ''}: "
                 + "; ".join(changes) + ". Its margin is within what rounding differences between CPUs move.")
    elif unjudged:
        text += "whether a verdict changes cannot be said: the record keeps the endpoints only."
    else:
        partial = [(judged, total) for judged, total in counts if judged < total]  # the chapter's reader: one count
        judged = f"the {partial[0][0]} verdicts that read only the endpoints the record keeps" if partial else "the verdicts"
        others = f" (the other {partial[0][1] - partial[0][0]} cannot be judged again)" if partial else ""
        undecided = [exploratory for count, exploratory in decided if count == 0]
        if undecided and len(decided) == 1:
            text += (f"{judged} include no decided one ({undecided[0]} are exploratory), so the check cannot move a decided "
                     f"verdict{others}.")
        else:
            text += f"none of {judged} changes{others}." if partial else "no verdict changes."
    return text


# ----------------------------------------------------------------------------------------------
# Bitwise reproducibility.


@dataclasses.dataclass(frozen=True)
class BitwiseSetting:
    """A way to start the training runs: extra environment variables, whether
    ``torch.use_deterministic_algorithms(True)`` is set, and the CPU flags it needs."""

    name: str
    description: str
    environment: Mapping[str, str] = dataclasses.field(default_factory=dict)
    deterministic: bool = False
    needs_flags: tuple[str, ...] = ()


DEFAULT_SETTING = "default"
ATEN_SCALAR = "aten scalar"
_PINNED = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
BITWISE_SETTINGS: tuple[BitwiseSetting, ...] = (
    BitwiseSetting(DEFAULT_SETTING, "PyTorch's defaults: ATen's and MKL's vector code chosen for this CPU"),
    BitwiseSetting(ATEN_SCALAR, "ATen's scalar kernels, which any x86-64 CPU runs", {"ATEN_CPU_CAPABILITY": "default"}),
    BitwiseSetting("aten avx2", "ATen's AVX2 kernels", {"ATEN_CPU_CAPABILITY": "avx2"}, needs_flags=("avx2", "fma")),
    BitwiseSetting("aten avx512", "ATen's AVX-512 kernels", {"ATEN_CPU_CAPABILITY": "avx512"},
                   needs_flags=("avx512f", "avx512dq", "avx512bw", "avx512vl")),
    BitwiseSetting("aten scalar + mkl compatible", "ATen's scalar kernels and MKL's conditional numerical reproducibility "
                   "in its compatible mode (the same code path on every x86-64 CPU)", _PINNED),
    BitwiseSetting("aten scalar + mkl compatible + deterministic", "as above, with torch.use_deterministic_algorithms(True), "
                   "set by the command before it runs the reader's command in the same process (torch reads no "
                   "environment variable for it)", _PINNED, deterministic=True),
)
# The short runs the bitwise check trains: SSA, seed 0, one of each chapter of the subset.
BITWISE_RUNS: tuple[tuple[str, str, int], ...] = (("icl_quantification", "ssa", 0), ("max_retrieval", "ssa", 0))
# Runs the reader's command line with deterministic algorithms switched on first: torch has no
# environment variable for them, so this is the only way a started command gets them.
_DETERMINISTIC_LAUNCH = ("import sys, torch; torch.use_deterministic_algorithms(True); "
                         "from ssa_book.__main__ import main; sys.exit(main(sys.argv[1:]))")


def training_command(arguments: Sequence[str], deterministic: bool = False) -> list[str]:
    """The command line that runs ``python -m ssa_book ARGUMENTS`` (with deterministic algorithms)."""
    if deterministic:
        return [sys.executable, "-c", _DETERMINISTIC_LAUNCH, *arguments]
    return [sys.executable, "-m", "ssa_book", *arguments]


def weights_digest(path: Path) -> str:
    """SHA-256 of the bits of a training checkpoint's model and optimizer tensors (in key order)."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    digest = hashlib.sha256()

    def feed(value: Any, where: str) -> None:
        if isinstance(value, torch.Tensor):
            digest.update(where.encode())
            digest.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(value, Mapping):
            for key in sorted(value, key=str):
                feed(value[key], f"{where}/{key}")
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                feed(item, f"{where}[{index}]")

    feed({"model": state["model"], "optimizer": state["optimizer"]}, "")
    return digest.hexdigest()


# What the bitwise check compares: the chapters round the numbers they store to 6 decimals, so the
# in-context run's trained weights are compared too (max retrieval keeps no checkpoint).
BITWISE_COMPARED = ("each run's stored entries (config and result, timings apart; the chapters store their numbers rounded "
                    "to 6 decimals) and the in-context run's final checkpoint (its model and optimizer tensors), bit for bit")


def _train_once(setting: BitwiseSetting, chapter: str, scorer: str, seed: int, profile: str) -> tuple[dict[str, Any], float]:
    """Train one run in a fresh process and folder under ``setting``: ({entry path: its config,
    timeless result, wall time and ATen's CPU capability; checkpoint path: its :func:`weights_digest`},
    seconds the process took)."""
    with fresh_folder() as work:
        environment = {**throwaway_environment(work), **setting.environment}
        started = time.perf_counter()
        done = subprocess.run(training_command(regenerate_arguments(chapter, profile, [scorer], [seed]), setting.deterministic),
                              cwd=_package_root(), env=environment, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"{setting.name}: {chapter} failed (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
        entries: dict[str, Any] = {}
        for relative, path in _written_entries(work, profile).items():
            stored = read_entry(path)
            capability = (stored.provenance.instruction_sets or {}).get("aten_cpu_capability", "")
            entries[relative] = {"config": stored.config, "result": timeless(stored.result),
                                 "wall_time_s": stored.provenance.wall_time_s, "aten_cpu_capability": capability}
        checkpoints = work / "checkpoints"
        entries.update({path.relative_to(work).as_posix(): {"weights": weights_digest(path)}
                        for path in sorted(checkpoints.rglob("*.pt"))} if checkpoints.is_dir() else {})
    if not entries:
        raise RuntimeError(f"{setting.name}: {chapter} wrote no entry")
    return entries, seconds


def _same_bits(first: Mapping[str, Any], second: Mapping[str, Any]) -> bool:
    """Whether two runs' entries hold the same configs and results, bit for bit (timings apart)."""

    def bits(entries):
        return canonical_json({path: [entry.get("config"), entry.get("result"), entry.get("weights")] for path, entry in entries.items()})

    return bits(first) == bits(second)


def _largest_difference(first: Mapping[str, Any], second: Mapping[str, Any]) -> float | None:
    """The largest difference between two runs' stored results (their weights are bits, not numbers here)."""
    found = number_differences({path: entry["result"] for path, entry in first.items() if "result" in entry},
                               {path: entry["result"] for path, entry in second.items() if "result" in entry})
    return found["largest"]


def matmul_library() -> dict:
    """Which library does this machine's float32 matrix products: torch's build (BLAS_INFO) and
    the calls a small linear layer's forward and backward make, counted from MKL's and oneDNN's
    verbose output in a fresh process (with and without ``MKL_CBWR=COMPATIBLE``)."""
    probe = ("import torch; torch.manual_seed(0); layer = torch.nn.Linear(64, 64); "
             "x = torch.randn(8, 16, 64, requires_grad=True); layer(x).sum().backward(); "
             "(torch.randn(4, 2, 16, 8) @ torch.randn(4, 2, 8, 16)).sum()")
    build = torch.__config__.show()
    blas = next((part.split("=", 1)[1] for part in build.replace(",", " ").split() if part.startswith("BLAS_INFO=")), "unknown")
    found = {"blas": blas}
    for mode, extra in (("default", {}), ("MKL_CBWR=COMPATIBLE", {"MKL_CBWR": "COMPATIBLE"})):
        environment = {**os.environ, "MKL_VERBOSE": "1", "ONEDNN_VERBOSE": "1", "OMP_NUM_THREADS": "1", **extra}
        lines = subprocess.run([sys.executable, "-c", probe], env=environment, capture_output=True, text=True,
                               check=True).stdout.splitlines()
        calls = [line for line in lines if line.startswith("MKL_VERBOSE S")]
        found[mode] = {"mkl_sgemm_calls": len(calls), "onednn_calls": sum(line.startswith("onednn_verbose,") for line in lines),
                       "mkl_cnr": sorted({part.split(":", 1)[1] for line in calls for part in line.split() if part.startswith("CNR:")})}
    return found


def _cpu_flags() -> set[str]:

    return set((instruction_sets("cpu") or {}).get("flags", []))


def bitwise(profile: str = "smoke", *, repeats: int = 2, settings: Sequence[BitwiseSetting] = BITWISE_SETTINGS,
            runs: Sequence[tuple[str, str, int]] = BITWISE_RUNS, results_dir: str | Path | None = None,
            log: Callable[[str], None] = print):
    """Train each of ``runs`` at ``profile`` ``repeats`` times under each of ``settings``, each
    time in a fresh process and folder, and store which settings give the same bits as the
    default and as ATen's scalar kernels, with their times, as this machine's bitwise record
    (under :data:`BITWISE_RECORD_PROFILE`; the stored entry). A setting that needs a vector unit
    this CPU lacks is skipped, saying so. One untimed run first builds the C++ kernels."""

    check_profile(profile)
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1; got {repeats!r}")
    names = [setting.name for setting in settings]
    if DEFAULT_SETTING not in names or ATEN_SCALAR not in names:
        raise ValueError(f"settings must include {DEFAULT_SETTING!r} and {ATEN_SCALAR!r}, the references")
    flags = _cpu_flags()
    machine = machine_identity()

    def compute() -> dict:
        load_before = os.getloadavg()
        log("warming up (builds the C++ kernels if needed)")
        for chapter, scorer, seed in runs:
            _train_once(settings[names.index(DEFAULT_SETTING)], chapter, scorer, seed, profile)
        measured: dict[str, list[dict[str, Any]]] = {}
        seconds: dict[str, list[float]] = {}
        training: dict[str, list[float]] = {}
        runnable = [setting for setting in settings if set(setting.needs_flags) <= flags]
        for repeat in range(repeats):  # settings interleaved, so that a change of load falls on all of them
            for setting in runnable:
                entries, total = {}, 0.0
                for chapter, scorer, seed in runs:
                    found, spent = _train_once(setting, chapter, scorer, seed, profile)
                    entries.update(found)
                    total += spent
                measured.setdefault(setting.name, []).append(entries)
                seconds.setdefault(setting.name, []).append(total)
                training.setdefault(setting.name, []).append(sum(entry["wall_time_s"] for entry in entries.values()
                                                                 if "wall_time_s" in entry))
                log(f"repeat {repeat + 1}/{repeats}, {setting.name}: {total:.1f} s")
        default, scalar = measured[DEFAULT_SETTING][0], measured[ATEN_SCALAR][0]
        rows = []
        for setting in settings:
            row = {"setting": setting.name, "description": setting.description, "environment": dict(setting.environment),
                   "deterministic": setting.deterministic}
            if setting.name not in measured:
                missing = sorted(set(setting.needs_flags) - flags)
                rows.append({**row, "skipped": f"this CPU lacks {', '.join(missing)}"})
                continue
            found = measured[setting.name]
            capabilities = sorted({entry["aten_cpu_capability"] for entries in found for entry in entries.values()
                                   if "aten_cpu_capability" in entry})
            rows.append({**row, "skipped": None, "aten_cpu_capability": capabilities,
                         "repeats_identical": all(_same_bits(found[0], other) for other in found[1:]) if len(found) > 1 else None,
                         "same_bits_as_default": _same_bits(found[0], default),
                         "same_bits_as_aten_scalar": _same_bits(found[0], scalar),
                         "largest_difference_from_default": _largest_difference(default, found[0]),
                         "wall_time_s": round(statistics.mean(seconds[setting.name]), 3),
                         "entry_wall_time_s": round(statistics.mean(training[setting.name]), 3)})
        load_after = os.getloadavg()
        cpus = os.cpu_count() or 1
        loaded = max(load_before[0], load_after[0]) > 0.5
        return {"runs_profile": profile, "repeats": repeats, "compared": BITWISE_COMPARED,
                "runs": [{"chapter": chapter, "scorer": scorer, "seed": seed} for chapter, scorer, seed in runs],
                "commands": [" ".join(["python -m ssa_book", *regenerate_arguments(chapter, profile, [scorer], [seed])])
                             for chapter, scorer, seed in runs],
                "settings": rows, "matmul": matmul_library(),
                "load_average": {"before": round(load_before[0], 2), "after": round(load_after[0], 2), "cpus": cpus},
                "timing_note": (f"timed on a loaded machine (load average {max(load_before[0], load_after[0]):.1f} on {cpus} "
                                "CPUs, other jobs running): the times compare the settings with each other, measured "
                                "interleaved, not with other machines" if loaded else "timed on an idle machine")}

    return record_entry(BITWISE, {"machine": machine, "runs_profile": profile}, compute, profile=BITWISE_RECORD_PROFILE,
                        results_dir=results_dir, device="cpu")


def bitwise_records(results_dir: str | Path | None = None) -> list[StoredEntry]:
    """Every machine's bitwise record (the stored entries)."""
    return _records(BITWISE_RECORD_PROFILE, BITWISE, results_dir)


def _yes_no(value: bool | None) -> str:
    return "—" if value is None else "yes" if value else "no"


def bitwise_table(results_dir: str | Path | None = None):
    """One row per machine x setting of the bitwise records: the environment it sets, whether its
    repeats gave the same bits, whether it gave the default's and ATen's scalar kernels' bits,
    the largest difference from the default, and the time per pair of runs (and against the
    default's). An empty frame (with these columns) when there is no record."""
    import pandas as pd

    columns = ["machine", "runs", "setting", "environment", "repeats: same bits", "same bits as default",
               "same bits as ATen scalar", "largest absolute difference from default", "seconds per pair of runs", "× default's time"]
    rows = []
    for record in bitwise_records(results_dir):
        result = record.result
        timed = {row["setting"]: row.get("wall_time_s") for row in result["settings"]}
        for row in result["settings"]:
            environment = " ".join(f"{name}={value}" for name, value in row["environment"].items())
            environment += (" + use_deterministic_algorithms" if row["deterministic"] else "")
            common = {"machine": record_machine(record),
                      "runs": f"{result['runs_profile']}, {result['repeats']} × each", "setting": row["setting"],
                      "environment": environment.strip() or "(none)"}
            if row["skipped"]:
                rows.append({**common, "repeats: same bits": f"skipped: {row['skipped']}", "same bits as default": "—",
                             "same bits as ATen scalar": "—", "largest absolute difference from default": "—",
                             "seconds per pair of runs": "—", "× default's time": "—"})
                continue
            rows.append({**common, "repeats: same bits": _yes_no(row["repeats_identical"]),
                         "same bits as default": _yes_no(row["same_bits_as_default"]),
                         "same bits as ATen scalar": _yes_no(row["same_bits_as_aten_scalar"]),
                         "largest absolute difference from default": _difference_text(row["largest_difference_from_default"]),
                         "seconds per pair of runs": f"{row['wall_time_s']:.1f}",
                         "× default's time": f"{row['wall_time_s'] / timed[DEFAULT_SETTING]:.2f}"})
    return pd.DataFrame(rows, columns=columns)


def bitwise_summary(results_dir: str | Path | None = None) -> str:
    """One sentence per machine's record, read from it: whether each setting repeated its bits,
    which gave the default's bits and which ATen's scalar kernels', and what the pinned setting
    (ATen's scalar kernels and MKL's compatible mode) costs."""
    records = bitwise_records(results_dir)
    if not records:
        return "No machine has measured bitwise reproducibility yet."
    sentences = []
    for record in records:
        result = record.result
        measured = [row for row in result["settings"] if not row["skipped"]]
        if result["repeats"] == 1:
            parts = ["each setting ran once"]
        elif all(row["repeats_identical"] for row in measured):
            parts = ["every setting gave the same bits each time"]
        else:
            parts = [f"{_listed([row['setting'] for row in measured if not row['repeats_identical']])} gave other bits from one "
                     "repeat to the next"]
        others = [row for row in measured if row["setting"] != DEFAULT_SETTING]
        same = [row["setting"] for row in others if row["same_bits_as_default"]]
        differ = [row for row in others if not row["same_bits_as_default"]]
        clause = f"{_listed(same) or 'no other setting'} gave the default's bits"
        if differ:
            largest = max((row["largest_difference_from_default"] or 0.0 for row in differ), default=0.0)
            clause += (f", {_listed([row['setting'] for row in differ])} did not (their stored numbers differ from the default's by "
                       f"up to {largest:.3g})")
        parts.append(clause)
        scalar = [row["setting"] for row in measured if row["setting"] != ATEN_SCALAR and row["same_bits_as_aten_scalar"]]
        parts.append(f"{_listed(scalar) or 'no other setting'} gave the bits of ATen's scalar kernels")
        timed = {row["setting"]: row["wall_time_s"] for row in measured}
        pinned = next((row["setting"] for row in measured if dict(row["environment"]) == _PINNED and not row["deterministic"]), None)
        if pinned:
            parts.append(f"{pinned} took {timed[pinned] / timed[DEFAULT_SETTING]:.2f} × the default's time")
        sentences.append(f"On {record_machine(record)} ({result['runs_profile']} runs, {result['repeats']} × each, each in a fresh "
                         f"process), {'; '.join(parts)} ({result['timing_note']}).")
    return " ".join(sentences)
