"""The one training loop (ssa_book.training), tested once for the three chapters that use it.

Each chapter trains a tiny model offline (6 steps, a checkpoint every 2): a run interrupted and
resumed equals the uninterrupted one exactly, and a checkpoint that must not be used (another
configuration, a truncated file, a file crafted to run code when unpickled) is ignored with a
warning, giving exactly a fresh run."""

from __future__ import annotations

import dataclasses
import json
import pickle
import random
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from ssa_book import training
from ssa_book.training import CheckpointMismatchWarning

STEPS, INTERRUPT, LAST_CHECKPOINT = 6, 5, 4  # batch 5 raises; the checkpoint of step 4 is the last one written


@pytest.fixture(autouse=True)
def one_thread():
    # Tiny models on a shared CPU run many times faster on one thread.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@dataclasses.dataclass
class Chapter:
    name: str
    run: Callable[..., object]  # (where, *, seed=0, stop_at=None) -> the chapter's history
    state_file: Callable[[Path], Path]  # where -> the checkpoint the harness writes there
    batches: tuple[object, str]  # (owner, name) of the chapter's function drawing batch `step` (step last)


def icl_chapter(root: Path) -> Chapter:
    import ssa_book.icl.train as icl
    from ssa_book.icl.curriculum import Curriculum
    from ssa_book.icl.models import ModelConfig

    def run(where: Path, *, seed: int = 0, stop_at: int | None = None):
        config = icl.TrainConfig(
            task="linear",
            model=ModelConfig(n_layer=1, n_head=2, n_embd=8, n_positions=12, scorer="ssa"),
            curriculum=Curriculum(3, 5, 2, 3),
            batch_size=8,
            learning_rate=1e-2,
            train_steps=STEPS,
            log_every=1,
            seed=seed,
        )
        return icl.train(
            config, checkpoint=where / "icl.pt", checkpoint_every=2, stop_at=stop_at, progress=False
        ).history

    return Chapter("icl", run, lambda where: where / "icl.pt", (icl, "training_batch"))


def encoder_chapter(root: Path) -> Chapter:
    from ssa_book.encoder import zorro
    from ssa_book.encoder.corpus import Corpus
    from ssa_book.encoder.model import EncoderConfig
    from ssa_book.encoder.train import CHECKPOINT_FILE, BatchStream, train_and_probe

    sentences = ["the dog is here .", "where is the ball ?", "you want the cup .", "look at the big dog !"] * 30
    corpus = Corpus(
        utterances=tuple(sentences), ages_days=(1.0,) * len(sentences), corpus_names=("T",) * len(sentences), dropped={}
    )
    folder = root / "zorro" / "sentences"
    folder.mkdir(parents=True)
    for name in zorro.PARADIGMS:
        (folder / f"{name}.txt").write_text(
            "dog the is here .\nthe dog is here .\nball where the is ?\nwhere is the ball ?\n"
        )
    config = EncoderConfig.for_profile(  # dropout 0.1: the RNG state must travel in the checkpoint
        "smoke",
        vocab_size=300,
        max_utterances=None,
        held_out_every=10,
        steps=STEPS,
        eval_every=3,
        checkpoint_every=2,
        curve_pairs=1,
        probe_pairs=1,
        pll_pairs=1,
        held_out_utterances=5,
    )

    def run(where: Path, *, seed: int = 0, stop_at: int | None = None):
        result = train_and_probe(
            config,
            "ssa",
            3 + seed,
            checkpoint_dir=where,
            corpus=corpus,
            zorro_folder=root / "zorro",
            progress=False,
            stop_at=stop_at,
        )
        return {key: result[key] for key in ("curve", "scorer_values", "holistic", "pll")}

    return Chapter("encoder", run, lambda where: where / CHECKPOINT_FILE, (BatchStream, "batch"))


