"""Pre-training loop: AdamW, warm-up + cosine decay, clipping, bf16 on GPU, accumulation,
checkpoint/resume, and DistributedDataParallel when started by ``torchrun``.

    python -m ssa.lm train --profile smoke --out runs/smoke                     # one process
    torchrun --nproc_per_node=2 -m ssa.lm train --profile smoke --out runs/ddp  # two (gloo on CPU)

A run folder holds ``tokenizer/`` (fitted once, by rank 0), ``checkpoint/`` (the latest
``save_pretrained`` model, its tokenizer and ``trainer_state.pt``) and, when training is done,
``history.json``. Starting again on the same folder resumes from the checkpoint; batches depend
only on the step number (:class:`ssa.lm.data.GlobalBatches`), so a resumed run equals an
uninterrupted one.
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import json
import math
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

import ssa.hf
from ssa.lm import data
from ssa.lm.config import RunConfig
from ssa.lm.model import build_model, load_checkpoint, parameter_count, save_checkpoint
from ssa.lm.tokenizer import load_tokenizer, train_tokenizer

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

    def mean(self, value: float) -> float:
        if self.world_size == 1:
            return value
        tensor = torch.tensor([value], dtype=torch.float64, device=self.device)
        dist.all_reduce(tensor)
        return float(tensor) / self.world_size


def start_processes(device: str) -> Processes:
    """Join the process group ``torchrun`` describes in the environment (NCCL on GPUs, gloo on CPU)."""
    from ssa.profiles import resolve_device

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


def fit_or_load_tokenizer(run: RunConfig, out: Path, processes: Processes):
    """Rank 0 fits the tokenizer on the training split (once per run folder); all ranks load it."""
    folder = out / "tokenizer"
    if processes.main and not (folder / "tokenizer.json").is_file():
        texts = data.split_documents(run.data.train_source, "train", run.data.held_out_per_mille, run.data.max_train_documents)
        tokenizer = train_tokenizer(itertools.islice(texts, run.data.tokenizer_documents), run.model.vocab_size)
        tokenizer.save_pretrained(folder)
    processes.barrier()
    return load_tokenizer(folder)


def training_batches(run: RunConfig, tokenizer, processes: Processes):
    shard = {"rank": processes.rank, "world_size": processes.world_size}
    if run.data.train_source == "fineweb-edu":
        texts = data.split_documents(run.data.train_source, "train", run.data.held_out_per_mille, run.data.max_train_documents, **shard)
        return data.StreamedBatches(texts, tokenizer, run.model.seq_len, run.train.global_batch // processes.world_size)
    texts = data.split_documents(run.data.train_source, "train", run.data.held_out_per_mille, run.data.max_train_documents)
    sequences = data.packed_tensor(texts, tokenizer, run.model.seq_len, what="training", minimum=run.train.global_batch)
    return data.GlobalBatches(sequences, run.train.global_batch, run.train.seed, processes.rank, processes.world_size)


def held_out_windows(run: RunConfig, tokenizer, count: int) -> torch.Tensor:
    """The first ``count`` held-out in-distribution windows of ``seq_len`` tokens."""
    texts = data.split_documents(run.data.train_source, "held_out", run.data.held_out_per_mille, run.data.max_train_documents)
    return data.packed_tensor(texts, tokenizer, run.model.seq_len, count, what="held-out")


def _optimizer(model: torch.nn.Module, run: RunConfig) -> torch.optim.Optimizer:
    # Weight decay on matrices only: norms and the scorer's scalars (SSA's b, n) are not shrunk.
    decayed = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() >= 2]
    kept = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decayed, "weight_decay": run.train.weight_decay}, {"params": kept, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=run.train.lr, betas=(run.train.beta1, run.train.beta2), fused=False)


def _new_history() -> dict:
    return {"step": [], "train_loss": [], "lr": [], "tokens": [], "eval_step": [], "eval_loss": [], "scorer_values": [], "train_seconds": 0.0}


def _save(model, tokenizer, optimizer, run: RunConfig, step: int, history: dict, out: Path) -> None:
    """Write the checkpoint next to the old one, then swap, so an interruption never leaves half a checkpoint."""
    staging, final = out / "checkpoint.tmp", out / "checkpoint"
    shutil.rmtree(staging, ignore_errors=True)
    save_checkpoint(model, tokenizer, staging)
    torch.save({"step": step, "optimizer": optimizer.state_dict(), "history": history, "run": run.to_dict()}, staging / STATE_FILE)
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)


def _resume_state(run: RunConfig, out: Path) -> dict | None:
    path = out / "checkpoint" / STATE_FILE
    if not path.is_file():
        return None
    state = torch.load(path, map_location="cpu", weights_only=True)
    if state["run"] != run.to_dict():
        raise ValueError(f"out: {out} holds a run with another configuration; choose a new --out folder or delete {out}")
    return state


def mean_loss(model, windows: torch.Tensor, batch_size: int, device) -> float:
    """Mean next-token cross-entropy over every predicted position of ``windows``."""
    limit = model.config.max_position_embeddings
    if windows.shape[1] > limit:
        raise ValueError(f"seq_len: windows of {windows.shape[1]} tokens exceed the model's {limit} positions; use seq_len <= {limit}")
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


def train(run: RunConfig, out: str | Path, *, device: str = "auto", progress: bool = True, stop_at: int | None = None) -> dict:
    """Train (or resume) the run in folder ``out``; returns the history (also in ``history.json``).

    ``stop_at`` ends the run after that many optimizer steps, as if it had been stopped there: the
    learning-rate schedule is still the one of ``run.train.steps``, and the checkpoint and a
    held-out loss are written at the stop (``ssa.paper_check`` uses it). ``None``: all the steps."""
    from torch.nn.parallel import DistributedDataParallel
    from tqdm.auto import tqdm

    out = Path(out)
    processes = start_processes(device)
    if run.train.global_batch % (run.train.micro_batch * processes.world_size):
        raise ValueError(
            f"global_batch ({run.train.global_batch}) must be a multiple of micro_batch x processes "
            f"({run.train.micro_batch} x {processes.world_size})"
        )
    accumulation = run.train.global_batch // (run.train.micro_batch * processes.world_size)
    final_step = run.train.steps if stop_at is None else min(stop_at, run.train.steps)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = fit_or_load_tokenizer(run, out, processes)
    batches = training_batches(run, tokenizer, processes)
    eval_windows = held_out_windows(run, tokenizer, run.train.eval_windows_during_training) if processes.main else None

    state = _resume_state(run, out)
    torch.manual_seed(run.train.seed)  # identical initial weights in every process
    if state is None:
        model = build_model(run.model, run.train.scorer, per_head=run.train.per_head, scorer_kwargs=run.train.scorer_kwargs, tokenizer=tokenizer)
        start, history = 0, _new_history()
    else:
        model, _ = load_checkpoint(out / "checkpoint")
        start, history = state["step"], state["history"]
    model.to(processes.device).train()
    optimizer = _optimizer(model, run)
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])
    wrapped = DistributedDataParallel(model) if processes.world_size > 1 else model
    tokens_per_step = run.train.global_batch * run.model.seq_len

    def record_evaluation(done: int) -> None:
        history["eval_step"].append(done)
        history["eval_loss"].append(mean_loss(model, eval_windows, run.train.micro_batch, processes.device))
        history["scorer_values"].append(ssa.hf.scorer_values(model))

    if processes.main and start == 0:
        record_evaluation(0)  # the curves start from the initial model
    bar = tqdm(total=run.train.steps, initial=start, desc=f"{run.train.scorer} seed {run.train.seed}", disable=not (progress and processes.main), unit="step")
    for step in range(start, final_step):
        step_started = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, run)
        local = batches.local_batch(step)  # (global_batch / processes, seq_len)
        loss_sum = 0.0
        for index, micro in enumerate(local.split(run.train.micro_batch)):
            micro = micro.to(processes.device)
            last = index == accumulation - 1
            # Gradients are averaged across processes only on the last micro-batch.
            sync = contextlib.nullcontext() if last or processes.world_size == 1 else wrapped.no_sync()
            with sync, _autocast(processes.device):
                loss = wrapped(input_ids=micro, labels=micro).loss / accumulation
                loss.backward()
            loss_sum += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(model.parameters(), run.train.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step_loss = processes.mean(loss_sum)
        done = step + 1
        history["step"].append(done)
        history["train_loss"].append(step_loss)
        history["lr"].append(learning_rate(step, run))
        history["tokens"].append(done * tokens_per_step)
        compute_seconds = time.perf_counter() - step_started
        if processes.main and (done % run.train.eval_every == 0 or done == final_step):
            record_evaluation(done)
        history["train_seconds"] += time.perf_counter() - step_started  # summed over sessions if resumed
        bar.update(1)
        bar.set_postfix(loss=f"{step_loss:.3f}", tok_s=f"{tokens_per_step / compute_seconds:,.0f}")
        if processes.main and (done % run.train.checkpoint_every == 0 or done == final_step):
            _save(model, tokenizer, optimizer, run, done, history, out)
    bar.close()

    summary = {
        "history": history,
        "parameters": parameter_count(model),
        "tokens_trained": final_step * tokens_per_step,
        "processes": processes.world_size,
        "train_seconds": history["train_seconds"],
    }
    if processes.main:
        (out / HISTORY_FILE).write_text(json.dumps(summary, indent=1) + "\n")
    processes.barrier()
    if processes.world_size > 1 and dist.is_initialized():
        dist.destroy_process_group()
    return summary
