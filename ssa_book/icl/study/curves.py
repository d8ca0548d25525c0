"""The data of the study's figures: each arm's runs as curves along the input-scale sweep
(:func:`arm_curves`), of their prompt error or of the first layer's attention statistics."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ssa_book.icl.study.conduct import StudyCache


def arm_curves(
    arms: Sequence[str], task: str, seeds: Sequence[int], values: Callable[[str, str, int], np.ndarray | None]
):
    """``{arm: (seeds, values)}``: ``values(arm, task, seed)`` (an array along sigma, or ``None``
    when that run is not cached) for each seed of each arm, one row per cached seed; arms with no
    cached seed are left out."""
    found = {}
    for arm in arms:
        rows = [(seed, values(arm, task, seed)) for seed in seeds]
        rows = [(seed, row) for seed, row in rows if row is not None]
        if rows:
            found[arm] = (tuple(seed for seed, _ in rows), np.array([row for _, row in rows], dtype=float))
    return found


def error_along_sigma(cache: StudyCache) -> Callable[[str, str, int], np.ndarray | None]:
    """For :func:`arm_curves`: a run's prompt error along the input-scale sweep."""

    def values(arm: str, task: str, seed: int) -> np.ndarray | None:
        run = cache.run(arm, task, seed)
        return None if run is None else np.asarray(run.sweep("sigma_x").error(), dtype=float)

    return values


def first_layer(cache: StudyCache, statistic: str) -> Callable[[str, str, int], np.ndarray | None]:
    """For :func:`arm_curves`: the first layer's ``statistic`` along sigma, mean over its heads:
    "max_weight" or "entropy" (from the run) or "logit_spread" (its own cache entry)."""

    def values(arm: str, task: str, seed: int) -> np.ndarray | None:
        if statistic == "logit_spread":
            spread = cache.spread(arm, task, seed)
            return None if spread is None else spread.spread[:, 0].mean(axis=1)
        run = cache.run(arm, task, seed)
        return None if run is None else run.concentration["sigma_x"].statistic(statistic)[:, 0].mean(axis=1)

    return values
