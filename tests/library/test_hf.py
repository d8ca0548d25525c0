"""ssa.hf puts any scorer into transformers models: GPT-2, RoBERTa, Llama (GQA), Nemotron."""

import re
from pathlib import Path

import pytest
import torch
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    NemotronConfig,
    NemotronForCausalLM,
    RobertaConfig,
    RobertaForMaskedLM,
)

import ssa.hf

VOCAB = 64
TINY = dict(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=0)
MODELS = {
    "gpt2": lambda: GPT2LMHeadModel(
        GPT2Config(n_layer=2, n_head=4, n_embd=32, n_positions=32, attn_pdrop=0, resid_pdrop=0, embd_pdrop=0, **TINY)
    ),
    "roberta": lambda: RobertaForMaskedLM(
        RobertaConfig(
            num_hidden_layers=2,
            num_attention_heads=4,
            hidden_size=32,
            intermediate_size=64,
            max_position_embeddings=40,
            hidden_dropout_prob=0,
            attention_probs_dropout_prob=0,
            **TINY,
        )
    ),
    "llama-gqa": lambda: LlamaForCausalLM(
        LlamaConfig(
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            hidden_size=32,
            intermediate_size=64,
            **TINY,
        )
    ),
    "nemotron-gqa": lambda: NemotronForCausalLM(
        NemotronConfig(
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            hidden_size=32,
            intermediate_size=64,
            tie_word_embeddings=True,
            **TINY,
        )
    ),
}
CAUSAL = {"gpt2", "llama-gqa", "nemotron-gqa"}


def inputs(seed=0):
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, VOCAB, (2, 9), generator=generator)
    attention_mask = torch.ones(2, 9, dtype=torch.long)
    attention_mask[1, 6:] = 0  # right padding in the second row
    return ids, attention_mask


def build(name):
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    model.set_attn_implementation("sdpa")
    return model


@pytest.mark.parametrize("name", MODELS)
def test_softmax_through_our_attention_equals_the_models_sdpa(name):
    model = build(name)
    ids, attention_mask = inputs()
    expected = model(input_ids=ids, attention_mask=attention_mask).logits
    ssa.hf.use_scorer(model, "softmax")
    assert model.config._attn_implementation == ssa.hf.ATTN_IMPLEMENTATION
    got = model(input_ids=ids, attention_mask=attention_mask).logits
    real = attention_mask.bool()
    torch.testing.assert_close(got[real], expected[real], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", MODELS)
def test_ssa_adds_trainable_b_and_n_to_every_attention_layer(name):
    model = build(name).train()
    ssa.hf.use_scorer(model, "ssa", per_head=True, b=0.5, n=2.0)
    scorer_parameters = {n: p for n, p in model.named_parameters() if ".scorer." in n}
    assert len(scorer_parameters) == 2 * len(ssa.hf.attention_modules(model)) == 4
    assert all(p.shape == (4,) for p in scorer_parameters.values())
    ids, attention_mask = inputs()
    model(input_ids=ids, attention_mask=attention_mask).logits.square().mean().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in scorer_parameters.values())
    values = ssa.hf.scorer_values(model)
    assert len(values) == 2 and all(v["b"] == pytest.approx([0.5] * 4) for v in values.values())


@pytest.mark.parametrize("name", MODELS)
def test_save_and_reload_restores_scorer_and_its_parameters(name, tmp_path):
    model = build(name)
    ssa.hf.use_scorer(model, "ssa")
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for module in ssa.hf.attention_modules(model):
            module.scorer.n_param.raw.add_(torch.rand((), generator=generator) + 0.3)  # away from the initial value
    ids, attention_mask = inputs()
    expected = model(input_ids=ids, attention_mask=attention_mask).logits
    model.save_pretrained(tmp_path)
    reloaded = ssa.hf.from_pretrained(type(model), tmp_path).eval()
    assert reloaded.config.ssa_scorer["name"] == "ssa"
    torch.testing.assert_close(reloaded(input_ids=ids, attention_mask=attention_mask).logits, expected)
    assert ssa.hf.scorer_values(reloaded) == ssa.hf.scorer_values(model)


@pytest.mark.parametrize("name", sorted(CAUSAL))
def test_cached_decoding_matches_the_full_forward(name):
    model = build(name)
    ssa.hf.use_scorer(model, "ssa")
    ids, _ = inputs()
    full = model(input_ids=ids).logits
    cache, step_logits = model(input_ids=ids[:, :5], use_cache=True).cache, []
    for position in range(5, 9):
        step = model(input_ids=ids[:, position : position + 1], cache=cache, use_cache=True)
        cache = step.cache
        step_logits.append(step.logits)
    torch.testing.assert_close(torch.cat(step_logits, 1), full[:, 5:], atol=1e-5, rtol=1e-4)


def test_attention_weights_are_returned_and_masked():
    model = build("roberta")
    ssa.hf.use_scorer(model, "ssa")
    ids, attention_mask = inputs()
    attentions = model(input_ids=ids, attention_mask=attention_mask, output_attentions=True).attentions
    assert len(attentions) == 2 and attentions[0].shape == (2, 4, 9, 9)
    assert (attentions[0][1, :, :, 6:] == 0).all()


def test_bad_requests_are_rejected():
    model = build("gpt2")
    with pytest.raises(ValueError, match="scorer must be one of"):
        ssa.hf.use_scorer(model, "nope")
    with pytest.raises(ValueError, match="per_head"):
        ssa.hf.use_scorer(model, "softmax", per_head=True)
    with pytest.raises(ValueError, match="model: Linear has no attention module"):
        ssa.hf.use_scorer(torch.nn.Linear(2, 2), "ssa")


def test_readme_example_runs_as_written(tmp_path, monkeypatch):
    readme = (Path(__file__).parents[2] / "README.md").read_text()  # the repository's, above tests/library
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    example = next(block for block in blocks if "ssa.hf.use_scorer" in block)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    model = namespace["model"]
    assert model.config.ssa_scorer["name"] == "ssa"
