"""The in-context learner: a GPT-2 backbone between a linear read-in and a linear read-out.

As in Garg et al. (2022) and the paper's code, a prompt ``x1, y1, x2, y2, ...`` of scalars is one
token per number; the read-in maps each scalar to the embedding, GPT-2 (learned positions, causal
attention, dropout 0) mixes them, and the read-out at the token of ``x_i`` predicts ``y_i`` from
``x_1, y_1, ..., x_i`` alone. The scorer of every attention layer is replaced through
:func:`ssa.hf.use_scorer`, so any scorer of :mod:`ssa.scoring` is one argument away.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
from torch import Tensor, nn

import ssa.hf
from ssa_book.results.keys import added_field
from ssa.scoring import scorer_names

READ_INS = ("shared", "separate")


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    n_layer: int = 12  # transformer blocks (paper: 12)
    n_head: int = 8  # attention heads per block (paper: 8)
    n_embd: int = 256  # embedding width (paper: 256)
    n_positions: int = 256  # most (x, y) points a prompt may hold; GPT-2 gets 2x as many token positions
    scorer: str = "softmax"  # any name of ssa.scoring.scorer_names()
    scorer_kwargs: tuple[
        tuple[str, Any], ...
    ] = ()  # e.g. (("b", 2.72), ("n", 1.49)); a tuple keeps the config hashable
    per_head: bool = False  # one scorer parameter set per head instead of per layer
    # Added for the powered study; at their defaults they leave a config's key as it was.
    read_in: str = added_field(
        "shared"
    )  # "shared": x and y tokens are one number in one channel (the paper's); "separate": x and y in channels of their own
    first_attention_norm: bool = added_field(
        True
    )  # False: no LayerNorm before the first block's attention, so the input's scale reaches its logits

    def __post_init__(self) -> None:
        if self.read_in not in READ_INS:
            raise ValueError(f"read_in must be one of {', '.join(READ_INS)}; got {self.read_in!r}")
        if not isinstance(self.first_attention_norm, bool):
            raise ValueError(f"first_attention_norm must be a bool; got {self.first_attention_norm!r}")
        if self.scorer not in scorer_names():
            raise ValueError(f"scorer must be one of {', '.join(scorer_names())}; got {self.scorer!r}")
        for name in ("n_layer", "n_head", "n_embd", "n_positions"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1; got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be a multiple of n_head ({self.n_head})")


def interleave(xs: Tensor, ys: Tensor, read_in: str = "shared") -> Tensor:
    """``(B, N)`` inputs and ``(B, N)`` labels -> the prompt x1, y1, x2, y2, ...: ``(B, 2N, 1)``
    with every number in one channel (``"shared"``), or ``(B, 2N, 2)`` with x tokens ``(x, 0)`` and
    y tokens ``(0, y)`` (``"separate"``)."""
    if xs.shape != ys.shape or xs.dim() != 2:
        raise ValueError(f"xs and ys must both be (batch, points); got {tuple(xs.shape)} and {tuple(ys.shape)}")
    if read_in == "shared":
        return torch.stack((xs, ys), dim=2).reshape(xs.shape[0], 2 * xs.shape[1], 1)  # (B, N, 2) -> (B, 2N, 1)
    zeros = torch.zeros_like(xs)
    tokens = torch.stack(
        (torch.stack((xs, zeros), dim=2), torch.stack((zeros, ys), dim=2)), dim=2
    )  # (B, N, 2 tokens, 2 channels)
    return tokens.reshape(xs.shape[0], 2 * xs.shape[1], 2)


class InContextLearner(nn.Module):
    """``model(xs, ys)`` -> predictions ``(B, N)``; prediction ``i`` sees ``x_1, y_1, ..., x_i``."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        from transformers import GPT2Config, GPT2Model

        self.config = config
        backbone_config = GPT2Config(
            vocab_size=1,  # inputs arrive as embeddings through read_in; GPT-2's 50k-token table would be dead weight
            bos_token_id=0,
            eos_token_id=0,
            n_positions=2 * config.n_positions,
            n_embd=config.n_embd,
            n_layer=config.n_layer,
            n_head=config.n_head,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            use_cache=False,
            # torch's fused GELU: GPT-2's tanh approximation ("gelu_new") costs a dozen element-wise
            # kernels per layer, the largest share of a CPU training step at these sizes.
            activation_function="gelu",
        )
        self.read_in = nn.Linear(1 if config.read_in == "shared" else 2, config.n_embd)
        self.backbone = GPT2Model(backbone_config)
        self.read_out = nn.Linear(config.n_embd, 1)
        ssa.hf.use_scorer(self.backbone, config.scorer, per_head=config.per_head, **dict(config.scorer_kwargs))
        if not config.first_attention_norm:
            self.backbone.h[0].ln_1 = nn.Identity()

    def forward(
        self, xs: Tensor, ys: Tensor, *, output_attentions: bool = False
    ) -> Tensor | tuple[Tensor, tuple[Tensor, ...]]:
        points = xs.shape[1]
        if points > self.config.n_positions:
            raise ValueError(
                f"prompt length {points} points exceeds the model's n_positions={self.config.n_positions}; "
                "use shorter prompts or a model built with a larger n_positions"
            )
        embeddings = self.read_in(interleave(xs, ys, self.config.read_in))  # (B, 2N, n_embd)
        output = self.backbone(inputs_embeds=embeddings, output_attentions=output_attentions)
        predictions = self.read_out(output.last_hidden_state)[:, ::2, 0]  # x tokens -> (B, N)
        if output_attentions:
            return predictions, tuple(output.attentions)  # each (B, H, 2N, 2N)
        return predictions

    def scorer_values(self) -> dict[str, dict[str, list[float]]]:
        """Learned scorer parameters per layer (SSA's ``b`` and ``n``), see :func:`ssa.hf.scorer_values`."""
        return ssa.hf.scorer_values(self.backbone)
