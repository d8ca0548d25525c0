"""BabyBERTa: a small RoBERTa masked LM, its configuration per profile, and its masking.

BabyBERTa (Huebner et al., CoNLL 2021, and its public code) differs from RoBERTa in ways we
follow at every profile:

* one utterance per input sequence, never packed with others; utterances longer than
  ``max_tokens`` are left out (not truncated);
* 15% of the tokens are selected for prediction, at least one per utterance; a selected token
  is replaced by ``<mask>`` (90%) or a random token (10%) and is **never left unchanged**
  (RoBERTa's 80-10-10 leaves 10% unchanged; BabyBERTa found that predicting unmasked tokens
  hurts grammatical accuracy, and its holistic scoring needs a model that does not);
* the loss is on the selected tokens only;
* AdamW, weight decay 0, linear warm-up then linear decay, gradient norm clipped at 1.0,
  layer-norm epsilon 1e-5, initializer range 0.02, batch 16, learning rate 1e-4;
* the training utterances are shuffled (BabyBERTa's default ``consecutive_masking=False``
  ignores the age order); ``order="age"`` keeps AO-CHILDES' age order instead.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor, nn

import ssa.hf
from ssa_book.profiles import check_profile
from ssa.scoring import scorer_names
from ssa_book.encoder.tokenizer import BOS_ID, EOS_ID, PAD_ID
from ssa_book.encoder.tokenizer import MASK_ID, NUM_SPECIAL, real_token_mask

ORDERS = ("shuffled", "age")


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
    # model (BabyBERTa: 8 layers, 8 heads, hidden 256, FFN 1024, 8,192-token BPE)
    num_layers: int = 8
    num_heads: int = 8
    hidden_size: int = 256
    ffn_size: int = 1024
    vocab_size: int = 8192
    max_tokens: int = 128  # longest utterance in tokens, <s> and </s> excluded (BabyBERTa: 128)
    dropout: float = 0.1  # transformers' RoBERTa default, which BabyBERTa kept
    # masking
    mask_probability: float = 0.15
    random_token_probability: float = 0.1  # share of selected tokens replaced by a random token
    # optimisation
    batch_size: int = 16
    learning_rate: float = 1e-4
    warmup_steps: int = 24_000
    steps: int = 160_000
    gradient_clip: float = 1.0
    order: str = "shuffled"  # "shuffled" (BabyBERTa's default) or "age"
    # data: every utterance is used unless max_utterances subsamples them evenly over ages
    max_utterances: int | None = None
    held_out_every: int = 100  # every 100th utterance is held out for the validation loss
    # evaluation during training (the training curves) and at the end
    eval_every: int = 10_000
    held_out_utterances: int = 1000  # validation loss on this many held-out utterances
    curve_pairs: int = 100  # Zorro pairs per paradigm scored at each evaluation point
    probe_pairs: int | None = None  # pairs per paradigm for the final holistic score; None = all 2,000
    pll_pairs: int | None = None  # pairs per paradigm for the final pseudo-log-likelihood score
    checkpoint_every: int = 2_000

    def __post_init__(self):
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}; got {self.order!r}")
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be divisible by num_heads ({self.num_heads})")
        for name in ("mask_probability", "random_token_probability"):
            if not 0 <= getattr(self, name) < 1:
                raise ValueError(f"{name} must be in [0, 1), got {getattr(self, name)!r}")
        if self.steps < 1 or self.batch_size < 1 or self.eval_every < 1:
            raise ValueError("steps, batch_size and eval_every must be >= 1")

    @classmethod
    def for_profile(cls, profile: str, **overrides) -> "EncoderConfig":
        """The configuration of ``profile`` (see :data:`PROFILE_SETTINGS`), with ``overrides``."""
        return dataclasses.replace(cls(**PROFILE_SETTINGS[check_profile(profile)]), **overrides)


PROFILE_SETTINGS = {
    # Seconds: checks that every piece runs. Learns nothing.
    "smoke": dict(
        num_layers=2,
        num_heads=2,
        hidden_size=32,
        ffn_size=64,
        vocab_size=400,
        max_utterances=3000,
        batch_size=8,
        learning_rate=1e-3,
        warmup_steps=5,
        steps=20,
        eval_every=10,
        held_out_utterances=20,
        curve_pairs=4,
        probe_pairs=10,
        pll_pairs=3,
        checkpoint_every=10,
    ),
    # 15 to 30 minutes per model on one thread of a shared 2-core machine (measured with other
    # jobs running: 0.1-0.2 s per step, 20-40 s of holistic scoring per 1,000 pairs): half of
    # BabyBERTa's depth and width, its tokenizer, batch and masking; a learning rate raised to
    # 1e-3 with a short warm-up, because 6,000 steps (half a pass over the corpus) is all the
    # time there is; the first 1,000 of the 2,000 pairs of each paradigm (scoring all of them
    # would double the probing time: the LM head over 8k tokens at every position dominates).
    "cpu": dict(
        num_layers=4,
        num_heads=4,
        hidden_size=128,
        ffn_size=512,
        vocab_size=8192,
        batch_size=16,
        learning_rate=1e-3,
        warmup_steps=500,
        steps=6000,
        eval_every=1000,
        held_out_utterances=1000,
        curve_pairs=50,
        probe_pairs=1000,
        pll_pairs=100,
        checkpoint_every=500,
    ),
    # The paper's (BabyBERTa's) configuration: the dataclass defaults.
    "paper": dict(),
}


def build_model(config: EncoderConfig, scorer: str) -> nn.Module:
    """A freshly initialised ``RobertaForMaskedLM`` whose attention uses ``scorer``."""
    from transformers import RobertaConfig, RobertaForMaskedLM

    if scorer not in scorer_names():
        raise ValueError(f"scorer must be one of {', '.join(scorer_names())}; got {scorer!r}")
    model_config = RobertaConfig(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        intermediate_size=config.ffn_size,
        max_position_embeddings=config.max_tokens + 2 + PAD_ID + 1,  # + <s>, </s>; RoBERTa positions start after pad id
        hidden_dropout_prob=config.dropout,
        attention_probs_dropout_prob=config.dropout,
        layer_norm_eps=1e-5,
        initializer_range=0.02,
        pad_token_id=PAD_ID,
        bos_token_id=BOS_ID,
        eos_token_id=EOS_ID,
        type_vocab_size=1,
    )
    model = RobertaForMaskedLM(model_config)
    ssa.hf.use_scorer(model, scorer)
    return model


def masked_lm_logits(model: nn.Module, ids: Tensor, attention_mask: Tensor, positions: Tensor) -> Tensor:
    """Logits at the selected ``positions`` only (boolean ``(B, T)``), in row-major order.

    The LM head is the most expensive layer of a small encoder with an 8k vocabulary, and
    training and pseudo-log-likelihood scoring need it at a few positions only.
    """
    hidden = model.roberta(input_ids=ids, attention_mask=attention_mask).last_hidden_state  # (B, T, D)
    return model.lm_head(hidden[positions])  # (selected, V)


def mask_tokens(ids: Tensor, config: EncoderConfig, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """BabyBERTa's masking of a padded batch ``ids`` ``(B, T)``: ``(inputs, selected)``.

    ``selected`` marks the positions to predict: each real token with probability
    ``mask_probability``, and one random real token in rows where none was drawn. Selected
    positions become ``<mask>``, or a random non-special token with probability
    ``random_token_probability``; none is left unchanged.
    """

    real = real_token_mask(ids)
    selected = (torch.rand(ids.shape, generator=generator) < config.mask_probability) & real
    empty_rows = ~selected.any(1) & real.any(1)
    if empty_rows.any():
        # A random real position per empty row: argmax of random scores restricted to real tokens.
        scores = torch.rand(ids.shape, generator=generator).masked_fill(~real, -1.0)
        selected[empty_rows, scores[empty_rows].argmax(1)] = True
    inputs = ids.masked_fill(selected, MASK_ID)
    randomised = selected & (torch.rand(ids.shape, generator=generator) < config.random_token_probability)
    random_tokens = torch.randint(NUM_SPECIAL, config.vocab_size, ids.shape, generator=generator)
    inputs = torch.where(randomised, random_tokens, inputs)
    return inputs, selected


def learning_rate_factor(step: int, config: EncoderConfig) -> float:
    """Linear warm-up to the peak, then linear decay to 0 at ``config.steps``."""
    if step < config.warmup_steps:
        return (step + 1) / config.warmup_steps
    return max(0.0, (config.steps - step) / max(1, config.steps - config.warmup_steps))
