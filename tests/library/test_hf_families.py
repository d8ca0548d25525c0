"""ssa.hf.use_scorer(model, "softmax") reproduces every model family the pinned transformers can
build from a tiny config offline, on a padded batch, or refuses the family with a message naming
why: no silent wrong numbers (T5's relative position bias was once dropped, changing its logits
by 0.2 to 0.35). The families and their outcome are listed in ssa.hf's docstring and the README."""

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSeq2SeqLM
from transformers.utils import logging

import ssa.hf

VOCAB = 64
SEQUENCE = 9
COMMON = dict(
    vocab_size=VOCAB,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=8,
    max_position_embeddings=64,
    bos_token_id=1,
    eos_token_id=2,
    pad_token_id=0,
)
T5_SIZES = dict(
    vocab_size=VOCAB,
    d_model=32,
    d_kv=8,
    d_ff=64,
    num_layers=2,
    num_decoder_layers=2,
    num_heads=4,
    pad_token_id=0,
    eos_token_id=2,
    decoder_start_token_id=0,
)
BART_SIZES = dict(
    vocab_size=VOCAB,
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=4,
    decoder_attention_heads=4,
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    max_position_embeddings=64,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
    decoder_start_token_id=2,
)

FAMILY_SIZES = {"gptj": dict(rotary_dim=8), "codegen": dict(rotary_dim=8)}  # rotary dimensions within head_dim

DECODERS = [
    "gpt2",
    "llama",
    "mistral",
    "qwen2",
    "qwen3",
    "gemma",
    "gemma2",
    "gemma3_text",
    "phi",
    "phi3",
    "opt",
    "gpt_neox",
    "gptj",
    "codegen",
    "gpt_bigcode",
    "stablelm",
    "olmo",
    "olmo2",
    "starcoder2",
    "cohere",
    "granite",
    "nemotron",
    "ministral",
    "mixtral",
    "qwen2_moe",
    "smollm3",
    "exaone4",
    "glm",
    "helium",
    "persimmon",
    "gpt_oss",
    "falcon",
    "bloom",
    "mpt",
]
ENCODERS = [
    "bert",
    "roberta",
    "xlm-roberta",
    "electra",
    "albert",
    "distilbert",
    "camembert",
    "data2vec-text",
    "ernie",
    "roberta-prelayernorm",
    "xlm-roberta-xl",
    "esm",
    "modernbert",
    "deberta-v2",
    "mpnet",
    "megatron-bert",
]
ENCODER_DECODERS = ["t5", "mt5", "umt5", "longt5", "switch_transformers", "bart", "mbart", "pegasus", "marian"]

# The families ssa.hf refuses, and the message that says why.
REFUSED = {
    "gpt_oss": "GptOssAttention passes s_aux=.* this model family cannot take a scorer",  # attention sinks
    "falcon": "has no attention module that dispatches through transformers' AttentionInterface",
    "bloom": "has no attention module that dispatches through transformers' AttentionInterface",
    "mpt": "has no attention module that dispatches through transformers' AttentionInterface",
    "deberta-v2": "has no attention module that dispatches through transformers' AttentionInterface",
    "mpnet": "has no attention module that dispatches through transformers' AttentionInterface",
    "megatron-bert": "has no attention module that dispatches through transformers' AttentionInterface",
}


def build(family: str):
    """The family's smallest model from a config (no download), in eval mode, with its own
    eager attention (the model's reference implementation of its equations)."""
    logging.set_verbosity_error()
    if family in ENCODER_DECODERS:
        sizes = T5_SIZES if "t5" in family or family == "switch_transformers" else BART_SIZES
        extra = dict(num_experts=2, expert_capacity=64) if family == "switch_transformers" else {}
        config, loader = AutoConfig.for_model(family, **sizes, **extra), AutoModelForSeq2SeqLM
    else:
        sizes = {name: value for name, value in COMMON.items() if not (family == "falcon" and name == "head_dim")}
        config = AutoConfig.for_model(family, **sizes, **FAMILY_SIZES.get(family, {}))
        loader = AutoModelForMaskedLM if family in ENCODERS else AutoModelForCausalLM
    for name in ("attention_dropout", "attn_pdrop", "attention_probs_dropout_prob", "dropout_rate", "dropout"):
        if hasattr(config, name):
            setattr(config, name, 0.0)
    torch.manual_seed(0)
    model = loader.from_config(config).eval()
    model.set_attn_implementation("eager")
    return model


