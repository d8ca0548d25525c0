"""The decoder: transformers' ``NemotronForCausalLM`` in the paper's shape, with any scorer.

A checkpoint is a ``save_pretrained`` folder (``config.json``, ``model.safetensors``) with the
tokenizer beside it. It loads with ``ssa.hf.from_pretrained(NemotronForCausalLM, path)``
(:func:`load_checkpoint` adds the tokenizer and checks that the two belong together).
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

import ssa.hf
from ssa_book.lm.config import ModelConfig
from ssa_book.lm.tokenizer import FINGERPRINT_KEY, check_matches, fingerprint, load_tokenizer


def nemotron_config(shape: ModelConfig, end_of_text_id: int = 0):
    from transformers import NemotronConfig

    return NemotronConfig(
        vocab_size=shape.vocab_size,
        hidden_size=shape.hidden_size,
        num_hidden_layers=shape.num_layers,
        num_attention_heads=shape.num_heads,
        num_key_value_heads=shape.num_kv_heads,
        intermediate_size=shape.ffn_size,
        max_position_embeddings=shape.seq_len,
        tie_word_embeddings=True,
        bos_token_id=end_of_text_id,
        eos_token_id=end_of_text_id,
        pad_token_id=end_of_text_id,
    )


def build_model(
    shape: ModelConfig,
    scorer: str = "softmax",
    *,
    per_head: bool = False,
    scorer_kwargs: dict | None = None,
    tokenizer=None,
    device: str | torch.device = "cpu",
) -> nn.Module:
    """A freshly initialised decoder with ``scorer`` in every attention layer.

    ``device="meta"`` builds it without allocating memory (to count the paper model's parameters).
    With a ``tokenizer``, the model records its fingerprint so that a mismatch is caught on load."""
    from transformers import NemotronForCausalLM

    end_of_text_id = tokenizer.eos_token_id if tokenizer is not None else 0
    if tokenizer is not None and len(tokenizer) > shape.vocab_size:
        raise ValueError(f"vocab_size ({shape.vocab_size}) is smaller than the tokenizer ({len(tokenizer)} tokens)")
    with torch.device(device):
        model = NemotronForCausalLM(nemotron_config(shape, end_of_text_id))
    ssa.hf.use_scorer(model, scorer, per_head=per_head, **(scorer_kwargs or {}))
    if tokenizer is not None:
        setattr(model.config, FINGERPRINT_KEY, fingerprint(tokenizer))
    return model


def parameter_count(model: nn.Module) -> int:
    """Distinct parameters (tied input and output embeddings count once)."""
    return sum(parameter.numel() for parameter in model.parameters())


def save_checkpoint(model: nn.Module, tokenizer, folder: str | Path) -> Path:
    from transformers.utils import logging

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    logging.disable_progress_bar()  # one bar per checkpoint would drown the training bar
    try:
        model.save_pretrained(folder)
    finally:
        logging.enable_progress_bar()
    tokenizer.save_pretrained(folder)
    return folder


def load_checkpoint(
    folder: str | Path, *, device: str | torch.device = "cpu", tokenizer_folder: str | Path | None = None
):
    """``(model, tokenizer)`` from a checkpoint folder; the tokenizer must be the training one."""
    from transformers import NemotronForCausalLM

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise ValueError(
            f"checkpoint: {folder} holds no config.json; train one with `python -m ssa_book decoder train --out {folder}`"
        )
    model = ssa.hf.from_pretrained(NemotronForCausalLM, folder).to(device)
    tokenizer = load_tokenizer(tokenizer_folder or folder)
    check_matches(model.config, tokenizer, folder)
    model.eval()
    return model, tokenizer
