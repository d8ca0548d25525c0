"""The decoder language-model pipeline, on a synthetic corpus and the smoke profile."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ssa.lm import data
from ssa.lm.config import ModelConfig, run_config
from ssa.lm.model import build_model, load_checkpoint, parameter_count, save_checkpoint
from ssa.lm.tokenizer import train_tokenizer

ROOT = Path(__file__).resolve().parent.parent
NOUNS = ["cat", "dog", "bird", "teacher", "child", "farmer", "river", "city"]
VERBS = ["sees", "likes", "follows", "finds", "helps", "watches"]


def synthetic_corpus(path: Path, documents: int = 240, seed: int = 0) -> Path:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as stream:
        for _ in range(documents):
            sentences = [f"The {rng.choice(NOUNS)} {rng.choice(VERBS)} the {rng.choice(NOUNS)}." for _ in range(rng.randint(3, 8))]
            stream.write(json.dumps({"text": " ".join(sentences)}) + "\n")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return synthetic_corpus(tmp_path_factory.mktemp("corpus") / "corpus.jsonl")


def tiny_run(corpus: Path, scorer: str = "ssa", **train):
    run = run_config("smoke", scorer)
    return run.replace(data={"train_source": str(corpus), "ood_source": str(corpus)}, train=train)


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    from ssa.lm.train import train

    run = tiny_run(corpus, steps=3, warmup_steps=1)
    out = tmp_path_factory.mktemp("run")
    train(run, out, device="cpu", progress=False)
    return run, out


def test_paper_model_has_the_papers_parameter_count():
    model = build_model(run_config("paper").model, "ssa", device="meta")  # no memory allocated
    assert round(parameter_count(model) / 1e6, 1) == 113.9


@pytest.mark.parametrize("changes, message", [({"num_heads": 3, "num_kv_heads": 1}, "multiple of num_heads"), ({"num_kv_heads": 5}, "num_kv_heads"), ({"seq_len": 0}, "seq_len")])
def test_bad_model_shapes_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{"hidden_size": 40, "num_heads": 4, "num_kv_heads": 2, **changes})


def test_bad_training_settings_are_refused():
    with pytest.raises(ValueError, match="scorer must be one of"):
        run_config("smoke", "nope")
    with pytest.raises(ValueError, match="multiple of micro_batch"):
        run_config("smoke").replace(train={"global_batch": 5})


def test_split_is_by_document_deterministic_and_disjoint(corpus):
    train = list(data.split_documents(str(corpus), "train", 100))
    held_out = list(data.split_documents(str(corpus), "held_out", 100))
    everything = list(data.split_documents(str(corpus), "all", 100))
    assert sorted(train + held_out) == sorted(everything)
    assert held_out and not set(train) & set(held_out)
    assert held_out == list(data.split_documents(str(corpus), "held_out", 100))


def test_packing_gives_fixed_length_sequences_and_refuses_a_short_corpus(corpus):
    tokenizer = train_tokenizer(data.documents(str(corpus)), 300)
    sequences = data.packed_tensor(data.documents(str(corpus)), tokenizer, 16, what="training")
    assert sequences.shape[1] == 16 and (sequences == tokenizer.eos_token_id).any()
    with pytest.raises(ValueError, match="corpus: .* fewer than the 1000000 needed"):
        data.packed_tensor(data.documents(str(corpus)), tokenizer, 16, what="training", minimum=1_000_000)
    with pytest.raises(ValueError, match="corpus: no documents"):
        train_tokenizer([], 300)


def test_a_missing_dataset_names_the_fetch_command(tmp_path, monkeypatch):
    from ssa.data import DatasetMissingError, _verified_folder

    monkeypatch.setenv("SSA_DATA_DIR", str(tmp_path))
    _verified_folder.cache_clear()
    with pytest.raises(DatasetMissingError, match="python -m ssa.data fetch webtext"):
        data.documents("webtext")
    with pytest.raises(ValueError, match="source must be"):
        data.documents("nowhere")


def test_fineweb_edu_is_streamed_sharded_and_packed_on_the_fly(corpus, tmp_path, monkeypatch):
    import datasets

    from ssa.lm.train import train

    documents = [{"text": text} for text in data.documents(str(corpus))]
    requested = []

    def fake_load_dataset(path, name=None, split=None, streaming=False):
        requested.append((path, name, split, streaming))
        return datasets.IterableDataset.from_generator(lambda: iter(documents))

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    shard = list(data.documents("fineweb-edu", rank=1, world_size=2))
    assert requested[0] == (*data.FINEWEB_EDU, "train", True)
    assert [text for text in shard] == [row["text"] for row in documents[1::2]]
    run = run_config("smoke", "ssa").replace(data={"train_source": "fineweb-edu", "ood_source": str(corpus)}, train={"steps": 2, "warmup_steps": 1})
    history = train(run, tmp_path / "streamed", device="cpu", progress=False)["history"]
    assert len(history["train_loss"]) == 2


def test_unigram_baseline_of_a_uniform_distribution_is_the_vocabulary_size():
    counts = torch.full((50,), 1000)
    held_out = torch.randint(0, 50, (4, 9), generator=torch.Generator().manual_seed(0))
    assert data.unigram_perplexity(counts, held_out) == pytest.approx(50.0)


def test_checkpoint_reloads_with_one_ssa_hf_call_and_the_same_outputs(trained):
    from transformers import NemotronForCausalLM

    import ssa.hf

    run, out = trained
    model, tokenizer = load_checkpoint(out / "checkpoint")
    again = ssa.hf.from_pretrained(NemotronForCausalLM, out / "checkpoint").eval()
    ids = torch.tensor([tokenizer("The cat sees the dog.")["input_ids"]])
    assert torch.allclose(model(input_ids=ids).logits, again(input_ids=ids).logits)
    assert ssa.hf.scorer_values(again) == ssa.hf.scorer_values(model)
    assert set(next(iter(ssa.hf.scorer_values(again).values()))) == {"b", "n"}


def test_a_foreign_tokenizer_is_refused(trained, corpus, tmp_path):
    run, out = trained
    model, _ = load_checkpoint(out / "checkpoint")
    other = train_tokenizer(["completely different words here"] * 20 + ["zebra quokka"] * 20, 300)
    save_checkpoint(model, other, tmp_path / "mixed")
    with pytest.raises(ValueError, match="tokenizer: .* is not the one this model was trained with"):
        load_checkpoint(tmp_path / "mixed")


def test_windows_longer_than_the_models_positions_are_refused(trained):
    from ssa.lm.train import mean_loss

    run, out = trained
    model, _ = load_checkpoint(out / "checkpoint")
    too_long = torch.zeros((1, run.model.seq_len + 1), dtype=torch.long)
    with pytest.raises(ValueError, match="seq_len: windows of .* exceed the model's"):
        mean_loss(model, too_long, 1, "cpu")


def test_resumed_training_equals_uninterrupted_training(corpus, tmp_path, monkeypatch):
    import ssa.lm.train as training

    run = tiny_run(corpus, steps=3, warmup_steps=1, checkpoint_every=1)
    whole = training.train(run, tmp_path / "whole", device="cpu", progress=False)["history"]["train_loss"]
    schedule = training.learning_rate

    def interrupted(step, run):
        if step == 2:
            raise KeyboardInterrupt
        return schedule(step, run)

    monkeypatch.setattr(training, "learning_rate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        training.train(run, tmp_path / "parts", device="cpu", progress=False)
    monkeypatch.setattr(training, "learning_rate", schedule)
    resumed = training.train(run, tmp_path / "parts", device="cpu", progress=False)["history"]["train_loss"]
    assert resumed == pytest.approx(whole, abs=1e-6)
    with pytest.raises(ValueError, match="another configuration"):
        training.train(run.replace(train={"lr": 1e-3}), tmp_path / "parts", device="cpu", progress=False)


def test_stop_at_ends_an_accumulating_run_with_a_checkpoint_at_that_step(corpus, tmp_path):
    from ssa.lm.train import STATE_FILE, learning_rate, train

    run = tiny_run(corpus, steps=5, warmup_steps=2, micro_batch=2, global_batch=4, eval_every=10, checkpoint_every=10)
    summary = train(run, tmp_path / "stopped", device="cpu", progress=False, stop_at=2)  # two micro-batches a step
    history = summary["history"]
    assert history["step"] == [1, 2] and history["eval_step"] == [0, 2]
    assert history["lr"] == [learning_rate(0, run), learning_rate(1, run)]  # the schedule of all 5 steps
    assert summary["tokens_trained"] == 2 * 4 * run.model.seq_len
    assert torch.load(tmp_path / "stopped" / "checkpoint" / STATE_FILE, weights_only=False)["step"] == 2


def test_sentence_scores_do_not_depend_on_padding(trained):
    from ssa.lm.evaluate import blimp_accuracy, sentence_log_probabilities

    run, out = trained
    model, tokenizer = load_checkpoint(out / "checkpoint")
    short, long = "The cat sees the dog.", "The teacher follows the child and the farmer watches the river."
    alone = sentence_log_probabilities(model, tokenizer, [short])
    batched = sentence_log_probabilities(model, tokenizer, [short, long])
    assert alone[0] == pytest.approx(batched[0], abs=1e-4) and batched[0] > batched[1]
    rows = [{"sentence_good": short, "sentence_bad": "The cat the sees dog.", "UID": "u", "linguistics_term": "t", "field": "f"}]
    result = blimp_accuracy(model, tokenizer, rows)
    assert result["pairs"] == 1 and set(result["by_phenomenon"]) == {"t"}


def test_lm_eval_adapter_runs_a_local_task_offline(trained, corpus, tmp_path, monkeypatch):
    import lm_eval
    from lm_eval.api.instance import Instance
    from lm_eval.tasks import TaskManager

    from ssa.lm.evaluate import sentence_log_probabilities
    from ssa.lm.lm_eval_adapter import SSALanguageModel

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run, out = trained
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"question": f"The {noun}", "choices": [" sees the dog.", " the sees dog."], "label": 0}) + "\n" for noun in NOUNS))
    (tmp_path / "local_pairs.yaml").write_text(
        "task: local_pairs\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " + str(pairs) + "\n"
        "test_split: test\noutput_type: multiple_choice\ndoc_to_text: '{{question}}'\ndoc_to_choice: '{{choices}}'\n"
        "doc_to_target: label\nmetric_list:\n  - metric: acc\n"
    )
    outcome = lm_eval.simple_evaluate(
        model="ssa-lm", model_args=f"pretrained={out / 'checkpoint'},device=cpu", tasks=["local_pairs"],
        task_manager=TaskManager(include_path=str(tmp_path)), batch_size=4,
    )
    assert 0.0 <= outcome["results"]["local_pairs"]["acc,none"] <= 1.0

    adapter = SSALanguageModel(pretrained=str(out / "checkpoint"), device="cpu")
    text = "The cat sees the dog."
    rolling = adapter.loglikelihood_rolling([Instance("loglikelihood_rolling", {}, (text,), 0)])[0]
    model, tokenizer = load_checkpoint(out / "checkpoint")
    assert rolling == pytest.approx(sentence_log_probabilities(model, tokenizer, [text])[0], abs=1e-3)
    generated = adapter.generate_until([Instance("generate_until", {}, ("The cat", {"until": ["."], "max_gen_toks": 5}), 0)])
    assert isinstance(generated[0], str) and "." not in generated[0]


def _train_command(out: Path, corpus: Path) -> list[str]:
    return ["-m", "ssa.lm", "train", "--profile", "smoke", "--scorer", "ssa", "--train-source", str(corpus), "--ood-source", str(corpus),
            "--steps", "3", "--global-batch", "4", "--micro-batch", "2", "--threads", "1", "--no-progress", "--device", "cpu", "--out", str(out)]


def test_two_gloo_processes_give_the_same_losses_as_one(corpus, tmp_path):
    from ssa.lm.train import train

    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    two_processes = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", *_train_command(tmp_path / "two", corpus)],
        env=environment, cwd=ROOT, capture_output=True, text=True,
    )
    assert two_processes.returncode == 0, two_processes.stderr[-3000:]
    two = json.loads((tmp_path / "two" / "history.json").read_text())
    # The same run in this process: what `python -m ssa.lm train` does with the same arguments.
    run = tiny_run(corpus, steps=3, warmup_steps=2, global_batch=4, micro_batch=2)
    one = train(run, tmp_path / "one", device="cpu", progress=False)
    assert two["processes"] == 2 and one["processes"] == 1
    assert two["history"]["train_loss"] == pytest.approx(one["history"]["train_loss"], abs=1e-5)
    assert two["history"]["eval_loss"] == pytest.approx(one["history"]["eval_loss"], abs=1e-5)
