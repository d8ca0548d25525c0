"""The one training loop of the book: in-context learners, BabyBERTa and the decoder all use it.

    state = load_checkpoint(path, identity)                  # None: start afresh
    trained = train(Training(model, optimizer, batch, loss, steps, identity, checkpoint=path), state)

A chapter says what is its own in a :class:`Training` (model, optimizer, the learning rate of
each step, ``batch(step)`` and ``loss(micro_batch)``, clipping, an evaluation hook, the identity
of its configuration, plain state to keep); :func:`train` owns the rest: the step loop, gradient
accumulation (with ``DistributedDataParallel`` synchronising on the last micro-batch only),
autocast on CUDA, the loss history, a progress bar, thread control, wall time, checkpoints and
resuming. Guarantees:

* **Determinism.** The harness draws nothing at random. Batch ``step`` is the chapter's pure
  function of (seed, step), the learning rate a function of the step; the torch RNG state
  (dropout) travels in the checkpoint. The same configuration gives the same numbers.
* **A resumed run equals an uninterrupted one**, exactly: a checkpoint holds the weights, the
  optimizer state, the RNG state, the step, every step's loss, the chapter's extra state and the
  wall time so far, and is written atomically (a temporary file in the same folder, then
  ``os.replace``; with the umask's permissions, as the cache's files) every ``checkpoint_every``
  steps and at the end, so a killed run resumes from
  its last checkpoint and takes exactly the steps it would have taken.
* **One mismatch policy.** A checkpoint that is unreadable (truncated, foreign, refused by the
  safe loader), that records another configuration identity, or whose tensors do not fit the
  model (names, shapes, optimizer groups) is never used and never trusted silently: training
  starts from step 0 with a :class:`CheckpointMismatchWarning` naming the file and the reason,
  and the file is overwritten by the new run's first checkpoint. Nothing is raised for it.
* **Safe loading.** Checkpoints hold tensors and plain values only and are read with
  ``torch.load(path, map_location="cpu", weights_only=True)``: a file crafted to run code when
  unpickled is refused, not executed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from ssa_book.files import write_atomically

FORMAT = 1  # the layout of a checkpoint this module writes; another one is not used


def single_thread() -> None:
    """One torch thread per process: parallel runs share the cores instead of fighting over them."""
    torch.set_num_threads(1)


class CheckpointMismatchWarning(UserWarning):
    """A checkpoint was ignored (unreadable, another configuration, tensors that do not fit): training starts afresh."""


def stream_seed(seed: int, stream: str, index: int = 0) -> int:
    """The seed of draw ``index`` of the named ``stream`` under ``seed`` (a training batch, an
    initialisation, a test set): a hash of the three, so no two draws share one by construction.
    It has 63 bits, but torch's CPU generator keeps only the low 32 (``manual_seed(s)`` and
    ``manual_seed(s + 2**32)`` draw the same), so two given draws meet with probability 2^-32."""
    digest = hashlib.sha256(f"{seed}/{stream}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@dataclasses.dataclass
class Training:
    """What a chapter supplies; everything else is :func:`train`'s."""

    model: nn.Module  # the module whose state is checkpointed (not a DistributedDataParallel wrapper)
    optimizer: torch.optim.Optimizer
    batch: Callable[[int], Sequence[Any]]  # step -> micro-batches of batch `step` (one unless accumulating)
    loss: Callable[[Any], torch.Tensor]  # micro-batch -> its mean loss, graph attached
    steps: int  # length of the full run: the schedule's, whatever stop_at says
    identity: dict  # JSON-able: what the numbers depend on; a checkpoint of another identity is not used
    checkpoint: Path | None = None  # the state file; None: no checkpoints
    checkpoint_every: int = 500
    lr: Callable[[int], float] | None = (
        None  # learning rate of step `step`, set on every parameter group (x its "lr_scale", if any)
    )
    clip: float | None = None  # maximum gradient norm
    evaluate: Callable[[int, list[float]], None] | None = (
        None  # (steps done, every step's loss so far), main process only
    )
    evaluate_every: int | None = None  # also at step 0 of a fresh run and at the end
    log_every: int = 1  # steps averaged into one point of the loss history
    extra: dict = dataclasses.field(default_factory=dict)  # plain state the hooks fill; checkpointed, restored in place
    export: Callable[[int], None] | None = (
        None  # main process, at each checkpoint before the state file (the decoder's save_pretrained folder)
    )
    ddp: nn.Module | None = None  # the DistributedDataParallel wrapper that `loss` calls, if any
    autocast: torch.dtype | None = None  # mixed precision on CUDA (the decoder: bfloat16)
    description: str = ""  # the progress bar's label, and the FloatingPointError's

    def __post_init__(self) -> None:
        for name in ("steps", "checkpoint_every", "log_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)!r}")
        json.dumps(self.identity)  # TypeError now, not at the first checkpoint


