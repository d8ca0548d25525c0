"""The chapter's experiment: softmax and SSA decoders trained on the same tokens, several seeds,
evaluated in and out of distribution and on BLiMP; cached per run, judged by the book's one
verdict rule (:mod:`ssa_book.verdicts`) on runs paired by seed.

    python -m ssa_book regenerate decoder --profile cpu      # every result the chapter shows (ssa_book.regenerate)
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from pathlib import Path
from typing import Sequence

from ssa_book import paths
from ssa_book.verdicts.words import NOT_LEARNED
from ssa_book.verdicts.claim import Claim, MIN_PAIRS
from ssa_book.verdicts.verdict import Verdict
from ssa_book.verdicts.judge import judge, learning_failure, not_learned, not_tested, pair_by_seed
from ssa_book.verdicts.families import control_false_discoveries
from ssa_book.verdicts.readings import effect_placement, published_effect_sentence
from ssa_book.verdicts.power import SIMULATIONS, effect_power_sentence, power_table as rule_power_table
from ssa_book.chapters import Chapter, Run, RunKind, Setting, scorer_settings
from ssa_book.lm.config import RunConfig, run_config
from ssa_book.profiles import check_profile, resolve_device
from ssa_book.lm.records import SPLITS, LMRun
from ssa_book.results.cache import cached_entry
from ssa_book.results.keys import cache_key, check_throwaway_cache
from ssa_book.results.store import entries_of
from ssa.hf import scorer_values
from ssa_book.lm.evaluate import evaluate
from ssa_book.lm.model import build_model, load_checkpoint, parameter_count
from ssa_book.lm.train import train

EXPERIMENT = "lm/run"
SCORERS = ("softmax", "ssa")
SEEDS = {"smoke": (0, 1), "cpu": (0, 1, 2, 3, 4, 5), "paper": (1234,)}

# The paper's published numbers (its decoder perplexity table and lm-eval table): 114M decoders,
# about 17B FineWeb-Edu tokens.
PAPER_PERPLEXITY = {"id": {"softmax": 21.86, "ssa": 19.73}, "ood": {"softmax": 24.58, "ssa": 22.07}}
PAPER_LM_EVAL = {
    "arc_challenge acc_norm": (0.2398, 0.2713),
    "arc_easy acc_norm": (0.2934, 0.5387),
    "boolq acc": (0.3783, 0.5618),
    "cb acc": (0.1429, 0.4643),
    "cb f1": (0.1310, 0.2663),
    "copa acc": (0.59, 0.64),
    "hellaswag acc_norm": (0.2550, 0.3283),
    "record f1": (0.1983, 0.2482),
    "record em": (0.1932, 0.2427),
    "winogrande acc": (0.4972, 0.5178),
}
PAPER_TOKENS = 22_000 * 768 * 1024


def _decoder_parameters(run) -> str:
    return f"{parameter_count(build_model(run.model, device='meta')) / 1e6:.3g}M"


def _decoder_tokens(run) -> str:
    return f"{run.train.steps * run.train.global_batch * run.model.seq_len:,}"


# The rows of the chapter's table of sizes (ssa_book.sizes).
SETTINGS = (
    Setting("layers", "decoder blocks (Nemotron)", "model.num_layers"),
    Setting("width", "hidden size", "model.hidden_size"),
    Setting("heads", "query heads per block", "model.num_heads"),
    Setting("key/value heads", "grouped-query attention: query heads share these", "model.num_kv_heads"),
    Setting("MLP width", "squared-ReLU MLP", "model.ffn_size"),
    Setting("context", "tokens per sequence, in training and evaluation", "model.seq_len"),
    Setting("vocabulary", "byte-level BPE fitted on the training text", "model.vocab_size"),
    Setting("parameters", "model parameters", "", _decoder_parameters),
    Setting("training text", "in-distribution source (training and held-out split)", "data.train_source"),
    Setting("out-of-distribution text", "source of the out-of-distribution perplexity", "data.ood_source"),
    Setting(
        "held out per 1000",
        "documents kept out of training, per 1000 (by a hash of the text)",
        "data.held_out_per_mille",
    ),
    Setting("training documents", "documents read for training (None: the whole source)", "data.max_train_documents"),
    Setting("tokenizer documents", "training documents the tokenizer is fitted on", "data.tokenizer_documents"),
    Setting("perplexity windows", "held-out windows of one context each", "data.eval_windows"),
    Setting("BLiMP pairs", "minimal pairs per BLiMP paradigm", "data.blimp_pairs_per_paradigm"),
    Setting("batch", "sequences per optimizer step", "train.global_batch"),
    Setting("micro-batch", "sequences per forward pass (memory only)", "train.micro_batch"),
    Setting("steps", "optimizer steps", "train.steps"),
    Setting("tokens trained", "steps x batch x context", "", _decoder_tokens),
    Setting("warm-up steps", "linear warm-up, then cosine decay", "train.warmup_steps"),
    Setting("learning rate", "peak, AdamW", "train.lr"),
    Setting("final learning rate", "fraction of the peak at the end of the decay", "train.min_lr_ratio"),
    Setting("weight decay", "on matrices only", "train.weight_decay"),
    Setting(
        "SSA settings", "SSA's b and n at the start, and which are trained", "train.scorer_kwargs", scorer_settings
    ),
    Setting("curve every", "steps between held-out losses of the training curve", "train.eval_every"),
    Setting("curve windows", "held-out windows per point of the training curve", "train.eval_windows_during_training"),
    Setting("checkpoint every", "steps between checkpoints", "train.checkpoint_every"),
)


@dataclasses.dataclass(frozen=True)
class DecoderChapter(Chapter):
    """The decoder chapter: softmax and SSA decoders, seed by seed."""

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        return SEEDS[check_profile(profile)]

    def published_scorers(self) -> tuple[str, ...]:
        return SCORERS

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        return [
            Run("decoder", (scorer, seed), f"{scorer} / seed {seed}", chapters=(self.name,))
            for seed in seeds
            for scorer in scorers
        ]

    def configs(self, profile: str) -> dict:
        return {"": run_config(profile, "ssa")}

    def settings(self) -> tuple[Setting, ...]:
        return SETTINGS


CHAPTER = DecoderChapter("decoder", "the decoder language models")


def regenerate_command(profile: str, scorer: str | None = None, seed: int | None = None) -> str:
    """The command that computes the chapter's runs (and the one of ``scorer`` x ``seed``)."""
    return CHAPTER.command(profile, scorers=[scorer] if scorer else None, seeds=None if seed is None else [seed])


