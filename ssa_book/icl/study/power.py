"""How the study was sized: its pilot (:func:`pilot`), and the rule's power for a true effect at
the spread of the pilot's paired differences (:func:`pilot_power`), from which the plan's seed
counts were chosen."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ssa_book.verdicts.claim import Claim
from ssa_book.verdicts.power import power as rule_power
from ssa_book.icl import experiments
from ssa_book.icl.study.design import ABLATION_SEEDS, ENDPOINTS, PILOT_SEEDS, PRIMARY_SEEDS
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError


def pilot(profile: str = "cpu") -> dict | None:
    """The pilot that sized the study: the chapters' softmax and SSA runs on "every" with
    :data:`PILOT_SEEDS`, at the cpu profile (the plan was fixed from them): each seed's error at
    sigma 10, the paired differences in the paper's direction, how many seeds generalise, and the
    rule's power at their spread. ``None`` when those runs are not cached."""

    with cache_required():
        try:
            runs = experiments.load_runs("every", profile=profile, seeds=PILOT_SEEDS)
        except CacheMissError:
            return None
    endpoint, share = ENDPOINTS["error at σ = 10"], ENDPOINTS["generalises at σ = 10"]
    errors = {
        scorer: np.array([endpoint.measure(run, "every") for run in runs[scorer]]) for scorer in ("softmax", "ssa")
    }
    generalise = {
        scorer: np.array([share.measure(run, "every") for run in runs[scorer]]) for scorer in ("softmax", "ssa")
    }
    differences = endpoint.claim.direction * (errors["ssa"] - errors["softmax"])
    share_differences = share.claim.direction * (generalise["ssa"] - generalise["softmax"])
    pairs = (ABLATION_SEEDS, PRIMARY_SEEDS // 2, PRIMARY_SEEDS)
    power = {
        ("error at σ = 10", effect): pilot_power(differences, effect, pairs, endpoint.claim.threshold)
        for effect in (0.2, 0.3)
    }
    power.update(
        {
            ("generalises at σ = 10", effect): pilot_power(share_differences, effect, pairs, share.claim.threshold)
            for effect in (0.2, 0.3)
        }
    )
    return {
        "seeds": PILOT_SEEDS,
        "errors": errors,
        "generalise": generalise,
        "differences": differences,
        "share_differences": share_differences,
        "power": power,
        "pairs": pairs,
    }


def pilot_power(
    differences: Sequence[float], effect: float, pairs: Sequence[int], threshold: float
) -> dict[int, float]:
    """The rule's power (the rate of "better", :func:`ssa_book.verdicts.power.power`) for a true effect
    ``effect`` at the spread of the pilot's paired ``differences``, with each number of pairs."""
    spread = float(np.std(np.asarray(differences, dtype=float), ddof=1))
    if not math.isfinite(spread) or spread == 0:
        raise ValueError("differences: the pilot needs at least two differences that are not all equal")
    claim = Claim("pilot", 1, threshold, "units", "the endpoint's threshold")
    return {n: rule_power(claim, n, effect, spread) for n in pairs}
