"""The chapter's experiment: softmax and SSA decoders trained on the same tokens, several seeds,
evaluated in and out of distribution and on BLiMP; cached per run, with a computed verdict.

    python -m ssa.lm regenerate --profile cpu      # every result the chapter shows
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from ssa import paths
from ssa.lm.config import RunConfig, run_config
from ssa.profiles import check_profile, resolve_device
from ssa.results import cache_key, cached, check_throwaway_cache

EXPERIMENT = "lm/run"
SCORERS = ("softmax", "ssa")
SEEDS = {"smoke": (0, 1), "cpu": (0, 1), "paper": (1234,)}
RUNS_ENV = "SSA_RUNS_DIR"

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


def regenerate_command(profile: str) -> str:
    return f"python -m ssa.lm regenerate --profile {profile}"


def runs_dir() -> Path:
    """Where run folders (checkpoints, tokenizers) go: ``$SSA_RUNS_DIR``, else ``_build/runs``."""
    configured = os.environ.get(RUNS_ENV)
    if configured:
        return Path(configured).expanduser().resolve()
    return (paths.repository_root() or Path.cwd()) / "_build" / "runs"


def run_folder(profile: str, run: RunConfig) -> Path:
    return runs_dir() / profile / f"{run.train.scorer}-seed{run.train.seed}-{cache_key(run.to_dict())[:8]}"


def train_and_evaluate(run: RunConfig, folder: Path, *, device: str = "auto", progress: bool = False, stop_at: int | None = None) -> dict:
    """Train (resuming from ``folder`` if interrupted), then evaluate the final checkpoint.

    ``stop_at``: stop training after that many steps (see :func:`ssa.lm.train.train`)."""
    from ssa.hf import scorer_values
    from ssa.lm.evaluate import evaluate
    from ssa.lm.model import load_checkpoint
    from ssa.lm.train import train

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


def result(profile: str, scorer: str, seed: int, *, device: str = "auto", progress: bool = False) -> dict:
    """One run's result, from the cache when it is there."""
    return cached_result(profile, run_config(profile, scorer, seed), device=device, progress=progress)


def cached_result(profile: str, run: RunConfig, *, device: str = "auto", progress: bool = False, stop_at: int | None = None) -> dict:
    """The result of ``run`` through the cache (``results/<profile>/lm/run/``), trained in :func:`run_folder`.

    ``stop_at`` stops training early (:mod:`ssa.paper_check` does, into a temporary cache): the
    entry is keyed by ``run`` alone, so a stopped run must never be written to the book's cache."""
    if stop_at is not None:
        check_throwaway_cache()
    return cached(
        EXPERIMENT,
        run.to_dict(),
        lambda: train_and_evaluate(run, run_folder(profile, run), device=device, progress=progress, stop_at=stop_at),
        profile=profile,
        regenerate=regenerate_command(profile),
        device=resolve_device(device),
    )


def results(profile: str, *, scorers=None, seeds=None, device: str = "auto", progress: bool = False) -> list[dict]:
    """Every (scorer, seed) run of the profile, in order."""
    check_profile(profile)
    return [
        result(profile, scorer, seed, device=device, progress=progress)
        for scorer in (scorers or SCORERS)
        for seed in (seeds or SEEDS[profile])
    ]


def _metric(entry: dict, metric: str) -> float:
    return entry["blimp"]["accuracy"] if metric == "blimp" else entry[metric]


def compare(runs: list[dict], metric: str, *, lower_is_better: bool) -> dict:
    """SSA against softmax on one metric: means, per-seed values, and whether the gap exceeds
    the spread between seeds of the same scorer (the only noise estimate two seeds give)."""
    values = {scorer: [_metric(entry, metric) for entry in runs if entry["scorer"] == scorer] for scorer in SCORERS}
    if not all(values.values()):
        raise ValueError(f"runs: need at least one softmax and one ssa run; got {sorted({entry['scorer'] for entry in runs})}")
    means = {scorer: statistics.fmean(found) for scorer, found in values.items()}
    spread = max(max(found) - min(found) for found in values.values())
    gain = (means["softmax"] - means["ssa"]) if lower_is_better else (means["ssa"] - means["softmax"])
    seeds = min(len(found) for found in values.values())
    if seeds < 2:
        outcome = "not tested"  # one seed gives no noise estimate
    elif gain > spread:
        outcome = "reproduced"
    elif gain < -spread:
        outcome = "contradicted"
    else:
        outcome = "not reproduced at this scale"
    return {"values": values, "mean": means, "ssa_gain": gain, "seed_spread": spread, "outcome": outcome}


