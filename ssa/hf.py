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

Every other argument that a model passes to its attention function is implemented
(:data:`IMPLEMENTED_ARGUMENTS`: an additive mask's finite values and T5's ``position_bias`` are
added to the logits, Gemma 2's ``softcap`` soft-caps them, before any scorer of logits scores
them), left to the mask as SDPA leaves it (:data:`UNUSED_ARGUMENTS`: the sliding window, packed
sequences, position ids), or refused (:class:`UnsupportedAttentionArgument`): at
:func:`use_scorer` when the attention module's source names it, else at the first call that
passes it, before any number is computed. With softmax, every family the pinned transformers
(5.24) builds from a tiny config reproduces the model's own eager attention to float32 rounding on
a padded batch, or is refused (``tests/library/test_hf_families.py``):

=========================  ==================================================================
with ``"softmax"``          families
=========================  ==================================================================
the model's logits          GPT-2, Llama, Mistral, Ministral, Qwen2, Qwen3, Qwen2-MoE, Mixtral,
                            Gemma, Gemma 3, Phi, Phi-3, OPT, GPT-NeoX, GPT-J, CodeGen,
                            GPTBigCode, StableLM, OLMo, OLMo 2, Starcoder2, Cohere, Granite,
                            Nemotron, SmolLM3, EXAONE 4, GLM, Helium, Persimmon; BERT, RoBERTa,
                            XLM-RoBERTa(-XL), ELECTRA, ALBERT, DistilBERT, CamemBERT,
                            Data2Vec-text, ERNIE, RoBERTa-PreLayerNorm, ESM, ModernBERT; BART,
                            mBART, Pegasus, Marian
the model's logits          Gemma 2 (``softcap``); T5, mT5, UMT5, LongT5, Switch Transformers
                            (``position_bias``; ``cosformer``, which reads no logits, refuses it)
refused at ``use_scorer``   GPT-OSS (attention sinks, ``s_aux``); Falcon, BLOOM, MPT,
                            DeBERTa-v2, MPNet, Megatron-BERT (no module dispatches through
                            ``AttentionInterface``)
=========================  ==================================================================
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from ssa.attention import attention
from ssa.optional import require
from ssa.scoring import SSA, Scorer, Softmax, make_scorer
from ssa.scoring import _ScalarParameters

__all__ = [
    "ATTN_IMPLEMENTATION",
    "IMPLEMENTED_ARGUMENTS",
    "UNUSED_ARGUMENTS",
    "UnsupportedAttentionArgument",
    "attention_modules",
    "from_pretrained",
    "register",
    "scorer_values",
    "use_scorer",
]

ATTN_IMPLEMENTATION = "ssa_scorer"
CONFIG_KEY = "ssa_scorer"
SCORER_ATTRIBUTE = "scorer"

# What transformers' attention functions receive besides query, key, value and attention_mask.
# Implemented for every scorer of logits: dropout, scaling, is_causal, output_attentions,
# position_bias (T5's relative position bias, added to the logits) and softcap (Gemma 2's logit
# soft-capping).
IMPLEMENTED_ARGUMENTS = ("dropout", "scaling", "is_causal", "output_attentions", "position_bias", "softcap")
# Used before attention or by flash-attention kernels only: SDPA, which ssa.hf stands in for,
# ignores them too, since the mask (transformers' SDPA mask, which ssa.hf registers) already
# carries the sliding window and the boundaries of packed sequences, and position ids act on
# the queries and keys before they arrive.
UNUSED_ARGUMENTS = (
    "sliding_window",
    "position_ids",
    "cu_seq_lens_q",
    "cu_seq_lens_k",
    "max_length_q",
    "max_length_k",
    "deterministic",
    "use_cache",
    "cache_position",
    "output_hidden_states",
    "return_dict",
)


class UnsupportedAttentionArgument(ValueError):
    """A model passes its attention function an argument that ssa.hf cannot honour (attention
    sinks, sparse-attention indices, ...): its numbers would silently differ from the model's."""


def _refusal(owner: str, name: str, value: Any) -> UnsupportedAttentionArgument:
    """``value`` ``...``: named in the module's source, its value not yet known."""
    shown = (
        "..."
        if value is ...
        else f"a tensor of shape {tuple(value.shape)}"
        if isinstance(value, Tensor)
        else repr(value)
    )
    return UnsupportedAttentionArgument(
        f"{owner} passes {name}={shown} to its attention function, which ssa.hf does not implement "
        f"(it implements {', '.join(IMPLEMENTED_ARGUMENTS)}; it leaves {', '.join(UNUSED_ARGUMENTS)} to the mask, as "
        "SDPA does): this model family cannot take a scorer through ssa.hf.use_scorer"
    )


