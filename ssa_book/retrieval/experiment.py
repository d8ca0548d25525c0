"""Max retrieval under set-size shift: train on small sets, test on sets up to 128 times larger.

One run is one scorer and one seed (:class:`RetrievalExperiment`): the retriever of
:mod:`ssa_book.retrieval.model` trained at a constant rate (Adam, or AdamW with weight decay) on sets
of ``train.items`` items (or of a number drawn from ``train.min_items`` to ``train.items`` at each
step), then evaluated on the same test sets for every scorer and seed, at each set
size of ``eval.sizes``: the share of sets whose class it names right (accuracy), the share of its
head's absolute weight on the item of highest priority, and the normalised entropy of those shares
(1: uniform over the set, 0: one item). Shares, not raw weights, because not every scorer's weights
form a distribution: ``sa_softmax``'s raw weight on the top item reached 34 in the first runs; for
the scorers whose weights do, the share is the weight. The model is evaluated in eval mode (adaptive temperature acts then).
Runs are cached under ``retrieval/runs/<scorer>``; ``python -m ssa_book regenerate max_retrieval``
computes them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
import time
from typing import Any, Sequence

import torch
from torch import nn

from ssa_book import training
from ssa_book.chapters import Chapter, Run, RunKind, Setting, listed
from ssa_book.results.keys import added_field
from ssa.scoring import AUTHORS_ICL_START, SSA, scorer_names
from ssa_book.training import stream_seed
from ssa_book.profiles import check_profile, resolve_device
from ssa_book.retrieval.model import MaxRetriever, RetrieverConfig
from ssa_book.retrieval.records import RetrievalRun
from ssa_book.retrieval.task import EVAL_STREAM, TRAIN_STREAM, generator, sample_sets, top_item
from ssa_book.results.keys import config_dict
from ssa_book.results.cache import cached_entry

EXPERIMENT = "retrieval/runs"
# The two setups of the chapter. "short": its first, and the one the leaderboard reads: sets of
# exactly 16 items, one learned query, Adam at a constant 1e-3 for 2,000 steps. "original": as
# Veličković et al. describe theirs: training sets of 5 to 16 items, a query computed from the set,
# AdamW with weight decay, trained until softmax names about as many sets right in distribution as
# theirs does, tested to 16,384 items.
SHORT, ORIGINAL = "short", "original"
SETUPS = (SHORT, ORIGINAL)
SETUP_FOLDERS = {SHORT: EXPERIMENT, ORIGINAL: "retrieval/original"}
EVAL_CHUNK = 32  # test sets per forward pass: memory only, every set is scored on its own


OPTIMIZERS = ("adam", "adamw")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    items: int = 16  # items per training set (the largest, when min_items is set)
    batch_size: int = 128  # sets per step
    steps: int = 2000
    learning_rate: float = 1e-3  # constant
    seed: int = 0  # the model's initialisation and its training sets
    # With min_items > 0, each step's sets have a number of items drawn uniformly from
    # [min_items, items] (one number per step, so a batch needs no padding); 0: always `items`.
    min_items: int = added_field(0)
    optimizer: str = added_field("adam")  # one of OPTIMIZERS
    weight_decay: float = added_field(0.0)  # AdamW's decoupled weight decay (adamw only)

    def __post_init__(self) -> None:
        for name, least in (("items", 1), ("batch_size", 1), ("steps", 1), ("seed", 0), ("min_items", 0)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an int >= {least}; got {value!r}")
        if not (isinstance(self.learning_rate, float) and math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be a finite float > 0; got {self.learning_rate!r}")
        if self.min_items > self.items:
            raise ValueError(f"min_items must be at most items ({self.items}); got {self.min_items}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}; got {self.optimizer!r}")
        if not (isinstance(self.weight_decay, float) and math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"weight_decay must be a finite float >= 0; got {self.weight_decay!r}")
        if self.weight_decay and self.optimizer != "adamw":
            raise ValueError(
                f"weight_decay needs optimizer='adamw' (Adam would fold it into the gradient); got {self.optimizer!r}"
            )

    def items_at(self, rng: torch.Generator) -> int:
        """The number of items of a step's sets, drawn from the step's generator when it varies."""
        if not self.min_items:
            return self.items
        return self.min_items + int(torch.randint(self.items - self.min_items + 1, (1,), generator=rng))

    def optimizer_for(self, model: nn.Module) -> torch.optim.Optimizer:
        if self.optimizer == "adamw":
            return torch.optim.AdamW(model.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay)
        return torch.optim.Adam(model.parameters(), lr=self.learning_rate)


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    sizes: tuple[int, ...] = (16, 32, 64, 128, 256, 512, 1024, 2048)  # items per test set
    sets: int = 256  # test sets per size, the same for every scorer and seed
    seed: int = 0  # of the test sets

    def __post_init__(self) -> None:
        if (
            not self.sizes
            or any(not isinstance(size, int) or size < 1 for size in self.sizes)
            or list(self.sizes) != sorted(set(self.sizes))
        ):
            raise ValueError(f"sizes must be increasing ints >= 1; got {self.sizes!r}")
        if not isinstance(self.sets, int) or self.sets < 1:
            raise ValueError(f"sets must be an int >= 1; got {self.sets!r}")


@dataclasses.dataclass(frozen=True)
class RetrievalExperiment:
    model: RetrieverConfig
    train: TrainConfig
    eval: EvalConfig
    variant: str = added_field("")  # a name of VARIANTS, whose runs are cached in a folder of their own
    setup: str = added_field(SHORT)  # one of SETUPS; each caches its runs in a folder of its own

    def __post_init__(self) -> None:
        if self.train.items > self.eval.sizes[-1]:
            raise ValueError("eval.sizes must reach beyond the training sets' items")
        if self.setup not in SETUPS:
            raise ValueError(f"setup must be one of {', '.join(SETUPS)}; got {self.setup!r}")

    @property
    def name(self) -> str:
        return f"{SETUP_FOLDERS[self.setup]}/{self.variant or self.model.scorer}"


# SSA's start here is the registry's (b = 1, n = 1.5, both trained), whose slope at zero is n b:
# the in-context chapters start it at the authors' b = e, n = e^0.4 instead (slope 4.06).
SSA_START = {
    name: parameter.default for name, parameter in inspect.signature(SSA).parameters.items() if name in ("b", "n")
}
SSA_SLOPE_AT_ZERO = SSA_START["n"] * SSA_START["b"]


@dataclasses.dataclass(frozen=True)
class Variant:
    """A scorer with settings of its own, run like a registered scorer: one run per seed."""

    scorer: str
    scorer_kwargs: tuple[tuple[str, Any], ...]
    label: str  # for legends and tables


# The runs that separate SSA's form from its starting point (the chapter's last section).
VARIANTS: dict[str, Variant] = {
    "softmax_ssa_slope": Variant(
        "temperature_softmax",
        (("learn_temperature", False), ("temperature", 1.0 / SSA_SLOPE_AT_ZERO)),
        f"softmax x {SSA_SLOPE_AT_ZERO:g} (SSA's slope)",
    ),  # fixed: SSA's slope at zero at its start here
    "ssa_authors_start": Variant("ssa", tuple(sorted(AUTHORS_ICL_START.items())), "SSA from the authors' start"),
}


# The original's training: sets of 5 to 16 items (one size per step), AdamW with weight decay.
_ORIGINAL_TRAIN = TrainConfig(min_items=5, optimizer="adamw", weight_decay=0.01)
ORIGINAL_STEPS = 30_000
ORIGINAL_LEARNING_RATE = 3e-4
ORIGINAL_TEST_SETS = 512
# Every power of two from the training size to 1,024 times it: the sizes of the original's table.
ORIGINAL_SIZES = tuple(2**power for power in range(4, 15))

# setup -> profile -> (model, training, test sets). smoke exercises the code in seconds; cpu is the
# book's; paper the original's scale.
PROFILE_SIZES = {
    SHORT: {
        "smoke": (
            RetrieverConfig(width=16, depth=1),
            TrainConfig(steps=40, batch_size=32),
            EvalConfig(sizes=(16, 64, 256), sets=32),
        ),
        "cpu": (RetrieverConfig(), TrainConfig(), EvalConfig()),
        "paper": (RetrieverConfig(), TrainConfig(steps=10_000), EvalConfig(sets=1024)),
    },
    ORIGINAL: {
        "smoke": (
            RetrieverConfig(width=16, depth=1, query="input"),
            dataclasses.replace(_ORIGINAL_TRAIN, steps=40, batch_size=32),
            EvalConfig(sizes=(16, 64, 256), sets=32),
        ),
        "cpu": (
            RetrieverConfig(query="input"),
            dataclasses.replace(_ORIGINAL_TRAIN, steps=ORIGINAL_STEPS, learning_rate=ORIGINAL_LEARNING_RATE),
            EvalConfig(sizes=ORIGINAL_SIZES, sets=ORIGINAL_TEST_SETS),
        ),
        "paper": (
            RetrieverConfig(query="input"),
            dataclasses.replace(_ORIGINAL_TRAIN, steps=ORIGINAL_STEPS, learning_rate=ORIGINAL_LEARNING_RATE),
            EvalConfig(sizes=ORIGINAL_SIZES, sets=1024),
        ),
    },
}
SEEDS = {"smoke": (0, 1), "cpu": tuple(range(10)), "paper": tuple(range(10))}
# The scorers run in the original's setup: every registered scorer (the leaderboard's column of
# that setup reads them); the chapter's section on the setup compares softmax and adaptive
# temperature, whose published numbers it reproduces, with SSA.
ORIGINAL_SCORERS = tuple(dict.fromkeys(("softmax", "adaptive_temperature", "ssa", *scorer_names())))
REPLICATION_SCORERS = ORIGINAL_SCORERS[:3]
# The original setup's runs in the order they are computed: its comparison's scorers, then the
# variants that separate SSA's form from its start (its one adverse verdict there could come from
# either), then the other scorers.
ORIGINAL_RUNS = tuple(dict.fromkeys((*REPLICATION_SCORERS, *VARIANTS, *ORIGINAL_SCORERS)))


def experiment_config(scorer: str, profile: str = "cpu", seed: int = 0, setup: str = SHORT) -> RetrievalExperiment:
    """The run of ``scorer`` (a registered scorer with its defaults, or a name of :data:`VARIANTS`)
    with ``seed`` at ``profile`` in ``setup`` (one of :data:`SETUPS`)."""
    if setup not in SETUPS:
        raise ValueError(f"setup must be one of {', '.join(SETUPS)}; got {setup!r}")
    model, train, evaluation = PROFILE_SIZES[setup][check_profile(profile)]
    train = dataclasses.replace(train, seed=seed)
    if scorer in VARIANTS:
        variant = VARIANTS[scorer]
        model = dataclasses.replace(model, scorer=variant.scorer, scorer_kwargs=variant.scorer_kwargs)
        return RetrievalExperiment(model, train, evaluation, variant=scorer, setup=setup)
    return RetrievalExperiment(dataclasses.replace(model, scorer=scorer), train, evaluation, setup=setup)


def build_model(experiment: RetrievalExperiment) -> MaxRetriever:
    """The untrained retriever, initialised from its seed without touching the global RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(stream_seed(experiment.train.seed, "init"))
        return MaxRetriever(experiment.model)


