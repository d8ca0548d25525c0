"""Pre-training loop: AdamW, warm-up + cosine decay, clipping, bf16 on GPU, accumulation,
checkpoint/resume, and DistributedDataParallel when started by ``torchrun``.

    python -m ssa_book decoder train --profile smoke --out runs/smoke                     # one process
    torchrun --nproc_per_node=2 -m ssa_book decoder train --profile smoke --out runs/ddp  # two (gloo on CPU)

The loop is the book's one (:mod:`ssa_book.training`). A run folder holds ``tokenizer/`` (fitted by
rank 0 when a run starts afresh), ``trainer_state.pt`` (the checkpoint: weights, optimizer,
step, history), ``checkpoint/`` (the same weights as a ``save_pretrained`` model with its
tokenizer, what evaluation loads) and, when training is done, ``history.json``. Starting again
on the same folder resumes from the checkpoint; batches depend only on the step number
(:class:`ssa_book.lm.data.GlobalBatches`), so a resumed run equals an uninterrupted one. A checkpoint
of another configuration is not used: the run starts afresh, with a warning.
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import json
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

import ssa.hf
from ssa_book import training
from ssa_book.lm import data
from ssa_book.lm.config import RunConfig
from ssa_book.lm.model import build_model, parameter_count, save_checkpoint
from ssa_book.lm.tokenizer import load_tokenizer, train_tokenizer
from ssa_book.profiles import resolve_device

STATE_FILE = "trainer_state.pt"
HISTORY_FILE = "history.json"


def learning_rate(step: int, run: RunConfig) -> float:
    """Linear warm-up to ``lr`` over ``warmup_steps``, then cosine decay to ``lr * min_lr_ratio``."""
    train = run.train
    if step < train.warmup_steps:
        return train.lr * (step + 1) / train.warmup_steps
    progress = (step - train.warmup_steps) / max(1, train.steps - train.warmup_steps)
    floor = train.lr * train.min_lr_ratio
    return floor + 0.5 * (train.lr - floor) * (1.0 + math.cos(math.pi * min(1.0, progress)))


@dataclass(frozen=True)
class Processes:
    """Where this process stands among the ``torchrun`` processes (one process: rank 0 of 1)."""

    rank: int = 0
    world_size: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier()


def start_processes(device: str) -> Processes:
    """Join the process group ``torchrun`` describes in the environment (NCCL on GPUs, gloo on CPU)."""

    device = resolve_device(device)
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size == 1:
        return Processes(device=torch.device(device))
    local_rank = int(os.environ["LOCAL_RANK"])
    if device == "cuda":
        torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        # Generous timeout: rank 0 alone fits the tokenizer (minutes on FineWeb-Edu) while the others wait.
        dist.init_process_group(backend="nccl" if device == "cuda" else "gloo", timeout=datetime.timedelta(hours=2))
    where = torch.device(f"cuda:{local_rank}") if device == "cuda" else torch.device(device)
    return Processes(dist.get_rank(), dist.get_world_size(), where)


def fit_or_load_tokenizer(run: RunConfig, out: Path, processes: Processes, *, refit: bool = False):
    """Rank 0 fits the tokenizer on the training split (once per run folder, or again for a fresh
    run: ``refit``); all ranks load it."""
    folder = out / "tokenizer"
    if processes.main and (refit or not (folder / "tokenizer.json").is_file()):
        texts = data.split_documents(
            run.data.train_source, "train", run.data.held_out_per_mille, run.data.max_train_documents
        )
        tokenizer = train_tokenizer(itertools.islice(texts, run.data.tokenizer_documents), run.model.vocab_size)
        tokenizer.save_pretrained(folder)
    processes.barrier()
    return load_tokenizer(folder)


def training_batches(run: RunConfig, tokenizer, processes: Processes):
    shard = {"rank": processes.rank, "world_size": processes.world_size}
    if run.data.train_source == "fineweb-edu":
        texts = data.split_documents(
            run.data.train_source, "train", run.data.held_out_per_mille, run.data.max_train_documents, **shard
        )
        return data.StreamedBatches(texts, tokenizer, run.model.seq_len, run.train.global_batch // processes.world_size)
    texts = data.split_documents(
        run.data.train_source, "train", run.data.held_out_per_mille, run.data.max_train_documents
    )
    sequences = data.packed_tensor(texts, tokenizer, run.model.seq_len, what="training", minimum=run.train.global_batch)
    return data.GlobalBatches(sequences, run.train.global_batch, run.train.seed, processes.rank, processes.world_size)


def held_out_windows(run: RunConfig, tokenizer, count: int) -> torch.Tensor:
    """The first ``count`` held-out in-distribution windows of ``seq_len`` tokens."""
    texts = data.split_documents(
        run.data.train_source, "held_out", run.data.held_out_per_mille, run.data.max_train_documents
    )
    return data.packed_tensor(texts, tokenizer, run.model.seq_len, count, what="held-out")


def _optimizer(model: torch.nn.Module, run: RunConfig) -> torch.optim.Optimizer:
    # Weight decay on matrices only: norms and the scorer's scalars (SSA's b, n) are not shrunk.
    decayed = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() >= 2]
    kept = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decayed, "weight_decay": run.train.weight_decay}, {"params": kept, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=run.train.lr, betas=(run.train.beta1, run.train.beta2), fused=False)


def _export(model, tokenizer, out: Path) -> None:
    """Write the ``save_pretrained`` folder next to the old one, then swap, so that an interruption never leaves half of one."""
    staging, final = out / "checkpoint.tmp", out / "checkpoint"
    shutil.rmtree(staging, ignore_errors=True)
    save_checkpoint(model, tokenizer, staging)
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)


def mean_loss(model, windows: torch.Tensor, batch_size: int, device) -> float:
    """Mean next-token cross-entropy over every predicted position of ``windows``."""
    limit = model.config.max_position_embeddings
    if windows.shape[1] > limit:
        raise ValueError(
            f"seq_len: windows of {windows.shape[1]} tokens exceed the model's {limit} positions; use seq_len <= {limit}"
        )
    total, count = 0.0, 0
    was_training = model.training
    model.eval()
    with torch.no_grad(), _autocast(device):
        for batch in windows.split(batch_size):
            batch = batch.to(device)
            predicted = batch.shape[0] * (batch.shape[1] - 1)
            total += float(model(input_ids=batch, labels=batch).loss.float()) * predicted
            count += predicted
    model.train(was_training)
    return total / count


def _autocast(device):
    device = torch.device(device)
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train(
    run: RunConfig, out: str | Path, *, device: str = "auto", progress: bool = True, stop_at: int | None = None
) -> dict:
    """Train (or resume) the run in folder ``out`` with :func:`ssa_book.training.train`; returns the
    history (also in ``history.json``).

    ``stop_at`` ends the run after that many optimizer steps, as if it had been stopped there: the
    learning-rate schedule is still the one of ``run.train.steps``, and the checkpoint and a
    held-out loss are written at the stop (``ssa_book.paper_check`` uses it). ``None``: all the steps.
    A checkpoint in ``out`` of another configuration is not used: the run starts afresh (tokenizer
    included) with a :class:`ssa_book.training.CheckpointMismatchWarning`."""
    from torch.nn.parallel import DistributedDataParallel

    out = Path(out)
    processes = start_processes(device)
    if run.train.global_batch % (run.train.micro_batch * processes.world_size):
        raise ValueError(
            f"global_batch ({run.train.global_batch}) must be a multiple of micro_batch x processes "
            f"({run.train.micro_batch} x {processes.world_size})"
        )
    out.mkdir(parents=True, exist_ok=True)
    state = training.load_checkpoint(out / STATE_FILE, run.to_dict())
    tokenizer = fit_or_load_tokenizer(run, out, processes, refit=state is None)
    batches = training_batches(run, tokenizer, processes)
    eval_windows = held_out_windows(run, tokenizer, run.train.eval_windows_during_training) if processes.main else None

    torch.manual_seed(run.train.seed)  # identical initial weights in every process
    model = build_model(
        run.model,
        run.train.scorer,
        per_head=run.train.per_head,
        scorer_kwargs=run.train.scorer_kwargs,
        tokenizer=tokenizer,
    )
    model.to(processes.device)
    wrapped = DistributedDataParallel(model) if processes.world_size > 1 else model
    evaluations = {"eval_step": [], "eval_loss": [], "scorer_values": []}

    def loss(micro: torch.Tensor) -> torch.Tensor:
        micro = micro.to(processes.device)  # (micro_batch, seq_len)
        return wrapped(input_ids=micro, labels=micro).loss

    def evaluate(step: int, losses: list[float]) -> None:
        evaluations["eval_step"].append(step)
        evaluations["eval_loss"].append(mean_loss(model, eval_windows, run.train.micro_batch, processes.device))
        evaluations["scorer_values"].append(ssa.hf.scorer_values(model))

    trained = training.train(
        training.Training(
            model=model,
            optimizer=_optimizer(model, run),
            batch=lambda step: batches.local_batch(step).split(
                run.train.micro_batch
            ),  # this process's share, in micro-batches
            loss=loss,
            steps=run.train.steps,
            identity=run.to_dict(),
            checkpoint=out / STATE_FILE,
            checkpoint_every=run.train.checkpoint_every,
            lr=lambda step: learning_rate(step, run),
            clip=run.train.grad_clip,
            evaluate=evaluate,
            evaluate_every=run.train.eval_every,
            extra=evaluations,
            export=lambda step: _export(model, tokenizer, out),
            ddp=wrapped if processes.world_size > 1 else None,
            autocast=torch.bfloat16,
            description=f"{run.train.scorer} seed {run.train.seed}",
        ),
        state,
        stop_at=stop_at,
        progress=progress,
    )

    tokens_per_step = run.train.global_batch * run.model.seq_len
    history = {
        "step": list(range(1, trained.step + 1)),
        "train_loss": trained.losses,
        "lr": [learning_rate(step, run) for step in range(trained.step)],
        "tokens": [(step + 1) * tokens_per_step for step in range(trained.step)],
        **evaluations,
        "train_seconds": trained.wall_time_s,  # summed over sessions if resumed
    }
    summary = {
        "history": history,
        "parameters": parameter_count(model),
        "tokens_trained": trained.step * tokens_per_step,
        "processes": processes.world_size,
        "train_seconds": trained.wall_time_s,
    }
    if processes.main:
        (out / HISTORY_FILE).write_text(json.dumps(summary, indent=1) + "\n")
    processes.barrier()
    if processes.world_size > 1 and dist.is_initialized():
        dist.destroy_process_group()
    return summary
