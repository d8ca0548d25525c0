"""The decoder language-model pipeline, on a synthetic corpus and the smoke profile."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ssa_book.lm import data
from ssa_book.lm.config import ModelConfig, run_config
from ssa_book.lm.model import build_model, load_checkpoint, parameter_count, save_checkpoint
from ssa_book.lm.records import LMRun
from ssa_book.lm.tokenizer import train_tokenizer
from synthetic_runs import PROVENANCE

ROOT = Path(__file__).resolve().parent.parent
NOUNS = ["cat", "dog", "bird", "teacher", "child", "farmer", "river", "city"]
VERBS = ["sees", "likes", "follows", "finds", "helps", "watches"]


def synthetic_corpus(path: Path, documents: int = 240, seed: int = 0) -> Path:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as stream:
        for _ in range(documents):
            sentences = [
                f"The {rng.choice(NOUNS)} {rng.choice(VERBS)} the {rng.choice(NOUNS)}."
                for _ in range(rng.randint(3, 8))
            ]
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
    from ssa_book.lm.train import train

    run = tiny_run(corpus, steps=3, warmup_steps=1)
    out = tmp_path_factory.mktemp("run")
    train(run, out, device="cpu", progress=False)
    return run, out


def test_paper_model_has_the_papers_parameter_count():
    model = build_model(run_config("paper").model, "ssa", device="meta")  # no memory allocated
    assert round(parameter_count(model) / 1e6, 1) == 113.9


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"num_heads": 3, "num_kv_heads": 1}, "multiple of num_heads"),
        ({"num_kv_heads": 5}, "num_kv_heads"),
        ({"seq_len": 0}, "seq_len"),
    ],
)
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
    from ssa_book.data import DatasetMissingError, _verified_folder

    monkeypatch.setenv("SSA_DATA_DIR", str(tmp_path))
    _verified_folder.cache_clear()
    with pytest.raises(DatasetMissingError, match="python -m ssa_book data fetch webtext"):
        data.documents("webtext")
    with pytest.raises(ValueError, match="source must be"):
        data.documents("nowhere")


def test_fineweb_edu_is_streamed_sharded_and_packed_on_the_fly(corpus, tmp_path, monkeypatch):
    import datasets

    from ssa_book.lm.train import train

    documents = [{"text": text} for text in data.documents(str(corpus))]
    requested = []

    def fake_load_dataset(path, name=None, split=None, streaming=False):
        requested.append((path, name, split, streaming))
        return datasets.IterableDataset.from_generator(lambda: iter(documents))

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    shard = list(data.documents("fineweb-edu", rank=1, world_size=2))
    assert requested[0] == (*data.FINEWEB_EDU, "train", True)
    assert [text for text in shard] == [row["text"] for row in documents[1::2]]
    run = run_config("smoke", "ssa").replace(
        data={"train_source": "fineweb-edu", "ood_source": str(corpus)}, train={"steps": 2, "warmup_steps": 1}
    )
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
    from ssa_book.lm.train import mean_loss

    run, out = trained
    model, _ = load_checkpoint(out / "checkpoint")
    too_long = torch.zeros((1, run.model.seq_len + 1), dtype=torch.long)
    with pytest.raises(ValueError, match="seq_len: windows of .* exceed the model's"):
        mean_loss(model, too_long, 1, "cpu")


def test_stop_at_ends_an_accumulating_run_with_a_checkpoint_at_that_step(corpus, tmp_path):
    from ssa_book.lm.train import STATE_FILE, learning_rate, train

    run = tiny_run(corpus, steps=5, warmup_steps=2, micro_batch=2, global_batch=4, eval_every=10, checkpoint_every=10)
    summary = train(run, tmp_path / "stopped", device="cpu", progress=False, stop_at=2)  # two micro-batches a step
    history = summary["history"]
    assert history["step"] == [1, 2] and history["eval_step"] == [0, 2]
    assert history["lr"] == [learning_rate(0, run), learning_rate(1, run)]  # the schedule of all 5 steps
    assert summary["tokens_trained"] == 2 * 4 * run.model.seq_len
    assert torch.load(tmp_path / "stopped" / STATE_FILE, weights_only=True)["step"] == 2
    assert (tmp_path / "stopped" / "checkpoint" / "config.json").is_file()  # the save_pretrained folder of the stop


def test_sentence_scores_do_not_depend_on_padding(trained):
    from ssa_book.lm.evaluate import blimp_accuracy, sentence_log_probabilities

    run, out = trained
    model, tokenizer = load_checkpoint(out / "checkpoint")
    short, long = "The cat sees the dog.", "The teacher follows the child and the farmer watches the river."
    alone = sentence_log_probabilities(model, tokenizer, [short])
    batched = sentence_log_probabilities(model, tokenizer, [short, long])
    assert alone[0] == pytest.approx(batched[0], abs=1e-4) and batched[0] > batched[1]
    rows = [
        {
            "sentence_good": short,
            "sentence_bad": "The cat the sees dog.",
            "UID": "u",
            "linguistics_term": "t",
            "field": "f",
        }
    ]
    result = blimp_accuracy(model, tokenizer, rows)
    assert result["pairs"] == 1 and set(result["by_phenomenon"]) == {"t"}


def test_lm_eval_adapter_runs_a_local_task_offline(trained, corpus, tmp_path, monkeypatch):
    import lm_eval
    from lm_eval.api.instance import Instance

    from ssa_book.cli import decoder as cli
    from ssa_book.lm.evaluate import sentence_log_probabilities
    from ssa_book.lm.lm_eval_adapter import SSALanguageModel

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run, out = trained
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({"question": f"The {noun}", "choices": [" sees the dog.", " the sees dog."], "label": 0}) + "\n"
            for noun in NOUNS
        )
    )
    (tmp_path / "local_pairs.yaml").write_text(
        "task: local_pairs\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " + str(pairs) + "\n"
        "test_split: test\noutput_type: multiple_choice\ndoc_to_text: '{{question}}'\ndoc_to_choice: '{{choices}}'\n"
        "doc_to_target: label\nmetric_list:\n  - metric: acc\n"
    )
    # The command line (its arguments checked first), then lm-eval's Python entry, on the same tasks.
    written = tmp_path / "lm_eval" / "results.json"
    assert (
        cli.main(
            [
                "lm-eval",
                "--model_args",
                f"pretrained={out / 'checkpoint'},device=cpu",
                "--tasks",
                "local_pairs",
                "--include_path",
                str(tmp_path),
                "--batch_size",
                "4",
                "--limit",
                "3",
                "--output_path",
                str(written),
                "--log_samples",
            ]
        )
        == 0
    )
    from_command = json.loads(written.read_text())
    assert (
        0.0 <= from_command["results"]["local_pairs"]["acc,none"] <= 1.0
        and len(from_command["samples"]["local_pairs"]) == 3
    )
    outcome = lm_eval.simple_evaluate(
        model="ssa-lm",
        model_args=f"pretrained={out / 'checkpoint'},device=cpu",
        tasks=["local_pairs"],
        task_manager=cli.lm_eval_tasks(str(tmp_path)),
        batch_size=4,
    )
    assert 0.0 <= outcome["results"]["local_pairs"]["acc,none"] <= 1.0

    adapter = SSALanguageModel(pretrained=str(out / "checkpoint"), device="cpu")
    text = "The cat sees the dog."
    rolling = adapter.loglikelihood_rolling([Instance("loglikelihood_rolling", {}, (text,), 0)])[0]
    model, tokenizer = load_checkpoint(out / "checkpoint")
    assert rolling == pytest.approx(sentence_log_probabilities(model, tokenizer, [text])[0], abs=1e-3)
    generated = adapter.generate_until(
        [Instance("generate_until", {}, ("The cat", {"until": ["."], "max_gen_toks": 5}), 0)]
    )
    assert isinstance(generated[0], str) and "." not in generated[0]


def _train_command(out: Path, corpus: Path) -> list[str]:
    return [
        "-m",
        "ssa_book",
        "decoder",
        "train",
        "--profile",
        "smoke",
        "--scorer",
        "ssa",
        "--train-source",
        str(corpus),
        "--ood-source",
        str(corpus),
        "--steps",
        "3",
        "--global-batch",
        "4",
        "--micro-batch",
        "2",
        "--threads",
        "1",
        "--no-progress",
        "--device",
        "cpu",
        "--out",
        str(out),
    ]


def test_two_gloo_processes_give_the_same_losses_as_one(corpus, tmp_path):
    from ssa_book.lm.train import train

    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    two_processes = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            *_train_command(tmp_path / "two", corpus),
        ],
        env=environment,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert two_processes.returncode == 0, two_processes.stderr[-3000:]
    two = json.loads((tmp_path / "two" / "history.json").read_text())
    # The same run in this process: what `python -m ssa_book decoder train` does with the same arguments.
    run = tiny_run(corpus, steps=3, warmup_steps=2, global_batch=4, micro_batch=2)
    one = train(run, tmp_path / "one", device="cpu", progress=False)
    assert two["processes"] == 2 and one["processes"] == 1
    assert two["history"]["train_loss"] == pytest.approx(one["history"]["train_loss"], abs=1e-5)
    assert two["history"]["eval_loss"] == pytest.approx(one["history"]["eval_loss"], abs=1e-5)


# ---- verdicts (ssa_book.verdicts' one rule, paired by seed) ------------------------------------------


def lm_run(
    scorer: str,
    seed: int,
    perplexity_id: float,
    perplexity_ood: float,
    blimp: float = 0.6,
    unigram: float = 500.0,
    eval_loss=None,
) -> LMRun:
    """The record of a synthetic run result with the fields the verdict reads."""
    entry = {
        "scorer": scorer,
        "seed": seed,
        "perplexity_id": perplexity_id,
        "perplexity_ood": perplexity_ood,
        "unigram_perplexity_id": unigram,
        "unigram_perplexity_ood": 1.2 * unigram,
        "blimp": {"accuracy": blimp, "by_phenomenon": {}, "pairs": 6700},
        "tokens_trained": 1_000_000,
        "parameters": 2_000_000,
    }
    if eval_loss is not None:
        entry["history"] = {"eval_step": [0, 50, 100], "eval_loss": list(eval_loss)}
    return LMRun.from_result(entry)


def paired_runs(seeds, ssa_id_factor: float, ssa_ood_factor: float, blimp_gain: float = 0.0, **extra) -> list[dict]:
    """Softmax perplexities that differ a lot from seed to seed; SSA's are softmax's times a factor
    for the same seed, so the paired differences are constant while the unpaired values are not."""
    runs = []
    for seed in seeds:
        softmax_id, softmax_ood = 100.0 + 17.0 * (seed % 4), 150.0 + 23.0 * (seed % 3)
        blimp = 0.55 + 0.01 * (seed % 5)
        runs.append(lm_run("softmax", seed, softmax_id, softmax_ood, blimp, **extra))
        runs.append(
            lm_run(
                "ssa", seed, softmax_id * ssa_id_factor, softmax_ood * ssa_ood_factor, blimp + blimp_gain / 100, **extra
            )
        )
    return runs


def test_claims_are_judged_on_runs_paired_by_seed_whatever_their_order():
    from ssa_book.lm import experiment

    runs = paired_runs(range(8), ssa_id_factor=math.exp(-0.05), ssa_ood_factor=math.exp(0.05))
    random.Random(0).shuffle(runs)
    found = experiment.claim_verdicts(runs)
    assert set(found) == {"perplexity_id", "perplexity_ood", "blimp"}
    assert found["perplexity_id"].outcome == "better" and found["perplexity_id"].pairs == 8
    assert found["perplexity_id"].differences == pytest.approx((0.05,) * 8)  # ln(softmax / SSA) per seed
    assert found["perplexity_ood"].outcome == "worse"
    assert found["blimp"].outcome == "no difference that matters"
    # A seed with only one scorer is no pair; a seed run twice is refused.
    assert experiment.claim_verdicts(runs + [lm_run("ssa", 99, 50.0, 60.0)])["perplexity_id"].pairs == 8
    with pytest.raises(ValueError, match="seed 0"):
        experiment.claim_verdicts(runs + [lm_run("ssa", 0, 50.0, 60.0)])


def test_the_summary_says_the_pairs_that_would_decide_an_open_verdict_once():
    from ssa_book.lm import experiment

    runs = paired_runs(range(8), ssa_id_factor=math.exp(-0.05), ssa_ood_factor=1.0, blimp_gain=1.5)
    for index in range(1, len(runs), 4):  # every other seed's SSA loses instead: an open verdict
        runs[index] = dataclasses.replace(runs[index], perplexity_id=runs[index].perplexity_id * math.exp(0.12))
    summary = experiment.verdict(runs)
    undecided = summary["claims"]["perplexity_id"]
    assert undecided.outcome == "undecided" and undecided.seeds_to_resolve
    said = summary["summary"]
    assert f"perplexity in distribution undecided (effect {undecided.effect:+.3g}" in said
    assert said.count(f"{undecided.seeds_to_resolve:,}") == 1 and "seeds would decide" not in said


def test_fewer_than_six_pairs_are_too_few_with_the_pairs_that_would_decide():
    from ssa_book.lm import experiment

    runs = paired_runs(range(2), ssa_id_factor=math.exp(-0.05), ssa_ood_factor=1.0, blimp_gain=1.5)
    runs[-1] = dataclasses.replace(
        runs[-1], perplexity_id=runs[-1].perplexity_id * math.exp(-0.03)
    )  # some spread between the two pairs
    summary = experiment.verdict(runs)
    assert summary["learned"]
    assert {verdict.outcome for verdict in summary["claims"].values()} == {"exploratory"}
    assert summary["claims"]["perplexity_id"].seeds_to_resolve >= 6
    assert "no claim can be decided" in summary["summary"]
    table = experiment.verdict_table(summary["claims"])
    assert list(table["pairs"]) == [2, 2, 2]
    power = experiment.power_table(summary["claims"], simulations=50)
    assert {"2 seeds", "10 seeds", "20 seeds"} <= set(power.columns)
    assert (power["2 seeds"].dropna() == 0).all()  # below six pairs the rule decides nothing


def test_unlearned_models_leave_every_claim_not_learned_and_no_runs_leave_it_not_tested():
    from ssa_book.lm import experiment

    runs = paired_runs(range(6), ssa_id_factor=0.5, ssa_ood_factor=0.5, unigram=150.0)
    summary = experiment.verdict(runs)
    assert not summary["learned"]
    for verdict in summary["claims"].values():
        assert verdict.outcome == "not learned" and "unigram" in verdict.detail
    assert "not learned" in summary["summary"]
    assert {v.outcome for v in experiment.claim_verdicts([]).values()} == {"not tested"}
    only_softmax = [run for run in paired_runs(range(6), 0.9, 0.9) if run.scorer == "softmax"]
    assert {v.outcome for v in experiment.claim_verdicts(only_softmax).values()} == {"not tested"}


def test_calibration_says_when_the_baseline_is_far_from_its_reference(tmp_path):
    from ssa_book.lm import experiment

    falling = paired_runs(range(6), math.exp(-0.05), 1.0, eval_loss=[8.0, 6.0, 5.9])  # still falling by 0.1
    calibrated = experiment.calibration(falling)
    assert calibrated["far"] and calibrated["still_falling"]["drop"] == pytest.approx(0.1)
    assert calibrated["unigram_ratio"]["id"] == pytest.approx(
        max(run.perplexity_id for run in falling if run.scorer == "softmax") / 500
    )
    assert "undertrained" in experiment.claim_verdicts(falling)["perplexity_id"].detail
    flat = paired_runs(range(6), math.exp(-0.05), 1.0, eval_loss=[8.0, 6.0, 5.995])
    assert experiment.calibration(flat)["far"] is False
    assert experiment.claim_verdicts(flat)["perplexity_id"].detail == ""
    # A longer-trained softmax run of the same model and data in the cache is the reference.
    longer = run_config("cpu", "softmax", 0).replace(train={"steps": 10 * run_config("cpu").train.steps})
    folder = tmp_path / "cpu" / "lm" / "run"
    folder.mkdir(parents=True)
    (folder / "entry.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "experiment": "lm/run",
                "profile": "cpu",
                "config": longer.to_dict(),
                "result": {"perplexity_id": 50.0},
                "provenance": PROVENANCE,
            }
        )
    )
    calibrated = experiment.calibration(falling, profile="cpu", results_dir=tmp_path)
    reference = calibrated["longer_trained"]
    assert reference["perplexity_id"] == 50.0 and reference["runs"] == 1 and calibrated["far"]
    assert "trained on" in calibrated["note"]


@pytest.mark.parametrize("scorer", ["softmax", "ssa"])
def test_the_decoder_trains_under_bfloat16_autocast_as_on_a_gpu(scorer):
    # The trainer autocasts to bfloat16 on CUDA; Nemotron's rotary embedding then hands attention
    # a float32 query and key with a bfloat16 value. CPU autocast takes the same route.
    torch.manual_seed(0)
    shape = ModelConfig(
        vocab_size=128, hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, ffn_size=128, seq_len=32
    )
    model = build_model(shape, scorer)
    tokens = torch.randint(0, shape.vocab_size, (2, shape.seq_len))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(input_ids=tokens, labels=tokens).loss
    loss.backward()
    assert math.isfinite(loss.item())
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_the_papers_gap_is_placed_against_each_perplexity_interval():
    from ssa_book.lm import experiment
    from ssa_book.verdicts.words import UNDECIDED
    from ssa_book.verdicts.verdict import Verdict

    gap = experiment.paper_log_gap("id")
    found = {
        "perplexity_id": Verdict("id", UNDECIDED, interval=(-0.04, gap / 2)),
        "perplexity_ood": Verdict("ood", UNDECIDED, interval=(-0.01, 1.0)),
    }
    sentence = experiment.paper_gap_sentence(found)
    assert sentence.startswith("the paper's gap lies above our interval (perplexity in distribution: interval [-0.040,")
    assert "the paper's gap lies inside our interval (perplexity out of distribution" in sentence
    assert experiment.paper_gap_sentence({"perplexity_id": Verdict("id", UNDECIDED)}) == ""
