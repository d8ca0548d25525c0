"""A byte-level BPE tokenizer fitted on the training split, saved beside each checkpoint.

The tokenizer is saved as a ``transformers`` fast tokenizer (``tokenizer.json`` and
``tokenizer_config.json``), so ``AutoTokenizer.from_pretrained(checkpoint)`` and lm-eval's
Hugging Face code read it. The model's config records the tokenizer's fingerprint; loading a
checkpoint with another tokenizer is an error (:func:`check_matches`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

END_OF_TEXT = "<|endoftext|>"  # separates documents; also the start token of a scored sentence
FINGERPRINT_KEY = "ssa_tokenizer_fingerprint"


def train_tokenizer(documents: Iterable[str], vocab_size: int):
    """Fit a byte-level BPE of ``vocab_size`` tokens (the end-of-text token included)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if vocab_size < 257:
        raise ValueError(f"vocab_size must be at least 257 (256 bytes + {END_OF_TEXT}); got {vocab_size}")
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[END_OF_TEXT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte stays encodable
        show_progress=False,
    )
    counted = 0

    def counting(texts: Iterable[str]):
        nonlocal counted
        for text in texts:
            counted += 1
            yield text

    bpe.train_from_iterator(counting(documents), trainer=trainer)
    if counted == 0:
        raise ValueError("corpus: no documents to fit the tokenizer on; check the training source")
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token=END_OF_TEXT, bos_token=END_OF_TEXT, pad_token=END_OF_TEXT
    )


def fingerprint(tokenizer) -> str:
    """A hash of the vocabulary and merges: equal fingerprints encode text identically."""
    state = json.loads(tokenizer.backend_tokenizer.to_str())
    model = state["model"]
    payload = json.dumps({"vocab": model["vocab"], "merges": model["merges"]}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def load_tokenizer(folder: str | Path):
    from transformers import PreTrainedTokenizerFast

    folder = Path(folder)
    if not (folder / "tokenizer.json").is_file():
        raise ValueError(
            f"tokenizer: {folder} holds no tokenizer.json; train one with `python -m ssa_book decoder train` or copy it beside the checkpoint"
        )
    return PreTrainedTokenizerFast.from_pretrained(str(folder))


def check_matches(model_config, tokenizer, where: str | Path) -> None:
    """Raise ``ValueError`` when ``tokenizer`` is not the one the model was trained with."""
    expected = getattr(model_config, FINGERPRINT_KEY, None)
    found = fingerprint(tokenizer)
    if expected is not None and expected != found:
        raise ValueError(
            f"tokenizer: the tokenizer beside {where} (fingerprint {found}) is not the one this model was "
            f"trained with ({expected}); put the training run's tokenizer.json back beside the checkpoint"
        )
    if len(tokenizer) > model_config.vocab_size:
        raise ValueError(
            f"tokenizer: it has {len(tokenizer)} tokens but the model at {where} only {model_config.vocab_size}; "
            "use the tokenizer saved with this checkpoint"
        )