def runs_dir() -> Path:
    """Where run folders (checkpoints, tokenizers) go: ``$SSA_RUNS_DIR``, else ``_build/runs``."""
    return paths.runs_dir()


def run_folder(profile: str, run: RunConfig) -> Path:
    return runs_dir() / profile / f"{run.train.scorer}-seed{run.train.seed}-{cache_key(run.to_dict())[:8]}"


def train_and_evaluate(
    run: RunConfig, folder: Path, *, device: str = "auto", progress: bool = False, stop_at: int | None = None
) -> dict:
    """Train (resuming from ``folder`` if interrupted), then evaluate the final checkpoint.

    ``stop_at``: stop training after that many steps (see :func:`ssa_book.lm.train.train`)."""

    device = resolve_device(device)
    summary = train(run, folder, device=device, progress=progress, stop_at=stop_at)
    trained = time.perf_counter()
    model, tokenizer = load_checkpoint(folder / "checkpoint", device=device)
    evaluation = evaluate(model, tokenizer, run, device=device)
    return {
        "scorer": run.train.scorer,
        "seed": run.train.seed,
        **evaluation,
        "history": summary["history"],
        "parameters": summary["parameters"],
        "tokens_trained": summary["tokens_trained"],
        "scorer_values": scorer_values(model),
        "train_seconds": summary["train_seconds"],  # over every session, if the run was resumed
        "evaluate_seconds": time.perf_counter() - trained,
    }


def result(profile: str, scorer: str, seed: int, *, device: str = "auto", progress: bool = False) -> LMRun:
    """One run's result, from the cache when it is there, as a typed record
    (:class:`ssa_book.lm.records.LMRun`) with its cache entry's provenance."""
    entry = _cached_entry(profile, run_config(profile, scorer, seed), device=device, progress=progress)
    return LMRun.from_result(entry.result, provenance=entry.provenance)


