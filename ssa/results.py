"""The experiment result cache that every chapter goes through.

A chapter wraps each expensive computation in :func:`cached`::

    result = cached(
        "icl_linear/train",                      # experiment name: a folder under results/<profile>/
        config,                                  # everything that determines the result
        lambda: train_and_evaluate(config),      # returns a JSON-able dict
        profile=profile,
        regenerate="python -m ssa.book run --profile cpu --only icl_linear",
    )

The entry is ``results/<profile>/<experiment>/<key[:16]>.json`` where ``key`` is the SHA-256
of the canonical JSON of ``config`` and :data:`CACHE_SCHEMA_VERSION`. An entry is reused only
when its stored config and schema version equal the requested ones exactly; anything else is
recomputed. With ``SSA_REQUIRE_CACHE=1`` (set by ``python -m ssa.book run --require-cache``,
which CI uses) a missing entry raises :class:`CacheMissError` naming the command that creates
it, so that CI never starts a long training run by accident.

Put in ``config`` what changes the numbers (sizes, steps, seed, scorer, data); leave out the
device, so that a result computed on a GPU is reused on a CPU. The device goes into the
provenance instead (``device=``).
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ssa import paths
from ssa.profiles import PROFILES, check_profile

# Bump when the meaning of stored results changes (e.g. a metric is redefined): every key
# changes with it, so old entries are never reused.
CACHE_SCHEMA_VERSION = 1

REQUIRE_CACHE_ENV = "SSA_REQUIRE_CACHE"
_KEY_LENGTH = 16


class CacheMissError(RuntimeError):
    """A required cache entry is missing or stale; the message names the command that creates it."""


def _to_json_value(value: Any, where: str, allow_nonfinite: bool) -> Any:
    """Convert ``value`` to plain JSON types, refusing what would not round-trip."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
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


def canonical_json(value: Any) -> str:
    """Deterministic JSON text: sorted keys, no whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(config: Mapping[str, Any] | Any) -> str:
    """The full SHA-256 key of ``config`` under the current schema version."""
    normalized = _to_json_value(config, "config", allow_nonfinite=False)
    payload = canonical_json({"config": normalized, "schema_version": CACHE_SCHEMA_VERSION})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def entry_path(experiment: str, config: Any, *, profile: str, results_dir: str | Path | None = None) -> Path:
    """Where the entry for ``config`` lives (whether or not it exists)."""
    check_profile(profile)
    parts = Path(experiment).parts
    if not experiment or Path(experiment).is_absolute() or ".." in parts:
        raise ValueError(f"experiment must be a relative name like 'chapter/run'; got {experiment!r}")
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    return root / profile / experiment / f"{cache_key(config)[:_KEY_LENGTH]}.json"


def check_throwaway_cache(results_dir: str | Path | None = None) -> None:
    """``ValueError`` if the cache at ``results_dir`` (default :func:`ssa.paths.results_dir`) is
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
    what a run writes (a forced rerun even deletes its old entry first), not the code it ran."""
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return CodeState(_git("rev-parse", "HEAD"), None if status is None else bool(status))


def _provenance(config: dict, device: str | None, wall_time_s: float, before: CodeState) -> dict:
    """``before``: the code state when the computation started; the entry is clean only if the
    code was clean, at one commit, from start to end."""
    import torch  # the chapters use torch anyway; imported late to keep this module light
    import transformers

    after = code_state()
    dirty = None if before.dirty is None or after.dirty is None else (before.dirty or after.dirty or before.commit != after.commit)
    return {
        "seed": config.get("seed"),
        "git_commit": before.commit,
        "git_dirty": dirty,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "device": device if device is not None else config.get("device", "unspecified"),
        # platform.platform() names the OS and architecture, not the host.
        "platform": platform.platform(),
        "wall_time_s": round(wall_time_s, 3),
        "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _read_matching_entry(path: Path, config: dict) -> dict | None:
    """The stored entry at ``path`` if it was made from exactly ``config``, else ``None``."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if stored.get("schema_version") != CACHE_SCHEMA_VERSION or stored.get("config") != config:
        return None
    return stored


def require_cache_from_environment() -> bool:
    return os.environ.get(REQUIRE_CACHE_ENV, "").strip().lower() in {"1", "true", "yes"}


