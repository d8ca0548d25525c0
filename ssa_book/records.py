"""What the typed result records share (:mod:`ssa_book.icl.records`, :mod:`ssa_book.encoder.records`,
:mod:`ssa_book.lm.records`): reading a cached result's layout, and refusing one that lacks a key with
the key's name, never half reading it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def required(result: Mapping, key: str, where: str, layout: str) -> Any:
    """``result[key]``; a ``ValueError`` naming ``where``, the key and the ``layout`` that expects
    it when it is missing."""
    if key not in result:
        raise ValueError(f"{where}: the result has no {key!r} ({layout} expects it)")
    return result[key]