def evaluate(model: MaxRetriever, experiment: RetrievalExperiment, device: str = "cpu") -> dict:
    """Per test size: accuracy, the mean share of the head's absolute weight on the top item, and
    the mean normalised entropy of those shares."""
    model.eval()
    result = {"sizes": list(experiment.eval.sizes), "accuracy": [], "top_share": [], "entropy": []}
    with torch.no_grad():
        for size in experiment.eval.sizes:
            correct, top_share, entropy = 0.0, 0.0, 0.0
            for start in range(0, experiment.eval.sets, EVAL_CHUNK):
                count = min(EVAL_CHUNK, experiment.eval.sets - start)
                rng = generator(
                    experiment.eval.seed, EVAL_STREAM, size * 2**20 + start
                )  # a size's sets are the same in every profile
                features, target = sample_sets(count, size, experiment.model.classes, rng)
                logits, weights = model(features.to(device), return_weights=True)  # (B, C), (B, N)
                weights = weights.double().cpu()
                correct += float((logits.argmax(-1).cpu() == target).sum())
                share = weights.abs() / weights.abs().sum(-1, keepdim=True).clamp_min(torch.finfo(torch.float64).tiny)
                top_share += float(share.gather(1, top_item(features)[:, None]).sum())
                row_entropy = -(share * torch.log(share.clamp_min(torch.finfo(torch.float64).tiny))).sum(-1)
                entropy += float((row_entropy / math.log(size) if size > 1 else torch.zeros_like(row_entropy)).sum())
            for key, total in (("accuracy", correct), ("top_share", top_share), ("entropy", entropy)):
                result[key].append(round(total / experiment.eval.sets, 6))
    return result


