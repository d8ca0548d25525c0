"""What a decoder language-model run is: the model's shape, the data, the optimisation.

Three profiles share every line of code and differ only in these numbers:

* ``paper``: the authors' 114M Nemotron-style decoder on FineWeb-Edu (sample-10BT), global batch
  768 sequences of 1024 tokens, 22k steps (about 17B tokens). Needs GPUs.
* ``cpu``: a few-million-parameter model of the same family trained on the local web text of the
  data directory, small enough to train in minutes on two CPU cores.
* ``smoke``: a toy that checks the whole pipeline runs in seconds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ssa_book.profiles import check_profile
from ssa.scoring import scorer_names


@dataclass(frozen=True)
class ModelConfig:
    """The decoder's shape. Defaults: the paper's 114M model (transformers' Nemotron)."""

    vocab_size: int = 50_000  # byte-level BPE trained on the training split ("a 50k tokenizer")
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 24
    num_kv_heads: int = 8  # grouped-query attention: 3 query heads share each key/value head
    ffn_size: int = 3072  # squared-ReLU MLP (Nemotron has no gate)
    seq_len: int = 1024  # training context; also the model's number of positions

    def __post_init__(self) -> None:
        for name in ("vocab_size", "hidden_size", "num_layers", "num_heads", "num_kv_heads", "ffn_size", "seq_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer; got {getattr(self, name)}")
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be a multiple of num_heads ({self.num_heads})")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_heads ({self.num_heads}) must be a multiple of num_kv_heads ({self.num_kv_heads})")