def padded_batch(family: str) -> dict:
    """Two sequences, the second right-padded after 6 tokens (and for encoder-decoders a
    decoder input of 5 tokens)."""
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(3, VOCAB, (2, SEQUENCE), generator=generator)
    attention_mask = torch.ones(2, SEQUENCE, dtype=torch.long)
    attention_mask[1, 6:] = 0
    batch = dict(input_ids=ids, attention_mask=attention_mask)
    if family in ENCODER_DECODERS:
        batch["decoder_input_ids"] = torch.randint(3, VOCAB, (2, 5), generator=generator)
    return batch


def real_positions(family: str, batch: dict) -> torch.Tensor:
    if family in ENCODER_DECODERS:
        return torch.ones(batch["decoder_input_ids"].shape, dtype=torch.bool)
    return batch["attention_mask"].bool()


def float32_tolerance(model, expected: torch.Tensor) -> float:
    """The absolute error float32 rounding allows between two exact implementations of the same
    model: 4 ulps (2^-23 each, relative) of the largest logit (at least 1) per term of the longest
    sum in a layer (hidden size, feed-forward size, sequence or vocabulary), per layer."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    sizes = [
        getattr(config, name, 0) or 0
        for name in ("hidden_size", "d_model", "intermediate_size", "d_ff", "encoder_ffn_dim", "vocab_size")
    ]
    longest_sum = max(*sizes, SEQUENCE)
    layers = len(ssa.hf.attention_modules(model))
    return 4 * torch.finfo(torch.float32).eps * longest_sum * layers * max(1.0, expected.abs().max().item())


@pytest.mark.parametrize("family", DECODERS + ENCODERS + ENCODER_DECODERS)
def test_softmax_through_ssa_hf_reproduces_the_model_or_the_family_is_refused(family):
    model = build(family)
    batch = padded_batch(family)
    if family in REFUSED:
        with pytest.raises(ValueError, match=REFUSED[family]):
            ssa.hf.use_scorer(model, "softmax")
            model(**batch)
        return
    with torch.no_grad():
        expected = model(**batch).logits
        ssa.hf.use_scorer(model, "softmax")
        got = model(**batch).logits
    real = real_positions(family, batch)
    torch.testing.assert_close(got[real], expected[real], atol=float32_tolerance(model, expected), rtol=0)


@pytest.mark.parametrize("family", ["t5", "gemma2"])
def test_ssa_takes_the_position_bias_and_soft_capping_as_part_of_the_logits(family):
    """SSA scores the logits the model defines, bias and soft-capping included, and trains its b, n."""
    model = build(family).train()
    ssa.hf.use_scorer(model, "ssa")
    batch = padded_batch(family)
    logits = model(**batch).logits
    assert torch.isfinite(logits).all()
    logits.square().mean().backward()
    assert all(parameter.grad is not None for name, parameter in model.named_parameters() if ".scorer." in name)


def test_a_scorer_of_queries_and_keys_refuses_a_position_bias():
    model = build("t5")
    ssa.hf.use_scorer(model, "cosformer")
    with pytest.raises(ValueError, match="bias and softcap change the logits, which scorer 'cosformer' does not read"):
        model(**padded_batch("t5"))


def test_an_argument_ssa_hf_does_not_know_is_refused_at_the_first_call():
    model = build("llama")
    ssa.hf.use_scorer(model, "softmax")
    module = ssa.hf.attention_modules(model)[0]
    query = key = value = torch.zeros(1, 4, 3, 8)
    with pytest.raises(ssa.hf.UnsupportedAttentionArgument, match=r"passes s_aux=a tensor of shape \(4,\)"):
        ssa.hf.attention_forward(module, query, key, value, None, s_aux=torch.zeros(4))
    ssa.hf.attention_forward(module, query, key, value, None, s_aux=None, sliding_window=4)  # absent, or the mask's


def test_an_additive_mask_is_a_mask_and_its_finite_values_a_bias():
    minimum = torch.finfo(torch.float32).min
    additive = torch.tensor([[0.0, 0.0, minimum]])
    mask, bias = ssa.hf._mask_and_bias(additive, None)
    assert mask.tolist() == [[True, True, False]] and bias is None  # only a mask: the fused paths stay open
    alibi = torch.tensor([[-2.0, -1.0, minimum]])
    mask, bias = ssa.hf._mask_and_bias(alibi, torch.tensor([[0.5, 0.0, 0.0]]))
    assert mask.tolist() == [[True, True, False]] and bias.tolist() == [[-1.5, -1.0, 0.0]]
