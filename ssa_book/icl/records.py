"""Typed records of the in-context results: what one trained model's cache entry holds, read once.

:func:`ssa_book.icl.experiments.run` writes a nested JSON dict (the cache entry's ``result``); the
chapters, verdicts, figures and the ledger read :class:`ICLRun` instead, built from it by
:meth:`ICLRun.from_result` when the result is loaded (:func:`ssa_book.icl.experiments.load_runs`).
A run knows its task, scorer and seed, so runs pair by seed without being told, and carries the
provenance of its cache entry (config, commit, versions, device, wall time).

Arrays are numpy arrays, with their axes in the field comments. :data:`SCHEMA_VERSION` is the
version of the result's layout that these records read; a result of another layout is refused
with the key that is missing, never half read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ssa_book.records import required
from ssa_book.results.provenance import Provenance

SCHEMA_VERSION = 1  # the layout of ssa_book.icl.experiments.run's result that these records read

__all__ = [
    "SCHEMA_VERSION",
    "Errors",
    "Sweep",
    "Concentration",
    "Injection",
    "AttentionMap",
    "Training",
    "ICLRun",
    "LogitSpread",
]


def _section(result: Mapping, key: str, where: str) -> Any:
    return required(result, key, where, f"layout {SCHEMA_VERSION} of ssa_book.icl.records")


def _array(values) -> np.ndarray:
    return np.asarray(values, dtype=float)


@dataclasses.dataclass(frozen=True, eq=False)
class Errors:
    """One predictor's errors on one set of prompts."""

    prompt_error: float  # the share of prompts with any point wrong (classification) or the MSE, from point 3 on
    per_position: np.ndarray | None = None  # (points,) pointwise error, when kept

    @classmethod
    def from_result(cls, entry: Mapping, where: str) -> "Errors":
        per_position = entry.get("per_position")
        return cls(
            float(_section(entry, "prompt_error", where)), None if per_position is None else _array(per_position)
        )


@dataclasses.dataclass(frozen=True, eq=False)
class Sweep:
    """The model's and the baselines' errors along a sweep: of the input scale (a sigma per
    cell) or of the prompt length (a length per cell)."""

    values: tuple[float, ...]  # the sigmas or the lengths
    prompt_error: Mapping[str, np.ndarray]  # predictor ("model" or a baseline) -> (cells,)
    per_position: Mapping[str, np.ndarray]  # predictor -> (cells, points); empty when not kept

    @property
    def predictors(self) -> tuple[str, ...]:
        """The model first, then the task's baselines."""
        return tuple(self.prompt_error)

    @property
    def baselines(self) -> tuple[str, ...]:
        return tuple(name for name in self.prompt_error if name != "model")

    def error(self, predictor: str = "model") -> np.ndarray:
        if predictor not in self.prompt_error:
            raise ValueError(f"predictor must be one of {', '.join(self.prompt_error)}; got {predictor!r}")
        return self.prompt_error[predictor]

    @classmethod
    def from_result(cls, entry: Mapping, axis: str, where: str) -> "Sweep":
        values = tuple(_section(entry, axis, where))
        predictors = {name: value for name, value in entry.items() if name != axis}
        prompt_error = {
            name: _array(_section(value, "prompt_error", f"{where}/{name}")) for name, value in predictors.items()
        }
        for name, errors in prompt_error.items():
            if errors.shape != (len(values),):
                raise ValueError(
                    f"{where}/{name}: {errors.shape[0] if errors.ndim else 0} prompt errors for {len(values)} {axis}"
                )
        per_position = {
            name: _array(value["per_position"]) for name, value in predictors.items() if "per_position" in value
        }
        return cls(values, prompt_error, per_position)


@dataclasses.dataclass(frozen=True, eq=False)
class Concentration:
    """Attention statistics along an input-scale sweep, per layer and head."""

    sigmas: tuple[float, ...]
    statistics: Mapping[str, np.ndarray]  # "entropy", "max_weight" -> (sigmas, layers, heads)

    def statistic(self, name: str) -> np.ndarray:
        if name not in self.statistics:
            raise ValueError(f"statistic must be one of {', '.join(self.statistics)}; got {name!r}")
        return self.statistics[name]

    @classmethod
    def from_result(cls, entry: Mapping, where: str) -> "Concentration":
        sigmas = tuple(_section(entry, "sigmas", where))
        return cls(sigmas, {name: _array(value) for name, value in entry.items() if name != "sigmas"})


@dataclasses.dataclass(frozen=True, eq=False)
class Injection:
    """Prompts with one extreme input at ``position``, and the same prompts without it."""

    position: int  # 0-based point that got the value
    value: float
    injected: Mapping[str, Errors]  # predictor -> errors with the injected value
    clean: Mapping[str, Errors]  # predictor -> errors on the same prompts without it
    injected_mass: np.ndarray  # (layers, heads) share of attention the later queries put on it

    @classmethod
    def from_result(cls, entry: Mapping, where: str) -> "Injection":
        fixed = {"position", "value", "clean", "injected_mass"}
        return cls(
            position=int(entry.get("position", 0)),
            value=float(entry.get("value", float("nan"))),
            injected={
                name: Errors.from_result(value, f"{where}/{name}") for name, value in entry.items() if name not in fixed
            },
            clean={
                name: Errors.from_result(value, f"{where}/clean/{name}")
                for name, value in entry.get("clean", {}).items()
            },
            injected_mass=_array(_section(entry, "injected_mass", where)),
        )


