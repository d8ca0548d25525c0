"""``python -m ssa_book decoder``: the decoder chapter's tools (its cached results: ``python -m ssa_book regenerate decoder``).

python -m ssa_book decoder train --profile smoke --scorer ssa --out _build/runs/try
torchrun --nproc_per_node=2 -m ssa_book decoder train --profile smoke --out _build/runs/ddp
torchrun --nproc_per_node=8 -m ssa_book decoder train --profile paper --scorer ssa   # then `regenerate` evaluates it
python -m ssa_book decoder evaluate --profile smoke --checkpoint _build/runs/try/checkpoint
python -m ssa_book decoder lm-eval --model ssa-lm --model_args pretrained=CHECKPOINT --tasks hellaswag --device cuda
python -m ssa_book decoder params --profile paper
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
from pathlib import Path

import torch

from ssa_book.cli.arguments import (
    Parser,
    at_least,
    available_device,
    existing_folder,
    number,
    output_file_creating_folder,
    writable_folder,
)
from ssa_book.data import DatasetError
from ssa_book.files import folder_problem
from ssa_book.lm.config import run_config
from ssa_book.lm.evaluate import evaluate_checkpoint
from ssa_book.lm.experiment import run_folder, runs_dir
from ssa_book.lm.model import build_model, parameter_count
from ssa_book.lm.train import train as train_run
from ssa_book.profiles import DEVICES, PROFILES, resolve_device
from ssa.scoring import scorer_names


def _run_from(arguments):

    run = run_config(arguments.profile, arguments.scorer, arguments.seed)
    data, train = {}, {}
    for option, section, field in (
        ("train_source", data, "train_source"),
        ("ood_source", data, "ood_source"),
        ("max_train_documents", data, "max_train_documents"),
        ("steps", train, "steps"),
        ("global_batch", train, "global_batch"),
        ("micro_batch", train, "micro_batch"),
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


# ``decoder lm-eval``: lm-eval's ``run`` with the book's model, through the arguments below (lm-eval's
# names), each checked before lm-eval reads a task or the model loads; lm-eval's other arguments are
# refused, not passed on unchecked. Its model's arguments: MODEL_ARGS.
LM_EVAL_MODEL = "ssa-lm"
MODEL_ARGS = ("pretrained", "device", "max_length", "max_gen_toks")


def _model_args(text: str) -> dict[str, object]:
    """``key=value[,key=value...]`` for :data:`LM_EVAL_MODEL`: ``pretrained`` (required), a checkpoint
    folder that ``decoder train`` wrote; ``device``, one this machine has; ``max_length`` (at most
    the model's positions) and ``max_gen_toks``, whole numbers >= 1."""
    found: dict[str, object] = {}
    for item in filter(None, text.split(",")):
        key, equals, value = item.partition("=")
        if not equals or not value:
            raise argparse.ArgumentTypeError(f"must be key=value pairs separated by commas; got {item!r}")
        if key == "batch_size":
            raise argparse.ArgumentTypeError("batch_size is given with --batch_size, not in --model_args")
        if key not in MODEL_ARGS:
            raise argparse.ArgumentTypeError(f"unknown key {key!r}; choose from {', '.join(MODEL_ARGS)}")
        found[key] = _MODEL_ARG_TYPES[key](value)
    if "pretrained" not in found:
        raise argparse.ArgumentTypeError(f"must name the checkpoint as pretrained=DIR; got {text!r}")
    positions = json.loads((found["pretrained"] / "config.json").read_text(encoding="utf-8")).get(
        "max_position_embeddings"
    )
    if positions is not None and found.get("max_length", 0) > positions:
        raise argparse.ArgumentTypeError(
            f"max_length must be at most the model's {positions} positions; got {found['max_length']}"
        )
    found["pretrained"] = str(found["pretrained"])
    return found


def _checkpoint(text: str) -> Path:
    try:
        folder = existing_folder(text)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"pretrained: {error}") from None
    if not (folder / "config.json").is_file():
        raise argparse.ArgumentTypeError(
            f"pretrained={text} holds no config.json; it must be a checkpoint folder "
            "that `python -m ssa_book decoder train` wrote"
        )
    return folder