def _mask_and_bias(attention_mask: Tensor | None, position_bias: Tensor | None) -> tuple[Tensor | None, Tensor | None]:
    """One boolean mask (True = attend) and one bias to add to the logits (``None`` where it would
    be all 0) from what transformers hands over: a boolean mask, or an additive float one (0
    where attended, the dtype's minimum elsewhere, or finite values between: ALiBi and other
    biases), and T5's position bias (float, possibly holding the mask too). Entries below half the
    dtype's minimum hide their key; the finite rest is bias, not thresholded away."""
    mask, bias = None, None
    for term in (attention_mask, position_bias):
        if term is None:
            continue
        if term.dtype == torch.bool:
            visible, finite_part = term, None
        else:
            visible = term > torch.finfo(term.dtype).min / 2
            finite_part = torch.where(visible, term, torch.zeros((), dtype=term.dtype, device=term.device))
            if not (term.requires_grad or bool(finite_part.any())):
                finite_part = None  # an additive mask of 0 and minima: a mask, and the fused paths stay open
        mask = visible if mask is None else mask & visible
        if finite_part is not None:
            bias = finite_part if bias is None else bias + finite_part
    return mask, bias


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
    position_bias: Tensor | None = None,
    softcap: float | None = None,
    **kwargs: Any,
) -> tuple[Tensor, Tensor | None]:
    """The function transformers calls in place of SDPA: same arguments, same return. An argument
    that it cannot honour (not in :data:`IMPLEMENTED_ARGUMENTS` or :data:`UNUSED_ARGUMENTS`, and
    not ``None`` or ``False``) raises :class:`UnsupportedAttentionArgument` before any number is
    computed."""
    scorer = getattr(module, SCORER_ATTRIBUTE, None)
    if not isinstance(scorer, Scorer):
        raise RuntimeError(
            f"{type(module).__name__} has no scorer: the model's attention implementation is "
            f"{ATTN_IMPLEMENTATION!r} but ssa.hf.use_scorer(model, ...) was not called on it"
        )
    for name, argument in kwargs.items():
        if name not in IMPLEMENTED_ARGUMENTS + UNUSED_ARGUMENTS and argument is not None and argument is not False:
            raise _refusal(type(module).__name__, name, argument)
    mask, bias = _mask_and_bias(attention_mask, position_bias)
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", False)
    # transformers omits the mask when plain causal masking suffices (no padding, no cache offset).
    causal = bool(causal) and attention_mask is None and query.shape[2] > 1
    # The fused paths (softmax's SDPA, SSA's ssa.kernels) have no weights to hand back for free;
    # the other scorers compute them anyway.
    want_weights = (
        bool(kwargs.get("output_attentions", False)) or _attentions_recorded() or not isinstance(scorer, (Softmax, SSA))
    )
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
        bias=bias,
        softcap=softcap,
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


def _attention_call_keywords(module: nn.Module) -> set[str]:
    """The keyword arguments that ``module``'s forward names in its call of the attention function
    (``attention_interface(...)``; empty where its source cannot be read)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(type(module).forward))))
    except (OSError, TypeError, SyntaxError):
        return set()
    return {
        keyword.arg
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "attention_interface"
        for keyword in node.keywords
        if keyword.arg is not None
    }


def _refuse_unsupported_families(modules: list[nn.Module]) -> None:
    """:class:`UnsupportedAttentionArgument` for the first module whose attention call names an
    argument that ssa.hf does not know, read from its source before anything changes."""
    known = {"query", "key", "value", "attention_mask", *IMPLEMENTED_ARGUMENTS, *UNUSED_ARGUMENTS}
    for module in modules:
        unknown = sorted(_attention_call_keywords(module) - known)
        if unknown:
            raise _refusal(type(module).__name__, unknown[0], ...)


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

    A model family whose attention call names an argument that ssa.hf does not implement (attention
    sinks, sparse-attention indices, ...) is refused here (:class:`UnsupportedAttentionArgument`,
    naming it); one that hands such an argument over only at run time is refused at its first call.
    """
    register()
    modules = attention_modules(model)
    if not modules:
        raise ValueError(
            f"model: {type(model).__name__} has no attention module that dispatches through "
            "transformers' AttentionInterface, so its scorer cannot be replaced"
        )
    _refuse_unsupported_families(modules)
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
        raise ValueError(
            f"path: {path} holds no ssa scorer (config has no {CONFIG_KEY!r}); load it with from_pretrained alone"
        )
    use_scorer(model, spec["name"], per_head=spec.get("per_head", False), **spec.get("kwargs", {}))
    scorer_state = {name: tensor for name, tensor in model.state_dict().items() if f".{SCORER_ATTRIBUTE}." in name}
    saved = _checkpoint_tensors(path, set(scorer_state))
    missing = sorted(set(scorer_state) - set(saved))
    if missing:
        raise ValueError(
            f"path: the checkpoint at {path} lacks scorer tensors {missing[:3]}{'...' if len(missing) > 3 else ''}"
        )
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
