"""Typed records of the decoder results: what one trained and evaluated language model's cache
entry holds (:func:`ssa_book.lm.experiment.train_and_evaluate`), read once by
:func:`ssa_book.lm.experiment.result`.

A run knows its scorer and seed, and carries its cache entry's provenance. The sections a result
lacks are empty (synthetic results in tests hold only what a test reads); a result without its
scorer, seed or perplexities is refused with the key it lacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ssa_book.records import required
from ssa_book.results.provenance import Provenance

SCHEMA_VERSION = 1  # the layout of train_and_evaluate's result that these records read
SPLITS = ("id", "ood")  # in distribution, out of distribution

__all__ = ["SCHEMA_VERSION", "SPLITS", "Blimp", "History", "LMRun"]


def _required(result: Mapping, key: str, where: str) -> Any:
    return required(result, key, where, f"layout {SCHEMA_VERSION} of ssa_book.lm.records")


@dataclasses.dataclass(frozen=True)
class Blimp:
    """BLiMP accuracy: overall (a fraction), per phenomenon and per paradigm."""

    accuracy: float
    by_phenomenon: Mapping[str, float] = dataclasses.field(default_factory=dict)
    by_paradigm: Mapping[str, float] = dataclasses.field(default_factory=dict)
    pairs: int | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class History:
    """Training loss per logged step, held-out loss and SSA's scalars per evaluation step."""

    step: tuple[int, ...] = ()
    train_loss: tuple[float, ...] = ()
    eval_step: tuple[int, ...] = ()
    eval_loss: tuple[float, ...] = ()
    scorer_values: tuple[Mapping[str, Any], ...] = ()  # per evaluation step: module -> parameter -> values


@dataclasses.dataclass(frozen=True, eq=False)
class LMRun:
    """One trained and evaluated decoder."""

    scorer: str
    seed: int
    perplexity_id: float  # held-out text of the training source
    perplexity_ood: float  # another source
    unigram_perplexity_id: float | None = None  # a unigram model fitted on the training text, same windows
    unigram_perplexity_ood: float | None = None
    blimp: Blimp | None = None
    history: History = dataclasses.field(default_factory=History)
    parameters: int | None = None
    tokens_trained: int | None = None
    scorer_values: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # module -> parameter -> values
    windows: Mapping[str, tuple[int, int]] = dataclasses.field(
        default_factory=dict
    )  # split -> (windows, tokens per window)
    train_seconds: float = 0.0  # over every session, if the run was resumed
    evaluate_seconds: float = 0.0
    provenance: Provenance | None = None  # of the cache entry; None for a run not read from the cache

    def perplexity(self, split: str) -> float:
        return getattr(self, f"perplexity_{_split(split)}")

    def unigram_perplexity(self, split: str) -> float | None:
        return getattr(self, f"unigram_perplexity_{_split(split)}")

    @classmethod
    def from_result(cls, result: Mapping, *, provenance: Provenance | None = None) -> "LMRun":
        where = f"decoder {result.get('scorer', '?')}/seed {result.get('seed', '?')}"
        blimp, history = result.get("blimp"), result.get("history") or {}
        return cls(
            scorer=str(_required(result, "scorer", where)),
            seed=int(_required(result, "seed", where)),
            perplexity_id=float(_required(result, "perplexity_id", where)),
            perplexity_ood=float(_required(result, "perplexity_ood", where)),
            unigram_perplexity_id=result.get("unigram_perplexity_id"),
            unigram_perplexity_ood=result.get("unigram_perplexity_ood"),
            blimp=None
            if blimp is None
            else Blimp(
                float(blimp["accuracy"]),
                dict(blimp.get("by_phenomenon", {})),
                dict(blimp.get("by_paradigm", {})),
                blimp.get("pairs"),
            ),
            history=History(
                *(
                    tuple(history.get(name, ()))
                    for name in ("step", "train_loss", "eval_step", "eval_loss", "scorer_values")
                )
            ),
            parameters=result.get("parameters"),
            tokens_trained=result.get("tokens_trained"),
            scorer_values=dict(result.get("scorer_values", {})),
            windows={split: tuple(value) for split, value in result.get("windows", {}).items()},
            train_seconds=float(result.get("train_seconds", 0.0)),
            evaluate_seconds=float(result.get("evaluate_seconds", 0.0)),
            provenance=provenance,
        )


def _split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
    return split
