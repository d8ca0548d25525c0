"""Typed records of the encoder results: what one trained and probed BabyBERTa model's cache entry
holds (:func:`ssa_book.encoder.train.train_and_probe`), read once by :func:`ssa_book.encoder.experiment.run`.

A run knows its variant (``scorer``) and seed, and carries its cache entry's provenance. The
sections a result lacks are empty (synthetic results in tests hold only what a test reads); a
result without its variant, seed or scores is refused with the key it lacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ssa_book.records import required
from ssa_book.results.provenance import Provenance

SCHEMA_VERSION = 1  # the layout of train_and_probe's result that these records read

__all__ = ["SCHEMA_VERSION", "ParadigmScore", "TrainingCurve", "EncoderRun"]


def _required(result: Mapping, key: str, where: str) -> Any:
    return required(result, key, where, f"layout {SCHEMA_VERSION} of ssa_book.encoder.records")


@dataclasses.dataclass(frozen=True)
class ParadigmScore:
    """One Zorro paradigm's score: the share of minimal pairs the model prefers the grammatical
    sentence of, with its 95% interval over the scored pairs."""

    accuracy: float
    correct: int
    total: int
    low: float
    high: float

    @classmethod
    def from_result(cls, entry: Mapping, where: str) -> "ParadigmScore":
        return cls(
            float(_required(entry, "accuracy", where)),
            int(entry.get("correct", 0)),
            int(_required(entry, "total", where)),
            float(_required(entry, "low", where)),
            float(_required(entry, "high", where)),
        )


@dataclasses.dataclass(frozen=True, eq=False)
class TrainingCurve:
    """Losses and Zorro accuracy along training, one entry per evaluation step."""

    step: tuple[int, ...]
    train_loss: tuple[float | None, ...]  # None at step 0: the untrained model has no training loss
    held_out_loss: tuple[float, ...]
    zorro_accuracy: tuple[float, ...]
    scorer_values: tuple[Mapping[str, list], ...]  # per step: SSA's scalars per layer ({} for softmax)


@dataclasses.dataclass(frozen=True, eq=False)
class EncoderRun:
    """One trained and probed encoder."""

    scorer: str  # the variant: softmax, ssa, ssa_n1.5, ssa_n2
    seed: int
    holistic: Mapping[str, ParadigmScore]  # paradigm -> score by holistic scoring (the paper's)
    pll: Mapping[str, ParadigmScore] = dataclasses.field(default_factory=dict)  # by pseudo-log-likelihood
    config: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # the EncoderConfig it trained with
    curve: TrainingCurve | None = None
    scorer_values: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)  # parameter -> value per layer
    timings: Mapping[str, float] = dataclasses.field(default_factory=dict)  # train, eval and probe seconds
    num_parameters: int | None = None
    train_sequences: int | None = None
    held_out_sequences: int | None = None
    too_long_utterances_dropped: int | None = None
    passes_over_corpus: float | None = None
    provenance: Provenance | None = None  # of the cache entry; None for a run not read from the cache

    def scores(self, method: str = "holistic") -> Mapping[str, ParadigmScore]:
        if method not in ("holistic", "pll"):
            raise ValueError(f"method must be holistic or pll; got {method!r}")
        return self.holistic if method == "holistic" else self.pll

    def overall(self, paradigms) -> float | None:
        """Mean holistic accuracy over ``paradigms`` (a fraction), or ``None`` without all of them."""
        if not set(paradigms) <= set(self.holistic):
            return None
        return float(np.mean([self.holistic[paradigm].accuracy for paradigm in paradigms]))

    @classmethod
    def from_result(cls, result: Mapping, *, provenance: Provenance | None = None) -> "EncoderRun":
        where = f"encoder {result.get('scorer', '?')}/seed {result.get('seed', '?')}"
        scorer, seed = str(_required(result, "scorer", where)), int(_required(result, "seed", where))

        def scores(key: str) -> dict[str, ParadigmScore]:
            return {
                name: ParadigmScore.from_result(entry, f"{where}/{key}/{name}")
                for name, entry in result.get(key, {}).items()
            }

        curve = result.get("curve")
        return cls(
            scorer=scorer,
            seed=seed,
            holistic=scores("holistic") if "holistic" in result else _required(result, "holistic", where),
            pll=scores("pll"),
            config=dict(result.get("config", {})),
            curve=None
            if curve is None
            else TrainingCurve(
                tuple(curve["step"]),
                tuple(curve["train_loss"]),
                tuple(curve["held_out_loss"]),
                tuple(curve["zorro_accuracy"]),
                tuple(curve.get("scorer_values", ())),
            ),
            scorer_values={
                name: np.asarray(values, dtype=float) for name, values in result.get("scorer_values", {}).items()
            },
            timings={name: float(value) for name, value in result.get("timings", {}).items()},
            num_parameters=result.get("num_parameters"),
            train_sequences=result.get("train_sequences"),
            held_out_sequences=result.get("held_out_sequences"),
            too_long_utterances_dropped=result.get("too_long_utterances_dropped"),
            passes_over_corpus=result.get("passes_over_corpus"),
            provenance=provenance,
        )
