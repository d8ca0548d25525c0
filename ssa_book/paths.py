"""Where the book's folders are: the repository root, its data, its result cache, and the folders
training writes in (checkpoints, the decoder's run folders); and whether a command can write in
them, asked before it starts."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from ssa_book.files import folder_problem
from ssa_book.profiles import check_profile

CHECKPOINT_DIR_ENV = "SSA_CHECKPOINT_DIR"  # the in-context and encoder runs' checkpoints
RUNS_DIR_ENV = "SSA_RUNS_DIR"  # the decoder's run folders (checkpoints, tokenizers)

# Markers that tell a checkout of this repository apart from a folder that merely holds notebooks.
_ROOT_MARKERS = ("pyproject.toml", "_toc.yml")


def repository_root() -> Path | None:
    """The checkout this package was installed from (editable install), or ``None``.

    Notebooks execute inside ``_build/src/``, so the current directory cannot be trusted;
    the package's own location can.
    """
    candidate = Path(__file__).resolve().parent.parent
    if all((candidate / marker).is_file() for marker in _ROOT_MARKERS):
        return candidate
    return None


def _default_under_root(folder: str) -> Path:
    root = repository_root()
    # Installed from an index (e.g. on Colab): fall back to the working directory.
    return (root if root is not None else Path.cwd()) / folder


def data_dir() -> Path:
    """The dataset folder: ``$SSA_DATA_DIR``, else ``data/`` in the repository."""
    configured = os.environ.get("SSA_DATA_DIR")
    return Path(configured).expanduser().resolve() if configured else _default_under_root("data")


def results_dir() -> Path:
    """The result cache folder: ``$SSA_RESULTS_DIR``, else ``results/`` in the repository."""
    configured = os.environ.get("SSA_RESULTS_DIR")
    return Path(configured).expanduser().resolve() if configured else _default_under_root("results")


def checkpoint_dirs() -> dict[str, Path]:
    """Where the studies that resume from checkpoints keep them, by study: ``$SSA_CHECKPOINT_DIR``
    for both, else each one's own: the in-context runs' beside the result cache, the encoder's in
    ``_build/``."""
    configured = os.environ.get(CHECKPOINT_DIR_ENV)
    if configured:
        return dict.fromkeys(("icl", "encoder"), Path(configured).expanduser())
    return {"icl": results_dir().parent / "checkpoints", "encoder": _default_under_root("_build") / "checkpoints"}


def runs_dir() -> Path:
    """Where the decoder's run folders go: ``$SSA_RUNS_DIR``, else ``_build/runs`` in the repository."""
    configured = os.environ.get(RUNS_DIR_ENV)
    return Path(configured).expanduser().resolve() if configured else _default_under_root("_build") / "runs"


def training_folders() -> list[tuple[str, Path]]:
    """Every folder training writes in, each with the variable that moves it."""
    folders = [(CHECKPOINT_DIR_ENV, folder) for folder in dict.fromkeys(checkpoint_dirs().values())]
    return folders + [(RUNS_DIR_ENV, runs_dir())]


@contextlib.contextmanager
def environment(changes: Mapping[str, str]) -> Iterator[None]:
    """Environment variables set to ``changes`` inside the block, restored (or removed) after it."""
    saved = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def cache_problem(profile: str, cache: str | Path | None = None) -> str | None:
    """Why results of ``profile`` cannot be written to the result cache (``cache``, default
    :func:`results_dir`): its profile's folder, or the cache's own when that is not there yet;
    ``None`` when they can. Asked before a command computes, so that a read-only cache fails in a
    second rather than after a training whose result it cannot store."""
    root = Path(cache) if cache is not None else results_dir()
    folder = root / check_profile(profile)
    problem = folder_problem(folder if folder.exists() else root)
    return None if problem is None else f"the result cache cannot be written: {problem}"


def training_folder_problem() -> str | None:
    """Why training cannot write its checkpoints or run folders (:func:`training_folders`;
    a folder to be created is fine below a writable one), with the variable that moves it, or
    ``None``. Asked with :func:`cache_problem`, before any run trains: a checkpoint it could not
    write would fail it minutes in."""
    for variable, folder in training_folders():
        problem = folder_problem(folder, new_parents=True)
        if problem is not None:
            return f"training cannot write in its folder: {problem} (set {variable} to a writable folder)"
    return None
