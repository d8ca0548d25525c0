"""A max-retrieval run as the chapter reads it: a typed record of its cache entry's result."""

from __future__ import annotations

import dataclasses

import numpy as np

from ssa_book.records import required
from ssa_book.results.provenance import Provenance

SCHEMA_VERSION = 2  # the layout of ssa_book.retrieval.experiment.run's result that this record reads


@dataclasses.dataclass(frozen=True, eq=False)
class RetrievalRun:
    scorer: str
    seed: int
    sizes: tuple[int, ...]  # items per test set
    accuracy: np.ndarray  # (sizes,) share of test sets whose class is named right
    top_share: np.ndarray  # (sizes,) mean share of the head's absolute weight on the item of highest priority
    entropy: np.ndarray  # (sizes,) mean normalised entropy of the weights (1: uniform)
    history: tuple[tuple[int, float], ...]  # (step, training loss)
    wall_time_s: float  # training
    provenance: Provenance | None = None  # of the cache entry; None for a run not read from the cache

    @classmethod
    def from_result(
        cls, result: dict, *, scorer: str, seed: int, provenance: Provenance | None = None
    ) -> "RetrievalRun":
        where, layout = f"retrieval run {scorer}/seed {seed}", f"RetrievalRun schema {SCHEMA_VERSION}"

        def get(mapping, key):
            return required(mapping, key, where, layout)

        training = get(result, "training")
        return cls(
            scorer=scorer,
            seed=seed,
            sizes=tuple(int(size) for size in get(result, "sizes")),
            accuracy=np.asarray(get(result, "accuracy"), dtype=float),
            top_share=np.asarray(get(result, "top_share"), dtype=float),
            entropy=np.asarray(get(result, "entropy"), dtype=float),
            history=tuple((int(step), float(loss)) for step, loss in get(training, "history")),
            wall_time_s=float(get(training, "wall_time_s")),
            provenance=provenance,
        )

    def at(self, size: int, metric: str = "accuracy") -> float:
        """``metric`` at ``size`` items; ``ValueError`` naming the sizes if it was not tested."""
        if size not in self.sizes:
            raise ValueError(f"size must be one of the run's test sizes {list(self.sizes)}; got {size!r}")
        if metric not in ("accuracy", "top_share", "entropy"):
            raise ValueError(f"metric must be accuracy, top_share or entropy; got {metric!r}")
        return float(getattr(self, metric)[self.sizes.index(size)])
