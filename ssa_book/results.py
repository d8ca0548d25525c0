"""The experiment result cache that every chapter goes through.

A chapter wraps each expensive computation in :func:`cached`::

    result = cached(
        "icl_linear/train",                      # experiment name: a folder under results/<profile>/
        config,                                  # everything that determines the result
        lambda: train_and_evaluate(config),      # returns a JSON-able dict
        profile=profile,
        regenerate="python -m ssa_book book run --profile cpu --only icl_linear",
    )

:func:`cached_entry` takes the same arguments and returns the whole entry (:class:`StoredEntry`:
config, result and a typed :class:`Provenance`); :func:`read_entry` and :func:`entries_of` read
stored entries. This module is the only reader and writer of the cache's files.

The entry is ``results/<profile>/<experiment>/<key[:16]>.json`` where ``key`` is the SHA-256
of the canonical JSON of ``config`` and :data:`CACHE_SCHEMA_VERSION`. An entry is reused only
when its stored config and schema version equal the requested ones exactly; anything else is
recomputed. With ``SSA_REQUIRE_CACHE=1`` (set by ``python -m ssa_book book run --require-cache``,
which CI uses) a missing entry raises :class:`CacheMissError` naming the command that creates
it, so that CI never starts a long training run by accident.

Put in ``config`` what changes the numbers (sizes, steps, seed, scorer, data); leave out the
device, so that a result computed on a GPU is reused on a CPU. The device goes into the
provenance instead (``device=``).

The key also holds the version of the code that computes the experiment
(:func:`ssa_book.code_versions.computation_of`), so that a change to that code cannot reuse the
numbers of the old code.

Without a checkout (the package installed with ``pip install git+...``, as on Colab) a missing
entry is first looked up in the committed cache of the commit the package was installed from
(pip records it in ``direct_url.json``), downloaded on demand into the local cache and checked
(its config, code version and file name must match what was asked); ``$SSA_RESULTS_MIRROR``
points that lookup at a folder or URL laid out like the repository instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from ssa_book import code_versions, files, paths
from ssa_book.collectors import Collector
from ssa_book.code_versions import in_folders
from ssa_book.profiles import PROFILES, check_profile

# Bump when the meaning of stored results changes (e.g. a metric is redefined): every key
# changes with it, so old entries are never reused.
CACHE_SCHEMA_VERSION = 1

REQUIRE_CACHE_ENV = "SSA_REQUIRE_CACHE"
RESULTS_MIRROR_ENV = "SSA_RESULTS_MIRROR"
_KEY_LENGTH = 16
# What an entry is written to before it is renamed into place (ssa_book.files): hidden, and not
# a .json, so that no reader of the cache ever takes one for an entry.
TEMPORARY_SUFFIX = files.TEMPORARY_SUFFIX
# The committed cache's cap, from the powered in-context study's issue ("results/ stays under
# 40 MB in total"); `python -m ssa_book results validate` fails above it.
RESULTS_BYTES_LIMIT = 40_000_000


class CacheMissError(RuntimeError):
    """A required cache entry is missing or stale; the message names the command that creates it."""


_ADDED = "ssa_book.results.added_field"


def added_field(default: Any, **kwargs: Any) -> Any:
    """A config field added after results were cached with its config class: like
    ``dataclasses.field(default=default)``, but at its default it is left out of
    :func:`config_dict`, so the keys of every config that leaves it alone stay as they were.
    (A change of the default is a change of the code, which :mod:`ssa_book.code_versions` catches.)"""
    return dataclasses.field(default=default, metadata={_ADDED: True}, **kwargs)


def config_dict(config: Any) -> Any:
    """A config as it enters a cache key and a checkpoint's identity: ``dataclasses.asdict``,
    recursively, without the :func:`added_field` fields that hold their default."""
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return {
            field.name: config_dict(getattr(config, field.name))
            for field in dataclasses.fields(config)
            if not (field.metadata.get(_ADDED) and getattr(config, field.name) == field.default)
        }
    if isinstance(config, Mapping):
        return {key: config_dict(item) for key, item in config.items()}
    if isinstance(config, (list, tuple)):
        return type(config)(config_dict(item) for item in config)
    return config


def _to_json_value(value: Any, where: str, allow_nonfinite: bool) -> Any:
    """Convert ``value`` to plain JSON types, refusing what would not round-trip."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = config_dict(value)
    if isinstance(value, Mapping):
        converted = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: keys must be strings, got {key!r}")
            converted[key] = _to_json_value(item, f"{where}[{key!r}]", allow_nonfinite)
        return converted
    if isinstance(value, (list, tuple)):
        return [_to_json_value(item, f"{where}[{index}]", allow_nonfinite) for index, item in enumerate(value)]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value) and not allow_nonfinite:
            raise ValueError(
                f"{where} is {value}: non-finite numbers are not stored; "
                "fix the computation or pass allow_nonfinite=True"
            )
        return value
    # numpy and torch scalars and arrays: tolist() turns them into Python numbers and lists.
    if hasattr(value, "tolist"):
        return _to_json_value(value.tolist(), where, allow_nonfinite)
    raise TypeError(f"{where}: cannot store a {type(value).__name__} in the result cache")


