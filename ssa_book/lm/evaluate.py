"""Evaluation of a trained decoder: perplexity on fixed-length windows and BLiMP minimal pairs.

* Perplexity (the paper's protocol): ``exp`` of the mean next-token cross-entropy over
  ``eval_windows`` consecutive, non-overlapping windows of ``seq_len`` tokens cut from the
  held-out in-distribution documents and from the out-of-distribution text. Beside it, the
  perplexity of a unigram model of the training tokens: the floor of "learned nothing".
* BLiMP: each sentence is scored by its log-probability (sum over its tokens, after the
  end-of-text token as context); a pair is right when the good sentence scores higher.
  Accuracy per paradigm and per phenomenon (BLiMP's ``linguistics_term``).
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict
from pathlib import Path

import torch

from ssa_book.lm import data
from ssa_book.lm.config import RunConfig
from ssa_book.lm.train import mean_loss
from ssa_book import data as datasets
from ssa_book.lm.model import load_checkpoint


def sentence_log_probabilities(
    model, tokenizer, sentences: list[str], *, batch_size: int = 64, device="cpu"
) -> list[float]:
    """``log p(sentence)`` under the model, each sentence preceded by the end-of-text token."""
    limit = model.config.max_position_embeddings
    scores: list[float] = []
    model.eval()
    for start in range(0, len(sentences), batch_size):
        encoded = [
            [tokenizer.eos_token_id] + ids
            for ids in tokenizer(sentences[start : start + batch_size], add_special_tokens=False)["input_ids"]
        ]
        longest = max(len(ids) for ids in encoded)
        if longest > limit:
            raise ValueError(f"seq_len: a sentence of {longest} tokens exceeds the model's {limit} positions")
        ids = torch.full((len(encoded), longest), tokenizer.eos_token_id, dtype=torch.long)
        attention = torch.zeros_like(ids)
        for row, sequence in enumerate(encoded):  # right padding: real tokens keep their positions
            ids[row, : len(sequence)] = torch.tensor(sequence)
            attention[row, : len(sequence)] = 1
        ids, attention = ids.to(device), attention.to(device)
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=attention).logits.float()
        token_log_probs = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        scores.extend((token_log_probs * attention[:, 1:]).sum(dim=1).tolist())
    return scores


def load_blimp(pairs_per_paradigm: int) -> list[dict]:
    """The first ``pairs_per_paradigm`` pairs of each of BLiMP's 67 paradigms."""

    rows = []
    for path in sorted(datasets.path("blimp").glob("*.jsonl")):
        with open(path, encoding="utf-8") as stream:
            for line in itertools.islice(stream, pairs_per_paradigm):
                row = json.loads(line)
                rows.append(
                    {key: row[key] for key in ("sentence_good", "sentence_bad", "UID", "linguistics_term", "field")}
                )
    return rows


def _accuracy_by(rows: list[dict], correct: list[bool], key: str) -> dict[str, float]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for row, right in zip(rows, correct):
        groups[row[key]].append(right)
    return {name: sum(values) / len(values) for name, values in sorted(groups.items())}


def blimp_accuracy(model, tokenizer, rows: list[dict], *, batch_size: int = 64, device="cpu") -> dict:
    """Accuracy over all pairs, per phenomenon and per paradigm."""
    if not rows:
        raise ValueError("rows: no BLiMP pairs to score")
    good = sentence_log_probabilities(
        model, tokenizer, [row["sentence_good"] for row in rows], batch_size=batch_size, device=device
    )
    bad = sentence_log_probabilities(
        model, tokenizer, [row["sentence_bad"] for row in rows], batch_size=batch_size, device=device
    )
    correct = [g > b for g, b in zip(good, bad)]
    return {
        "accuracy": sum(correct) / len(correct),
        "pairs": len(correct),
        "by_phenomenon": _accuracy_by(rows, correct, "linguistics_term"),
        "by_paradigm": _accuracy_by(rows, correct, "UID"),
    }


def evaluation_windows(run: RunConfig, tokenizer) -> dict[str, torch.Tensor]:
    """``{"id": ..., "ood": ...}``: up to ``eval_windows`` windows of ``seq_len`` tokens each."""
    per_mille, count, seq_len = run.data.held_out_per_mille, run.data.eval_windows, run.model.seq_len
    held_out = data.split_documents(run.data.train_source, "held_out", per_mille, run.data.max_train_documents)
    ood = data.split_documents(run.data.ood_source, "all", per_mille)
    return {
        "id": data.packed_tensor(held_out, tokenizer, seq_len, count, what="held-out in-distribution"),
        "ood": data.packed_tensor(ood, tokenizer, seq_len, count, what="out-of-distribution"),
    }


def unigram_counts(run: RunConfig, tokenizer) -> torch.Tensor:
    """Token counts of (up to ``tokenizer_documents``) training documents."""
    texts = data.split_documents(
        run.data.train_source, "train", run.data.held_out_per_mille, run.data.max_train_documents
    )
    stream = data.token_stream(itertools.islice(texts, run.data.tokenizer_documents), tokenizer)
    counts = torch.zeros(len(tokenizer), dtype=torch.long)
    while chunk := list(itertools.islice(stream, 1 << 20)):  # bounded memory on a large corpus
        counts += torch.bincount(torch.tensor(chunk), minlength=len(tokenizer))
    return counts


def evaluate(model, tokenizer, run: RunConfig, *, device="cpu", batch_size: int | None = None) -> dict:
    """Perplexities (model and unigram baseline, in and out of distribution) and BLiMP.

    ``batch_size`` is for the perplexity windows (default: the training micro-batch, which fits
    in memory); BLiMP's short sentences go 64 at a time."""
    batch_size = batch_size or run.train.micro_batch
    windows = evaluation_windows(run, tokenizer)
    counts = unigram_counts(run, tokenizer)
    result: dict = {"windows": {name: list(tensor.shape) for name, tensor in windows.items()}}
    for name, tensor in windows.items():
        result[f"perplexity_{name}"] = math.exp(mean_loss(model, tensor, batch_size, device))
        result[f"unigram_perplexity_{name}"] = data.unigram_perplexity(counts, tensor)
    result["blimp"] = blimp_accuracy(model, tokenizer, load_blimp(run.data.blimp_pairs_per_paradigm), device=device)
    return result


def evaluate_checkpoint(folder: str | Path, run: RunConfig, *, device="cpu") -> dict:

    model, tokenizer = load_checkpoint(folder, device=device)
    if run.model.seq_len > model.config.max_position_embeddings:
        raise ValueError(
            f"seq_len: {run.model.seq_len} exceeds the model's {model.config.max_position_embeddings} positions; "
            f"evaluate with seq_len <= {model.config.max_position_embeddings}"
        )
    return evaluate(model, tokenizer, run, device=device)
