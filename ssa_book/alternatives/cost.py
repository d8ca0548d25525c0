"""The cost of every scorer in one run: time per training step and peak memory of the in-context
model and of max retrieval's retriever, measured on one machine (a cached result of its own)."""

from __future__ import annotations

import dataclasses

import torch

from ssa.attention import attention_path
from ssa_book.measure import interleaved_medians, peak_memory_bytes
from ssa_book.icl import experiments
from ssa_book.icl.train import build_model, training_batch
from ssa_book.profiles import check_profile, resolve_device
from ssa_book.retrieval.experiment import experiment_config as retrieval_config, training_step
from ssa.scoring import scorer_names

EXPERIMENT_COST = "alternatives/cost"


# --- cost: time per training step and peak memory, every scorer in one run ---------------------

COST_MODELS = ("icl", "retrieval")  # the in-context model (this chapter's) and max retrieval's retriever
# Every scorer through one kind of path: its weights in full, then weights @ v (softmax too, not
# PyTorch's fused kernel; SSA not through its own kernels), so that a ratio compares the scorers'
# arithmetic, not how much engineering each path has had.
COST_PATH = "reference"


@dataclasses.dataclass(frozen=True)
class CostConfig:
    profile: str  # the profile whose model is measured
    device: str  # a benchmark measures its device, so the device is part of the config
    scorers: tuple[str, ...]
    task: str = "linear"  # the in-context task whose model and batch are measured
    threads: int = 1  # torch threads (the book's runs train on one thread each)
    min_run_time: float = 2.0  # seconds of interleaved timing of the fastest scorer
    seed: int = 0
    version: int = 2
    model: str = "icl"  # one of COST_MODELS
    path: str = COST_PATH  # the attention path every scorer takes (ssa.attention.attention_path)

    def __post_init__(self) -> None:
        if self.model not in COST_MODELS:
            raise ValueError(f"model must be one of {', '.join(COST_MODELS)}; got {self.model!r}")


def cost_config(
    profile: str = "cpu", device: str = "auto", scorers=None, seed: int = 0, model: str = "icl"
) -> CostConfig:
    return CostConfig(
        check_profile(profile),
        resolve_device(device),
        tuple(scorer_names() if scorers is None else scorers),
        min_run_time=0.2 if profile == "smoke" else 2.0,
        seed=seed,
        model=model,
    )


def _icl_training_step(config: CostConfig, scorer: str):
    """One training step (forward, backward, Adam) of the in-context model with ``scorer``, on a
    batch at the curriculum's longest prompts; and what the batch is."""
    train_config = experiments.experiment_config(config.task, scorer, config.profile, config.seed).train
    last_step = train_config.train_steps - 1
    xs, ys = (tensor.to(config.device) for tensor in training_batch(train_config, last_step))
    model = build_model(train_config).to(config.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=train_config.learning_rate)

    def step():
        loss = train_config.task_rules.loss(model(xs, ys), ys)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step, {"points": train_config.curriculum.points(last_step), "batch_size": train_config.batch_size}


def _retrieval_training_step(config: CostConfig, scorer: str):
    """One training step of max retrieval's retriever with ``scorer`` (:func:`ssa_book.retrieval.experiment.training_step`)."""

    experiment = retrieval_config(scorer, config.profile, config.seed)
    return training_step(experiment, config.device), {
        "items": experiment.train.items,
        "batch_size": experiment.train.batch_size,
    }


def cost_benchmark(config: CostConfig) -> dict:
    """Median time of one training step (forward, backward, Adam) of ``config.model`` with each
    scorer, all timed in interleaved rounds in the same process (:func:`ssa_book.measure.interleaved_medians`),
    and the peak memory of one step (:func:`ssa_book.measure.peak_memory_bytes`), every scorer through
    the attention path ``config.path``; ratios to softmax's."""
    if "softmax" not in config.scorers:
        raise ValueError(f"scorers must include softmax (the reference of the ratios); got {config.scorers}")
    torch.set_num_threads(config.threads)
    build = _icl_training_step if config.model == "icl" else _retrieval_training_step
    built = {scorer: build(config, scorer) for scorer in config.scorers}
    steps = {scorer: step for scorer, (step, _) in built.items()}
    with attention_path(config.path):
        for step in steps.values():  # warm-up: first-call work (compilation, allocator) is not a step's cost
            step()
            step()
        times = interleaved_medians(steps, config.min_run_time, config.threads)
        memory = {scorer: peak_memory_bytes(step, config.device) for scorer, step in steps.items()}
    result = {"model": config.model, "path": config.path, **built["softmax"][1], "scorers": {}}
    for scorer in config.scorers:
        result["scorers"][scorer] = {
            "step_s": times[scorer][0],
            "rounds": times[scorer][1],
            "peak_bytes": memory[scorer],
            "time_ratio": times[scorer][0] / times["softmax"][0],
            "memory_ratio": memory[scorer] / memory["softmax"] if memory["softmax"] else None,
        }
    return result