def verdict(runs: list[dict]) -> dict:
    """What this scale supports: did the models learn at all, and does SSA beat softmax beyond
    the seed spread in ID and OOD perplexity and on BLiMP."""
    learned_ratio = max(entry["perplexity_id"] / entry["unigram_perplexity_id"] for entry in runs)
    learned = learned_ratio < 0.5
    checks = {
        "perplexity_id": compare(runs, "perplexity_id", lower_is_better=True),
        "perplexity_ood": compare(runs, "perplexity_ood", lower_is_better=True),
        "blimp": compare(runs, "blimp", lower_is_better=False),
    }
    tokens = runs[0]["tokens_trained"]
    parameters = runs[0]["parameters"]
    if not learned:
        summary = (f"The models did not get far below the unigram baseline (worst perplexity / unigram = {learned_ratio:.2f}), "
                   "so this run supports no claim about scorers.")
    else:
        summary = (f"Every model learned well beyond word frequencies (perplexity at most {learned_ratio:.0%} of the unigram "
                   f"baseline). SSA vs softmax: in-distribution perplexity {checks['perplexity_id']['outcome']}, "
                   f"out-of-distribution perplexity {checks['perplexity_ood']['outcome']}, BLiMP {checks['blimp']['outcome']} "
                   f"(each judged against the spread between seeds). With {parameters / 1e6:.1f}M parameters and "
                   f"{tokens / 1e6:.1f}M tokens ({tokens / PAPER_TOKENS:.1e} of the paper's budget) this scale cannot "
                   "speak to the paper's lm-eval benchmarks, where such models score at chance.")
    return {"learned": learned, "worst_perplexity_over_unigram": learned_ratio, "checks": checks,
            "parameters": parameters, "tokens_trained": tokens, "paper_tokens": PAPER_TOKENS, "summary": summary}


def scorer_table(runs: list[dict]):
    """Learned scorer parameters per layer: one row per (scorer, seed, layer, parameter)."""
    import pandas as pd

    rows = []
    for entry in runs:
        for layer, (module, parameters) in enumerate(entry["scorer_values"].items()):
            for name, value in parameters.items():
                rows.append({"scorer": entry["scorer"], "seed": entry["seed"], "layer": layer, "module": module, "parameter": name, "value": value[0] if len(value) == 1 else value})
    return pd.DataFrame(rows)


def scorer_trajectories(runs: list[dict]):
    """SSA's b and n per layer at each evaluation step: one row per (seed, step, layer, parameter)."""
    import pandas as pd

    rows = []
    for entry in runs:
        history = entry["history"]
        for step, snapshot in zip(history["eval_step"], history["scorer_values"]):
            for layer, parameters in enumerate(snapshot.values()):
                for name, value in parameters.items():
                    rows.append({"scorer": entry["scorer"], "seed": entry["seed"], "step": step, "layer": layer, "parameter": name, "value": value[0]})
    return pd.DataFrame(rows)


def perplexity_table(runs: list[dict]):
    """Ours (mean over seeds, min-max) beside the paper's numbers."""
    import pandas as pd

    rows = []
    for key, label in (("id", "in distribution"), ("ood", "out of distribution")):
        for scorer in SCORERS:
            ours = [entry[f"perplexity_{key}"] for entry in runs if entry["scorer"] == scorer]
            unigram = [entry[f"unigram_perplexity_{key}"] for entry in runs if entry["scorer"] == scorer]
            rows.append({"set": label, "scorer": scorer, "paper": PAPER_PERPLEXITY[key][scorer], "ours (mean)": statistics.fmean(ours),
                         "ours (min)": min(ours), "ours (max)": max(ours), "unigram baseline": statistics.fmean(unigram), "seeds": len(ours)})
    return pd.DataFrame(rows)


def blimp_table(runs: list[dict]):
    """BLiMP accuracy per phenomenon: mean over seeds, per scorer."""
    import pandas as pd

    rows = []
    for entry in runs:
        for phenomenon, accuracy in entry["blimp"]["by_phenomenon"].items():
            rows.append({"phenomenon": phenomenon, "scorer": entry["scorer"], "seed": entry["seed"], "accuracy": accuracy})
        rows.append({"phenomenon": "overall", "scorer": entry["scorer"], "seed": entry["seed"], "accuracy": entry["blimp"]["accuracy"]})
    frame = pd.DataFrame(rows)
    return frame.groupby(["phenomenon", "scorer"])["accuracy"].mean().unstack("scorer")


def paper_commands(nodes: int = 2, gpus_per_node: int = 8) -> dict[str, str]:
    """The commands that run the paper's configuration on GPUs.

    ``train`` without ``--out`` writes to the run folder that ``regenerate`` uses, so training
    (on any number of GPUs) and the cached evaluation meet: ``regenerate`` finds the finished
    checkpoint, evaluates it on one GPU and stores the result."""
    train = "-m ssa.lm train --profile paper --device cuda"
    multi_node = (f"torchrun --nnodes={nodes} --nproc_per_node={gpus_per_node} --rdzv_backend=c10d "
                  f"--rdzv_endpoint=$MASTER_HOST:29500 --rdzv_id=ssa-lm-$SCORER {train} --scorer $SCORER")
    return {
        "one GPU": f"for SCORER in softmax ssa; do python {train} --scorer $SCORER; done",
        "one node, 8 GPUs": f"for SCORER in softmax ssa; do torchrun --standalone --nproc_per_node={gpus_per_node} {train} --scorer $SCORER; done",
        f"{nodes} nodes (on every node, with SSA_RUNS_DIR on a shared file system)": f"for SCORER in softmax ssa; do {multi_node}; done",
        "evaluate and cache (one GPU)": f"{regenerate_command('paper')} --device cuda",
        "lm-eval benchmarks": (
            "python -m ssa.lm lm-eval --model ssa-lm --model_args pretrained=$(ls -d _build/runs/paper/ssa-seed1234-*)/checkpoint,device=cuda "
            "--tasks arc_challenge,arc_easy,boolq,cb,copa,hellaswag,record,winogrande --batch_size 32"
        ),
    }
