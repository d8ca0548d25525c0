"""Put any scorer of :mod:`ssa.scoring` into a Hugging Face ``transformers`` model.

>>> from transformers import AutoModelForCausalLM
>>> import ssa.hf
>>> model = AutoModelForCausalLM.from_pretrained("gpt2")
>>> ssa.hf.use_scorer(model, "ssa")            # trainable b, n in every attention layer
>>> model.save_pretrained("my-ssa-gpt2")
>>> model = ssa.hf.from_pretrained(AutoModelForCausalLM, "my-ssa-gpt2")

How it works: our attention function is registered in transformers' ``AttentionInterface``
(with the SDPA mask builder in ``AttentionMaskInterface``) under the name
:data:`ATTN_IMPLEMENTATION`. :func:`use_scorer` gives every attention module a ``scorer``
submodule (so SSA's ``b`` and ``n`` are ordinary parameters of the model, saved by
``save_pretrained``), records the scorer in ``config.ssa_scorer`` and switches the model's
attention implementation. Causal, padding and grouped-query attention are what the model
passes to the attention function; nothing here is specific to one architecture.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from ssa.attention import attention
from ssa.optional import require
from ssa.scoring import SSA, Scorer, Softmax, make_scorer
from ssa.scoring import _ScalarParameters

__all__ = ["ATTN_IMPLEMENTATION", "attention_modules", "from_pretrained", "register", "scorer_values", "use_scorer"]

ATTN_IMPLEMENTATION = "ssa_scorer"
CONFIG_KEY = "ssa_scorer"
SCORER_ATTRIBUTE = "scorer"


def _boolean_mask(attention_mask: Tensor | None) -> Tensor | None:
    """transformers hands either a boolean mask (True = attend) or an additive float mask."""
    if attention_mask is None or attention_mask.dtype == torch.bool:
        return attention_mask
    return attention_mask > torch.finfo(attention_mask.dtype).min / 2


def _attentions_recorded() -> bool:
    """Whether transformers is collecting attention weights right now. Models whose forward takes
    ``output_attentions`` through ``capture_outputs`` (GPT-2 in transformers 5) drop the flag before
    it reaches the attention function and record the weights with a hook instead."""
    try:
        from transformers.utils.output_capturing import _active_collector
    except ImportError:  # older transformers pass output_attentions down instead
        return False
    collected = _active_collector.get()
    return collected is not None and "attentions" in collected


def attention_forward(
    module: nn.Module,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attention_mask: Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    **kwargs: Any,
) -> tuple[Tensor, Tensor | None]:
    """The function transformers calls in place of SDPA: same arguments, same return."""
    scorer = getattr(module, SCORER_ATTRIBUTE, None)
    if not isinstance(scorer, Scorer):
        raise RuntimeError(
            f"{type(module).__name__} has no scorer: the model's attention implementation is "
            f"{ATTN_IMPLEMENTATION!r} but ssa.hf.use_scorer(model, ...) was not called on it"
        )
    mask = _boolean_mask(attention_mask)
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", False)
    # transformers omits the mask when plain causal masking suffices (no padding, no cache offset).
    causal = bool(causal) and mask is None and query.shape[2] > 1
    # The fused paths (softmax's SDPA, SSA's ssa.kernels) have no weights to hand back for free;
    # the other scorers compute them anyway.
    want_weights = bool(kwargs.get("output_attentions", False)) or _attentions_recorded() or not isinstance(scorer, (Softmax, SSA))
    result = attention(
        query,
        key,
        value,
        scorer,
        mask=mask,
        causal=causal,
        scale=scaling,
        dropout_p=dropout if module.training else 0.0,
        return_weights=want_weights,
    )
    output, weights = result if want_weights else (result, None)
    return output.transpose(1, 2).contiguous(), weights  # (B, H, Q, D) -> (B, Q, H, D)


def register() -> None:
    """Register our attention (idempotent); :func:`use_scorer` calls it."""
    require("transformers", "hf")
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ATTN_IMPLEMENTATION, attention_forward)
    AttentionMaskInterface.register(ATTN_IMPLEMENTATION, sdpa_mask)


def attention_modules(model: nn.Module) -> list[nn.Module]:
    """Every module whose forward dispatches through transformers' attention registry."""
    found = []
    for module in model.modules():
        code = getattr(inspect.unwrap(type(module).forward), "__code__", None)
        if code is not None and "ALL_ATTENTION_FUNCTIONS" in code.co_names:
            found.append(module)
    return found