def cached_result(
    profile: str, run: RunConfig, *, device: str = "auto", progress: bool = False, stop_at: int | None = None
) -> dict:
    """The result of ``run`` through the cache (``results/<profile>/lm/run/``), trained in
    :func:`run_folder`: the result dict (:func:`result` gives it as a typed record).

    ``stop_at`` stops training early (:mod:`ssa_book.paper_check` does, into a temporary cache): the
    entry is keyed by ``run`` alone, so a stopped run must never be written to the book's cache."""
    return _cached_entry(profile, run, device=device, progress=progress, stop_at=stop_at).result


def _cached_entry(profile: str, run: RunConfig, *, device: str, progress: bool, stop_at: int | None = None):
    if stop_at is not None:
        check_throwaway_cache()
    return cached_entry(
        EXPERIMENT,
        run.to_dict(),
        lambda: train_and_evaluate(run, run_folder(profile, run), device=device, progress=progress, stop_at=stop_at),
        profile=profile,
        regenerate=regenerate_command(profile, run.train.scorer, run.train.seed),
        device=resolve_device(device),
    )


def results(profile: str, *, scorers=None, seeds=None, device: str = "auto", progress: bool = False) -> list[LMRun]:
    """Every (scorer, seed) run of the profile, in order."""
    check_profile(profile)
    return [
        result(profile, scorer, seed, device=device, progress=progress)
        for scorer in (scorers or SCORERS)
        for seed in (seeds or SEEDS[profile])
    ]


# ----------------------------------------------------------------------------------------------
# Verdicts: the book's one rule (ssa_book.verdicts) on outcomes paired by seed. A seed gives both
# scorers the same batches in the same order, so seed i's softmax and SSA runs form a pair.

# A model has learned more than word frequencies when its in-distribution perplexity is below
# this fraction of the unigram baseline's; if one did not, no claim about scorers is tested.
LEARNED_RATIO = 0.5
# The smallest gain in log-perplexity (nats per token) that would matter; why: _perplexity_reason.
PERPLEXITY_THRESHOLD_NATS = 0.02
# The smallest BLiMP gain that would matter, in accuracy points; why: BLIMP_REASON.
BLIMP_THRESHOLD_POINTS = 1.0
BLIMP_REASON = (
    "BLiMP is context here, not a claim of the paper (which does not report it): one point of overall "
    "accuracy is the smallest gain we would report, about the 95% sampling half-width of one model's "
    "overall accuracy near 50% on the pairs the cpu profile scores"
)
POWER_SEEDS = (10, 20)  # seed counts at which the chapter shows the rule's power


def paper_log_gap(key: str) -> float:
    """The paper's SSA gain in log-perplexity, ln(softmax / SSA), in nats per token (``key``: id or ood)."""
    paper = PAPER_PERPLEXITY[key]
    return math.log(paper["softmax"] / paper["ssa"])


def _perplexity_reason() -> str:
    gaps = {key: paper_log_gap(key) for key in ("id", "ood")}
    return (
        f"{PERPLEXITY_THRESHOLD_NATS:g} nats per token is a perplexity ratio of {math.exp(PERPLEXITY_THRESHOLD_NATS):.3f} "
        f"and {PERPLEXITY_THRESHOLD_NATS / min(gaps.values()):.0%} of the paper's smaller gap (its perplexities give "
        f"ln(softmax / SSA) = {gaps['id']:.3f} in distribution, {gaps['ood']:.3f} out of distribution); a smaller gain "
        "would not make SSA a practical improvement. The log is judged, not the perplexity, because a gap in "
        "perplexity units grows with the level, and ours is far above the paper's"
    )


