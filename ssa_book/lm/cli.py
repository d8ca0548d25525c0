"""``python -m ssa_book decoder``: the decoder chapter's tools (its cached results: ``python -m ssa_book regenerate decoder``).

    python -m ssa_book decoder train --profile smoke --scorer ssa --out _build/runs/try
    torchrun --nproc_per_node=2 -m ssa_book decoder train --profile smoke --out _build/runs/ddp
    torchrun --nproc_per_node=8 -m ssa_book decoder train --profile paper --scorer ssa   # then `regenerate` evaluates it
    python -m ssa_book decoder evaluate --profile smoke --checkpoint _build/runs/try/checkpoint
    python -m ssa_book decoder lm-eval --model ssa-lm --model_args pretrained=CHECKPOINT --tasks hellaswag
    python -m ssa_book decoder params --profile paper
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

from ssa_book.data import DatasetError
from ssa_book.lm.config import run_config
from ssa_book.lm.evaluate import evaluate_checkpoint
from ssa_book.lm.experiment import run_folder
from ssa_book.lm.model import build_model, parameter_count
from ssa_book.lm.train import train as train_run
from ssa_book.profiles import DEVICES, PROFILES, resolve_device
from ssa.scoring import scorer_names


def _run_from(arguments):

    run = run_config(arguments.profile, arguments.scorer, arguments.seed)
    data, train = {}, {}
    for option, section, field in (
        ("train_source", data, "train_source"), ("ood_source", data, "ood_source"), ("max_train_documents", data, "max_train_documents"),
        ("steps", train, "steps"), ("global_batch", train, "global_batch"), ("micro_batch", train, "micro_batch"),
    ):
        value = getattr(arguments, option, None)
        if value is not None:
            section[field] = value
    if "steps" in train:
        train["warmup_steps"] = min(run.train.warmup_steps, train["steps"] - 1)
    return run.replace(data=data, train=train)


def _set_threads(threads: int | None) -> None:
    if threads is not None:
        torch.set_num_threads(threads)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["lm-eval"]:
        from ssa_book.lm.lm_eval_adapter import run_cli

        return run_cli(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m ssa_book decoder", description="Decoder language model: train, evaluate, count parameters, run lm-eval.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("train", "evaluate", "params"):
        command = commands.add_parser(name)
        command.add_argument("--profile", choices=PROFILES, default="smoke")
        command.add_argument("--device", choices=DEVICES, default="auto")
        command.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    commands.add_parser("lm-eval", help="lm-eval's command line with the model 'ssa-lm' registered")
    train = commands.choices["train"]
    train.add_argument("--out", help="run folder, resumed when it holds a checkpoint (default: the folder `regenerate` uses for this run, under $SSA_RUNS_DIR or _build/runs)")
    for command in (train, commands.choices["evaluate"]):
        command.add_argument("--scorer", choices=scorer_names(), default="softmax")
        command.add_argument("--seed", type=int)
        command.add_argument("--train-source", help="webtext, fineweb-edu or a .jsonl/.txt file")
        command.add_argument("--ood-source", help="wikitext-2, wikipedia or a .jsonl/.txt file")
        command.add_argument("--max-train-documents", type=int)
    train.add_argument("--steps", type=int)
    train.add_argument("--global-batch", type=int)
    train.add_argument("--micro-batch", type=int)
    train.add_argument("--no-progress", action="store_true")
    commands.choices["evaluate"].add_argument("--checkpoint", required=True)
    arguments = parser.parse_args(argv)
    _set_threads(arguments.threads)

    try:
        if arguments.command == "train":
            run = _run_from(arguments)
            summary = train_run(run, arguments.out or run_folder(arguments.profile, run), device=arguments.device, progress=not arguments.no_progress)
            losses = summary["history"]["train_loss"]
            if os.environ.get("RANK", "0") == "0":  # torchrun: one report, not one per process
                print(f"trained {len(losses)} steps; last loss {losses[-1]:.4f}" if losses else "nothing left to train")
        elif arguments.command == "evaluate":
            result = evaluate_checkpoint(arguments.checkpoint, _run_from(arguments), device=resolve_device(arguments.device))
            print(json.dumps({key: value for key, value in result.items() if key != "blimp"} | {"blimp_accuracy": result["blimp"]["accuracy"]}, indent=1))
        else:
            run = run_config(arguments.profile)
            count = parameter_count(build_model(run.model, device="meta"))
            print(f"{arguments.profile}: {count:,} parameters ({count / 1e6:.1f}M)")
    except (ValueError, DatasetError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
