"""Where the book's folders are: the repository root, its data, its result cache, and the folders
training writes in (checkpoints, the decoder's run folders)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

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