CLAIMS = {
    "perplexity_id": Claim(
        "SSA's in-distribution perplexity is lower than softmax's",
        direction=-1,
        threshold=PERPLEXITY_THRESHOLD_NATS,
        units="nats per token",
        reason=_perplexity_reason(),
    ),
    "perplexity_ood": Claim(
        "SSA's out-of-distribution perplexity is lower than softmax's",
        direction=-1,
        threshold=PERPLEXITY_THRESHOLD_NATS,
        units="nats per token",
        reason=_perplexity_reason(),
    ),
    "blimp": Claim(
        "SSA's BLiMP accuracy is higher than softmax's (context, not a claim of the paper)",
        direction=1,
        threshold=BLIMP_THRESHOLD_POINTS,
        units="accuracy points",
        reason=BLIMP_REASON,
    ),
}
CLAIM_LABELS = {
    "perplexity_id": "perplexity in distribution",
    "perplexity_ood": "perplexity out of distribution",
    "blimp": "BLiMP accuracy",
}


def measure(entry: LMRun, key: str) -> float:
    """What claim ``key`` is judged on: log-perplexity (nats per token) or BLiMP accuracy (points)."""
    if key == "blimp":
        return 100 * entry.blimp.accuracy
    if key not in CLAIMS:
        raise ValueError(f"key must be one of {', '.join(CLAIMS)}; got {key!r}")
    return math.log(entry.perplexity(key.removeprefix("perplexity_")))


def paired(runs: list[LMRun], key: str):
    """One row per seed that has both scorers: claim ``key``'s measure for each, and their
    difference in the paper's direction (positive: SSA better)."""
    import pandas as pd

    by_scorer: dict[str, dict[int, float]] = {scorer: {} for scorer in SCORERS}
    for entry in runs:
        found = by_scorer.get(entry.scorer)
        if found is None:
            continue
        if entry.seed in found:
            raise ValueError(f"runs: two {entry.scorer} runs with seed {entry.seed}; each seed must give one pair")
        found[entry.seed] = measure(entry, key)
    seeds, ssa, softmax = pair_by_seed(by_scorer["ssa"], by_scorer["softmax"])
    direction = CLAIMS[key].direction
    rows = [
        {"seed": seed, "softmax": float(c), "ssa": float(t), "difference": direction * float(t - c)}
        for seed, t, c in zip(seeds, ssa, softmax)
    ]
    return pd.DataFrame(rows, columns=["seed", "softmax", "ssa", "difference"])


def worst_perplexity_over_unigram(runs: list[LMRun]) -> float:
    """The largest in-distribution perplexity / unigram baseline over the runs (1: learned nothing
    beyond word frequencies)."""
    return max(entry.perplexity_id / entry.unigram_perplexity_id for entry in runs)


def longer_trained(profile: str, results_dir: str | Path | None = None) -> list[dict]:
    """Cached softmax runs with the profile's model and data but trained on more tokens (from any
    profile's folder of the cache): the reference a baseline is calibrated against when there is one."""
    ours = run_config(check_profile(profile), "softmax", SEEDS[profile][0]).to_dict()
    tokens = lambda train: train["steps"] * train["global_batch"]  # noqa: E731
    found = []
    for entry in entries_of(EXPERIMENT, results_dir=results_dir):
        config = entry.config
        if (
            config.get("model") == ours["model"]
            and config.get("data") == ours["data"]
            and config.get("train", {}).get("scorer") == "softmax"
            and tokens(config["train"]) > tokens(ours["train"])
        ):
            found.append(
                {**entry.result, "tokens_trained": entry.result.get("tokens_trained", tokens(config["train"]))}
            )
    return found


