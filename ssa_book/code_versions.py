"""The version of the code that computes each kind of cached result.

A cached result is keyed by its config *and* by the version of the code that computed it, so
that a change to training or evaluation cannot silently reuse old numbers: bump a computation's
version and every one of its cached results is recomputed (or, under ``--require-cache``,
reported missing with the command that recomputes it).

A version is a number a person bumps. So that forgetting cannot go unnoticed, each computation
also names the modules whose code produces its numbers, and ``tests/test_code_versions.py`` fails
when their *fingerprint* differs from the one recorded beside the version in
``ssa_book/code_versions.json``. The fingerprint hashes the modules' syntax trees without docstrings
(so comments, docstrings and formatting do not count) and the C++ kernel sources without
comments. A change then needs a decision:

* it can change a number (training, evaluation, a kernel's arithmetic or compiler flags):
  ``python -m ssa_book code-versions bump NAME`` raises the version and records the fingerprint;
* it cannot (a rename, a refactor that performs the same operations in the same order, shown by
  rerunning one smoke-profile result and getting identical numbers): keep the version and
  record the fingerprint with ``python -m ssa_book code-versions record NAME``.

Only the version enters the cache key; the fingerprint is stored in each entry's provenance, so
a reader on another Python version (whose syntax trees print differently) reads the same cache.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib.util
import json
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Sequence


_RECORD_FILE = "code_versions.json"

# The modules shared by every trained model: the scorers, the attention paths and their kernels.
_ATTENTION = ("ssa.scoring", "ssa.attention", "ssa.kernels", "ssa_book.training")


@dataclasses.dataclass(frozen=True)
class Computation:
    """A kind of cached result: the modules (or packages) whose code determines its numbers, and
    the experiments whose keys hold its version: cache folders, each written with a final ``/``;
    an experiment belongs when its folder is one of them or lies under one (:func:`in_folders`)."""

    name: str
    modules: tuple[str, ...]
    experiments: tuple[str, ...]


# The in-context results whose keys hold the icl version: all of them, regenerated from clean
# commits since code versions exist (the chapters' and the alternatives' runs, and the study's).
_ICL_REGENERATED = ("icl/", "icl_logits/")

COMPUTATIONS: dict[str, Computation] = {
    computation.name: computation
    for computation in (
        Computation(
            "icl",
            (
                "ssa_book.icl.baselines",
                "ssa_book.icl.curriculum",
                "ssa_book.icl.models",
                "ssa_book.icl.samplers",
                "ssa_book.icl.tasks",
                "ssa_book.icl.train",
                "ssa_book.icl.evaluate",
                "ssa_book.icl.diagnostics",
                "ssa_book.icl.experiments",
                *_ATTENTION,
            ),
            _ICL_REGENERATED,
        ),
        Computation(
            "encoder",
            (
                "ssa_book.encoder.corpus",
                "ssa_book.encoder.model",
                "ssa_book.encoder.tokenizer",
                "ssa_book.encoder.train",
                "ssa_book.encoder.zorro",
                "ssa_book.encoder.experiment",
                "ssa.hf",
                "ssa_book.data",
                *_ATTENTION,
            ),
            ("encoder/",),
        ),
        Computation(
            "lm",
            (
                "ssa_book.lm.config",
                "ssa_book.lm.data",
                "ssa_book.lm.evaluate",
                "ssa_book.lm.model",
                "ssa_book.lm.tokenizer",
                "ssa_book.lm.train",
                "ssa_book.lm.experiment",
                "ssa.hf",
                "ssa_book.data",
                *_ATTENTION,
            ),
            ("lm/",),
        ),
        Computation(
            "retrieval",
            ("ssa_book.retrieval.task", "ssa_book.retrieval.model", "ssa_book.retrieval.experiment", *_ATTENTION),
            ("retrieval/",),
        ),
        Computation(
            "performance",
            ("ssa_book.bench", "ssa_book.alternatives.cost", *_ATTENTION),
            ("performance/", "alternatives/cost/"),
        ),
    )
}


def in_folders(experiment: str, folders) -> bool:
    """Whether ``experiment``'s folder is one of ``folders`` (each ending in ``/``) or lies under one:
    ``icl/every/ssa`` is in ``icl/`` and in ``icl/every/ssa/``, not in ``icl/every/ss/``."""
    return any(f"{experiment.rstrip('/')}/".startswith(folder) for folder in folders)


def computation_of(experiment: str) -> str | None:
    """The computation whose version enters the keys of ``experiment`` (``None``: none does)."""
    for computation in COMPUTATIONS.values():
        if in_folders(experiment, computation.experiments):
            return computation.name
    return None


def check_computation(name: str) -> Computation:
    if name not in COMPUTATIONS:
        raise ValueError(f"computation must be one of {', '.join(COMPUTATIONS)}; got {name!r}")
    return COMPUTATIONS[name]


def _source_files(module: str) -> list[Path]:
    """The files of ``module``: one ``.py``, or for a package every ``.py`` and C++ file in it."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ValueError(f"module {module!r} is not importable")
    origin = Path(spec.origin)
    if spec.submodule_search_locations:  # a package
        folder = origin.parent
        return sorted(path for pattern in ("*.py", "*.cpp", "*.h") for path in folder.rglob(pattern))
    return [origin]


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _normalized_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return ast.dump(_without_docstrings(ast.parse(text, filename=str(path))))
    # C++: drop comments, then collapse whitespace.
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", " ", text)
    return " ".join(text.split())


def fingerprint(name: str) -> str:
    """SHA-256 over the normalised code of computation ``name``'s modules (see the module docstring)."""
    digest = hashlib.sha256()
    for module in check_computation(name).modules:
        for path in _source_files(module):
            package_root = Path(importlib.util.find_spec("ssa").origin).parent.parent
            digest.update(path.resolve().relative_to(package_root.resolve()).as_posix().encode())
            digest.update(b"\0")
            digest.update(_normalized_text(path).encode())
            digest.update(b"\0")
    return digest.hexdigest()


def record_path() -> Path:
    """The record of every computation's version and fingerprint: :data:`_RECORD_FILE` in the package."""
    return Path(str(resources.files("ssa_book").joinpath(_RECORD_FILE)))


def recorded() -> dict[str, dict]:
    """``{name: {"version": int, "fingerprint": str, "python": "3.11"}}`` from ``ssa_book/code_versions.json``."""
    return json.loads(record_path().read_text(encoding="utf-8"))


def version(name: str) -> int:
    """The current version of computation ``name``: the number that enters its cache keys."""
    check_computation(name)
    return int(recorded()[name]["version"])


def python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def stale() -> list[str]:
    """The computations whose code differs from the recorded fingerprint (on the recorded Python
    version; syntax trees print differently on others), and those never recorded."""
    record = recorded()
    return [
        name
        for name in COMPUTATIONS
        if name not in record  # a new computation: never recorded
        or (record[name]["python"] == python_version() and record[name]["fingerprint"] != fingerprint(name))
    ]


def record(names: Sequence[str], *, bump: bool = False) -> dict[str, dict]:
    """Store the fingerprint of each computation of ``names`` on this Python, its version kept, or
    raised by one if ``bump`` (a computation never recorded starts at 0); returns their new entries."""
    found = recorded()
    for name in names:
        entry = found.setdefault(name, {"version": 0})
        if bump:
            entry["version"] = int(entry["version"]) + 1
        entry["fingerprint"], entry["python"] = fingerprint(name), python_version()
    record_path().write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return {name: found[name] for name in names}
