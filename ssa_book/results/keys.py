"""What identifies a cache entry: the config as it enters a key (:func:`config_dict`,
:func:`added_field`), its canonical JSON, the key (config, schema version and code version) and the
path of the entry it names; and the folders of measurements, whose keys hold no code version."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ssa_book import code_versions, paths
from ssa_book.profiles import check_profile

# Bump when the meaning of stored results changes (e.g. a metric is redefined): every key
# changes with it, so old entries are never reused.
CACHE_SCHEMA_VERSION = 1
KEY_LENGTH = 16


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


def to_json_value(value: Any, where: str, allow_nonfinite: bool) -> Any:
    """Convert ``value`` to plain JSON types, refusing what would not round-trip."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = config_dict(value)
    if isinstance(value, Mapping):
        converted = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: keys must be strings, got {key!r}")
            converted[key] = to_json_value(item, f"{where}[{key!r}]", allow_nonfinite)
        return converted
    if isinstance(value, (list, tuple)):
        return [to_json_value(item, f"{where}[{index}]", allow_nonfinite) for index, item in enumerate(value)]
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
        return to_json_value(value.tolist(), where, allow_nonfinite)
    raise TypeError(f"{where}: cannot store a {type(value).__name__} in the result cache")


def canonical_json(value: Any, *, allow_nonfinite: bool = True) -> str:
    """Deterministic JSON text: sorted keys, no whitespace (``allow_nonfinite=False``: NaN and
    infinities are an error)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nonfinite)


def entry_text(entry: Mapping, *, allow_nonfinite: bool = False) -> str:
    """How an entry is stored: :func:`canonical_json` on one line. Compact because results/ is
    committed under a size cap (:data:`~ssa_book.results.validate.RESULTS_BYTES_LIMIT`) and indentation alone doubled it."""
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
    normalized = to_json_value(config, "config", allow_nonfinite=False)
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
    return root / profile / experiment / f"{cache_key(config, experiment_code(experiment))[:KEY_LENGTH]}.json"


def check_throwaway_cache(results_dir: str | Path | None = None) -> None:
    """``ValueError`` if the cache at ``results_dir`` (default :func:`ssa_book.paths.results_dir`) is
    the repository's ``results/``: a run stopped early (``stop_at``) is keyed as the full run, so
    it may be written only to a throwaway cache."""
    root = paths.repository_root()
    book_cache = ((root if root is not None else Path.cwd()) / "results").resolve()
    if (
        Path(results_dir).expanduser().resolve() if results_dir is not None else paths.results_dir().resolve()
    ) == book_cache:
        raise ValueError(
            "stop_at: a stopped run is keyed as the full run and would enter the book's result cache; "
            "set $SSA_RESULTS_DIR (or results_dir) to a throwaway folder"
        )


# Folders of measurements rather than computations: each entry measures the machine it was made on
# (how a rerun there compares with the cache, which settings give the same bits), is rewritten
# every time its command runs (:func:`~ssa_book.results.cache.record_entry`) and is never read in
# place of a computation. So no code version enters its key (the code versions it measured are in its result), and
# `validate --clean` does not ask for one.
MEASUREMENT_FOLDERS = ("reruns/",)