def calibration(runs: list[LMRun], *, profile: str | None = None, results_dir: str | Path | None = None) -> dict:
    """How far our softmax baseline is from a reference: its perplexity against the unigram
    model's (per seed), against the same model and data trained longer when the cache holds such a
    run (``profile`` given), else how fast its held-out loss was still falling at the end. ``far``
    is True when that distance exceeds the perplexity claims' threshold (nats per token): the
    baseline is then undertrained at the scale of the effect under test; None when unmeasured."""
    import pandas as pd

    softmax = sorted((entry for entry in runs if entry.scorer == "softmax"), key=lambda entry: entry.seed)
    rows = []
    for entry in softmax:
        row = {"seed": entry.seed}
        for key in SPLITS:
            row[f"perplexity {key}"] = entry.perplexity(key)
            row[f"unigram {key}"] = entry.unigram_perplexity(key)
            row[f"perplexity / unigram {key}"] = entry.perplexity(key) / entry.unigram_perplexity(key)
        history = entry.history
        if len(history.eval_loss) >= 2:
            row["held-out loss drop, last interval"] = history.eval_loss[-2] - history.eval_loss[-1]
            row["last interval (steps)"] = history.eval_step[-1] - history.eval_step[-2]
            row["steps"] = history.eval_step[-1]
        rows.append(row)
    table = pd.DataFrame(rows)
    result = {
        "table": table,
        "longer_trained": None,
        "still_falling": None,
        "far": None,
        "threshold": PERPLEXITY_THRESHOLD_NATS,
    }
    if table.empty:
        result["note"] = "No softmax run: the baseline is not calibrated."
        return result
    ratio = {key: float(table[f"perplexity / unigram {key}"].max()) for key in ("id", "ood")}
    result["unigram_ratio"] = ratio
    note = (
        f"Our softmax baseline's perplexity is at most {ratio['id']:.2f} of the unigram model's in distribution "
        f"and {ratio['ood']:.2f} out of distribution"
    )
    longer = longer_trained(profile, results_dir) if profile is not None else []
    if longer:
        reference = statistics.fmean(entry["perplexity_id"] for entry in longer)
        gap = math.log(statistics.fmean(table["perplexity id"]) / reference)
        result["longer_trained"] = {
            "perplexity_id": reference,
            "runs": len(longer),
            "log_gap": gap,
            "tokens_trained": max(entry["tokens_trained"] for entry in longer),
        }
        result["far"] = gap > PERPLEXITY_THRESHOLD_NATS
        note += (
            f"; the same model trained on {result['longer_trained']['tokens_trained'] / 1e6:.3g}M tokens reaches "
            f"{reference:.1f} in distribution, {gap:.3f} nats per token below ours"
        )
    elif "held-out loss drop, last interval" in table:
        drop = float(table["held-out loss drop, last interval"].mean())
        interval, steps = int(table["last interval (steps)"].iloc[0]), int(table["steps"].iloc[0])
        result["still_falling"] = {"drop": drop, "interval": interval, "steps": steps}
        result["far"] = drop > PERPLEXITY_THRESHOLD_NATS
        note += (
            f". The cache holds no longer-trained run of this model; its held-out loss was still falling by "
            f"{drop:.3f} nats per token over the last {interval} of its {steps} steps (mean over seeds)"
        )
    if result["far"]:
        note += (
            f", more than the perplexity claims' threshold of {PERPLEXITY_THRESHOLD_NATS:g}: the baseline is "
            "undertrained at the scale of the effect under test, so a gap between scorers here may change with "
            "longer training, and a null result here says little of the paper's scale"
        )
    elif result["far"] is False:
        note += f", within the perplexity claims' threshold of {PERPLEXITY_THRESHOLD_NATS:g}"
    result["note"] = note + "."
    return result


def _tokens(count: int) -> str:
    return f"{count / 1e9:.3g}B" if count >= 1e9 else f"{count / 1e6:.3g}M"


def regime(profile: str) -> str:
    """The decoders' training regime in words, the paper's beside it: "4 layers of width 192, 400
    steps (1.64M tokens) at learning rate 0.002 (warm-up + cosine), SSA from b = 0.8, n = 1.5 (the
    paper: 12 layers of width 768, 22,000 steps, 17.3B tokens)"."""
    ours, paper = run_config(profile, "ssa"), run_config("paper", "ssa")
    start = ours.train.scorer_kwargs
    return (
        f"{ours.model.num_layers} layers of width {ours.model.hidden_size}, {ours.train.steps:,} steps "
        f"({_tokens(ours.train.steps * ours.train.global_batch * ours.model.seq_len)} tokens) at learning rate "
        f"{ours.train.lr:g} (warm-up + cosine), SSA from b = {start['b']:g}, n = {start['n']:g} (the paper: "
        f"{paper.model.num_layers} layers of width {paper.model.hidden_size}, {paper.train.steps:,} steps, "
        f"{_tokens(paper.train.steps * paper.train.global_batch * paper.model.seq_len)} tokens)"
    )


