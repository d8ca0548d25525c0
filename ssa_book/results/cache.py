"""The cache's front door: :func:`cached` and :func:`cached_entry` (reuse an entry, else compute and
write it), :func:`record_entry` (a measurement, always made anew), and whether a miss may compute
(``$SSA_REQUIRE_CACHE``, :func:`cache_required`)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ssa_book import code_versions
from ssa_book.code_versions import in_folders
from ssa_book.collectors import Collector
from ssa_book.results.errors import CacheMissError
from ssa_book.results.keys import (
    CACHE_SCHEMA_VERSION,
    MEASUREMENT_FOLDERS,
    code_identity,
    entry_path,
    entry_text,
    experiment_code,
    to_json_value,
)
from ssa_book.results.mirror import fetch_committed_entry
from ssa_book.results.provenance import code_state, new_provenance
from ssa_book.results.store import StoredEntry, entry_from_dict, read_matching_entry, write_atomically

REQUIRE_CACHE_ENV = "SSA_REQUIRE_CACHE"


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


def cached(
    experiment: str, config: Mapping[str, Any] | Any, compute: Callable[[], Mapping[str, Any]], **options: Any
) -> dict:
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
    normalized_config = to_json_value(config, "config", allow_nonfinite=False)
    if not isinstance(normalized_config, dict):
        raise TypeError(f"config must be a mapping or a dataclass; got {type(config).__name__}")
    code = experiment_code(experiment)
    identity = code_identity(code)
    path = entry_path(experiment, normalized_config, profile=profile, results_dir=results_dir)
    stored, reason = (
        (None, "is to be computed again") if recompute else read_matching_entry(path, normalized_config, identity)
    )
    if stored is None and not recompute:
        stored = fetch_committed_entry(path, profile, normalized_config, identity, results_dir)
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

    return _returned(
        _compute_and_write(
            experiment,
            normalized_config,
            compute,
            path=path,
            profile=profile,
            code=code,
            identity=identity,
            device=device,
            allow_nonfinite=allow_nonfinite,
        )
    )


def _compute_and_write(
    experiment: str,
    config: dict,
    compute: Callable[[], Mapping[str, Any]],
    *,
    path: Path,
    profile: str,
    code: str | None,
    identity: dict | None,
    device: str | None,
    allow_nonfinite: bool,
) -> StoredEntry:
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
        "result": to_json_value(result, "result", allow_nonfinite),
        "provenance": new_provenance(config, device, wall_time_s, before),
    }
    text = entry_text(entry, allow_nonfinite=allow_nonfinite)
    write_atomically(path, text)
    return entry_from_dict(path, json.loads(text))


def record_entry(
    experiment: str,
    config: Mapping[str, Any] | Any,
    compute: Callable[[], Mapping[str, Any]],
    *,
    profile: str,
    results_dir: str | Path | None = None,
    device: str | None = None,
) -> StoredEntry:
    """Compute a measurement of this machine and store it as a cache entry of ``experiment`` (a
    folder of :data:`MEASUREMENT_FOLDERS`) keyed by ``config``, replacing the entry of the same
    config: unlike :func:`cached_entry` it never reuses one, since a measurement stands for the
    machine and the commit it was made at. The entry carries the usual provenance (processor,
    instruction sets, commit, wall time of ``compute``) and passes ``validate``."""
    if not in_folders(experiment, MEASUREMENT_FOLDERS):
        raise ValueError(f"experiment must lie under one of {', '.join(MEASUREMENT_FOLDERS)}; got {experiment!r}")
    normalized_config = to_json_value(config, "config", allow_nonfinite=False)
    if not isinstance(normalized_config, dict):
        raise TypeError(f"config must be a mapping or a dataclass; got {type(config).__name__}")
    path = entry_path(experiment, normalized_config, profile=profile, results_dir=results_dir)
    return _compute_and_write(
        experiment,
        normalized_config,
        compute,
        path=path,
        profile=profile,
        code=None,
        identity=None,
        device=device,
        allow_nonfinite=False,
    )
