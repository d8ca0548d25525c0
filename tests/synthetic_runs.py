"""Synthetic in-context and max-retrieval runs for the leaderboard's tests (no training), and the
provenance a synthetic cache entry stores."""

import numpy as np

from ssa_book.leaderboard import board as lb
from ssa_book.icl.records import ICLRun
from ssa_book.results.provenance import Provenance
from ssa_book.retrieval.records import RetrievalRun

# Every field an entry's provenance holds, with made-up values.
PROVENANCE = {
    "seed": None,
    "git_commit": "abc1234def",
    "git_dirty": False,
    "torch": "2.0.0",
    "transformers": "4.40.0",
    "python": "3.11.0",
    "device": "cpu",
    "platform": "Linux-x86_64",
    "wall_time_s": 1.0,
    "created_utc": "2026-01-01T00:00:00+00:00",
}


def provenance_with(**fields) -> Provenance:
    """A complete provenance (:data:`PROVENANCE`) with ``fields`` changed."""
    return Provenance.from_dict({**PROVENANCE, **fields})


def icl_run(task, scorer, seed, error_at_point, error_at_1=0.0):
    """A run whose error is ``error_at_1`` at sigma 1 and ``error_at_point`` at sigma 10 (linear:
    normalised by a zero predictor of error 1); the trivial baselines err everywhere."""
    model = {"prompt_error": [error_at_1, error_at_point]}
    shifts = ("sigma_x", "sigma_ab") if task == "linear" else ("sigma_x",)
    baselines = {
        "zero": {"prompt_error": [1.0, 1.0]},
        "majority class": {"prompt_error": [0.5, 0.5]},
        "exact rule": {"prompt_error": [0.0, 0.0]},
    }
    result = {"shifts": {shift: {"sigmas": [1, lb.TEN_TIMES], "model": model, **baselines} for shift in shifts}}
    return ICLRun.from_result(result, task=task, scorer=scorer, seed=seed, provenance=provenance_with(wall_time_s=2.0))


def retrieval_run(scorer, seed, accuracy_at_point, accuracy_at_16=0.99):
    sizes = (16, 32, 64, 128, 256, 512, 1024, 2048)
    accuracy = np.full(len(sizes), accuracy_at_point)
    accuracy[0] = accuracy_at_16
    return RetrievalRun(
        scorer,
        seed,
        sizes,
        accuracy,
        np.full(len(sizes), 0.5),
        np.full(len(sizes), 0.5),
        ((0, 1.0),),
        1.0,
        provenance_with(wall_time_s=1.0),
    )


def loader(icl_error, retrieval_accuracy, missing=()):
    """``load`` for :func:`ssa_book.leaderboard.board.read`: ``icl_error(task, scorer, seed)`` and
    ``retrieval_accuracy(scorer, seed)``; the runs in ``missing`` are not cached."""

    def load(run):
        if run in missing:
            return None
        if run[0] == "retrieval":
            return retrieval_run(run[1], run[2], retrieval_accuracy(run[1], run[2]))
        return icl_run(run[1], run[2], run[3], icl_error(run[1], run[2], run[3]))

    return load


def noisy(base, seed):
    return base + 0.01 * ((seed * 7) % 5)