def claim_verdicts(
    runs: list[LMRun], *, profile: str | None = None, results_dir: str | Path | None = None
) -> dict[str, Verdict]:
    """The verdict (:mod:`ssa_book.verdicts`) on each of :data:`CLAIMS`, from runs paired by seed:
    keys ``perplexity_id``, ``perplexity_ood`` and ``blimp``. If a model stayed near the unigram
    baseline, every claim is "not learned", with the measurement. A judged verdict's ``detail``
    holds the baseline's calibration (:func:`calibration`) when the baseline is far from its reference."""
    if not runs:
        return {key: not_tested(claim) for key, claim in CLAIMS.items()}
    ratio = worst_perplexity_over_unigram(runs)
    why = learning_failure(
        {"the decoders": ratio < LEARNED_RATIO},
        f"not beyond word frequencies: the worst in-distribution perplexity is {ratio:.2f} of "
        f"the unigram baseline's, and a model counts as trained below {LEARNED_RATIO:g}",
    )
    if why:
        return {key: not_learned(claim, why) for key, claim in CLAIMS.items()}
    calibrated = calibration(runs, profile=profile, results_dir=results_dir)
    found = {}
    for key, claim in CLAIMS.items():
        pairs = paired(runs, key)
        verdict = judge(claim, pairs["ssa"].to_numpy(), pairs["softmax"].to_numpy())
        if calibrated["far"] and key != "blimp":
            verdict = dataclasses.replace(verdict, detail=calibrated["note"])
        found[key] = verdict
    # The chapter's claims are one family: a direction must survive control of false discoveries over all of them.
    return dict(zip(found, control_false_discoveries(list(found.values()))))


def verdict_table(found: dict[str, Verdict]):
    """One row per claim: outcome, effect (paper's direction), 95% interval, pairs, threshold,
    and the seeds that would decide an inconclusive claim at the observed spread."""
    import pandas as pd

    rows = []
    for key, verdict in found.items():
        low, high = verdict.interval if verdict.interval is not None else (math.nan, math.nan)
        rows.append(
            {
                "claim": CLAIM_LABELS.get(key, key),
                "outcome": verdict.label(),
                "effect": math.nan if verdict.effect is None else verdict.effect,
                "95% low": low,
                "95% high": high,
                "pairs": verdict.pairs,
                "threshold": verdict.threshold,
                "units": verdict.units,
                "pairs to decide": verdict.pairs_to_decide(),
                "detail": verdict.detail,
            }
        )
    return pd.DataFrame(rows).set_index("claim")


def power_table(found: dict[str, Verdict], seed_counts=POWER_SEEDS, simulations: int = SIMULATIONS):
    """The rule's power (:func:`ssa_book.verdicts.power.power_table`) for each claim, with the chapter's pairs
    and each of ``seed_counts``: for a true effect of the claim's threshold and, for perplexity,
    of the paper's gap."""
    pairs = sorted({verdict.pairs for verdict in found.values()} | set(seed_counts) - {0})
    gaps = {
        key: {"the paper's gap": paper_log_gap(key.removeprefix("perplexity_"))}
        for key in found
        if key.startswith("perplexity_")
    }
    return rule_power_table(found, pairs, effects=gaps, multiples=(1,), simulations=simulations)


def paper_gap_power_sentence(found: dict[str, Verdict], table) -> str:
    """The rule's power with the chapter's pairs if SSA's true gain were the paper's gap, for both
    perplexity claims, from :func:`power_table`'s ``table``."""
    keys = [key for key in ("perplexity_id", "perplexity_ood") if key in found and len(found[key].differences) >= 2]
    pairs = min((found[key].pairs for key in keys), default=min(verdict.pairs for verdict in found.values()))
    names = {found[key].claim: CLAIM_LABELS[key] for key in keys}
    return effect_power_sentence(table, pairs, "the paper's gap", names, "nats per token")


def paper_gap_placement(found: dict[str, Verdict], key: str) -> str | None:
    """Where the paper's gap lies against perplexity claim ``key``'s interval (in the paper's
    direction): "above", "inside" or "below"; None without an interval."""
    return effect_placement(found[key], paper_log_gap(key.removeprefix("perplexity_"))) if key in found else None