@dataclasses.dataclass(frozen=True, eq=False)
class AttentionMap:
    """Head-averaged attention of one prompt with the injected value."""

    xs: np.ndarray  # (points,)
    ys: np.ndarray  # (points,)
    weights: np.ndarray  # (layers, tokens, tokens), tokens = 2 x points (x and y interleaved)


@dataclasses.dataclass(frozen=True, eq=False)
class Training:
    """How the model was trained: loss history and measured times."""

    history: tuple[tuple[int, float], ...]  # (step, mean loss over the logging window)
    steps: int
    wall_time_s: float  # training, summed over interrupted and resumed sessions
    steps_per_s: float | None
    device: str
    evaluation_wall_time_s: float

    @classmethod
    def from_result(cls, entry: Mapping, where: str) -> "Training":
        return cls(
            history=tuple((int(step), float(loss)) for step, loss in entry.get("history", ())),
            steps=int(_section(entry, "steps", where)),
            wall_time_s=float(_section(entry, "wall_time_s", where)),
            steps_per_s=None if entry.get("steps_per_s") is None else float(entry["steps_per_s"]),
            device=str(entry.get("device", "")),
            evaluation_wall_time_s=float(entry.get("evaluation_wall_time_s", float("nan"))),
        )


@dataclasses.dataclass(frozen=True, eq=False)
class ICLRun:
    """Everything the chapters measured on one trained in-context learner.

    The sections a result lacks are ``None`` (synthetic results in tests hold only what a test
    reads); every run that :func:`ssa_book.icl.experiments.run` computes has them all."""

    task: str
    scorer: str
    seed: int
    shifts: Mapping[str, Sweep]  # "sigma_x" (and "sigma_ab" for linear functions)
    length: Sweep | None = None  # along the prompt length, at sigma 1
    concentration: Mapping[str, Concentration] = dataclasses.field(default_factory=dict)
    injection: Injection | None = None
    attention_map: AttentionMap | None = None
    training: Training | None = None
    scorer_values: Mapping[str, Mapping[str, np.ndarray]] = dataclasses.field(
        default_factory=dict
    )  # layer -> parameter -> values
    provenance: Provenance | None = None  # of the cache entry; None for a run not read from the cache

    def sweep(self, shift: str) -> Sweep:
        if shift not in self.shifts:
            raise ValueError(f"shift must be one of {', '.join(self.shifts)}; got {shift!r}")
        return self.shifts[shift]

    @classmethod
    def from_result(
        cls, result: Mapping, *, task: str, scorer: str, seed: int, provenance: Provenance | None = None
    ) -> "ICLRun":
        """The record of ``result`` (:func:`ssa_book.icl.experiments.run`'s dict, or the cache entry's
        ``result``); ``ValueError`` naming the first key its layout lacks."""
        where = f"{task}/{scorer}/seed {seed}"
        shifts = {
            shift: Sweep.from_result(entry, "sigmas", f"{where}/shifts/{shift}")
            for shift, entry in _section(result, "shifts", where).items()
        }
        concentration = {
            shift: Concentration.from_result(entry, f"{where}/concentration/{shift}")
            for shift, entry in result.get("concentration", {}).items()
        }
        attention = result.get("attention_map")
        return cls(
            task=task,
            scorer=scorer,
            seed=int(seed),
            shifts=shifts,
            length=Sweep.from_result(result["length"], "lengths", f"{where}/length") if "length" in result else None,
            concentration=concentration,
            injection=Injection.from_result(result["injection"], f"{where}/injection")
            if "injection" in result
            else None,
            attention_map=None
            if attention is None
            else AttentionMap(_array(attention["xs"]), _array(attention["ys"]), _array(attention["weights"])),
            training=Training.from_result(result["training"], f"{where}/training") if "training" in result else None,
            scorer_values={
                layer: {name: _array(values) for name, values in parameters.items()}
                for layer, parameters in result.get("scorer_values", {}).items()
            },
            provenance=provenance,
        )


@dataclasses.dataclass(frozen=True, eq=False)
class LogitSpread:
    """The attention-logit spread per layer and head of one trained model along the input-scale
    sweep (:func:`ssa_book.icl.experiments.logit_spread`, :func:`ssa_book.icl.diagnostics.logit_ranges`)."""

    task: str
    scorer: str
    seed: int
    sigmas: tuple[float, ...]
    spread: np.ndarray  # (sigmas, layers, heads)

    @classmethod
    def from_result(cls, result: Mapping, *, task: str, scorer: str, seed: int) -> "LogitSpread":
        where = f"{task}/{scorer}/seed {seed}/logit spread"
        return cls(
            task,
            scorer,
            int(seed),
            tuple(_section(result, "sigmas", where)),
            _array(_section(result, "logit_spread", where)),
        )
