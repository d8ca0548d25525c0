"""What ``python -m ssa_book results`` reads: every entry with what is wrong with it
(:func:`list_entries`, with ``clean`` also :func:`provenance_problems`), the committed cache's size
against its cap, and the one-line layout an entry is rewritten in (:func:`reformat_entry`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from ssa_book import paths
from ssa_book.code_versions import in_folders
from ssa_book.profiles import PROFILES
from ssa_book.results.errors import EntryError
from ssa_book.results.keys import MEASUREMENT_FOLDERS, entry_text
from ssa_book.results.provenance import run_git
from ssa_book.results.store import StoredEntry, entry_problems, profile_folders, read_entry, write_atomically

# The committed cache's cap, from the powered in-context study's issue ("results/ stays under
# 40 MB in total"); `python -m ssa_book results validate` fails above it.
RESULTS_BYTES_LIMIT = 40_000_000


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
        problems.append(
            "computed from a dirty working tree" if provenance.git_dirty else "no record of the tree's state"
        )
    if not provenance.git_commit:
        problems.append("no commit recorded")
    elif run_git("cat-file", "-e", f"{provenance.git_commit}^{{commit}}") is None:
        problems.append(f"commit {provenance.git_commit[:12]} is not in this checkout")
    return problems


def list_entries(
    results_dir: str | Path | None = None, profile: str | None = None, *, clean: bool = False
) -> list[CacheEntry]:
    """Every stored entry, with what is wrong with it (an empty ``problems`` means valid);
    ``clean`` also counts :func:`provenance_problems`."""
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    entries = []
    for profile_name in profile_folders(root, profile):
        profile_root = root / profile_name
        for path in sorted(profile_root.rglob("*.json")):
            experiment = path.parent.relative_to(profile_root).as_posix()
            try:
                stored = read_entry(path)
            except EntryError as error:
                entries.append(CacheEntry(path, profile_name, experiment, (str(error).removeprefix(f"{path}: "),)))
                continue
            problems = entry_problems(stored, profile_name, experiment) + (provenance_problems(stored) if clean else [])
            entries.append(CacheEntry(path, profile_name, experiment, tuple(problems), stored))
    return entries


def committed_bytes(results_dir: str | Path | None = None) -> int:
    """Bytes of every file under the committed profiles' folders (all but ``smoke``)."""
    root = Path(results_dir) if results_dir is not None else paths.results_dir()
    return sum(
        path.stat().st_size
        for profile in PROFILES
        if profile != "smoke"
        for path in (root / profile).rglob("*")
        if path.is_file()
    )


def reformat_entry(path: Path) -> bool:
    """Rewrite the entry at ``path`` in :func:`entry_text`'s layout; whether it changed. The
    values are parsed and written back, so its key, config and numbers stay exactly the same."""
    text = path.read_text(encoding="utf-8")
    formatted = entry_text(json.loads(text), allow_nonfinite=True)
    if formatted == text:
        return False
    write_atomically(path, formatted)
    return True
