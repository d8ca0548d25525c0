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
from pathlib import Path

import torch

from ssa_book.arguments import Parser, at_least, available_device, existing_folder, writable_folder
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


# The text sources a run reads (ssa_book.lm.data.documents), besides a .jsonl or .txt file.
SOURCES = ("webtext", "wikitext-2", "fineweb-edu", "wikipedia")


def _text_source(text: str) -> str:
    """A source of :data:`SOURCES`, or an existing .jsonl/.txt file."""
    if text in SOURCES:
        return text
    if Path(text).suffix not in (".jsonl", ".txt"):
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(SOURCES)} or a .jsonl/.txt file; got {text!r}")
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"no file {text}")
    return text


def parser() -> argparse.ArgumentParser:
    described = Parser(prog="python -m ssa_book decoder", description="Decoder language model: train, evaluate, count parameters, run lm-eval.")
    commands = described.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in ("train", "evaluate", "params"):
        command = commands.add_parser(name)
        command.add_argument("--profile", choices=PROFILES, default="smoke")
        command.add_argument("--device", type=available_device, default="auto", metavar="{" + ",".join(DEVICES) + "}")
        command.add_argument("--threads", type=at_least(1), metavar="N", help="torch CPU threads (default: torch's choice)")
    commands.add_parser("lm-eval", help="lm-eval's command line with the model 'ssa-lm' registered (its arguments are lm-eval's)")
    train = commands.choices["train"]
    train.add_argument("--out", type=writable_folder, metavar="DIR",
                       help="run folder, resumed when it holds a checkpoint (default: the folder `regenerate` uses for this run, under $SSA_RUNS_DIR or _build/runs)")
    for command in (train, commands.choices["evaluate"]):
        command.add_argument("--scorer", choices=scorer_names(), default="softmax")
        command.add_argument("--seed", type=at_least(0), metavar="S")
        command.add_argument("--train-source", type=_text_source, metavar="SOURCE", help=f"{', '.join(SOURCES)} or a .jsonl/.txt file")
        command.add_argument("--ood-source", type=_text_source, metavar="SOURCE", help=f"{', '.join(SOURCES)} or a .jsonl/.txt file")
        command.add_argument("--max-train-documents", type=at_least(1), metavar="N")
    train.add_argument("--steps", type=at_least(1), metavar="N")
    train.add_argument("--global-batch", type=at_least(1), metavar="N")
    train.add_argument("--micro-batch", type=at_least(1), metavar="N")
    train.add_argument("--no-progress", action="store_true")
    commands.choices["evaluate"].add_argument("--checkpoint", type=existing_folder, metavar="DIR", required=True)
    return described


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments; a run they describe that cannot be built (a global batch that is no
    multiple of the micro-batch, ...) is refused here, before any data is read."""
    described = parser()
    arguments = described.parse_args(argv)
    if arguments.command in ("train", "evaluate"):
        try:
            _run_from(arguments)
        except ValueError as error:
            described.error(f"arguments of the run (--steps, --global-batch, --micro-batch, ...): {error}")
    if arguments.command == "evaluate" and not (arguments.checkpoint / "config.json").is_file():
        described.error(f"argument --checkpoint: {arguments.checkpoint} holds no config.json; it must be a checkpoint folder "
                        "that `python -m ssa_book decoder train` wrote")
    return arguments


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["lm-eval"]:
        from ssa_book.lm.lm_eval_adapter import run_cli

        return run_cli(argv[1:])
    arguments = parse_arguments(argv)
    _set_threads(arguments.threads)

    try:
        if arguments.command == "train":
            run = _run_from(arguments)
            summary = train_run(run, str(arguments.out or run_folder(arguments.profile, run)), device=arguments.device,
                                progress=not arguments.no_progress)
            losses = summary["history"]["train_loss"]
            if os.environ.get("RANK", "0") == "0":  # torchrun: one report, not one per process
                print(f"trained {len(losses)} steps; last loss {losses[-1]:.4f}" if losses else "nothing left to train")
        elif arguments.command == "evaluate":
            result = evaluate_checkpoint(str(arguments.checkpoint), _run_from(arguments), device=resolve_device(arguments.device))
            print(json.dumps({key: value for key, value in result.items() if key != "blimp"} | {"blimp_accuracy": result["blimp"]["accuracy"]}, indent=1))
        else:
            run = run_config(arguments.profile)
            count = parameter_count(build_model(run.model, device="meta"))
            print(f"{arguments.profile}: {count:,} parameters ({count / 1e6:.1f}M)")
    except (ValueError, DatasetError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
