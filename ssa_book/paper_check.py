"""Does every chapter's ``paper`` configuration run? Two optimizer steps each, on any device.

    python -m ssa_book paper-check                                   # every chapter, on the CPU
    python -m ssa_book paper-check --device cuda --micro-batch paper # on a GPU, the paper's micro-batch
    python -m pytest -m paper_profile tests/test_paper_profile.py   # the same, as tests (CPU)

No ``paper`` run has finished yet (they need GPUs and days), so this is the evidence that those
configurations are sound. Each chapter trains its paper-sized models for :data:`STEPS` optimizer
steps through its own harness and result cache (``stop_at`` of the trainers), then checks:

* the training loss of every step is finite;
* the checkpoint is where the trainer resumes from, records the steps done, and loads back into
  a freshly built model of the paper's size;
* the result-cache entry is where the chapter's cache looks for it (``<results>/paper/...``), is
  valid (:func:`ssa_book.results.validate.list_entries`), carries its provenance (commit, versions, device,
  wall time), and a second lookup with the cache required returns it without training.

What shrinks, and nothing else; model sizes, sequence lengths, optimizers, learning-rate
schedules (of the full run: a stopped run is at the start of its warm-up), curricula, masking,
tokenizer sizes and seeds are the ``paper`` profile's:

* training stops after :data:`STEPS` steps;
* the decoder's micro-batch is 1 sequence of 1024 tokens (``--micro-batch smallest``, the
  default) or the paper's 4 (``--micro-batch paper``), and a step accumulates
  :data:`LM_ACCUMULATION` micro-batches instead of the paper's 768 sequences, so that gradient
  accumulation runs but a CPU step does not take 768 forward passes. The in-context learners
  (64 prompts) and the encoder (16 utterances) accumulate nothing: their batch is the paper's;
* evaluation: fewer prompts, scales and lengths (the extreme ones are kept), windows and pairs,
  a training-loss point at every step (:func:`icl_experiment`, :func:`lm_run`,
  :func:`encoder_config` say exactly what);
* the decoder's text: the paper's FineWeb-Edu and Wikipedia are streamed from the Hugging Face
  Hub, so offline (``--lm-data local``, the default) the data directory's web text and
  WikiText-2 stand in; ``--lm-data paper`` streams them.

Every chapter runs in a process of its own, so that its wall time and peak memory are its own,
with the result cache, checkpoints and run folders in a temporary folder (``$SSA_RESULTS_DIR``,
``$SSA_CHECKPOINT_DIR``, ``$SSA_RUNS_DIR``): the entries of stopped runs are keyed like full
runs and must never reach ``results/``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import torch

from ssa_book.encoder import experiment as encoder, model as encoder_model, train as encoder_train
from ssa_book.encoder.records import EncoderRun
from ssa_book.icl import experiments, train as icl_train
from ssa_book.icl.records import ICLRun
from ssa_book.icl.tasks import TASKS
from ssa_book.lm import experiment as lm, model as lm_model, train as lm_train
from ssa_book.lm.config import run_config
from ssa_book.profiles import resolve_device
from ssa_book.results.cache import cache_required
from ssa_book.results.keys import check_throwaway_cache, entry_path
from ssa_book.results.store import entry_exists
from ssa_book.results.validate import list_entries
from ssa.scoring import scorer_names

PROFILE = "paper"
STEPS = 2  # optimizer steps per model
LM_ACCUMULATION = 2  # decoder micro-batches per optimizer step
MICRO_BATCHES = ("smallest", "paper")
LM_DATA = ("local", "paper")
# Folders the harnesses write to, each set to a folder under the check's work folder.
FOLDER_ENV = {"results": "SSA_RESULTS_DIR", "checkpoints": "SSA_CHECKPOINT_DIR", "runs": "SSA_RUNS_DIR"}


class PaperCheckError(AssertionError):
    """A check failed; the message says which and what was found."""


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise PaperCheckError(message)


def _finite_losses(losses: list, where: str, steps: int) -> list[float]:
    _require(len(losses) == steps, f"{where}: {len(losses)} training losses recorded, expected one per step ({steps})")
    _require(
        all(isinstance(loss, (int, float)) and math.isfinite(loss) for loss in losses),
        f"{where}: non-finite training loss {losses}",
    )
    return [float(loss) for loss in losses]


def _check_entry(experiment: str, config, device: str, computed: dict, lookup: Callable[[], dict]) -> str:
    """The entry of ``config`` is where the cache expects it, valid, with provenance, and found again."""
    path = entry_path(experiment, config, profile=PROFILE)
    _require(
        entry_exists(experiment, config, profile=PROFILE),
        f"cache: no entry at {path}, where {experiment!r} looks for it",
    )
    listed = {entry.path.resolve(): entry for entry in list_entries(profile=PROFILE)}
    entry = listed.get(path.resolve())
    _require(
        entry is not None and not entry.problems,
        f"cache: {path} is not a valid entry: {entry.problems if entry else 'not listed'}",
    )
    # A valid entry holds every field of its provenance but the optional ones; a new one records its processor too.
    provenance = entry.stored.provenance
    _require(provenance.processor is not None, f"cache: {path} records no processor")
    _require(
        provenance.device == device, f"cache: {path} records device {provenance.device!r}, the run used {device!r}"
    )
    _require(provenance.wall_time_s > 0, f"cache: {path} records wall time {provenance.wall_time_s}")
    with cache_required():
        again = lookup()
    _require(again == computed, f"cache: the lookup of {path} returned another result")
    return str(path)


def _load_state(path: Path, steps: int) -> dict:
    _require(path.is_file(), f"checkpoint: none at {path}")
    state = torch.load(path, map_location="cpu", weights_only=True)
    _require(state.get("step") == steps, f"checkpoint: {path} is at step {state.get('step')}, expected {steps}")
    return state


# ---- in-context learning (icl_quantification, icl_linear, icl_collapse; alternative_scorers) ----


def icl_experiment(task: str, scorer: str, seed: int = 0):
    """The paper experiment of ``task`` x ``scorer``, evaluated small: the lowest and highest
    scale and prompt length, 4 prompts per cell, and a training-loss point at every step."""
    experiment = experiments.experiment_config(task, scorer, PROFILE, seed)
    evaluation = experiment.eval
    evaluation = dataclasses.replace(
        evaluation,
        sigmas=(evaluation.sigmas[0], evaluation.sigmas[-1]),
        lengths=(evaluation.lengths[0], evaluation.lengths[-1]),
        prompts=4,
        length_prompts=4,
        diagnostic_prompts=4,
    )
    return dataclasses.replace(experiment, train=dataclasses.replace(experiment.train, log_every=1), eval=evaluation)


def check_icl(task: str, scorer: str, *, device: str, steps: int = STEPS) -> dict:
    experiment = icl_experiment(task, scorer)
    result = experiments.cached_run(experiment, profile=PROFILE, device=device, progress=False, stop_at=steps)
    spread = experiments.cached_logit_spread(experiment, profile=PROFILE, device=device, progress=False, stop_at=steps)
    record = ICLRun.from_result(
        result, task=task, scorer=scorer, seed=experiment.train.seed
    )  # the layout the chapters read
    _require(record.training.steps == steps, f"trained {record.training.steps} steps, expected {steps}")
    path = icl_train.checkpoint_path(experiment.train)
    state = _load_state(path, steps)
    icl_train.build_model(experiment.train).load_state_dict(state["model"])  # raises on a missing or misshapen tensor
    losses = _finite_losses(state["losses"].tolist(), f"icl {task}/{scorer}", steps)
    error = float(record.sweep("sigma_x").error()[0])
    _require(math.isfinite(error), f"evaluation: in-distribution prompt error {error}")
    entries = [
        _check_entry(
            experiment.name,
            experiment,
            device,
            result,
            lambda: experiments.cached_run(experiment, profile=PROFILE, device=device, progress=False),
        ),
        _check_entry(
            f"icl_logits/{task}/{scorer}",
            experiments.logit_spread_key(experiment),
            device,
            spread,
            lambda: experiments.cached_logit_spread(experiment, profile=PROFILE, device=device, progress=False),
        ),
    ]
    model = experiment.train.model
    return {
        "unit": f"{task}/{scorer}",
        "losses": losses,
        "checkpoint": str(path),
        "cache_entries": entries,
        "shape": f"{model.n_layer} layers x {model.n_head} heads x {model.n_embd}, batch {experiment.train.batch_size}, "
        f"{experiment.train.curriculum.points(0)} points at step 0",
    }


def _icl_units(scorers) -> list[tuple[str, Callable]]:
    return [
        (f"{task}/{scorer}", lambda device, task=task, scorer=scorer: check_icl(task, scorer, device=device))
        for task in TASKS
        for scorer in scorers
    ]


def _alternative_units() -> list[tuple[str, Callable]]:
    """Every other scorer once, the tasks taken in turn (the harness is the ICL chapters')."""
    others = [scorer for scorer in scorer_names() if scorer not in experiments.CHAPTER_SCORERS]
    return [
        (
            f"{TASKS[index % len(TASKS)]}/{scorer}",
            lambda device, task=TASKS[index % len(TASKS)], scorer=scorer: check_icl(task, scorer, device=device),
        )
        for index, scorer in enumerate(others)
    ]


# ---- decoder language model (decoder) ---------------------------------------------------------


def lm_run(scorer: str, micro_batch: str = "smallest", data: str = "local"):
    """The paper run of ``scorer`` with the micro-batch, global batch, evaluation and (``local``)
    text of the check; everything else is :func:`ssa_book.lm.config.run_config`'s."""
    if micro_batch not in MICRO_BATCHES or data not in LM_DATA:
        raise ValueError(
            f"micro_batch must be one of {MICRO_BATCHES} and data one of {LM_DATA}; got {micro_batch!r}, {data!r}"
        )
    run = run_config(PROFILE, scorer, lm.SEEDS[PROFILE][0])
    sequences = 1 if micro_batch == "smallest" else run.train.micro_batch
    texts = {"train_source": "webtext", "ood_source": "wikitext-2"} if data == "local" else {}
    return run.replace(
        train={
            "micro_batch": sequences,
            "global_batch": LM_ACCUMULATION * sequences,
            "eval_windows_during_training": 2,
        },
        data={"eval_windows": 2, "blimp_pairs_per_paradigm": 1, **texts},
    )


def check_lm(
    scorer: str, *, device: str, micro_batch: str = "smallest", data: str = "local", steps: int = STEPS
) -> dict:
    run = lm_run(scorer, micro_batch, data)
    result = lm.cached_result(PROFILE, run, device=device, stop_at=steps)
    folder = lm.run_folder(PROFILE, run) / "checkpoint"
    state = _load_state(folder.parent / lm_train.STATE_FILE, steps)
    _require(
        state["config"] == run.to_dict(),
        f"checkpoint: {folder.parent / lm_train.STATE_FILE} holds another run's configuration",
    )
    model, _ = lm_model.load_checkpoint(folder)
    paper = run_config(PROFILE, scorer)
    paper_model = lm_model.build_model(
        paper.model, scorer, per_head=paper.train.per_head, scorer_kwargs=paper.train.scorer_kwargs, device="meta"
    )
    paper_parameters = lm_model.parameter_count(paper_model)
    _require(
        lm_model.parameter_count(model) == paper_parameters == result["parameters"],
        f"checkpoint: {lm_model.parameter_count(model):,} parameters, the paper model has {paper_parameters:,}",
    )
    losses = _finite_losses(result["history"]["train_loss"], f"lm {scorer}", steps)
    for name in ("perplexity_id", "perplexity_ood"):
        _require(math.isfinite(result[name]), f"evaluation: {name} is {result[name]}")
    entry = _check_entry(
        lm.EXPERIMENT, run.to_dict(), device, result, lambda: lm.cached_result(PROFILE, run, device=device)
    )
    del model
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return {
        "unit": scorer,
        "losses": losses,
        "checkpoint": str(folder),
        "cache_entries": [entry],
        "shape": f"{paper_parameters / 1e6:.1f}M parameters, {run.model.seq_len} tokens, micro-batch {run.train.micro_batch} "
        f"x {run.train.global_batch // run.train.micro_batch} accumulated, text {run.data.train_source}",
    }


# ---- encoder (encoder) ------------------------------------------------------------------------


def encoder_config():
    """The paper's BabyBERTa configuration with a small evaluation: a curve point at every step
    on 16 held-out utterances and 2 Zorro pairs per paradigm; the final scores on 2 (holistic)
    and 1 (pseudo-log-likelihood) pairs per paradigm."""
    return encoder_model.EncoderConfig.for_profile(
        PROFILE, eval_every=1, held_out_utterances=16, curve_pairs=2, probe_pairs=2, pll_pairs=1
    )


def check_encoder(variant: str, *, device: str, steps: int = STEPS) -> dict:
    config, seed = encoder_config(), 0
    result = encoder.cached_run(
        PROFILE, config, variant, seed, device=device, threads=None, progress=False, stop_at=steps
    )
    path = (
        encoder.checkpoint_dir(PROFILE, encoder.run_config(PROFILE, variant, seed, config))
        / encoder_train.CHECKPOINT_FILE
    )
    state = _load_state(path, steps)
    encoder_model.build_model(config, variant).load_state_dict(state["model"])
    record = EncoderRun.from_result(result)  # the layout the chapter reads
    losses = _finite_losses(
        list(record.curve.train_loss[1:]), f"encoder {variant}", steps
    )  # [0]: the untrained model's point
    held_out = record.curve.held_out_loss[-1]
    _require(math.isfinite(held_out), f"evaluation: held-out loss {held_out}")
    entry = _check_entry(
        encoder.runs_experiment(variant),
        encoder.run_config(PROFILE, variant, seed, config),
        device,
        result,
        lambda: encoder.cached_run(PROFILE, config, variant, seed, device=device, threads=None, progress=False),
    )
    return {
        "unit": variant,
        "losses": losses,
        "checkpoint": str(path),
        "cache_entries": [entry],
        "shape": f"{config.num_layers} layers x {config.num_heads} heads x {config.hidden_size}, batch {config.batch_size}, "
        f"{record.num_parameters / 1e6:.1f}M parameters",
    }


# ---- chapters ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Chapter:
    notebooks: str  # the book's chapters whose paper profile this covers
    units: Callable[[str, str], list[tuple[str, Callable]]]  # (micro_batch, lm_data) -> [(name, check(device))]


def _lm_units(micro_batch: str, data: str) -> list[tuple[str, Callable]]:
    return [
        (scorer, lambda device, scorer=scorer: check_lm(scorer, device=device, micro_batch=micro_batch, data=data))
        for scorer in lm.SCORERS
    ]


def _encoder_units(micro_batch: str, data: str) -> list[tuple[str, Callable]]:
    return [
        (variant, lambda device, variant=variant: check_encoder(variant, device=device)) for variant in encoder.VARIANTS
    ]


def _chapter_icl_units(micro_batch: str, data: str) -> list[tuple[str, Callable]]:
    return _icl_units(experiments.CHAPTER_SCORERS)


CHAPTERS = {
    "icl": Chapter("icl_quantification, icl_linear, icl_collapse: every task x softmax, ssa", _chapter_icl_units),
    "alternatives": Chapter(
        "alternative_scorers: every other scorer once, tasks in turn", lambda micro_batch, data: _alternative_units()
    ),
    "lm": Chapter("decoder: softmax, ssa (114M Nemotron)", _lm_units),
    "encoder": Chapter("encoder: softmax, ssa, ssa_n1.5, ssa_n2 (BabyBERTa)", _encoder_units),
}


def check_chapter(chapter: str, *, device: str = "cpu", micro_batch: str = "smallest", lm_data: str = "local") -> dict:
    """Run one chapter's checks in this process, with the folders of :data:`FOLDER_ENV` already
    set; a report with one entry per unit (its error, if it failed) and this process's peak memory."""
    import resource  # POSIX only: the check runs where the book is built (Linux, macOS)

    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {chapter!r}")
    check_throwaway_cache()
    if not all(os.environ.get(variable) for variable in FOLDER_ENV.values()):
        raise ValueError(
            f"the check writes stopped runs into the result cache: set {', '.join(FOLDER_ENV.values())} to a "
            "temporary folder (run_chapter does), never to the repository's results/"
        )
    device = resolve_device(device)
    started = time.perf_counter()
    units = []
    for name, check in CHAPTERS[chapter].units(micro_batch, lm_data):
        unit_started = time.perf_counter()
        try:
            unit = {**check(device), "passed": True}
        except Exception as error:  # report it and go on: the other units are still worth checking
            unit = {
                "unit": name,
                "passed": False,
                "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc(),
            }
        unit["seconds"] = round(time.perf_counter() - unit_started, 1)
        print(
            f"[{chapter}] {name}: {'ok' if unit['passed'] else 'FAILED ' + unit['error']} ({unit['seconds']:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
        units.append(unit)
    report = {
        "chapter": chapter,
        "notebooks": CHAPTERS[chapter].notebooks,
        "device": device,
        "micro_batch": micro_batch,
        "lm_data": lm_data,
        "steps": STEPS,
        "units": units,
        "passed": all(unit["passed"] for unit in units),
        "seconds_in_process": round(time.perf_counter() - started, 1),
        "peak_rss_mib": round(_peak_rss_bytes(resource.getrusage(resource.RUSAGE_SELF)) / 2**20, 1),
    }
    if device == "cuda":
        report["peak_cuda_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return report


def _peak_rss_bytes(usage) -> int:
    return usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)  # bytes on macOS, KiB on Linux


def run_chapter(
    chapter: str,
    work_dir: str | Path,
    *,
    device: str = "cpu",
    micro_batch: str = "smallest",
    lm_data: str = "local",
    threads: int | None = None,
) -> dict:
    """:func:`check_chapter` in a fresh process whose caches and checkpoints live under
    ``work_dir/<chapter>``; adds the wall time and the process's peak resident memory."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {', '.join(CHAPTERS)}; got {chapter!r}")
    folder = Path(work_dir).resolve() / chapter
    folder.mkdir(parents=True, exist_ok=True)
    report_path = folder / "report.json"
    report_path.unlink(missing_ok=True)
    environment = {**os.environ, **{variable: str(folder / name) for name, variable in FOLDER_ENV.items()}}
    command = [
        sys.executable,
        "-m",
        "ssa_book",
        "paper-check",
        "--in-process",
        "--chapters",
        chapter,
        "--device",
        device,
        "--micro-batch",
        micro_batch,
        "--lm-data",
        lm_data,
        "--json",
        str(report_path),
    ]
    if threads is not None:
        command += ["--threads", str(threads)]
    started = time.perf_counter()
    process = subprocess.Popen(command, env=environment)
    if hasattr(os, "wait4"):  # the child's own peak memory, even if it was killed
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        peak_rss_mib = round(_peak_rss_bytes(usage) / 2**20, 1)
    else:
        process.wait()
        peak_rss_mib = None
    wall_s = round(time.perf_counter() - started, 1)
    if report_path.is_file():
        report = json.loads(report_path.read_text(encoding="utf-8"))[0]
    else:
        report = {
            "chapter": chapter,
            "notebooks": CHAPTERS[chapter].notebooks,
            "device": device,
            "units": [],
            "passed": False,
            "error": f"the process ended with exit status {process.returncode} before writing its report",
        }
    report.update(
        wall_s=wall_s,
        peak_rss_mib=peak_rss_mib if peak_rss_mib is not None else report.get("peak_rss_mib"),
        work_dir=str(folder),
    )
    return report


def format_report(reports: list[dict]) -> str:
    lines = [
        f"{'chapter':13} {'result':7} {'wall s':>7} {'peak RSS MiB':>13} {'peak CUDA MiB':>14}  units (first losses)"
    ]
    for report in reports:
        units = ", ".join(
            f"{unit['unit']} {'ok' if unit['passed'] else 'FAILED'}"
            + (f" ({unit['losses'][0]:.3g})" if unit.get("losses") else "")
            for unit in report["units"]
        )
        cuda = report.get("peak_cuda_mib")
        lines.append(
            f"{report['chapter']:13} {'passed' if report['passed'] else 'FAILED':7} {report.get('wall_s', report.get('seconds_in_process', 0)):7.0f} "
            f"{report.get('peak_rss_mib') or 0:13.0f} {'' if cuda is None else f'{cuda:.0f}':>14}  {units or report.get('error', '')}"
        )
        for unit in report["units"]:
            if not unit["passed"]:
                lines.append(f"    {report['chapter']} {unit['unit']}: {unit['error']}")
    return "\n".join(lines)
