"""Training an in-context learner: curriculum, Adam, seeded data, checkpoints with exact resume.

Every random draw is a pure function of the config's seed: the weights are initialised from the
seed, and the batch of step ``t`` comes from its own generator seeded by ``(seed, t)``, so a run
that is killed and resumed from its last checkpoint ends with exactly the weights of an
uninterrupted run (the optimizer state travels in the checkpoint; the curriculum is a function of
the step). Checkpoints are written atomically every ``checkpoint_every`` steps and at the end;
the final one is kept, so re-evaluating a trained model never retrains it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
import time
from pathlib import Path

import torch

from ssa import paths
from ssa.icl.curriculum import Curriculum
from ssa.icl.models import InContextLearner, ModelConfig
from ssa.icl.samplers import PromptSpec, generator, sample_prompts
from ssa.icl.tasks import check_task, loss as task_loss
from ssa.profiles import resolve_device

CHECKPOINT_DIR_ENV = "SSA_CHECKPOINT_DIR"


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    task: str = "linear"  # "every", "some" or "linear"
    model: ModelConfig = ModelConfig()
    curriculum: Curriculum = Curriculum()
    batch_size: int = 64  # prompts per step (paper: 64)
    learning_rate: float = 1e-4  # Adam (paper: 1e-4)
    train_steps: int = 500_000  # paper: 500k
    seed: int = 0  # weights and data
    log_every: int = 50  # steps averaged into one point of the loss history

    def __post_init__(self) -> None:
        check_task(self.task)
        if self.curriculum.end > self.model.n_positions:
            raise ValueError(
                f"curriculum.end ({self.curriculum.end}) exceeds model.n_positions ({self.model.n_positions})"
            )
        for name in ("batch_size", "train_steps", "log_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)!r}")


def stream_seed(seed: int, stream: str, index: int = 0) -> int:
    """An independent 63-bit seed for draw ``index`` of the named ``stream`` under ``seed``."""
    digest = hashlib.sha256(f"{seed}/{stream}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def build_model(config: TrainConfig) -> InContextLearner:
    """The untrained model of ``config``, initialised from its seed without touching the global RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(stream_seed(config.seed, "init"))
        return InContextLearner(config.model)


def training_batch(config: TrainConfig, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    spec = PromptSpec(points=config.curriculum.points(step))
    return sample_prompts(config.task, spec, config.batch_size, generator(stream_seed(config.seed, "train", step)))


def checkpoint_root() -> Path:
    configured = os.environ.get(CHECKPOINT_DIR_ENV)
    root = Path(configured).expanduser() if configured else paths.results_dir().parent / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():  # the folder keeps itself out of git
        ignore.write_text("*\n")
    return root


def checkpoint_path(config: TrainConfig, root: Path | None = None) -> Path:
    from ssa.results import cache_key

    return (root or checkpoint_root()) / "icl" / f"{cache_key(dataclasses.asdict(config))[:16]}.pt"


@dataclasses.dataclass
class TrainedModel:
    model: InContextLearner
    history: list[tuple[int, float]]  # (step, mean training loss over the last log_every steps)
    steps: int
    wall_time_s: float  # training time over all sessions, resumed or not
    device: str


def _save(path: Path, state: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    try:
        torch.save(state, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _load(path: Path, config: TrainConfig) -> dict | None:
    """The checkpoint at ``path`` if it belongs to exactly ``config``; anything else means retrain."""
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # a truncated or foreign file: start over rather than trust it
        return None
    if state.get("config") != dataclasses.asdict(config):
        return None
    return state


def _fits(model: torch.nn.Module, state: dict) -> bool:
    """Whether a checkpoint's tensors match the model the current code builds (names and shapes)."""
    expected = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    return expected == {name: tuple(tensor.shape) for name, tensor in state["model"].items()}


def train(
    config: TrainConfig,
    *,
    device: str = "auto",
    checkpoint_every: int = 500,
    checkpoint: Path | None | bool = True,
    stop_at: int | None = None,
    progress: bool = True,
) -> TrainedModel:
    """Train (or resume, or load the finished) model of ``config``.

    ``checkpoint``: ``True`` for the default path under :func:`checkpoint_root`, a path, or
    ``False``/``None`` for none. ``stop_at`` ends the run after that many steps as if it had been
    killed there (tests use it). ``device`` goes through :func:`ssa.profiles.resolve_device`.
    """
    device = resolve_device(device)
    path = checkpoint_path(config) if checkpoint is True else (Path(checkpoint) if checkpoint else None)
    model = build_model(config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    step, history, wall_time_s, running = 0, [], 0.0, 0.0  # running: loss summed since the last history point
    state = _load(path, config) if path is not None else None
    if state is not None and _fits(model, state):
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step, history, wall_time_s = state["step"], [tuple(item) for item in state["history"]], state["wall_time_s"]
        running = state["running_loss"]

    def save() -> None:
        if path is not None:
            _save(path, {
                "config": dataclasses.asdict(config), "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "step": step, "history": history, "wall_time_s": wall_time_s, "running_loss": running,
            })

    last = config.train_steps if stop_at is None else min(stop_at, config.train_steps)
    from tqdm.auto import tqdm

    bar = tqdm(total=config.train_steps, initial=step, disable=not progress, desc=f"{config.task}/{config.model.scorer}/seed{config.seed}")
    model.train()
    started = time.perf_counter()
    while step < last:
        xs, ys = training_batch(config, step)
        loss = task_loss(config.task, model(xs.to(device), ys.to(device)), ys.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running += loss.item()
        step += 1
        bar.update(1)
        if step % config.log_every == 0:
            history.append((step, running / config.log_every))
            bar.set_postfix(loss=f"{history[-1][1]:.4f}")
            running = 0.0
        if step % checkpoint_every == 0 or step == last:
            wall_time_s += time.perf_counter() - started
            started = time.perf_counter()
            save()
    bar.close()
    wall_time_s += time.perf_counter() - started
    model.eval()
    return TrainedModel(model, history, step, wall_time_s, device)
