"""Zorro: 23 paradigms of grammatical minimal pairs, and two ways to score a masked LM on them.

File format (checked by the tests on the real files): one sentence per line, 4,000 lines per
paradigm; lines 2k-1 and 2k form pair k; the odd line is the ungrammatical sentence and the
even line the grammatical one (``irregular-verb.txt`` line 1 "Michael chosen the good one
some time ago ." / line 2 "Michael chose ...").

Scoring methods:

* ``holistic`` (BabyBERTa's and the paper's): the sentence goes in unmasked and its score is
  the mean cross-entropy of the model's prediction of each of its own tokens (``<s>``,
  ``</s>`` and padding excluded). The model is right when the grammatical sentence scores lower.
* ``pll`` (pseudo-log-likelihood, Salazar et al. 2020): each token is masked in turn and
  scored from the rest; the score is the summed negative log-probability.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from ssa_book import data
from ssa_book.encoder.model import masked_lm_logits
from ssa_book.encoder.tokenizer import MASK_ID, encode, pad, real_token_mask

PARADIGMS = (
    "agreement_determiner_noun-across_1_adjective",
    "agreement_determiner_noun-between_neighbors",
    "agreement_subject_verb-across_prepositional_phrase",
    "agreement_subject_verb-across_relative_clause",
    "agreement_subject_verb-in_question_with_aux",
    "agreement_subject_verb-in_simple_question",
    "anaphor_agreement-pronoun_gender",
    "argument_structure-dropped_argument",
    "argument_structure-swapped_arguments",
    "argument_structure-transitive",
    "binding-principle_a",
    "case-subjective_pronoun",
    "ellipsis-n_bar",
    "filler-gap-wh_question_object",
    "filler-gap-wh_question_subject",
    "irregular-verb",
    "island-effects-adjunct_island",
    "island-effects-coordinate_structure_constraint",
    "local_attractor-in_question_with_aux",
    "npi_licensing-matrix_question",
    "npi_licensing-only_npi_licensor",
    "quantifiers-existential_there",
    "quantifiers-superlative",
)
METHODS = ("holistic", "pll")
SENTENCE_FOLDER = "sentences"


class ZorroFormatError(ValueError):
    """A probing file is not a list of minimal pairs; the message names the file and line."""


@dataclasses.dataclass(frozen=True)
class MinimalPair:
    grammatical: str
    ungrammatical: str


def check_paradigm(name: str) -> str:
    if name not in PARADIGMS:
        raise ValueError(f"paradigm must be one of the 23 Zorro paradigms ({', '.join(PARADIGMS)}); got {name!r}")
    return name


def read_pairs(file: str | Path) -> list[MinimalPair]:
    """The minimal pairs of one probing file (odd line ungrammatical, even line grammatical)."""
    file = Path(file)
    if not file.is_file():
        raise ZorroFormatError(f"{file}: probing file not found")
    lines = file.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise ZorroFormatError(f"{file}, line {number}: empty line (every line must hold one sentence)")
    if not lines:
        raise ZorroFormatError(f"{file}: no sentences")
    if len(lines) % 2:
        raise ZorroFormatError(
            f"{file}, line {len(lines)}: odd number of lines ({len(lines)}); the last sentence has no partner"
        )
    return [
        MinimalPair(grammatical=lines[index + 1].strip(), ungrammatical=lines[index].strip())
        for index in range(0, len(lines), 2)
    ]


def load_paradigm(name: str, folder: str | Path | None = None, max_pairs: int | None = None) -> list[MinimalPair]:
    """The pairs of paradigm ``name`` (default folder: ``ssa_book.data.path("zorro")``), the first
    ``max_pairs`` of them when given."""
    check_paradigm(name)
    if folder is None:
        folder = data.path("zorro")
    pairs = read_pairs(Path(folder) / SENTENCE_FOLDER / f"{name}.txt")
    return pairs if max_pairs is None else pairs[:max_pairs]


def _batches(items: Sequence, size: int):
    for start in range(0, len(items), size):
        yield items[start : start + size]


@torch.no_grad()
def holistic_scores(
    model: nn.Module, tokenizer, sentences: Sequence[str], *, batch_size: int = 256, device: str = "cpu"
) -> list[float]:
    """Mean token cross-entropy of each sentence, read unmasked (lower = more acceptable)."""
    model.eval()
    scores: list[float] = []
    for chunk in _batches(encode(tokenizer, sentences), batch_size):
        ids, attention_mask = pad(chunk)
        ids, attention_mask = ids.to(device), attention_mask.to(device)
        logits = model(input_ids=ids, attention_mask=attention_mask).logits  # (B, T, V)
        losses = F.cross_entropy(logits.transpose(1, 2), ids, reduction="none")  # (B, T)
        real = real_token_mask(ids)
        scores += ((losses * real).sum(1) / real.sum(1).clamp(min=1)).tolist()
    return scores


@torch.no_grad()
def pseudo_log_likelihood_scores(
    model: nn.Module, tokenizer, sentences: Sequence[str], *, batch_size: int = 256, device: str = "cpu"
) -> list[float]:
    """Summed negative log-probability of each token with that token masked (lower = better)."""
    model.eval()
    # One row per (sentence, masked position): the sentence's ids with that position masked.
    rows, targets, owners = [], [], []
    for owner, ids in enumerate(encode(tokenizer, sentences)):
        for position in range(1, len(ids) - 1):  # skip <s> and </s>
            masked = list(ids)
            masked[position] = MASK_ID
            rows.append((masked, position))
            targets.append(ids[position])
            owners.append(owner)
    negative_log_probs: list[float] = []
    for chunk in _batches(list(zip(rows, targets)), batch_size):
        ids, attention_mask = pad([masked for (masked, _), _ in chunk])
        positions = torch.tensor([position for (_, position), _ in chunk])
        target = torch.tensor([token for _, token in chunk], device=device)
        selected = torch.zeros_like(ids, dtype=torch.bool)
        selected[torch.arange(len(chunk)), positions] = True  # one position per row, so rows stay in order
        logits = masked_lm_logits(model, ids.to(device), attention_mask.to(device), selected.to(device))  # (rows, V)
        negative_log_probs += F.cross_entropy(logits, target, reduction="none").tolist()
    scores = [0.0] * len(sentences)
    for owner, value in zip(owners, negative_log_probs):
        scores[owner] += value
    return scores


SCORERS = {"holistic": holistic_scores, "pll": pseudo_log_likelihood_scores}


def wilson_interval(correct: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% for ``z=1.96``)."""
    if total <= 0:
        raise ValueError(f"total must be > 0, got {total}")
    p = correct / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def pair_accuracy(pairs: Sequence[MinimalPair], scores_of) -> dict:
    """Accuracy on ``pairs`` given ``scores_of(sentences) -> scores`` (lower = more acceptable).

    A tie (identical scores, e.g. two sentences that tokenize alike) counts as wrong.
    """
    scores = scores_of([pair.grammatical for pair in pairs] + [pair.ungrammatical for pair in pairs])
    grammatical, ungrammatical = scores[: len(pairs)], scores[len(pairs) :]
    correct = sum(1 for good, bad in zip(grammatical, ungrammatical) if good < bad)
    low, high = wilson_interval(correct, len(pairs))
    return {"correct": correct, "total": len(pairs), "accuracy": correct / len(pairs), "low": low, "high": high}


def evaluate(
    model: nn.Module,
    tokenizer,
    *,
    method: str = "holistic",
    paradigms: Sequence[str] = PARADIGMS,
    max_pairs: int | None = None,
    folder: str | Path | None = None,
    device: str = "cpu",
    batch_size: int = 256,
) -> dict[str, dict]:
    """Per-paradigm accuracy with a 95% Wilson interval: ``{paradigm: {correct, total, accuracy, low, high}}``."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    score = SCORERS[method]
    results = {}
    for name in paradigms:
        pairs = load_paradigm(name, folder, max_pairs)
        results[name] = pair_accuracy(
            pairs, lambda sentences: score(model, tokenizer, sentences, batch_size=batch_size, device=device)
        )
    return results


def mean_accuracy(results: dict[str, dict]) -> float:
    return sum(entry["accuracy"] for entry in results.values()) / len(results)
