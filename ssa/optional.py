"""The library's optional dependencies: imported where they are used, with the extra that
installs each named when it is missing."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str) -> ModuleType:
    """``module``, imported; when it is not installed, an error that names the extra of the
    ``ssa-book`` package that brings it (``pip install "ssa-book[extra]"``)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is not None and error.name.split(".")[0] != module.split(".")[0]:
            raise  # the module is there but something it imports is not: not ours to explain
        raise ModuleNotFoundError(
            f"{module} is not installed; it comes with the '{extra}' extra: pip install \"ssa-book[{extra}]\"",
            name=module,
        ) from error
