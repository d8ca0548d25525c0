"""Training an in-context learner: curriculum, Adam, seeded data, on the book's one loop (:mod:`ssa_book.training`).

Every random draw is a pure function of the config's seed: the weights are initialised from the
seed, and the batch of step ``t`` comes from its own generator seeded by ``(seed, t)`` (the
curriculum is a function of the step), so a run that is killed and resumed from its last
checkpoint ends with exactly the weights of an uninterrupted run. Checkpoints (one file per
config, :func:`checkpoint_path`) are written every ``checkpoint_every`` steps and at the end; the
final one is kept, so re-evaluating a trained model never retrains it. A checkpoint of another
config is not used (:class:`ssa_book.training.CheckpointMismatchWarning`).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import torch

from ssa_book import paths, training
from ssa_book.training import stream_seed
from ssa_book.results.keys import added_field
from ssa_book.icl.curriculum import Curriculum
from ssa_book.icl.models import InContextLearner, ModelConfig
from ssa_book.icl.samplers import PromptSpec, generator, sample_prompts
from ssa_book.icl.tasks import get_task
from ssa_book.profiles import resolve_device
from ssa.scoring import Scorer
from ssa_book.results.keys import cache_key, config_dict


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    task: str = "linear"  # "every", "some" or "linear" (a Task is taken by its name)
    model: ModelConfig = ModelConfig()
    curriculum: Curriculum = Curriculum()
    batch_size: int = 64  # prompts per step (paper: 64)
    learning_rate: float = 1e-4  # Adam (paper: 1e-4)
    train_steps: int = 500_000  # paper: 500k
    seed: int = 0  # weights and data
    log_every: int = 50  # steps averaged into one point of the loss history
    # Settings added for the ablations of the powered study; at their defaults they leave a
    # config's key as it was (ssa_book.results.keys.added_field).
    scorer_lr_scale: float = added_field(1.0)  # the scorer's parameters (SSA's b, n) learn at this x learning_rate
    schedule: str = added_field("constant")  # "constant", or "warmup_cosine": linear warm-up, then cosine decay to 0
    warmup_steps: int = added_field(0)  # warm-up length of "warmup_cosine"
    gradient_clip: float | None = added_field(None)  # largest gradient norm (None: no clipping)

    def __post_init__(self) -> None:
        # The task's rules (labels, loss, errors, baselines), resolved once for every use of this
        # config; ``task`` stays its name, which is what the cache key holds.
        rules = get_task(self.task)
        object.__setattr__(self, "task", rules.name)
        object.__setattr__(self, "task_rules", rules)
        if not (isinstance(self.scorer_lr_scale, (int, float)) and self.scorer_lr_scale > 0):
            raise ValueError(f"scorer_lr_scale must be a number > 0; got {self.scorer_lr_scale!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}; got {self.schedule!r}")
        if not (isinstance(self.warmup_steps, int) and 0 <= self.warmup_steps < self.train_steps):
            raise ValueError(
                f"warmup_steps must be an int in 0..train_steps-1 ({self.train_steps - 1}); got {self.warmup_steps!r}"
            )
        if self.schedule == "constant" and self.warmup_steps:
            raise ValueError("warmup_steps: the constant schedule has no warm-up; use schedule='warmup_cosine'")
        if self.gradient_clip is not None and not (
            isinstance(self.gradient_clip, (int, float)) and self.gradient_clip > 0
        ):
            raise ValueError(f"gradient_clip must be a number > 0 or None; got {self.gradient_clip!r}")
        if self.curriculum.end > self.model.n_positions:
            raise ValueError(
                f"curriculum.end ({self.curriculum.end}) exceeds model.n_positions ({self.model.n_positions})"
            )
        for name in ("batch_size", "train_steps", "log_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)!r}")


SCHEDULES = ("constant", "warmup_cosine")


def learning_rate(config: TrainConfig, step: int) -> float:
    """The learning rate of step ``step`` (0-based) under ``config.schedule``."""
    if config.schedule == "constant":
        return config.learning_rate
    if step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.train_steps - config.warmup_steps)
    return config.learning_rate * 0.5 * (1.0 + math.cos(math.pi * progress))


def _parameter_groups(model: torch.nn.Module, config: TrainConfig) -> list[dict]:
    """One group, or two when the scorer's parameters learn at their own rate (``lr_scale``,
    which :func:`ssa_book.training.train` applies to the schedule's rate)."""
    if config.scorer_lr_scale == 1.0:
        return [{"params": list(model.parameters())}]

    scorer = {
        id(parameter) for module in model.modules() if isinstance(module, Scorer) for parameter in module.parameters()
    }
    if not scorer:
        raise ValueError(f"scorer_lr_scale: scorer {config.model.scorer!r} has no trainable parameters to scale")
    return [
        {"params": [p for p in model.parameters() if id(p) not in scorer]},
        {
            "params": [p for p in model.parameters() if id(p) in scorer],
            "lr_scale": config.scorer_lr_scale,
            "lr": config.learning_rate * config.scorer_lr_scale,
        },
    ]