def canonical_json(value: Any, *, allow_nonfinite: bool = True) -> str:
    """Deterministic JSON text: sorted keys, no whitespace (``allow_nonfinite=False``: NaN and
    infinities are an error)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nonfinite)


def entry_text(entry: Mapping, *, allow_nonfinite: bool = False) -> str:
    """How an entry is stored: :func:`canonical_json` on one line. Compact because results/ is
    committed under a size cap (:data:`RESULTS_BYTES_LIMIT`) and indentation alone doubled it."""
    return canonical_json(entry, allow_nonfinite=allow_nonfinite) + "\n"


def code_identity(code: str | None) -> dict | None:
    """``{"name", "version"}`` of computation ``code`` as it enters a key (``None``: no code version)."""
    if code is None:
        return None
    return {"name": code_versions.check_computation(code).name, "version": code_versions.version(code)}


def cache_key(config: Mapping[str, Any] | Any, code: str | dict | None = None) -> str:
    """The full SHA-256 key of ``config`` under the current schema version and, when ``code``
    names a computation, its current code version (a stored ``{"name", "version"}`` dict is
    taken as it is: that is how a stored entry's own key is recomputed)."""
    normalized = _to_json_value(config, "config", allow_nonfinite=False)
    identity = code if isinstance(code, dict) or code is None else code_identity(code)
    payload = {"config": normalized, "schema_version": CACHE_SCHEMA_VERSION}
    if identity is not None:
        payload["code"] = {"name": identity["name"], "version": identity["version"]}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def experiment_code(experiment: str) -> str | None:
    return code_versions.computation_of(experiment)


def entry_path(experiment: str, config: Any, *, profile: str, results_dir: str | Path | None = None) -> Path:
    """Where the entry for ``config`` lives (whether or not it exists); the key holds the current
    version of the code that computes ``experiment``."""
    check_profile(profile)
    parts = Path(experiment).parts
    if not experiment or Path(experiment).is_absolute() or ".." in parts:
        raise ValueError(f"experiment must be a relative name like 'chapter/run'; got {experiment!r}")
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    return root / profile / experiment / f"{cache_key(config, experiment_code(experiment))[:_KEY_LENGTH]}.json"


def check_throwaway_cache(results_dir: str | Path | None = None) -> None:
    """``ValueError`` if the cache at ``results_dir`` (default :func:`ssa_book.paths.results_dir`) is
    the repository's ``results/``: a run stopped early (``stop_at``) is keyed as the full run, so
    it may be written only to a throwaway cache."""
    root = paths.repository_root()
    book_cache = ((root if root is not None else Path.cwd()) / "results").resolve()
    if (Path(results_dir).expanduser().resolve() if results_dir is not None else paths.results_dir().resolve()) == book_cache:
        raise ValueError("stop_at: a stopped run is keyed as the full run and would enter the book's result cache; "
                         "set $SSA_RESULTS_DIR (or results_dir) to a throwaway folder")


def _git(*arguments: str) -> str | None:
    root = paths.repository_root()
    if root is None:
        return None
    try:
        completed = subprocess.run(
            ["git", *arguments], cwd=root, capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return completed.stdout.strip()


@dataclasses.dataclass(frozen=True)
class CodeState:
    """The checkout's commit and whether its code differs from it (``None``: no git checkout)."""

    commit: str | None
    dirty: bool | None


def code_state() -> CodeState:
    """The commit and whether tracked files outside ``results/`` differ from it: the cache is
    what a run writes (a forced rerun replaces its old entry), not the code it ran."""
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return CodeState(_git("rev-parse", "HEAD"), None if status is None else bool(status))


def processor_name(device: str | None) -> str:
    """The model of the processor a computation ran on, as the system names it: the GPU's on
    ``cuda``, else the CPU's (Linux's ``/proc/cpuinfo``, else :func:`platform.processor`); ``""``
    when neither says. Wall times are comparable only between entries of one processor."""
    if device is not None and str(device).startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device)) if torch.cuda.is_available() else ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor()


