"""The entry files of the cache: read (:func:`read_entry`, :func:`entries_of`) and checked against
their place (field types, key, code version, folder), whether one is there (:func:`entry_exists`),
and written atomically (or captured in memory by a worker, :func:`captured_writes`)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ssa_book import code_versions, files, paths
from ssa_book.profiles import PROFILES, check_profile
from ssa_book.results.errors import EntryError
from ssa_book.results.keys import (
    CACHE_SCHEMA_VERSION,
    KEY_LENGTH,
    cache_key,
    code_identity,
    entry_path,
    experiment_code,
)
from ssa_book.results.provenance import Provenance

# What an entry is written to before it is renamed into place (ssa_book.files): hidden, and not
# a .json, so that no reader of the cache ever takes one for an entry.
TEMPORARY_SUFFIX = files.TEMPORARY_SUFFIX


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


_ENTRY_FIELDS = {
    "schema_version": int,
    "experiment": str,
    "profile": str,
    "config": dict,
    "result": dict,
    "provenance": dict,
}


def entry_from_dict(path: Path, stored: Any) -> StoredEntry:
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
    return StoredEntry(
        path,
        stored["experiment"],
        stored["profile"],
        stored["config"],
        stored["result"],
        provenance,
        stored.get("code"),
        stored["schema_version"],
    )


def _load_entry_json(path: Path) -> Any:
    """The parsed JSON of the entry file at ``path`` (within :func:`captured_writes`, of the entry
    written there last)."""
    try:
        return json.loads(
            _captured[path] if _captured is not None and path in _captured else path.read_text(encoding="utf-8")
        )
    except (OSError, ValueError) as error:
        raise EntryError(f"{path}: unreadable: {error}") from None


def read_entry(path: str | Path) -> StoredEntry:
    """The cache entry stored at ``path``; :class:`EntryError` if the file is not one."""
    path = Path(path)
    return entry_from_dict(path, _load_entry_json(path))


def entries_of(experiment: str, profile: str | None = None, results_dir: str | Path | None = None) -> list[StoredEntry]:
    """Every stored entry of ``experiment`` (its folder's entries, not those of the folders under
    it) at ``profile``, or at every profile when ``None``; ordered by path. A malformed entry is
    named on stderr and left out, as missing (``results validate`` lists what is wrong with it)."""
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    found = []
    for path in (
        path for name in profile_folders(root, profile) for path in sorted((root / name / experiment).glob("*.json"))
    ):
        try:
            found.append(read_entry(path))
        except EntryError as error:
            _report_malformed(error)
    return found


def profile_folders(root: Path, profile: str | None) -> list[str]:
    """``[profile]``, or with ``None`` every profile folder under ``root``."""
    if profile is not None:
        return [check_profile(profile)]
    return sorted(folder.name for folder in root.iterdir() if folder.is_dir()) if root.is_dir() else []


def write_atomically(path: Path, text: str) -> None:
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
    """Within: every entry :func:`~ssa_book.results.cache.cached_entry` or
    :func:`~ssa_book.results.cache.record_entry` writes goes into the dict this yields (its path in the cache -> its text) instead of the cache, and is read back from
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
    stored = entry_from_dict(path, parsed)
    problems = entry_problems(stored, parts[0], "/".join(parts[1:-1]))
    if stored.profile != parts[0]:
        problems.append(f"stored profile {stored.profile!r} does not match its folder {parts[0]!r}")
    if problems:
        raise EntryError(f"{relative}: {'; '.join(problems)}")
    if not (path.is_file() and path.read_text(encoding="utf-8") == text):
        write_atomically(path, text)
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


def matching_entry(path: Path, stored: Any, config: dict, code: dict | None) -> StoredEntry | None:
    """The entry ``stored`` (parsed JSON) for ``path`` if it was made from exactly ``config`` by
    ``code``, else ``None``."""
    if not isinstance(stored, dict) or "result" not in stored:
        return None
    if (
        stored.get("schema_version") != CACHE_SCHEMA_VERSION
        or stored.get("config") != config
        or _stored_code(stored.get("code")) != code
    ):
        return None
    return entry_from_dict(path, stored)


def read_matching_entry(path: Path, config: dict, code: dict | None) -> tuple[StoredEntry | None, str]:
    """The entry at ``path`` made from exactly ``config`` by ``code``, or ``None`` and why not: the
    file is missing, holds another config or code version (stale), or is malformed. A malformed
    entry is named on stderr and treated as missing: recomputed and replaced, so that one bad
    file cannot block a whole regenerate (``results validate`` lists what is wrong with it)."""
    if not path.is_file() and (_captured is None or path not in _captured):
        return None, "is missing"
    try:
        stored = matching_entry(path, _load_entry_json(path), config, code)
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


def _computation_names() -> tuple[str, ...]:
    return tuple(code_versions.COMPUTATIONS)


def entry_problems(entry: StoredEntry, profile: str, experiment: str) -> list[str]:
    """What is wrong with ``entry``, found in the folder of ``experiment`` under ``profile``."""
    problems = []
    code = _stored_code(entry.code)
    if entry.schema_version != CACHE_SCHEMA_VERSION:
        problems.append(f"schema version {entry.schema_version} != current {CACHE_SCHEMA_VERSION}")
    elif entry.path.stem != cache_key(entry.config, code)[:KEY_LENGTH]:
        problems.append("file name does not match the key of its config")
    elif (code or {}).get("name") != experiment_code(experiment):
        expected = experiment_code(experiment)
        problems.append(
            f"its key holds no {expected} code version"
            if code is None
            else f"computed by {code['name']} code, but {experiment!r} is computed by {expected or 'no versioned code'}"
        )
    elif code is not None:
        current = code_identity(code["name"]) if code["name"] in _computation_names() else None
        if current is None:
            problems.append(f"computed by unknown code {code['name']!r}")
        elif current != code:
            problems.append(
                f"computed by {code['name']} code version {code['version']}; the current version is {current['version']}"
            )
    if profile not in PROFILES:
        problems.append(f"unknown profile folder {profile!r}")
    if entry.experiment != experiment:
        problems.append(f"stored experiment {entry.experiment!r} does not match its folder {experiment!r}")
    return problems


def entry_exists(experiment: str, config: Any, *, profile: str, results_dir: str | Path | None = None) -> bool:
    """Whether the cache holds a file where the entry of ``config`` lives (:func:`entry_path`);
    :func:`read_entry` says whether it is a valid one."""
    return entry_path(experiment, config, profile=profile, results_dir=results_dir).is_file()
