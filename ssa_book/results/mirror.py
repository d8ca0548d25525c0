"""The committed cache read without a checkout: a missing entry is looked up in the commit the
package was installed from (or ``$SSA_RESULTS_MIRROR``), checked against the config asked for and
copied into the local cache."""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from importlib import metadata
from pathlib import Path

from ssa_book import paths
from ssa_book.results.errors import CacheMissError
from ssa_book.results.store import StoredEntry, matching_entry, write_atomically

RESULTS_MIRROR_ENV = "SSA_RESULTS_MIRROR"


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


def fetch_committed_entry(
    path: Path, profile: str, config: dict, code: dict | None, results_dir: str | Path | None
) -> StoredEntry | None:
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
    stored = matching_entry(path, parsed, config, code)
    if stored is None or stored.profile != profile:
        raise CacheMissError(
            f"the committed cache entry {relative} at {source} does not match the config asked for; it was not used"
        )
    write_atomically(path, text)
    return stored
