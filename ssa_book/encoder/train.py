"""Train one BabyBERTa on AO-CHILDES and probe it on Zorro, resumably.

    result = train_and_probe(EncoderConfig.for_profile("cpu"), "ssa", seed=0,
                             checkpoint_dir=Path("_build/checkpoints/encoder/x"))

Training runs on the book's one loop (:mod:`ssa_book.training`). Everything random is a function of
the seed and the step (the order of a pass over the corpus, each batch's masks), so a run killed
and restarted from its last checkpoint takes exactly the batches it would have taken; the
checkpoint also keeps the torch RNG state (dropout) and the curves. A checkpoint of another
configuration is not used: the run starts afresh, tokenizer included, with a warning.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import ssa.hf
from ssa_book import training
from ssa_book.encoder import zorro
from ssa_book.encoder.corpus import Corpus, load_corpus, split_held_out
from ssa_book.encoder.model import EncoderConfig, build_model, learning_rate_factor, mask_tokens, masked_lm_logits
from ssa_book.encoder.tokenizer import encode, load_tokenizer, pad, train_tokenizer

CHECKPOINT_FILE = "checkpoint.pt"
TOKENIZER_FILE = "tokenizer.json"
HELD_OUT_MASK_SEED = 12345  # the held-out masks are the same for every run and evaluation
_EVAL_BATCH = 64


class BatchStream:
    """Batch ``step`` of an endless sequence of passes over ``sequences``.

    Pass ``p`` visits the sequences in a permutation drawn from ``(seed, p)`` (or in corpus
    order for ``order="age"``); the last incomplete batch of a pass is skipped.
    """

    def __init__(self, sequences: list[list[int]], batch_size: int, seed: int, order: str):
        if len(sequences) < batch_size:
            raise ValueError(f"batch_size ({batch_size}) exceeds the number of training sequences ({len(sequences)})")
        self.sequences, self.batch_size, self.seed, self.order = sequences, batch_size, seed, order
        self.batches_per_pass = len(sequences) // batch_size
        self._pass_index, self._permutation = -1, None

    def _order_of_pass(self, pass_index: int) -> np.ndarray:
        if pass_index != self._pass_index:
            if self.order == "age":
                self._permutation = np.arange(len(self.sequences))
            else:
                self._permutation = np.random.default_rng([self.seed, pass_index]).permutation(len(self.sequences))
            self._pass_index = pass_index
        return self._permutation

    def batch(self, step: int) -> list[list[int]]:
        pass_index, offset = divmod(step, self.batches_per_pass)
        indices = self._order_of_pass(pass_index)[offset * self.batch_size : (offset + 1) * self.batch_size]
        return [self.sequences[index] for index in indices]


def step_generator(seed: int, step: int) -> torch.Generator:
    # Large odd multiplier: distinct (seed, step) pairs give distinct generator seeds.
    return torch.Generator().manual_seed(seed * 1_000_003 + step)


def layer_scalars(model: nn.Module) -> dict[str, list[float]]:
    """Scorer parameters per layer, ``{"b": [layer 0, layer 1, ...], "n": [...]}`` (empty for softmax)."""

    values: dict[str, list[float]] = {}
    for parameters in ssa.hf.scorer_values(model).values():
        for name, value in parameters.items():
            values.setdefault(name, []).append(value[0] if len(value) == 1 else value)
    return values


def masked_lm_loss(
    model: nn.Module,
    ids: torch.Tensor,
    attention_mask: torch.Tensor,
    generator: torch.Generator,
    *,
    config: EncoderConfig,
    device: str,
) -> torch.Tensor:
    inputs, selected = mask_tokens(ids, config, generator)
    logits = masked_lm_logits(model, inputs.to(device), attention_mask.to(device), selected.to(device))
    return F.cross_entropy(logits, ids[selected].to(device))


@torch.no_grad()
def held_out_loss(model: nn.Module, sequences: list[list[int]], config: EncoderConfig, device: str) -> float:
    model.eval()
    generator = torch.Generator().manual_seed(HELD_OUT_MASK_SEED)
    total, count = 0.0, 0
    for start in range(0, len(sequences), _EVAL_BATCH):
        ids, attention_mask = pad(sequences[start : start + _EVAL_BATCH])
        loss = masked_lm_loss(model, ids, attention_mask, generator, config=config, device=device)
        total, count = total + loss.item() * len(ids), count + len(ids)
    return total / count


def prepare_data(
    config: EncoderConfig, corpus: Corpus | None, tokenizer_path: Path | None, *, reuse_tokenizer: bool = True
):
    """Training and held-out token sequences, and the tokenizer: trained on the training
    utterances (and saved to ``tokenizer_path``), or loaded from ``tokenizer_path`` when a
    checkpointed run resumes (``reuse_tokenizer``; a fresh run fits it again)."""
    corpus = corpus if corpus is not None else load_corpus()
    utterances = list(corpus.utterances)
    if config.max_utterances is not None and config.max_utterances < len(utterances):
        # Evenly spaced, so that a subsample still spans every age.
        keep = np.linspace(0, len(utterances) - 1, config.max_utterances).round().astype(int)
        utterances = [utterances[index] for index in keep]
    train_utterances, held_out = split_held_out(utterances, config.held_out_every)
    if reuse_tokenizer and tokenizer_path is not None and tokenizer_path.is_file():
        tokenizer = load_tokenizer(tokenizer_path)
    else:
        tokenizer = train_tokenizer(train_utterances, config.vocab_size)
        if tokenizer_path is not None:
            tokenizer_path.parent.mkdir(parents=True, exist_ok=True)
            tokenizer.save(str(tokenizer_path))
    limit = config.max_tokens + 2  # + <s>, </s>
    train_sequences = [ids for ids in encode(tokenizer, train_utterances) if len(ids) <= limit]
    held_out_sequences = [ids for ids in encode(tokenizer, held_out) if len(ids) <= limit][: config.held_out_utterances]
    return tokenizer, train_sequences, held_out_sequences, len(train_utterances) - len(train_sequences)


def train_and_probe(
    config: EncoderConfig,
    scorer: str,
    seed: int,
    *,
    device: str = "cpu",
    checkpoint_dir: str | Path | None = None,
    corpus: Corpus | None = None,
    zorro_folder: str | Path | None = None,
    progress: bool = True,
    stop_at: int | None = None,
) -> dict:
    """Train BabyBERTa with ``scorer`` for ``config.steps`` steps (:func:`ssa_book.training.train`),
    then score it on Zorro.

    Returns JSON-able results: training curves, the learned scorer parameters, per-paradigm
    holistic and pseudo-log-likelihood accuracies, sizes and wall times. ``stop_at`` ends
    training after that many steps as if it had been stopped there (the schedule is still the
    one of ``config.steps``; a curve point and the checkpoint are written at the stop), then
    scores the model: the paper-profile check (:mod:`ssa_book.paper_check`) uses it. A checkpoint in
    ``checkpoint_dir`` of another configuration is not used (a fresh run, with a warning).
    """
    checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
    path = checkpoint_dir / CHECKPOINT_FILE if checkpoint_dir else None
    identity = {"model": dataclasses.asdict(config), "scorer": scorer, "seed": seed}
    state = training.load_checkpoint(path, identity)
    torch.manual_seed(seed)  # the initial weights; dropout's RNG state travels in the checkpoint
    tokenizer, train_sequences, held_out_sequences, too_long = prepare_data(
        config, corpus, checkpoint_dir / TOKENIZER_FILE if checkpoint_dir else None, reuse_tokenizer=state is not None
    )
    stream = BatchStream(train_sequences, config.batch_size, seed, config.order)
    model = build_model(config, scorer).to(device)
    curve = {"step": [], "train_loss": [], "held_out_loss": [], "zorro_accuracy": [], "scorer_values": []}

    def batch(step: int) -> list:
        ids, attention_mask = pad(stream.batch(step))  # (batch_size, longest utterance)
        return [(ids, attention_mask, step_generator(seed, step))]  # the masks of step `step`

    def evaluate(step: int, losses: list[float]) -> None:
        since = losses[curve["step"][-1] if curve["step"] else 0 : step]  # the steps since the last curve point
        curve["step"].append(step)
        curve["train_loss"].append(sum(since) / len(since) if since else math.nan)
        curve["held_out_loss"].append(held_out_loss(model, held_out_sequences, config, device))
        accuracies = zorro.evaluate(model, tokenizer, max_pairs=config.curve_pairs, folder=zorro_folder, device=device)
        curve["zorro_accuracy"].append(zorro.mean_accuracy(accuracies))
        curve["scorer_values"].append(layer_scalars(model))

    trained = training.train(
        training.Training(
            model=model,
            optimizer=torch.optim.AdamW(
                model.parameters(), lr=config.learning_rate, weight_decay=0.0, fused=device != "mps"
            ),
            batch=batch,
            loss=lambda micro: masked_lm_loss(model, *micro, config=config, device=device),
            steps=config.steps,
            identity=identity,
            checkpoint=path,
            checkpoint_every=config.checkpoint_every,
            lr=lambda step: config.learning_rate * learning_rate_factor(step, config),
            clip=config.gradient_clip,
            evaluate=evaluate,
            evaluate_every=config.eval_every,
            log_every=config.eval_every,
            extra=curve,
            description=f"{scorer} seed {seed}",
        ),
        state,
        stop_at=stop_at,
        progress=progress,
    )
    timings = {
        "train_seconds": trained.wall_time_s - trained.evaluate_seconds,
        "eval_seconds": trained.evaluate_seconds,
    }

    started = time.perf_counter()
    holistic = zorro.evaluate(
        model, tokenizer, method="holistic", max_pairs=config.probe_pairs, folder=zorro_folder, device=device
    )
    pll = zorro.evaluate(model, tokenizer, method="pll", max_pairs=config.pll_pairs, folder=zorro_folder, device=device)
    timings["probe_seconds"] = time.perf_counter() - started
    # The first curve point has no training loss yet; JSON has no NaN, so it is stored as None.
    curve["train_loss"] = [
        None if isinstance(value, float) and math.isnan(value) else value for value in curve["train_loss"]
    ]
    return {
        "scorer": scorer,
        "seed": seed,
        "config": dataclasses.asdict(config),
        "num_parameters": sum(parameter.numel() for parameter in model.parameters()),
        "train_sequences": len(train_sequences),
        "held_out_sequences": len(held_out_sequences),
        "too_long_utterances_dropped": too_long,
        "passes_over_corpus": config.steps / stream.batches_per_pass,
        "curve": curve,
        "scorer_values": layer_scalars(model),
        "holistic": holistic,
        "pll": pll,
        "timings": timings,
    }