def lm_chapter(root: Path) -> Chapter:
    from ssa_book.lm.config import run_config
    from ssa_book.lm.data import GlobalBatches
    from ssa_book.lm.train import STATE_FILE, train

    rng = random.Random(0)
    nouns, verbs = ["cat", "dog", "bird", "teacher", "child", "river"], ["sees", "likes", "follows", "helps"]
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as stream:
        for _ in range(240):
            text = " ".join(
                f"The {rng.choice(nouns)} {rng.choice(verbs)} the {rng.choice(nouns)}."
                for _ in range(rng.randint(3, 8))
            )
            stream.write(json.dumps({"text": text}) + "\n")
    data = {"train_source": str(root / "corpus.jsonl"), "ood_source": str(root / "corpus.jsonl")}

    def run(where: Path, *, seed: int = 0, stop_at: int | None = None):
        # Two micro-batches a step: the accumulation is what is resumed.
        run = run_config("smoke", "ssa", seed).replace(
            data=data,
            train={
                "steps": STEPS,
                "warmup_steps": 2,
                "global_batch": 4,
                "micro_batch": 2,
                "eval_every": 3,
                "checkpoint_every": 2,
            },
        )
        history = train(run, where, device="cpu", progress=False, stop_at=stop_at)["history"]
        return {key: value for key, value in history.items() if key != "train_seconds"}

    return Chapter("lm", run, lambda where: where / STATE_FILE, (GlobalBatches, "local_batch"))


BUILDERS = {"icl": icl_chapter, "encoder": encoder_chapter, "lm": lm_chapter}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """Per chapter: the chapter, and its uninterrupted run's (history, final checkpoint), built once."""
    runs = {}

    def get(name: str):
        if name not in runs:
            chapter = BUILDERS[name](tmp_path_factory.mktemp(f"{name}-inputs"))
            where = tmp_path_factory.mktemp(f"{name}-whole")
            runs[name] = chapter, where, chapter.run(where)
        return runs[name]

    return get


def watch(monkeypatch, chapter: Chapter, stop: int | None = None) -> list[int]:
    """Record the steps whose batch the chapter draws; batch ``stop`` raises KeyboardInterrupt (a kill)."""
    owner, name = chapter.batches
    original, steps = getattr(owner, name), []

    def watched(*arguments):
        steps.append(arguments[-1])
        if arguments[-1] == stop:
            raise KeyboardInterrupt
        return original(*arguments)

    monkeypatch.setattr(owner, name, watched)
    return steps


def assert_same_run(chapter: Chapter, where: Path, history, whole: Path, whole_history) -> None:
    """Final weights, every step's loss and the chapter's history equal the uninterrupted run's exactly."""
    state = torch.load(chapter.state_file(where), map_location="cpu", weights_only=True)
    reference = torch.load(chapter.state_file(whole), map_location="cpu", weights_only=True)
    assert state["step"] == reference["step"] == STEPS
    assert state["model"].keys() == reference["model"].keys()
    for name, tensor in reference["model"].items():
        assert torch.equal(state["model"][name], tensor), name
    assert torch.equal(state["losses"], reference["losses"]) and len(state["losses"]) == STEPS
    assert history == whole_history


@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_resumed_run_equals_the_uninterrupted_one(name, uninterrupted, tmp_path, monkeypatch):
    chapter, whole, whole_history = uninterrupted(name)
    watch(monkeypatch, chapter, stop=INTERRUPT)
    with pytest.raises(KeyboardInterrupt):
        chapter.run(tmp_path)
    assert torch.load(chapter.state_file(tmp_path), weights_only=True)["step"] == LAST_CHECKPOINT
    monkeypatch.undo()
    steps = watch(monkeypatch, chapter)
    history = chapter.run(tmp_path)
    assert steps == list(range(LAST_CHECKPOINT, STEPS))  # resumed, not retrained
    assert_same_run(chapter, tmp_path, history, whole, whole_history)
    # A finished run is loaded, not trained again.
    steps.clear()
    assert chapter.run(tmp_path) == whole_history and steps == []