def _flushing_denormals() -> bool:
    """Whether this thread flushes subnormal floats to zero (torch has a setter, not a getter)."""
    return float(torch.tensor(1e-39) * 1.0) == 0.0


@contextlib.contextmanager
def flush_denormals():
    """Flush subnormal floats to zero on the CPU inside the block, then restore the caller's setting.

    A head that learns to find the top item puts weights of about exp(-100) on the others, and
    their gradients and Adam's squared gradients fall below float32's smallest normal number
    (1.2e-38); x86 CPUs compute on such subnormals tens of times slower. On this task a softmax
    run took 190 s against 22 s for a scorer whose head stays soft, for the same 2000 steps.
    Flushing changes only numbers below 1.2e-38 (to 0); GPUs are unaffected."""
    before = _flushing_denormals()
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(before)


def run(experiment: RetrievalExperiment, *, device: str = "auto", progress: bool = True) -> dict:
    """Train the run's retriever (no checkpoints: a run is seconds to minutes) and evaluate it,
    with subnormal floats flushed to zero (:func:`flush_denormals`)."""
    with flush_denormals():
        return _train_and_evaluate(experiment, resolve_device(device), progress)


def _train_and_evaluate(experiment: RetrievalExperiment, device: str, progress: bool) -> dict:
    model = build_model(experiment).to(device)
    config = experiment.train
    loss_function = nn.CrossEntropyLoss()

    def batch(step: int):
        rng = generator(config.seed, TRAIN_STREAM, step)
        return [sample_sets(config.batch_size, config.items_at(rng), experiment.model.classes, rng)]

    def loss(micro_batch) -> torch.Tensor:
        features, target = (tensor.to(device) for tensor in micro_batch)
        return loss_function(model(features), target)

    trained = training.train(
        training.Training(
            model=model,
            optimizer=config.optimizer_for(model),
            batch=batch,
            loss=loss,
            steps=config.steps,
            identity=config_dict(experiment),
            log_every=max(1, config.steps // 50),
            description=f"retrieval/{experiment.model.scorer}/seed{config.seed}",
        ),
        None,
        progress=progress,
    )
    started = time.perf_counter()
    result = evaluate(model, experiment, device)
    result["training"] = {
        "history": [[step, round(value, 6)] for step, value in trained.history],
        "wall_time_s": round(trained.wall_time_s, 3),
        "evaluate_seconds": round(time.perf_counter() - started, 3),
    }
    return result


def training_step(experiment: RetrievalExperiment, device: str):
    """One training step of the run's retriever (forward, backward, optimizer) on a batch of its
    largest training sets, as :func:`run` trains it: for cost measurements, which call it again
    and again."""
    model = build_model(experiment).to(device)
    config = experiment.train
    optimizer = config.optimizer_for(model)
    features, target = (
        tensor.to(device)
        for tensor in sample_sets(
            config.batch_size, config.items, experiment.model.classes, generator(config.seed, TRAIN_STREAM, 0)
        )
    )
    loss_function = nn.CrossEntropyLoss()

    def step() -> None:
        loss = loss_function(model(features), target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def setup_of(arguments: tuple) -> str:
    """The setup of a "retrieval" run from its arguments ``(scorer, seed[, setup])``."""
    return arguments[2] if len(arguments) > 2 else SHORT


# The rows of the chapter's table of sizes (ssa_book.sizes).
SETTINGS = (
    Setting("classes", "classes an item can have (chance: one over this)", "model.classes"),
    Setting("width", "width of the items and of the head", "model.width"),
    Setting("depth", "hidden layers of the item encoder and of the readout, each", "model.depth"),
    Setting("query", "learned: one vector for every set; input: computed from the set's items", "model.query"),
    Setting("training set size", "items per training set (the largest, when the smallest is set)", "train.items"),
    Setting(
        "smallest training set",
        "fewest items per training set, drawn per step (0: every set has the largest)",
        "train.min_items",
    ),
    Setting("batch", "sets per step", "train.batch_size"),
    Setting("steps", "training steps", "train.steps"),
    Setting("optimizer", "Adam, or AdamW with decoupled weight decay", "train.optimizer"),
    Setting("weight decay", "AdamW's, per step", "train.weight_decay"),
    Setting("learning rate", "constant", "train.learning_rate"),
    Setting("test sizes", "items per test set", "eval.sizes", listed),
    Setting("test sets", "test sets per size, the same for every scorer and seed", "eval.sets"),
)


@dataclasses.dataclass(frozen=True)
class RetrievalChapter(Chapter):
    """Max retrieval under set-size shift: every registered scorer, seed by seed (so an
    interrupted sweep leaves whole seeds, every scorer paired with softmax)."""

    def published_seeds(self, profile: str) -> tuple[int, ...]:
        return SEEDS[check_profile(profile)]

    def published_scorers(self) -> tuple[str, ...]:
        """Every registered scorer, then the variants that separate SSA's form from its start."""
        return tuple(dict.fromkeys(("softmax", "ssa", *scorer_names(), *VARIANTS)))

    def check_scorers(self, scorers: Sequence[str]) -> tuple[str, ...]:
        unknown = [name for name in scorers if name not in self.published_scorers()]
        if unknown:
            raise ValueError(
                f"--scorers: unknown scorer {', '.join(map(repr, unknown))}; choose from {', '.join(self.published_scorers())}"
            )
        return tuple(dict.fromkeys(scorers))

    def runs(self, profile: str, seeds: Sequence[int], scorers: Sequence[str]) -> list[Run]:
        """The short setup's runs: the registered scorers' seed by seed, then the variants' (whole
        seeds of the scorers first); then the original setup's, of the scorers and variants of
        :data:`ORIGINAL_RUNS` among ``scorers``, scorer by scorer in that order (each run takes
        minutes, so an interrupted sweep leaves whole scorers, each comparable with softmax's,
        which comes first)."""
        ordered = [(seed, scorer) for seed in seeds for scorer in scorers if scorer not in VARIANTS]
        ordered += [(seed, scorer) for seed in seeds for scorer in scorers if scorer in VARIANTS]
        found = [
            Run("retrieval", (scorer, seed), f"{scorer} / seed {seed}", chapters=(self.name,))
            for seed, scorer in ordered
        ]
        return found + [
            Run(
                "retrieval",
                (scorer, seed, ORIGINAL),
                f"{scorer} / seed {seed} / {ORIGINAL} setup",
                chapters=(self.name,),
            )
            for scorer in ORIGINAL_RUNS
            if scorer in scorers
            for seed in seeds
        ]

    def part(self, run: Run) -> str:
        return f"{setup_of(run.arguments)} setup"

    def configs(self, profile: str) -> dict:
        return {setup: experiment_config("softmax", profile, setup=setup) for setup in SETUPS}

    def settings(self) -> tuple[Setting, ...]:
        return SETTINGS


CHAPTER = RetrievalChapter("max_retrieval", "max retrieval under set-size shift, every registered scorer", jobs=2)


def regenerate_command(profile: str, scorer: str | None = None, seed: int | None = None) -> str:
    return CHAPTER.command(
        profile, scorers=None if scorer is None else [scorer], seeds=None if seed is None else [seed]
    )


def load_run(
    scorer: str, seed: int, *, profile: str, device: str = "auto", progress: bool = False, setup: str = SHORT
) -> RetrievalRun:
    """The run of ``scorer`` with ``seed`` in ``setup`` through the result cache, as a typed record."""

    experiment = experiment_config(scorer, profile, seed, setup)
    resolved = resolve_device(device)
    entry = cached_entry(
        experiment.name,
        experiment,
        lambda: run(experiment, device=resolved, progress=progress),
        profile=profile,
        regenerate=regenerate_command(profile, scorer, seed),
        device=resolved,
    )
    return RetrievalRun.from_result(entry.result, scorer=scorer, seed=seed, provenance=entry.provenance)


def compute_retrieval_run(profile: str, device: str, progress: bool, scorer: str, seed: int, setup: str = SHORT) -> str:
    """Run kind "retrieval": one max-retrieval run through the cache."""
    found = load_run(scorer, seed, profile=profile, device=device, progress=progress, setup=setup)
    return (
        f"accuracy {found.accuracy[0]:.3f} at {found.sizes[0]} items, {found.accuracy[-1]:.3f} at {found.sizes[-1]}; "
        f"share of the weight on the top item {found.top_share[0]:.2f} -> {found.top_share[-1]:.2f}"
    )


KINDS = {"retrieval": RunKind(compute_retrieval_run)}