_MODEL_ARG_TYPES = {
    "pretrained": _checkpoint,
    "device": available_device,
    "max_length": at_least(1),
    "max_gen_toks": at_least(1),
}


def _task_list(text: str) -> list[str]:
    """Task names separated by commas (checked against lm-eval's tasks after parsing)."""
    tasks = [task.strip() for task in text.split(",")]
    if not all(tasks):
        raise argparse.ArgumentTypeError(f"must be lm-eval task names separated by commas; got {text!r}")
    return tasks


# lm-eval's --limit: a fraction of each task's examples, or a whole count of them.
_limit = number(
    "_limit",
    "a fraction in (0, 1) or a whole number >= 1",
    lambda value: 0 < value < 1 or math.isfinite(value) and value >= 1 and value.is_integer(),
)


@functools.cache
def lm_eval_tasks(include_path: str | None = None):
    """lm-eval's task manager (its own tasks, and those of ``include_path``): indexing every task
    takes seconds, done once."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=include_path)


def _unknown_tasks(tasks: list[str], include_path: Path | None) -> list[str]:
    known = lm_eval_tasks(None if include_path is None else str(include_path)).all_tasks
    return [task for task in tasks if task not in known]


def _lm_eval_parser(commands) -> None:
    lm_eval = commands.add_parser(
        "lm-eval",
        help=f"lm-eval's run of the model {LM_EVAL_MODEL!r} (a checkpoint of `train`), with lm-eval's argument names",
        description=f"lm-eval's `run` of a checkpoint as the model {LM_EVAL_MODEL!r}. Every argument is checked before any "
        "task is read; lm-eval's others are not taken.",
    )
    lm_eval.add_argument("--model", choices=(LM_EVAL_MODEL,), default=LM_EVAL_MODEL)
    lm_eval.add_argument(
        "--model_args",
        type=_model_args,
        required=True,
        metavar="pretrained=DIR[,KEY=VALUE...]",
        help=f"keys: {', '.join(MODEL_ARGS)}",
    )
    lm_eval.add_argument("--tasks", type=_task_list, required=True, metavar="TASK[,TASK...]", help="lm-eval task names")
    lm_eval.add_argument("--include_path", type=existing_folder, metavar="DIR", help="a folder of more task YAML files")
    lm_eval.add_argument("--num_fewshot", type=at_least(0), metavar="N")
    lm_eval.add_argument("--batch_size", type=at_least(1), default=1, metavar="N", help="default: 1, as lm-eval's")
    lm_eval.add_argument("--device", type=available_device, metavar="{" + ",".join(DEVICES) + "}")
    lm_eval.add_argument(
        "--limit", type=_limit, metavar="L", help="a fraction in (0, 1) or a whole number of each task's examples"
    )
    lm_eval.add_argument(
        "--seed", type=at_least(0), metavar="S", help="lm-eval's four seeds (Python, NumPy, torch, few-shot)"
    )
    lm_eval.add_argument(
        "--output_path", type=output_file_creating_folder, metavar="FILE.json", help="the results as JSON"
    )
    lm_eval.add_argument("--log_samples", action="store_true", help="the samples too, in --output_path")


def parser() -> argparse.ArgumentParser:
    described = Parser(
        prog="python -m ssa_book decoder",
        description="Decoder language model: train, evaluate, count parameters, run lm-eval.",
    )
    commands = described.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in ("train", "evaluate", "params"):
        command = commands.add_parser(name)
        command.add_argument("--profile", choices=PROFILES, default="smoke")
        command.add_argument("--device", type=available_device, default="auto", metavar="{" + ",".join(DEVICES) + "}")
        command.add_argument(
            "--threads", type=at_least(1), metavar="N", help="torch CPU threads (default: torch's choice)"
        )
    _lm_eval_parser(commands)
    train = commands.choices["train"]
    train.add_argument(
        "--out",
        type=writable_folder,
        metavar="DIR",
        help="run folder, resumed when it holds a checkpoint (default: the folder `regenerate` uses for this run, under $SSA_RUNS_DIR or _build/runs)",
    )
    for command in (train, commands.choices["evaluate"]):
        command.add_argument("--scorer", choices=scorer_names(), default="softmax")
        command.add_argument("--seed", type=at_least(0), metavar="S")
        command.add_argument(
            "--train-source", type=_text_source, metavar="SOURCE", help=f"{', '.join(SOURCES)} or a .jsonl/.txt file"
        )
        command.add_argument(
            "--ood-source", type=_text_source, metavar="SOURCE", help=f"{', '.join(SOURCES)} or a .jsonl/.txt file"
        )
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
    if arguments.command == "train" and arguments.out is None:
        problem = folder_problem(runs_dir(), new_parents=True)
        if problem is not None:
            described.error(
                f"the run folder (under $SSA_RUNS_DIR or _build/runs): {problem}; give --out DIR or set SSA_RUNS_DIR "
                "to a writable folder"
            )
    if arguments.command == "evaluate" and not (arguments.checkpoint / "config.json").is_file():
        described.error(
            f"argument --checkpoint: {arguments.checkpoint} holds no config.json; it must be a checkpoint folder "
            "that `python -m ssa_book decoder train` wrote"
        )
    if arguments.command == "lm-eval":
        if arguments.device is not None and "device" in arguments.model_args:
            described.error("arguments --device and --model_args device=...: give the device once")
        if arguments.log_samples and arguments.output_path is None:
            described.error("argument --log_samples: the samples are written to --output_path; give one")
        unknown = _unknown_tasks(arguments.tasks, arguments.include_path)
        if unknown:
            described.error(
                f"argument --tasks: unknown lm-eval task {', '.join(map(repr, unknown))}; "
                "see `lm-eval ls tasks`, or give --include_path for a folder of task YAML files"
            )
    return arguments


def _run_lm_eval(arguments: argparse.Namespace) -> None:
    import lm_eval
    from lm_eval.utils import handle_non_serializable, make_table

    import ssa_book.lm.lm_eval_adapter  # noqa: F401  registers LM_EVAL_MODEL

    seeds = (
        {}
        if arguments.seed is None
        else {f"{kind}_seed": arguments.seed for kind in ("random", "numpy_random", "torch_random", "fewshot_random")}
    )
    results = lm_eval.simple_evaluate(
        model=arguments.model,
        model_args=arguments.model_args,
        tasks=arguments.tasks,
        num_fewshot=arguments.num_fewshot,
        batch_size=arguments.batch_size,
        device=arguments.device,
        limit=arguments.limit,
        log_samples=arguments.log_samples,
        task_manager=lm_eval_tasks(None if arguments.include_path is None else str(arguments.include_path)),
        **seeds,
    )
    print(make_table(results))
    if arguments.output_path is not None:
        arguments.output_path.parent.mkdir(parents=True, exist_ok=True)
        arguments.output_path.write_text(
            json.dumps(results, indent=1, default=handle_non_serializable), encoding="utf-8"
        )


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    _set_threads(getattr(arguments, "threads", None))

    try:
        if arguments.command == "lm-eval":
            _run_lm_eval(arguments)
        elif arguments.command == "train":
            run = _run_from(arguments)
            summary = train_run(
                run,
                str(arguments.out or run_folder(arguments.profile, run)),
                device=arguments.device,
                progress=not arguments.no_progress,
            )
            losses = summary["history"]["train_loss"]
            if os.environ.get("RANK", "0") == "0":  # torchrun: one report, not one per process
                print(f"trained {len(losses)} steps; last loss {losses[-1]:.4f}" if losses else "nothing left to train")
        elif arguments.command == "evaluate":
            result = evaluate_checkpoint(
                str(arguments.checkpoint), _run_from(arguments), device=resolve_device(arguments.device)
            )
            print(
                json.dumps(
                    {key: value for key, value in result.items() if key != "blimp"}
                    | {"blimp_accuracy": result["blimp"]["accuracy"]},
                    indent=1,
                )
            )
        else:
            run = run_config(arguments.profile)
            count = parameter_count(build_model(run.model, device="meta"))
            print(f"{arguments.profile}: {count:,} parameters ({count / 1e6:.1f}M)")
    except (ValueError, DatasetError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