def paper_gap_sentence(found: dict[str, Verdict]) -> str:
    """Where the paper's gap lies against each perplexity claim's interval
    (:func:`ssa_book.verdicts.readings.published_effect_sentence`)."""
    return published_effect_sentence(
        {
            CLAIM_LABELS[key]: (found[key], paper_log_gap(key.removeprefix("perplexity_")))
            for key in ("perplexity_id", "perplexity_ood")
            if key in found
        },
        "nats per token",
        "the paper's gap",
    )


def claims_table():
    """Each claim as declared: direction, threshold, units and the reason for the threshold."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "claim": claim.name,
                "SSA should be": "lower" if claim.direction < 0 else "higher",
                "threshold": claim.threshold,
                "units": claim.units,
                "reason": claim.reason,
            }
            for claim in CLAIMS.values()
        ],
        index=[CLAIM_LABELS[key] for key in CLAIMS],
    )


def differences_table(runs: list[LMRun]):
    """Every seed's paired values and difference (paper's direction), one row per (claim, seed)."""
    import pandas as pd

    frames = [paired(runs, key).assign(claim=CLAIM_LABELS[key], units=CLAIMS[key].units) for key in CLAIMS]
    return pd.concat(frames, ignore_index=True)[["claim", "seed", "softmax", "ssa", "difference", "units"]]


def verdict(runs: list[LMRun], *, profile: str | None = None, results_dir: str | Path | None = None) -> dict:
    """What this scale supports: did the models learn at all (``learned``), each claim's verdict
    (``claims``, :func:`claim_verdicts`), the baseline's ``calibration``, and a ``summary``."""
    ratio = worst_perplexity_over_unigram(runs)
    learned = ratio < LEARNED_RATIO
    found = claim_verdicts(runs, profile=profile, results_dir=results_dir)
    calibrated = calibration(runs, profile=profile, results_dir=results_dir)
    tokens = runs[0].tokens_trained
    parameters = runs[0].parameters
    if not learned:
        summary = (
            f"The models did not get far below the unigram baseline (worst perplexity / unigram = {ratio:.2f}): "
            f"every claim is {NOT_LEARNED}, and this run supports no claim about scorers."
        )
    else:
        parts = "; ".join(f"{CLAIM_LABELS[key]} {found[key].with_evidence()}" for key in found)
        summary = (
            f"Every model learned well beyond word frequencies (in-distribution perplexity at most {ratio:.0%} of the "
            f"unigram baseline's). SSA against softmax, paired by seed: {parts}."
        )
        fewest = min(found[key].pairs for key in found)
        if fewest < MIN_PAIRS:
            summary += (
                f" With {fewest} paired seed{'' if fewest == 1 else 's'} no claim can be decided: the rule needs at least "
                f"{MIN_PAIRS}."
            )
        summary += " " + calibrated["note"]
    summary += (
        f" With {parameters / 1e6:.3g}M parameters and {tokens / 1e6:.3g}M tokens ({tokens / PAPER_TOKENS:.1e} of "
        "the paper's budget) this scale cannot speak to the paper's lm-eval benchmarks, where such models score at chance."
    )
    return {
        "learned": learned,
        "worst_perplexity_over_unigram": ratio,
        "claims": found,
        "calibration": calibrated,
        "parameters": parameters,
        "tokens_trained": tokens,
        "paper_tokens": PAPER_TOKENS,
        "summary": summary,
    }


def scorer_table(runs: list[LMRun]):
    """Learned scorer parameters per layer: one row per (scorer, seed, layer, parameter)."""
    import pandas as pd

    rows = []
    for entry in runs:
        for layer, (module, parameters) in enumerate(entry.scorer_values.items()):
            for name, value in parameters.items():
                rows.append(
                    {
                        "scorer": entry.scorer,
                        "seed": entry.seed,
                        "layer": layer,
                        "module": module,
                        "parameter": name,
                        "value": value[0] if len(value) == 1 else value,
                    }
                )
    return pd.DataFrame(rows)


