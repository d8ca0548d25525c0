"""The byte-level BPE tokenizer, trained on the corpus as BabyBERTa's was.

BabyBERTa used a RoBERTa-style byte-level BPE of 8,192 tokens with ``add_prefix_space=True``
(the first word of an utterance is tokenized like any other word). We train the same kind
of tokenizer with the ``tokenizers`` library on our training utterances, with RoBERTa's
special tokens at RoBERTa's ids so that ``RobertaForMaskedLM`` defaults line up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from torch import Tensor

# Order fixes the ids: <s>=0, <pad>=1, </s>=2, <unk>=3, <mask>=4 (RoBERTa's convention).
SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
BOS_ID, PAD_ID, EOS_ID, UNK_ID, MASK_ID = range(len(SPECIAL_TOKENS))
NUM_SPECIAL = len(SPECIAL_TOKENS)


def train_tokenizer(utterances: Iterable[str], vocab_size: int) -> Tokenizer:
    """A byte-level BPE with ``vocab_size`` tokens (special tokens included)."""
    if vocab_size <= NUM_SPECIAL + 256:
        raise ValueError(f"vocab_size must exceed {NUM_SPECIAL + 256} (specials + byte alphabet), got {vocab_size}")
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(utterances, trainer=trainer)
    tokenizer.post_processor = processors.RobertaProcessing(("</s>", EOS_ID), ("<s>", BOS_ID))
    return tokenizer


def load_tokenizer(path: str | Path) -> Tokenizer:
    return Tokenizer.from_file(str(path))


def encode(tokenizer: Tokenizer, sentences: Sequence[str]) -> list[list[int]]:
    """Token ids of each sentence, wrapped in ``<s> ... </s>``."""
    return [encoding.ids for encoding in tokenizer.encode_batch(list(sentences))]


def pad(sequences: Sequence[Sequence[int]]) -> tuple[Tensor, Tensor]:
    """Right-pad to the longest sequence: ``(ids, attention_mask)``, both ``(batch, length)``."""
    length = max(len(sequence) for sequence in sequences)
    ids = torch.full((len(sequences), length), PAD_ID, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), length), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.as_tensor(sequence, dtype=torch.long)
        attention_mask[row, : len(sequence)] = 1
    return ids, attention_mask


def real_token_mask(ids: Tensor) -> Tensor:
    """True at the sentence's own tokens: not ``<s>``, ``</s>`` or padding."""
    return ids >= NUM_SPECIAL
