"""The paper's decoder claims (perplexity in and out of distribution, the lm-eval benchmarks) as
rows of the ledger, from the decoder chapter's cached runs and verdicts."""

from __future__ import annotations

from collections.abc import Callable

from ssa_book.claims import LedgerRow, PaperClaim, headline_of, missing, ours, paired, paper_figure, short_summary
from ssa_book.lm import experiment
from ssa_book.lm.experiment import PAPER_LM_EVAL, PAPER_PERPLEXITY
from ssa_book.results.errors import CacheMissError
from ssa_book.results.provenance import total_wall_time


def _perplexity_numbers(split: str) -> Callable[[], dict]:
    def numbers() -> dict:

        return PAPER_PERPLEXITY[split]

    return numbers


def _benchmark_numbers() -> dict:

    gains = {metric: ssa - softmax for metric, (softmax, ssa) in PAPER_LM_EVAL.items()}
    best = max(gains, key=gains.get)
    return {
        "better": sum(gain > 0 for gain in gains.values()),
        "metrics": len(gains),
        "best": best,
        "best_softmax": PAPER_LM_EVAL[best][0],
        "best_ssa": PAPER_LM_EVAL[best][1],
    }


def decoder_rows(profile: str) -> list[LedgerRow]:
    command = experiment.regenerate_command(profile)
    benchmark_command = experiment.paper_commands()["lm-eval benchmarks"]
    benchmarks = missing(
        "benchmarks",
        CLAIMS["benchmarks"],
        profile,
        benchmark_command,
        "not measured: the book caches no lm-eval results (at the book's cpu scale the models would score at chance)",
        "the commands that run them on GPUs are on the {ref}`reproducing page <paper-on-gpus>`",
    )
    try:
        runs = experiment.results(profile)
    except CacheMissError:
        return [missing(key, CLAIMS[key], profile, command) for key in ("perplexity_id", "perplexity_ood")] + [
            benchmarks
        ]
    provenances = [run.provenance for run in runs]
    claims = experiment.claim_verdicts(runs, profile=profile)
    summary = experiment.verdict(runs)
    seeds = tuple(sorted({run.seed for run in runs}))
    rows = []
    for key, split in (("perplexity_id", "in distribution"), ("perplexity_ood", "out of distribution")):
        means = {
            scorer: float(
                sum(getattr(run, key) for run in runs if run.scorer == scorer)
                / max(1, sum(run.scorer == scorer for run in runs))
            )
            for scorer in ("softmax", "ssa")
        }
        numbers = (
            f"{summary['parameters'] / 1e6:.3g}M parameters, {summary['tokens_trained'] / 1e6:.3g}M tokens: perplexity "
            f"{means['softmax']:.2f} with softmax, {means['ssa']:.2f} with SSA {split}"
        )
        short = f"perplexity {means['softmax']:.1f} with softmax, {means['ssa']:.1f} with SSA, at {summary['parameters'] / 1e6:.3g}M parameters"
        excluded = experiment.paper_gap_placement(claims, key) == "above"
        paper = PAPER_PERPLEXITY[key.removeprefix("perplexity_")]["softmax"]
        if excluded:
            short += (
                f"; the 95% interval excludes the paper's gain ({experiment.paper_log_gap(key.removeprefix('perplexity_')):.3f} "
                f"nats per token), but at a softmax perplexity of {means['softmax']:.0f} against the paper's {paper:g} "
                f"these models may be too undertrained to show it"
            )
        caveat = (
            f"softmax's perplexity here is {means['softmax']:.0f}, the paper's {paper:g}: a null this far from the "
            f"paper's baseline says little of its scale"
        )
        rows.append(
            LedgerRow(
                key,
                CLAIMS[key].claim,
                paper_figure(CLAIMS[key]),
                ours(claims[key], numbers),
                profile,
                seeds,
                claims[key].outcome,
                None,
                command,
                total_wall_time(provenances),
                short_summary(claims[key], short),
                regime=f"{experiment.regime(profile)}; {paired(seeds)}",
                published_excluded=excluded,
                finding=caveat,
                headline=headline_of(claims[key]),
                paper_effect=experiment.paper_log_gap(key.removeprefix("perplexity_")),
                baseline=(f"the decoder's softmax {split.replace(' ', '-')} perplexity", means["softmax"], paper),
            )
        )
    return rows + [benchmarks]


CLAIMS: dict[str, PaperClaim] = {
    "perplexity_id": PaperClaim(
        "Decoder perplexity, in distribution",
        "The paper's decoder on FineWeb-Edu: perplexity {softmax:.2f} with softmax, {ssa:.2f} with SSA.",
        "paper, decoder perplexity table (1000 samples of 1024 tokens)",
        "decoder",
        _perplexity_numbers("id"),
    ),
    "perplexity_ood": PaperClaim(
        "Decoder perplexity, out of distribution",
        "The same models on Wikipedia: perplexity {softmax:.2f} with softmax, {ssa:.2f} with SSA.",
        "paper, decoder perplexity table (1000 samples of 1024 tokens)",
        "decoder",
        _perplexity_numbers("ood"),
    ),
    "benchmarks": PaperClaim(
        "Decoder benchmarks (lm-eval)",
        "SSA scores higher on {better} of {metrics} lm-eval metrics; largest gain {best}: "
        "{best_softmax:.4f} → {best_ssa:.4f}.",
        "paper, lm-eval table (shot count not stated)",
        "decoder",
        _benchmark_numbers,
    ),
}