def scorer_trajectories(runs: list[LMRun]):
    """SSA's b and n per layer at each evaluation step: one row per (seed, step, layer, parameter)."""
    import pandas as pd

    rows = []
    for entry in runs:
        for step, snapshot in zip(entry.history.eval_step, entry.history.scorer_values):
            for layer, parameters in enumerate(snapshot.values()):
                for name, value in parameters.items():
                    rows.append(
                        {
                            "scorer": entry.scorer,
                            "seed": entry.seed,
                            "step": step,
                            "layer": layer,
                            "parameter": name,
                            "value": value[0],
                        }
                    )
    return pd.DataFrame(rows)


def perplexity_table(runs: list[LMRun]):
    """Ours (mean over seeds, min-max) beside the paper's numbers."""
    import pandas as pd

    rows = []
    for key, label in (("id", "in distribution"), ("ood", "out of distribution")):
        for scorer in SCORERS:
            ours = [entry.perplexity(key) for entry in runs if entry.scorer == scorer]
            unigram = [entry.unigram_perplexity(key) for entry in runs if entry.scorer == scorer]
            rows.append(
                {
                    "set": label,
                    "scorer": scorer,
                    "paper": PAPER_PERPLEXITY[key][scorer],
                    "ours (mean)": statistics.fmean(ours),
                    "ours (min)": min(ours),
                    "ours (max)": max(ours),
                    "unigram baseline": statistics.fmean(unigram),
                    "seeds": len(ours),
                }
            )
    return pd.DataFrame(rows)


def blimp_table(runs: list[LMRun]):
    """BLiMP accuracy per phenomenon: mean over seeds, per scorer."""
    import pandas as pd

    rows = []
    for entry in runs:
        for phenomenon, accuracy in entry.blimp.by_phenomenon.items():
            rows.append({"phenomenon": phenomenon, "scorer": entry.scorer, "seed": entry.seed, "accuracy": accuracy})
        rows.append(
            {"phenomenon": "overall", "scorer": entry.scorer, "seed": entry.seed, "accuracy": entry.blimp.accuracy}
        )
    frame = pd.DataFrame(rows)
    return frame.groupby(["phenomenon", "scorer"])["accuracy"].mean().unstack("scorer")


def paper_commands(nodes: int = 2, gpus_per_node: int = 8) -> dict[str, str]:
    """The commands that run the paper's configuration on GPUs.

    ``train`` without ``--out`` writes to the run folder that ``regenerate`` uses, so training
    (on any number of GPUs) and the cached evaluation meet: ``regenerate`` finds the finished
    checkpoint, evaluates it on one GPU and stores the result."""
    train = "-m ssa_book decoder train --profile paper --device cuda"
    multi_node = (
        f"torchrun --nnodes={nodes} --nproc_per_node={gpus_per_node} --rdzv_backend=c10d "
        f"--rdzv_endpoint=$MASTER_HOST:29500 --rdzv_id=ssa-lm-$SCORER {train} --scorer $SCORER"
    )
    return {
        "one GPU": f"for SCORER in softmax ssa; do python {train} --scorer $SCORER; done",
        "one node, 8 GPUs": f"for SCORER in softmax ssa; do torchrun --standalone --nproc_per_node={gpus_per_node} {train} --scorer $SCORER; done",
        f"{nodes} nodes (on every node, with SSA_RUNS_DIR on a shared file system)": f"for SCORER in softmax ssa; do {multi_node}; done",
        "evaluate and cache (one GPU)": f"{regenerate_command('paper')} --device cuda",
        "lm-eval benchmarks": (
            "python -m ssa_book decoder lm-eval --model ssa-lm --model_args pretrained=$(ls -d _build/runs/paper/ssa-seed1234-*)/checkpoint,device=cuda "
            "--tasks arc_challenge,arc_easy,boolq,cb,copa,hellaswag,record,winogrande --batch_size 32"
        ),
    }


def compute_decoder_run(profile: str, device: str, progress: bool, scorer: str, seed: int) -> str:
    """Run kind "decoder": one decoder language model through the cache."""
    found = result(profile, scorer, seed, device=device, progress=progress)
    return (
        f"perplexity {found.perplexity_id:.2f} in distribution, {found.perplexity_ood:.2f} out of distribution; "
        f"BLiMP {found.blimp.accuracy:.3f}"
    )


KINDS = {"decoder": RunKind(compute_decoder_run)}