@dataclass(frozen=True)
class DataConfig:
    """Training text, held-out text and how much of it each evaluation reads. A source is a name
    (webtext, fineweb-edu; wikitext-2, wikipedia) or the path of a .jsonl ({"text": ...} per line)
    or .txt (documents separated by blank lines) file."""

    train_source: str = "fineweb-edu"  # in-distribution text: training split and held-out split
    ood_source: str = "wikipedia"  # out-of-distribution evaluation text
    held_out_per_mille: int = 5  # documents (by a hash of their text) kept out of training, per 1000
    max_train_documents: int | None = None  # None: the whole source (streamed for fineweb-edu)
    tokenizer_documents: int = 200_000  # training documents the BPE tokenizer is fitted on
    eval_windows: int = 1000  # perplexity on this many windows of seq_len tokens (paper: 1000 x 1024)
    blimp_pairs_per_paradigm: int = 1000  # BLiMP has 1000 per paradigm; fewer = the first ones

    def __post_init__(self) -> None:
        if not 0 < self.held_out_per_mille < 1000:
            raise ValueError(f"held_out_per_mille must be in 1..999; got {self.held_out_per_mille}")
        for name in ("tokenizer_documents", "eval_windows", "blimp_pairs_per_paradigm"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer; got {getattr(self, name)}")


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation. Defaults: the authors' run (lr, decay and betas are **unknown**: nanoGPT's)."""

    scorer: str = "softmax"  # any name of ssa.scoring.scorer_names()
    scorer_kwargs: dict[str, Any] = field(default_factory=dict)  # e.g. SSA's b, n, learn_b
    per_head: bool = False  # one scorer parameter set per layer (the authors' code), or per head
    global_batch: int = 768  # sequences per optimizer step, over all processes and accumulation
    # Sequences per forward pass on one device: a memory knob only (the global batch is fixed).
    # 4 x 1024 tokens keeps SSA's explicit attention weights (no fused kernel) well inside 80 GB.
    micro_batch: int = 4
    steps: int = 22_000
    warmup_steps: int = 500
    lr: float = 6e-4
    min_lr_ratio: float = 0.1  # cosine decay ends at lr * min_lr_ratio
    weight_decay: float = 0.1  # on matrices only; not on norms, biases or scorer scalars
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    seed: int = 1234
    eval_every: int = 1000  # steps between held-out losses in the training curve
    eval_windows_during_training: int = 50
    checkpoint_every: int = 1000

    def __post_init__(self) -> None:

        if self.scorer not in scorer_names():
            raise ValueError(f"scorer must be one of {', '.join(scorer_names())}; got {self.scorer!r}")
        for name in (
            "global_batch",
            "micro_batch",
            "steps",
            "eval_every",
            "checkpoint_every",
            "eval_windows_during_training",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer; got {getattr(self, name)}")
        if self.global_batch % self.micro_batch:
            raise ValueError(
                f"global_batch ({self.global_batch}) must be a multiple of micro_batch ({self.micro_batch})"
            )
        if not 0 <= self.warmup_steps < self.steps:
            raise ValueError(f"warmup_steps must be in 0..steps-1 ({self.steps - 1}); got {self.warmup_steps}")


@dataclass(frozen=True)
class RunConfig:
    """One training run: everything that determines its numbers (not the device)."""

    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "RunConfig":
        return cls(ModelConfig(**values["model"]), DataConfig(**values["data"]), TrainConfig(**values["train"]))

    def replace(self, **sections: dict) -> "RunConfig":
        """A copy with some fields changed: ``run.replace(train={"steps": 10})``."""
        unknown = set(sections) - {"model", "data", "train"}
        if unknown:
            raise ValueError(f"sections must be among model, data, train; got {sorted(unknown)}")
        return dataclasses.replace(
            self, **{name: dataclasses.replace(getattr(self, name), **changes) for name, changes in sections.items()}
        )


# The SSA settings of each profile. The authors' 114M run kept b fixed at 0.8 and started n at
# 1.5; at cpu we let b learn too, so that the chapter can show where both go.
SSA_PAPER = {"b": 0.8, "n": 1.5, "learn_b": False, "learn_n": True}
SSA_LEARNED = {"b": 0.8, "n": 1.5, "learn_b": True, "learn_n": True}

_PROFILES = {
    "paper": RunConfig(),
    "cpu": RunConfig(
        # 2.4M parameters; 400 steps x 32 x 128 = 1.6M tokens, about two thirds of an epoch.
        ModelConfig(
            vocab_size=4096, hidden_size=192, num_layers=4, num_heads=6, num_kv_heads=2, ffn_size=768, seq_len=128
        ),
        DataConfig(
            train_source="webtext",
            ood_source="wikitext-2",
            held_out_per_mille=50,
            tokenizer_documents=100_000,
            eval_windows=400,
            blimp_pairs_per_paradigm=100,
        ),
        TrainConfig(
            global_batch=32,
            micro_batch=32,
            steps=400,
            warmup_steps=20,
            lr=2e-3,
            seed=0,
            eval_every=50,
            eval_windows_during_training=64,
            checkpoint_every=50,
        ),
    ),
    "smoke": RunConfig(
        ModelConfig(
            vocab_size=384, hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2, ffn_size=64, seq_len=128
        ),
        DataConfig(
            train_source="webtext",
            ood_source="wikitext-2",
            held_out_per_mille=100,
            max_train_documents=150,
            tokenizer_documents=150,
            eval_windows=8,
            blimp_pairs_per_paradigm=4,
        ),
        TrainConfig(
            global_batch=4,
            micro_batch=2,
            steps=6,
            warmup_steps=2,
            lr=3e-3,
            seed=0,
            eval_every=3,
            eval_windows_during_training=4,
            checkpoint_every=3,
        ),
    ),
}


def scorer_settings(profile: str, scorer: str) -> dict[str, Any]:
    """The scorer keyword arguments a profile uses for ``scorer``."""
    if scorer == "ssa":
        return dict(SSA_PAPER if check_profile(profile) == "paper" else SSA_LEARNED)
    return {}


def run_config(profile: str, scorer: str = "softmax", seed: int | None = None) -> RunConfig:
    """The run a profile prescribes for ``scorer`` (and ``seed``, default the profile's)."""
    base = _PROFILES[check_profile(profile)]
    changes: dict[str, Any] = {"scorer": scorer, "scorer_kwargs": scorer_settings(profile, scorer)}
    if seed is not None:
        changes["seed"] = seed
    return base.replace(train=changes)