@dataclasses.dataclass
class Trained:
    step: int  # steps done, over every session
    losses: list[float]  # loss of every step (mean over the batch, and over the processes under DDP)
    history: list[tuple[int, float]]  # (step, mean loss of the log interval ending there); the last may be shorter
    wall_time_s: float  # the training loop's time, evaluation and checkpoints included, summed over sessions
    evaluate_seconds: float  # the part of it spent in `evaluate`
    resumed_from: int  # the step this session started from (0: a fresh run)


def _plain(value):
    # Tuples become lists, as in JSON: the identity compares as the JSON it would be written as.
    return json.loads(json.dumps(value))


def _differences(stored, current, prefix: str = "") -> list[str]:
    if isinstance(stored, dict) and isinstance(current, dict):
        keys = sorted(set(stored) | set(current), key=str)
        return [d for key in keys for d in _differences(stored.get(key), current.get(key), f"{prefix}{key}.")]
    return [] if stored == current else [f"{prefix[:-1] or 'identity'}: {stored!r} != {current!r}"]


def _ignore(path: Path | str, reason: str) -> None:
    warnings.warn(
        f"checkpoint {path} ignored ({reason}); training starts from step 0", CheckpointMismatchWarning, stacklevel=3
    )


def load_checkpoint(path: str | Path | None, identity: dict) -> dict | None:
    """The checkpoint at ``path`` if it is one of this module's for exactly ``identity``.

    ``None`` when there is none, or (with a :class:`CheckpointMismatchWarning`) when the file is
    unreadable, of another format, or records another identity."""
    if path is None or not Path(path).exists():
        return None
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # truncated, foreign, or refused by the safe loader
        _ignore(path, f"unreadable: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
        return None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        _ignore(path, f"not a checkpoint of format {FORMAT}")
        return None
    if _plain(state.get("config")) != _plain(identity):
        differences = _differences(_plain(state.get("config")), _plain(identity))
        _ignore(
            path,
            "written for another configuration: "
            + "; ".join(differences[:3])
            + (" ..." if len(differences) > 3 else ""),
        )
        return None
    return state


def _misfit(training: Training, state: dict) -> str | None:
    """Why ``state`` cannot be loaded into the model and optimizer (None: it can)."""
    expected = {name: tuple(tensor.shape) for name, tensor in training.model.state_dict().items()}
    stored = {name: tuple(tensor.shape) for name, tensor in state["model"].items()}
    if expected != stored:
        wrong = sorted(set(expected) ^ set(stored)) or [name for name in expected if expected[name] != stored[name]]
        return f"its tensors do not fit the model: {', '.join(wrong[:3])}{' ...' if len(wrong) > 3 else ''}"
    groups = [len(group["params"]) for group in state["optimizer"]["param_groups"]]
    if groups != [len(group["params"]) for group in training.optimizer.param_groups]:
        return f"its optimizer has parameter groups of {groups}"
    return None


def save_checkpoint(path: Path, state: dict) -> None:
    """Write ``state`` to ``path`` atomically, as the result cache writes its entries
    (:func:`ssa_book.files.write_atomically`): a reader sees the old file or the new one, never
    half of one, and the file has the permissions the umask leaves (a shared folder's group can
    read it)."""
    write_atomically(Path(path), lambda stream: torch.save(state, stream))


def _history(losses: list[float], every: int) -> list[tuple[int, float]]:
    chunks = [losses[start : start + every] for start in range(0, len(losses), every)]  # the last may be shorter
    return [(every * index + len(chunk), sum(chunk) / len(chunk)) for index, chunk in enumerate(chunks)]


def train(
    training: Training,
    state: dict | None = None,
    *,
    stop_at: int | None = None,
    progress: bool = True,
    threads: int | None = None,
) -> Trained:
    """Run ``training`` from ``state`` (a :func:`load_checkpoint` result; None: from step 0).

    ``stop_at`` ends the run after that many steps as if it had been stopped there: the learning
    rate is still the schedule of ``training.steps``, and the evaluation and the checkpoint of the
    end are made at the stop. ``threads`` sets ``torch.set_num_threads`` for the run, then restores it."""
    from tqdm.auto import tqdm

    t = training
    world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
    main = world == 1 or dist.get_rank() == 0
    device = next(t.model.parameters()).device
    if state is not None:
        reason = (
            "written for another configuration"
            if _plain(state.get("config")) != _plain(t.identity)
            else _misfit(t, state)
        )
        if reason is not None:
            _ignore(t.checkpoint or "given to train()", reason)
            state = None
    step, losses, wall_time_s, evaluate_seconds = 0, [], 0.0, 0.0
    if state is not None:
        t.model.load_state_dict(state["model"])
        t.optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"]["cpu"])
        if device.type == "cuda" and "cuda" in state["rng"]:
            torch.cuda.set_rng_state(state["rng"]["cuda"], device)
        step, losses = state["step"], state["losses"].tolist()
        wall_time_s, evaluate_seconds = state["wall_time_s"], state["evaluate_seconds"]
        t.extra.clear()
        t.extra.update(state["extra"])
    resumed_from = step
    last = t.steps if stop_at is None else min(stop_at, t.steps)
    amp = (
        torch.autocast("cuda", dtype=t.autocast)
        if t.autocast is not None and device.type == "cuda"
        else contextlib.nullcontext()
    )

    def evaluate(done: int) -> float:
        started = time.perf_counter()
        t.evaluate(done, losses)
        t.model.train()  # the hook may have switched to eval mode
        return time.perf_counter() - started

    def save(done: int) -> None:
        if t.export is not None:
            t.export(done)
        rng = {
            "cpu": torch.get_rng_state(),
            **({"cuda": torch.cuda.get_rng_state(device)} if device.type == "cuda" else {}),
        }
        save_checkpoint(
            t.checkpoint,
            {
                "format": FORMAT,
                "config": t.identity,
                "step": done,
                "model": t.model.state_dict(),
                "optimizer": t.optimizer.state_dict(),
                "rng": rng,
                "losses": torch.tensor(losses, dtype=torch.float64),
                "extra": t.extra,
                "wall_time_s": wall_time_s,
                "evaluate_seconds": evaluate_seconds,
            },
        )

    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    bar = tqdm(total=t.steps, initial=step, desc=t.description, disable=not (progress and main), unit="step")
    try:
        t.model.train()
        started = time.perf_counter()
        if step == 0 and t.evaluate is not None and main:
            evaluate_seconds += evaluate(0)  # the curves start from the untrained model
        while step < last:
            if t.lr is not None:
                for group in t.optimizer.param_groups:
                    group["lr"] = t.lr(step) * group.get("lr_scale", 1.0)
            micro_batches = t.batch(step)
            total = torch.zeros((), device=device)
            for index, micro in enumerate(micro_batches):
                # Under DDP, gradients are averaged across processes on the last micro-batch only.
                sync = (
                    t.ddp.no_sync()
                    if t.ddp is not None and index < len(micro_batches) - 1
                    else contextlib.nullcontext()
                )
                with sync:
                    with amp:
                        loss = t.loss(micro) / len(micro_batches)
                    loss.backward()
                total += loss.detach().float()
            value = total.item()
            if world > 1:  # the global batch's loss: the mean of the processes' shares
                reduced = torch.tensor([value], dtype=torch.float64, device=device)
                dist.all_reduce(reduced)
                value = reduced.item() / world
            if not math.isfinite(value):
                raise FloatingPointError(
                    f"{t.description or 'training'}: the training loss became {value} at step {step}"
                )
            if t.clip is not None:
                torch.nn.utils.clip_grad_norm_(t.model.parameters(), t.clip)
            t.optimizer.step()
            t.optimizer.zero_grad(set_to_none=True)
            losses.append(value)
            step += 1
            bar.update(1)
            if step % t.log_every == 0:
                bar.set_postfix(loss=f"{sum(losses[-t.log_every :]) / t.log_every:.4f}")
            if (
                t.evaluate is not None
                and main
                and ((t.evaluate_every and step % t.evaluate_every == 0) or step == last)
            ):
                evaluate_seconds += evaluate(step)
            if t.checkpoint is not None and main and (step % t.checkpoint_every == 0 or step == last):
                wall_time_s += time.perf_counter() - started
                started = time.perf_counter()
                save(step)
        wall_time_s += time.perf_counter() - started
    finally:
        bar.close()
        torch.set_num_threads(before)
    t.model.eval()
    return Trained(step, losses, _history(losses, t.log_every), wall_time_s, evaluate_seconds, resumed_from)