def _num_heads(model: nn.Module) -> int:
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(config.num_attention_heads)


def use_scorer(model: nn.Module, scorer: str = "ssa", *, per_head: bool = False, **scorer_kwargs: Any) -> nn.Module:
    """Switch every attention module of ``model`` to ``scorer`` (a name from
    ``ssa.scoring.scorer_names()``), in place; returns the model.

    ``per_head=True`` gives each head its own scorer parameters (SSA: one ``b`` and ``n`` per
    head); the default is one set per layer shared by its heads. ``scorer_kwargs`` go to the
    scorer (for SSA: ``b``, ``n``, ``learn_b``, ``learn_n``). Calling it again replaces the
    scorers and their parameters.
    """
    register()
    modules = attention_modules(model)
    if not modules:
        raise ValueError(
            f"model: {type(model).__name__} has no attention module that dispatches through "
            "transformers' AttentionInterface, so its scorer cannot be replaced"
        )
    kwargs = dict(scorer_kwargs)
    if per_head:
        factory_params = inspect.signature(type(make_scorer(scorer, **scorer_kwargs)).__init__).parameters
        if "num_heads" not in factory_params:
            raise ValueError(f"per_head: scorer {scorer!r} has no parameters to give each head")
        kwargs["num_heads"] = _num_heads(model)
    reference = next(model.parameters())
    for module in modules:
        module.add_module(SCORER_ATTRIBUTE, make_scorer(scorer, **kwargs).to(device=reference.device))
    setattr(model.config, CONFIG_KEY, {"name": scorer, "per_head": per_head, "kwargs": scorer_kwargs})
    model.set_attn_implementation(ATTN_IMPLEMENTATION)
    return model


def _checkpoint_tensors(path: str | Path, names: set[str]) -> dict[str, Tensor]:
    from safetensors import safe_open
    from transformers.utils import cached_file

    index = cached_file(str(path), "model.safetensors.index.json", _raise_exceptions_for_missing_entries=False)
    if index is not None:
        shards = sorted(set(json.loads(Path(index).read_text())["weight_map"].values()))
        files = [cached_file(str(path), shard) for shard in shards]
    else:
        files = [cached_file(str(path), "model.safetensors")]
    tensors = {}
    for file in files:
        with safe_open(file, framework="pt") as handle:
            for name in names & set(handle.keys()):
                tensors[name] = handle.get_tensor(name)
    return tensors


def from_pretrained(model_class: Any, path: str | Path, **kwargs: Any) -> nn.Module:
    """``model_class.from_pretrained(path)`` for a model saved after :func:`use_scorer`:
    re-installs the recorded scorer and loads its saved parameters."""
    from transformers.utils import logging

    verbosity = logging.get_verbosity()
    logging.set_verbosity_error()  # the scorer tensors are "unexpected" until use_scorer below
    try:
        model = model_class.from_pretrained(path, **kwargs)
    finally:
        logging.set_verbosity(verbosity)
    spec = getattr(model.config, CONFIG_KEY, None)
    if spec is None:
        raise ValueError(f"path: {path} holds no ssa scorer (config has no {CONFIG_KEY!r}); load it with from_pretrained alone")
    use_scorer(model, spec["name"], per_head=spec.get("per_head", False), **spec.get("kwargs", {}))
    scorer_state = {name: tensor for name, tensor in model.state_dict().items() if f".{SCORER_ATTRIBUTE}." in name}
    saved = _checkpoint_tensors(path, set(scorer_state))
    missing = sorted(set(scorer_state) - set(saved))
    if missing:
        raise ValueError(f"path: the checkpoint at {path} lacks scorer tensors {missing[:3]}{'...' if len(missing) > 3 else ''}")
    model.load_state_dict(saved, strict=False)
    return model


def scorer_values(model: nn.Module) -> dict[str, dict[str, list[float]]]:
    """The current value of every scorer parameter (SSA's ``b`` and ``n``, a temperature...),
    per attention module: ``{module name: {parameter: [one value, or one per head]}}``."""

    values: dict[str, dict[str, list[float]]] = {}
    for name, module in model.named_modules():
        if isinstance(module, _ScalarParameters):
            owner, _, parameter = name.rpartition(f".{SCORER_ATTRIBUTE}.")
            value = module.current().detach().float()
            values.setdefault(owner, {})[parameter.removesuffix("_param")] = value.tolist()
    return values