# The x86-64 instruction-set extensions that change which kernels PyTorch, MKL and oneDNN run, and
# so the rounding of a float32 computation: two CPUs that differ here may give other bits.
NUMERIC_CPU_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
                     "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")


def instruction_sets(device: str | None) -> dict | None:
    """What a CPU computation's rounding can depend on: the vector code PyTorch's ATen chose for
    this CPU (``torch.backends.cpu.get_cpu_capability``) and which of :data:`NUMERIC_CPU_FLAGS`
    the CPU has (Linux's ``/proc/cpuinfo``); ``None`` on a GPU."""
    if device is not None and not str(device).startswith("cpu"):
        return None
    import torch

    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    flags = set(line.partition(":")[2].split())
                    break
    except OSError:
        pass
    return {"aten_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "flags": [flag for flag in NUMERIC_CPU_FLAGS if flag in flags]}


def _provenance(config: dict, device: str | None, wall_time_s: float, before: CodeState) -> dict:
    """``before``: the code state when the computation started; the entry is clean only if the
    code was clean, at one commit, from start to end."""
    import torch  # the chapters use torch anyway; imported late to keep this module light
    import transformers

    after = code_state()
    dirty = None if before.dirty is None or after.dirty is None else (before.dirty or after.dirty or before.commit != after.commit)
    device = device if device is not None else config.get("device")
    return {
        "seed": config.get("seed"),
        "git_commit": before.commit,
        "git_dirty": dirty,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "device": device if device is not None else "unspecified",
        # platform.platform() names the OS and architecture, not the host.
        "platform": platform.platform(),
        "processor": processor_name(device),
        "instruction_sets": instruction_sets(device),
        "wall_time_s": round(wall_time_s, 3),
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


class EntryError(ValueError):
    """A file under the cache that cannot be read as an entry; the message names the file and the field."""


# The provenance fields of every entry, with the JSON types each may hold.
_PROVENANCE_FIELDS = {
    "seed": (int, type(None)), "git_commit": (str, type(None)), "git_dirty": (bool, type(None)), "torch": (str,),
    "transformers": (str,), "python": (str,), "device": (str,), "platform": (str,), "wall_time_s": (int, float),
    "created_utc": (str,),
}
# Fields only some entries hold: the processor and instruction sets are recorded by entries written
# since they were added, and key_version_added is a note on the entries moved under a versioned key.
_OPTIONAL_PROVENANCE_FIELDS = {"processor": (str,), "instruction_sets": (dict,), "key_version_added": (str,)}


@dataclasses.dataclass(frozen=True)
class Provenance:
    """How, where and when an entry's result was computed, as :func:`_provenance` stores it: the
    config's seed, the commit and whether the tree was dirty (``None``: no git checkout), the
    library versions, the device, platform and processor, the instruction sets a CPU's rounding
    depends on (:func:`instruction_sets`), the wall time of the computation and when it ended.
    An optional field is ``None`` where the entry does not hold it."""

    seed: int | None
    git_commit: str | None
    git_dirty: bool | None
    torch: str
    transformers: str
    python: str
    device: str
    platform: str
    wall_time_s: float
    created_utc: str
    processor: str | None = None
    instruction_sets: dict | None = None
    key_version_added: str | None = None
    # The optional fields stored as null (a GPU entry's instruction_sets), so that to_dict() tells
    # them from the fields an older entry lacks, and gives back exactly the stored dict.
    stored_nulls: frozenset[str] = frozenset()

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> "Provenance":
        """The provenance of an entry's stored ``provenance`` dict; :class:`EntryError` naming the
        field that is missing, unknown or of the wrong type."""
        if not isinstance(stored, Mapping):
            raise EntryError(f"provenance is a {type(stored).__name__}, not a dict")
        unknown = sorted(set(stored) - set(_PROVENANCE_FIELDS) - set(_OPTIONAL_PROVENANCE_FIELDS))
        if unknown:
            raise EntryError(f"provenance has unknown field {unknown[0]!r}")
        missing = [name for name in _PROVENANCE_FIELDS if name not in stored]
        if missing:
            raise EntryError(f"provenance lacks the field {missing[0]!r}")
        for name, types in {**_PROVENANCE_FIELDS, **_OPTIONAL_PROVENANCE_FIELDS}.items():
            value = stored.get(name)
            optional_null = name in _OPTIONAL_PROVENANCE_FIELDS and value is None
            if not optional_null and (not isinstance(value, types) or (isinstance(value, bool) and bool not in types)):
                raise EntryError(f"provenance field {name!r} is {value!r}, not a {' or '.join(t.__name__ for t in types)}")
        stored_nulls = frozenset(name for name in _OPTIONAL_PROVENANCE_FIELDS if name in stored and stored[name] is None)
        return cls(**stored, stored_nulls=stored_nulls)

    def to_dict(self) -> dict:
        """The ``provenance`` dict as stored in the entry."""
        stored = {name: getattr(self, name) for name in _PROVENANCE_FIELDS}
        stored.update({name: getattr(self, name) for name in _OPTIONAL_PROVENANCE_FIELDS
                       if getattr(self, name) is not None or name in self.stored_nulls})
        return stored


@dataclasses.dataclass(frozen=True)
class StoredEntry:
    """One cache entry as read from its file: the experiment and profile it belongs to, the config
    it was computed from, the result, its provenance, and the code that computed it (``code``:
    ``{"name", "version", "fingerprint"}``; ``None`` where no code version is in its key)."""

    path: Path
    experiment: str
    profile: str
    config: dict
    result: dict
    provenance: Provenance
    code: dict | None
    schema_version: int


_ENTRY_FIELDS = {"schema_version": int, "experiment": str, "profile": str, "config": dict, "result": dict, "provenance": dict}


def _entry_from_dict(path: Path, stored: Any) -> StoredEntry:
    """The entry stored at ``path`` as ``stored`` (its parsed JSON); :class:`EntryError` naming
    the file and the field that is missing or wrong."""
    if not isinstance(stored, dict):
        raise EntryError(f"{path}: an entry is a JSON object, not a {type(stored).__name__}")
    for name, kind in _ENTRY_FIELDS.items():
        if name not in stored:
            raise EntryError(f"{path}: the entry lacks the field {name!r}")
        if not isinstance(stored[name], kind):
            raise EntryError(f"{path}: the entry's field {name!r} is not a {kind.__name__}")
    unknown = sorted(set(stored) - set(_ENTRY_FIELDS) - {"code"})
    if unknown:
        raise EntryError(f"{path}: the entry has unknown field {unknown[0]!r}")
    if not isinstance(stored.get("code", {}), dict):
        raise EntryError(f"{path}: the entry's field 'code' is not a dict")
    try:
        provenance = Provenance.from_dict(stored["provenance"])
    except EntryError as error:
        raise EntryError(f"{path}: {error}") from None
    return StoredEntry(path, stored["experiment"], stored["profile"], stored["config"], stored["result"], provenance,
                       stored.get("code"), stored["schema_version"])


def _load_entry_json(path: Path) -> Any:
    """The parsed JSON of the entry file at ``path`` (within :func:`captured_writes`, of the entry
    written there last)."""
    try:
        return json.loads(_captured[path] if _captured is not None and path in _captured else path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise EntryError(f"{path}: unreadable: {error}") from None


def read_entry(path: str | Path) -> StoredEntry:
    """The cache entry stored at ``path``; :class:`EntryError` if the file is not one."""
    path = Path(path)
    return _entry_from_dict(path, _load_entry_json(path))


def entries_of(experiment: str, profile: str | None = None, results_dir: str | Path | None = None) -> list[StoredEntry]:
    """Every stored entry of ``experiment`` (its folder's entries, not those of the folders under
    it) at ``profile``, or at every profile when ``None``; ordered by path. A malformed entry is
    named on stderr and left out, as missing (``results validate`` lists what is wrong with it)."""
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    found = []
    for path in (path for name in _profile_folders(root, profile) for path in sorted((root / name / experiment).glob("*.json"))):
        try:
            found.append(read_entry(path))
        except EntryError as error:
            _report_malformed(error)
    return found


def _profile_folders(root: Path, profile: str | None) -> list[str]:
    """``[profile]``, or with ``None`` every profile folder under ``root``."""
    if profile is not None:
        return [check_profile(profile)]
    return sorted(folder.name for folder in root.iterdir() if folder.is_dir()) if root.is_dir() else []


def _write_atomically(path: Path, text: str) -> None:
    """Write an entry through a temporary sibling renamed over it (:mod:`ssa_book.files`): a good
    entry is replaced only by a complete new one, never deleted first. The abandoned temporaries
    of earlier, interrupted writes in its folder go first. Within :func:`captured_writes` the
    entry is kept in memory instead."""
    if _captured is not None:
        _captured[path] = text
        return
    files.remove_abandoned_temporaries(path.parent, TEMPORARY_SUFFIX, log=_warn)
    files.write_atomically(path, text, suffix=TEMPORARY_SUFFIX)


# Within captured_writes(): the entries written, path -> text, kept in memory instead of the cache.
_captured: dict[Path, str] | None = None


@contextlib.contextmanager
def captured_writes() -> Iterator[dict[Path, str]]:
    """Within: every entry :func:`cached_entry` or :func:`record_entry` writes goes into the dict
    this yields (its path in the cache -> its text) instead of the cache, and is read back from
    there. A worker of ``regenerate`` computes a run so (:mod:`ssa_book.runner`) and returns the
    entries to the command, the cache's one writer (:func:`store_entry_text`)."""
    global _captured
    outer, _captured = _captured, {}
    try:
        yield _captured
    finally:
        _captured = outer


def store_entry_text(relative: str, text: str, *, results_dir: str | Path | None = None) -> StoredEntry:
    """Check ``text``, an entry computed elsewhere for ``relative`` (``PROFILE/EXPERIMENT/KEY.json``
    in the cache), as ``results validate`` does (its fields, its key, its code version, its folder),
    and write it atomically unless the cache holds exactly that text already. :class:`EntryError`
    naming what is wrong, and nothing written, if it is not a valid entry for that place."""
    parts = Path(relative).parts
    if Path(relative).is_absolute() or ".." in parts or len(parts) < 3 or not relative.endswith(".json"):
        raise EntryError(f"{relative}: not a place of the cache (PROFILE/EXPERIMENT/KEY.json)")
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    path = root / relative
    try:
        parsed = json.loads(text)
    except ValueError as error:
        raise EntryError(f"{relative}: not JSON: {error}") from None
    stored = _entry_from_dict(path, parsed)
    problems = _entry_problems(stored, parts[0], "/".join(parts[1:-1]))
    if stored.profile != parts[0]:
        problems.append(f"stored profile {stored.profile!r} does not match its folder {parts[0]!r}")
    if problems:
        raise EntryError(f"{relative}: {'; '.join(problems)}")
    if not (path.is_file() and path.read_text(encoding="utf-8") == text):
        _write_atomically(path, text)
    return stored


def _warn(line: str) -> None:
    print(f"ssa_book.results: {line}", file=sys.stderr, flush=True)


def remove_abandoned_temporaries(results_dir: str | Path | None = None) -> list[Path]:
    """Remove the temporaries that interrupted writes left anywhere in the cache
    (:func:`ssa_book.files.is_abandoned` says which: never one a writer may still be writing)."""
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    return files.remove_abandoned_temporaries(root, TEMPORARY_SUFFIX, recursive=True, log=_warn)


def _stored_code(code: Mapping | None) -> dict | None:
    """The ``{"name", "version"}`` an entry's stored ``code`` enters its key with (``None``: none)."""
    return None if code is None else {"name": code.get("name"), "version": code.get("version")}


def _matching_entry(path: Path, stored: Any, config: dict, code: dict | None) -> StoredEntry | None:
    """The entry ``stored`` (parsed JSON) for ``path`` if it was made from exactly ``config`` by
    ``code``, else ``None``."""
    if not isinstance(stored, dict) or "result" not in stored:
        return None
    if (stored.get("schema_version") != CACHE_SCHEMA_VERSION or stored.get("config") != config
            or _stored_code(stored.get("code")) != code):
        return None
    return _entry_from_dict(path, stored)


def _read_matching_entry(path: Path, config: dict, code: dict | None) -> tuple[StoredEntry | None, str]:
    """The entry at ``path`` made from exactly ``config`` by ``code``, or ``None`` and why not: the
    file is missing, holds another config or code version (stale), or is malformed. A malformed
    entry is named on stderr and treated as missing: recomputed and replaced, so that one bad
    file cannot block a whole regenerate (``results validate`` lists what is wrong with it)."""
    if not path.is_file() and (_captured is None or path not in _captured):
        return None, "is missing"
    try:
        stored = _matching_entry(path, _load_entry_json(path), config, code)
    except EntryError as error:
        _report_malformed(error)
        return None, "is malformed (unreadable, or a field missing, unknown or of the wrong type)"
    return stored, "" if stored is not None else "is stale (another config or schema version)"


def _report_malformed(error: EntryError) -> None:
    """One line on stderr per malformed entry and process (a dry run reads each entry several times)."""
    line = " ".join(str(error).split())
    if line not in _REPORTED:
        _REPORTED.add(line)
        _warn(f"malformed entry {line}; treated as missing (a run that needs it computes it again and replaces it)")


_REPORTED: set[str] = set()


def installed_commit() -> tuple[str, str] | None:
    """``(repository URL, commit)`` the package was installed from with ``pip install git+URL``,
    from the ``direct_url.json`` pip writes (PEP 610); ``None`` for any other installation."""
    try:
        text = metadata.distribution("ssa-book").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    recorded = json.loads(text)
    commit = recorded.get("vcs_info", {}).get("commit_id")
    return (recorded.get("url", ""), commit) if commit else None


def committed_cache_url(repository: str, commit: str) -> str | None:
    """Base URL of the repository's tree at ``commit`` for a GitHub URL (``None`` for another host)."""
    match = re.fullmatch(r"(?:git\+)?https://github\.com/([^/]+)/([^/@]+?)(?:\.git)?/?", repository)
    if match is None or not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    return f"https://raw.githubusercontent.com/{match[1]}/{match[2]}/{commit}"


def _committed_source() -> str | None:
    """Where the committed cache is read from: ``$SSA_RESULTS_MIRROR`` (a folder or URL laid out
    like the repository), else the commit the package was installed from, else ``None``."""
    mirror = os.environ.get(RESULTS_MIRROR_ENV, "").strip()
    if mirror:
        return mirror
    if paths.repository_root() is not None:  # a checkout has its own results/
        return None
    installed = installed_commit()
    return committed_cache_url(*installed) if installed else None


def _read_committed(source: str, relative: str) -> str | None:
    """The text of ``relative`` (``results/...``) under ``source``, or ``None`` if it is not there."""
    if "://" not in source:
        file = Path(source).expanduser() / relative
        return file.read_text(encoding="utf-8") if file.is_file() else None
    try:
        with urllib.request.urlopen(f"{source.rstrip('/')}/{relative}", timeout=60) as response:
            return response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def _fetch_committed_entry(path: Path, profile: str, config: dict, code: dict | None,
                          results_dir: str | Path | None) -> StoredEntry | None:
    """Copy the committed entry for ``path`` into the local cache if the source has one that
    matches ``config`` and ``code`` exactly; the entry found, or ``None``."""
    source = _committed_source()
    if source is None:
        return None
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    relative = f"results/{path.relative_to(root).as_posix()}"
    text = _read_committed(source, relative)
    if text is None:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    stored = _matching_entry(path, parsed, config, code)
    if stored is None or stored.profile != profile:
        raise CacheMissError(f"the committed cache entry {relative} at {source} does not match the config asked for; "
                             "it was not used")
    _write_atomically(path, text)
    return stored


def _fingerprint(code: str) -> str:
    return code_versions.fingerprint(code)


@contextlib.contextmanager
def cache_required() -> Iterator[None]:
    """Within: a cache miss raises instead of computing (``$SSA_REQUIRE_CACHE``), in this process
    and in the processes it starts."""
    before = os.environ.get(REQUIRE_CACHE_ENV)
    os.environ[REQUIRE_CACHE_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(REQUIRE_CACHE_ENV, None)
        else:
            os.environ[REQUIRE_CACHE_ENV] = before


# What open entries_read() blocks collect: every entry cached_entry returns.
_ENTRY_COLLECTORS: Collector[StoredEntry] = Collector()


def entries_read() -> contextlib.AbstractContextManager[list[StoredEntry]]:
    """Within: every entry :func:`cached_entry` returns, read or computed, is appended to the
    list this yields (what a chapter's run reads, with each entry's provenance)."""
    return _ENTRY_COLLECTORS.collecting()


_returned = _ENTRY_COLLECTORS.add


def require_cache_from_environment() -> bool:
    return os.environ.get(REQUIRE_CACHE_ENV, "").strip().lower() in {"1", "true", "yes"}


def cached(experiment: str, config: Mapping[str, Any] | Any, compute: Callable[[], Mapping[str, Any]], **options: Any) -> dict:
    """The result of ``compute()`` for ``config``, from the cache when it is there: the
    ``result`` of :func:`cached_entry`, which takes the same arguments (``profile`` and
    ``regenerate`` required) and gives the whole entry, with its provenance."""
    return cached_entry(experiment, config, compute, **options).result


def cached_entry(
    experiment: str,
    config: Mapping[str, Any] | Any,
    compute: Callable[[], Mapping[str, Any]],
    *,
    profile: str,
    regenerate: str,
    results_dir: str | Path | None = None,
    require: bool | None = None,
    device: str | None = None,
    allow_nonfinite: bool = False,
    recompute: bool = False,
) -> StoredEntry:
    """The entry holding the result of ``compute()`` for ``config``: from the cache when it is
    there, else computed and written.

    ``regenerate`` is the command a reader runs to (re)create the entry; it is printed when
    the entry is required but missing. ``require`` defaults to ``$SSA_REQUIRE_CACHE``.
    The entry's result is always the JSON round trip of what was computed (tuples become lists), so
    a fresh computation and a cache hit look the same to the caller. A matching entry that cannot
    be read (a field missing, unknown or of the wrong type) is named on stderr and treated as
    missing: computed again and replaced. ``recompute``: compute even when the entry is there; the
    old entry stays until the new one replaces it.
    """
    normalized_config = _to_json_value(config, "config", allow_nonfinite=False)
    if not isinstance(normalized_config, dict):
        raise TypeError(f"config must be a mapping or a dataclass; got {type(config).__name__}")
    code = experiment_code(experiment)
    identity = code_identity(code)
    path = entry_path(experiment, normalized_config, profile=profile, results_dir=results_dir)
    stored, reason = (None, "is to be computed again") if recompute else _read_matching_entry(path, normalized_config, identity)
    if stored is None and not recompute:
        stored = _fetch_committed_entry(path, profile, normalized_config, identity, results_dir)
    if stored is not None:
        return _returned(stored)

    if require is None:
        require = require_cache_from_environment()
    if require:
        raise CacheMissError(
            f"The cached result for experiment {experiment!r} at profile {profile!r} {reason}: {path}\n"
            f"Create it with:\n    {regenerate}\n"
            f"then commit the new file under results/{profile}/."
        )

    return _returned(_compute_and_write(experiment, normalized_config, compute, path=path, profile=profile, code=code,
                                        identity=identity, device=device, allow_nonfinite=allow_nonfinite))


def _compute_and_write(experiment: str, config: dict, compute: Callable[[], Mapping[str, Any]], *, path: Path, profile: str,
                       code: str | None, identity: dict | None, device: str | None, allow_nonfinite: bool) -> StoredEntry:
    """Run ``compute()`` and write its entry at ``path`` (replacing any), with its provenance."""
    before = code_state()
    started = time.perf_counter()
    result = compute()
    wall_time_s = time.perf_counter() - started
    if not isinstance(result, Mapping):
        raise TypeError(f"compute() must return a dict; got {type(result).__name__}")
    entry = {
        "schema_version": CACHE_SCHEMA_VERSION,
        **({"code": {**identity, "fingerprint": _fingerprint(code)}} if identity is not None else {}),
        "experiment": experiment,
        "profile": profile,
        "config": config,
        "result": _to_json_value(result, "result", allow_nonfinite),
        "provenance": _provenance(config, device, wall_time_s, before),
    }
    text = entry_text(entry, allow_nonfinite=allow_nonfinite)
    _write_atomically(path, text)
    return _entry_from_dict(path, json.loads(text))


# Folders of measurements rather than computations: each entry measures the machine it was made on
# (how a rerun there compares with the cache, which settings give the same bits), is rewritten
# every time its command runs (:func:`record_entry`) and is never read in place of a computation.
# So no code version enters its key (the code versions it measured are in its result), and
# `validate --clean` does not ask for one.
MEASUREMENT_FOLDERS = ("reruns/",)


def record_entry(experiment: str, config: Mapping[str, Any] | Any, compute: Callable[[], Mapping[str, Any]], *, profile: str,
                 results_dir: str | Path | None = None, device: str | None = None) -> StoredEntry:
    """Compute a measurement of this machine and store it as a cache entry of ``experiment`` (a
    folder of :data:`MEASUREMENT_FOLDERS`) keyed by ``config``, replacing the entry of the same
    config: unlike :func:`cached_entry` it never reuses one, since a measurement stands for the
    machine and the commit it was made at. The entry carries the usual provenance (processor,
    instruction sets, commit, wall time of ``compute``) and passes ``validate``."""
    if not in_folders(experiment, MEASUREMENT_FOLDERS):
        raise ValueError(f"experiment must lie under one of {', '.join(MEASUREMENT_FOLDERS)}; got {experiment!r}")
    normalized_config = _to_json_value(config, "config", allow_nonfinite=False)
    if not isinstance(normalized_config, dict):
        raise TypeError(f"config must be a mapping or a dataclass; got {type(config).__name__}")
    path = entry_path(experiment, normalized_config, profile=profile, results_dir=results_dir)
    return _compute_and_write(experiment, normalized_config, compute, path=path, profile=profile, code=None, identity=None,
                              device=device, allow_nonfinite=False)


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    """A file of the cache as :func:`list_entries` finds it: where it is, what is wrong with it
    (empty: valid) and the entry it holds (``None`` when it cannot be read as one)."""

    path: Path
    profile: str
    experiment: str
    problems: tuple[str, ...]
    stored: StoredEntry | None = None


def provenance_problems(entry: StoredEntry) -> list[str]:
    """What keeps an entry from being traced to the code that made it: no code version in its
    key (a measurement of :data:`MEASUREMENT_FOLDERS` needs none), computed from a dirty tree, or
    at no commit (or one this checkout does not have)."""
    provenance = entry.provenance
    problems = []
    if entry.code is None and not in_folders(entry.experiment, MEASUREMENT_FOLDERS):
        problems.append("no code version in its key")
    if provenance.git_dirty is not False:
        problems.append("computed from a dirty working tree" if provenance.git_dirty else "no record of the tree's state")
    if not provenance.git_commit:
        problems.append("no commit recorded")
    elif _git("cat-file", "-e", f"{provenance.git_commit}^{{commit}}") is None:
        problems.append(f"commit {provenance.git_commit[:12]} is not in this checkout")
    return problems


def list_entries(results_dir: str | Path | None = None, profile: str | None = None, *, clean: bool = False) -> list[CacheEntry]:
    """Every stored entry, with what is wrong with it (an empty ``problems`` means valid);
    ``clean`` also counts :func:`provenance_problems`."""
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    entries = []
    for profile_name in _profile_folders(root, profile):
        profile_root = root / profile_name
        for path in sorted(profile_root.rglob("*.json")):
            experiment = path.parent.relative_to(profile_root).as_posix()
            try:
                stored = read_entry(path)
            except EntryError as error:
                entries.append(CacheEntry(path, profile_name, experiment, (str(error).removeprefix(f"{path}: "),)))
                continue
            problems = _entry_problems(stored, profile_name, experiment) + (provenance_problems(stored) if clean else [])
            entries.append(CacheEntry(path, profile_name, experiment, tuple(problems), stored))
    return entries


def committed_bytes(results_dir: str | Path | None = None) -> int:
    """Bytes of every file under the committed profiles' folders (all but ``smoke``)."""
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    return sum(path.stat().st_size for profile in PROFILES if profile != "smoke"
               for path in (root / profile).rglob("*") if path.is_file())


def reformat_entry(path: Path) -> bool:
    """Rewrite the entry at ``path`` in :func:`entry_text`'s layout; whether it changed. The
    values are parsed and written back, so its key, config and numbers stay exactly the same."""
    text = path.read_text(encoding="utf-8")
    formatted = entry_text(json.loads(text), allow_nonfinite=True)
    if formatted == text:
        return False
    _write_atomically(path, formatted)
    return True


def _computation_names() -> tuple[str, ...]:
    return tuple(code_versions.COMPUTATIONS)


def _entry_problems(entry: StoredEntry, profile: str, experiment: str) -> list[str]:
    """What is wrong with ``entry``, found in the folder of ``experiment`` under ``profile``."""
    problems = []
    code = _stored_code(entry.code)
    if entry.schema_version != CACHE_SCHEMA_VERSION:
        problems.append(f"schema version {entry.schema_version} != current {CACHE_SCHEMA_VERSION}")
    elif entry.path.stem != cache_key(entry.config, code)[:_KEY_LENGTH]:
        problems.append("file name does not match the key of its config")
    elif (code or {}).get("name") != experiment_code(experiment):
        expected = experiment_code(experiment)
        problems.append(f"its key holds no {expected} code version" if code is None else
                        f"computed by {code['name']} code, but {experiment!r} is computed by {expected or 'no versioned code'}")
    elif code is not None:
        current = code_identity(code["name"]) if code["name"] in _computation_names() else None
        if current is None:
            problems.append(f"computed by unknown code {code['name']!r}")
        elif current != code:
            problems.append(f"computed by {code['name']} code version {code['version']}; the current version is {current['version']}")
    if profile not in PROFILES:
        problems.append(f"unknown profile folder {profile!r}")
    if entry.experiment != experiment:
        problems.append(f"stored experiment {entry.experiment!r} does not match its folder {experiment!r}")
    return problems