@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_checkpoint_of_another_configuration_is_ignored_with_a_warning(name, uninterrupted, tmp_path):
    chapter, whole, whole_history = uninterrupted(name)
    chapter.run(tmp_path, seed=1, stop_at=2)
    with pytest.warns(CheckpointMismatchWarning, match=r"ignored \(written for another configuration: .*seed"):
        history = chapter.run(tmp_path)
    assert_same_run(chapter, tmp_path, history, whole, whole_history)


@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_truncated_checkpoint_is_ignored_with_a_warning(name, uninterrupted, tmp_path):
    chapter, whole, whole_history = uninterrupted(name)
    path = chapter.state_file(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    content = chapter.state_file(whole).read_bytes()
    path.write_bytes(content[: len(content) // 2])  # what a disk filling up mid-write would leave
    with pytest.warns(CheckpointMismatchWarning, match=r"ignored \(unreadable"):
        history = chapter.run(tmp_path)
    assert_same_run(chapter, tmp_path, history, whole, whole_history)


class Exploit:
    """Unpickling it runs code: it writes ``marker``."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').write('ran')",)


@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_checkpoint_that_runs_code_when_unpickled_is_refused_unexecuted(name, uninterrupted, tmp_path):
    chapter, whole, whole_history = uninterrupted(name)
    live = tmp_path / "live"
    pickle.loads(pickle.dumps(Exploit(live)))  # the payload does run under a plain unpickler
    assert live.exists()
    marker = tmp_path / "marker"
    path = chapter.state_file(tmp_path / "run")
    path.parent.mkdir(parents=True)
    torch.save({"format": training.FORMAT, "config": {}, "step": Exploit(marker)}, path)
    with pytest.warns(CheckpointMismatchWarning, match=r"ignored \(unreadable: UnpicklingError"):
        history = chapter.run(tmp_path / "run")
    assert not marker.exists()
    assert_same_run(chapter, tmp_path / "run", history, whole, whole_history)


def test_tensors_that_do_not_fit_the_model_are_ignored_with_a_warning(tmp_path):
    def spec(width: int) -> training.Training:
        torch.manual_seed(0)
        model = torch.nn.Linear(width, 1)
        batch = lambda step: [torch.full((2, width), float(step))]  # noqa: E731
        return training.Training(
            model,
            torch.optim.SGD(model.parameters(), lr=0.1),
            batch,
            lambda x: model(x).square().mean(),
            steps=3,
            identity={"width": 1},
            checkpoint=tmp_path / "state.pt",
        )

    training.train(spec(3), progress=False)
    state = training.load_checkpoint(tmp_path / "state.pt", {"width": 1})
    assert state["step"] == 3
    with pytest.warns(CheckpointMismatchWarning, match=r"tensors do not fit the model: weight"):
        trained = training.train(spec(4), state, progress=False)
    assert trained.resumed_from == 0 and trained.step == 3


def test_a_non_finite_loss_names_the_step_and_leaves_the_last_checkpoint(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    batch = lambda step: [torch.tensor([[float("inf") if step == 3 else 1.0]])]  # noqa: E731
    spec = training.Training(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        batch,
        lambda x: model(x).sum(),
        steps=5,
        identity={},
        checkpoint=tmp_path / "state.pt",
        checkpoint_every=2,
        description="toy",
    )
    with pytest.raises(FloatingPointError, match="toy: the training loss became .* at step 3"):
        training.train(spec, progress=False, threads=2)
    assert torch.get_num_threads() == 1  # restored
    assert training.load_checkpoint(tmp_path / "state.pt", {})["step"] == 2


def test_history_averages_each_log_interval_and_the_last_shorter_one():
    assert training._history([1.0, 3.0, 5.0, 7.0, 9.0], 2) == [(2, 2.0), (4, 6.0), (5, 9.0)]
    assert training._history([], 3) == []