def cached(
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
) -> dict:
    """Return the result of ``compute()`` for ``config``, from the cache when it is there.

    ``regenerate`` is the command a reader runs to (re)create the entry; it is printed when
    the entry is required but missing. ``require`` defaults to ``$SSA_REQUIRE_CACHE``.
    The returned dict is always the JSON round trip of the result (tuples become lists), so
    a fresh computation and a cache hit look the same to the caller.
    """
    normalized_config = _to_json_value(config, "config", allow_nonfinite=False)
    if not isinstance(normalized_config, dict):
        raise TypeError(f"config must be a mapping or a dataclass; got {type(config).__name__}")
    path = entry_path(experiment, normalized_config, profile=profile, results_dir=results_dir)
    stored = _read_matching_entry(path, normalized_config)
    if stored is not None:
        return stored["result"]

    if require is None:
        require = require_cache_from_environment()
    if require:
        reason = "is stale (another config or schema version)" if path.exists() else "is missing"
        raise CacheMissError(
            f"The cached result for experiment {experiment!r} at profile {profile!r} {reason}: {path}\n"
            f"Create it with:\n    {regenerate}\n"
            f"then commit the new file under results/{profile}/."
        )

    before = code_state()
    started = time.perf_counter()
    result = compute()
    wall_time_s = time.perf_counter() - started
    if not isinstance(result, Mapping):
        raise TypeError(f"compute() must return a dict; got {type(result).__name__}")
    entry = {
        "schema_version": CACHE_SCHEMA_VERSION,
        "experiment": experiment,
        "profile": profile,
        "config": normalized_config,
        "result": _to_json_value(result, "result", allow_nonfinite),
        "provenance": _provenance(normalized_config, device, wall_time_s, before),
    }
    text = json.dumps(entry, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=allow_nonfinite) + "\n"
    _write_atomically(path, text)
    return json.loads(text)["result"]


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    path: Path
    profile: str
    experiment: str
    problems: tuple[str, ...]


def provenance_problems(path: Path) -> list[str]:
    """What keeps an entry from being traced to the code that made it: computed from a dirty
    tree, or at no commit (or one this checkout does not have)."""
    try:
        provenance = json.loads(path.read_text(encoding="utf-8")).get("provenance", {})
    except (OSError, ValueError) as error:
        return [f"unreadable: {error}"]
    problems = []
    if provenance.get("git_dirty") is not False:
        problems.append("computed from a dirty working tree" if provenance.get("git_dirty") else "no record of the tree's state")
    commit = provenance.get("git_commit")
    if not commit:
        problems.append("no commit recorded")
    elif _git("cat-file", "-e", f"{commit}^{{commit}}") is None:
        problems.append(f"commit {commit[:12]} is not in this checkout")
    return problems


def list_entries(results_dir: str | Path | None = None, profile: str | None = None, *, clean: bool = False) -> list[CacheEntry]:
    """Every stored entry, with what is wrong with it (an empty ``problems`` means valid);
    ``clean`` also counts :func:`provenance_problems`."""
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    if profile is not None:
        profiles = [check_profile(profile)]
    else:
        profiles = sorted(folder.name for folder in root.iterdir() if folder.is_dir()) if root.is_dir() else []
    entries = []
    for profile_name in profiles:
        profile_root = root / profile_name
        for path in sorted(profile_root.rglob("*.json")):
            experiment = path.parent.relative_to(profile_root).as_posix()
            problems = _entry_problems(path, profile_name, experiment) + (provenance_problems(path) if clean else [])
            entries.append(CacheEntry(path, profile_name, experiment, tuple(problems)))
    return entries


def _entry_problems(path: Path, profile: str, experiment: str) -> list[str]:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return [f"unreadable: {error}"]
    problems = []
    missing = {"schema_version", "config", "result", "provenance"} - set(stored)
    if missing:
        return [f"missing fields: {', '.join(sorted(missing))}"]
    if stored["schema_version"] != CACHE_SCHEMA_VERSION:
        problems.append(f"schema version {stored['schema_version']} != current {CACHE_SCHEMA_VERSION}")
    elif path.stem != cache_key(stored["config"])[:_KEY_LENGTH]:
        problems.append("file name does not match the key of its config")
    if profile not in PROFILES:
        problems.append(f"unknown profile folder {profile!r}")
    if stored.get("experiment", experiment) != experiment:
        problems.append(f"stored experiment {stored['experiment']!r} does not match its folder {experiment!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ssa.results", description="List and validate cached results.")
    parser.add_argument("command", choices=("list", "validate"))
    parser.add_argument("--profile", choices=PROFILES)
    parser.add_argument("--results-dir", type=Path)
    parser.add_argument("--clean", action="store_true",
                        help="also require a clean provenance: computed from a clean tree at a commit of this checkout")
    arguments = parser.parse_args(argv)
    entries = list_entries(arguments.results_dir, arguments.profile, clean=arguments.clean)
    invalid = [entry for entry in entries if entry.problems]
    for entry in entries if arguments.command == "list" else invalid:
        status = "ok" if not entry.problems else "; ".join(entry.problems)
        print(f"{entry.profile:6} {entry.experiment:40} {entry.path.name}  {status}")
    print(f"{len(entries)} entries, {len(invalid)} invalid", file=sys.stderr)
    return 1 if invalid else 0


if __name__ == "__main__":
    raise SystemExit(main())