def build_model(config: TrainConfig) -> InContextLearner:
    """The untrained model of ``config``, initialised from its seed without touching the global RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(stream_seed(config.seed, "init"))
        return InContextLearner(config.model)


def training_batch(config: TrainConfig, step: int) -> tuple[torch.Tensor, torch.Tensor]:
    spec = PromptSpec(points=config.curriculum.points(step))
    return sample_prompts(
        config.task_rules, spec, config.batch_size, generator(stream_seed(config.seed, "train", step))
    )


def checkpoint_root() -> Path:
    root = paths.checkpoint_dirs()["icl"]
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():  # the folder keeps itself out of git
        ignore.write_text("*\n")
    return root


def checkpoint_path(config: TrainConfig, root: Path | None = None) -> Path:

    return (root or checkpoint_root()) / "icl" / f"{cache_key(config_dict(config))[:16]}.pt"


@dataclasses.dataclass
class TrainedModel:
    model: InContextLearner
    history: list[tuple[int, float]]  # (step, mean training loss of the log_every steps ending there)
    steps: int
    wall_time_s: float  # training time over all sessions, resumed or not
    device: str


def train(
    config: TrainConfig,
    *,
    device: str = "auto",
    checkpoint_every: int = 500,
    checkpoint: Path | None | bool = True,
    stop_at: int | None = None,
    progress: bool = True,
) -> TrainedModel:
    """Train (or resume, or load the finished) model of ``config`` with :func:`ssa_book.training.train`.

    ``checkpoint``: ``True`` for the default path under :func:`checkpoint_root`, a path, or
    ``False``/``None`` for none. ``stop_at`` ends the run after that many steps as if it had been
    stopped there (:mod:`ssa_book.paper_check` uses it). ``device`` goes through
    :func:`ssa_book.profiles.resolve_device`.
    """
    device = resolve_device(device)
    path = checkpoint_path(config) if checkpoint is True else (Path(checkpoint) if checkpoint else None)

    identity = config_dict(config)
    state = training.load_checkpoint(path, identity)
    model = build_model(config).to(device)

    def loss(batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        xs, ys = (tensor.to(device) for tensor in batch)  # (batch_size, points)
        return config.task_rules.loss(model(xs, ys), ys)

    trained = training.train(
        training.Training(
            model=model,
            optimizer=torch.optim.Adam(_parameter_groups(model, config), lr=config.learning_rate),
            lr=None if config.schedule == "constant" else (lambda step: learning_rate(config, step)),
            clip=config.gradient_clip,
            batch=lambda step: [training_batch(config, step)],
            loss=loss,
            steps=config.train_steps,
            identity=identity,
            checkpoint=path,
            checkpoint_every=checkpoint_every,
            log_every=config.log_every,
            description=f"{config.task}/{config.model.scorer}/seed{config.seed}",
        ),
        state,
        stop_at=stop_at,
        progress=progress,
    )
    return TrainedModel(model, trained.history, trained.step, trained.wall_time_s, device)
