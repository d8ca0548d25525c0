"""``python -m ssa_book paper-check``: the command line of :mod:`ssa_book.paper_check`."""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import torch

from ssa_book import paper_check
from ssa_book.cli.arguments import Parser, at_least, available_device, output_file_creating_folder, writable_folder
from ssa_book.paper_check import CHAPTERS, LM_DATA, MICRO_BATCHES, check_chapter, format_report, run_chapter
from ssa_book.profiles import DEVICES


def parser() -> argparse.ArgumentParser:
    described = Parser(prog="python -m ssa_book paper-check", description=paper_check.__doc__.splitlines()[0])
    described.add_argument("--chapters", nargs="+", choices=list(CHAPTERS), default=list(CHAPTERS))
    described.add_argument(
        "--device",
        type=available_device,
        default="cpu",
        metavar="{" + ",".join(DEVICES) + "}",
        help="where the models train (default: cpu)",
    )
    described.add_argument(
        "--micro-batch",
        choices=MICRO_BATCHES,
        default="smallest",
        help="decoder sequences per forward pass: 1, or the paper's 4",
    )
    described.add_argument(
        "--lm-data",
        choices=LM_DATA,
        default="local",
        help="decoder text: local web text (offline) or the paper's, streamed",
    )
    described.add_argument(
        "--threads",
        type=at_least(1),
        metavar="N",
        help="torch CPU threads (default: torch's choice, e.g. $OMP_NUM_THREADS)",
    )
    described.add_argument(
        "--work-dir",
        type=writable_folder,
        metavar="DIR",
        help="where caches and checkpoints go (default: a temporary folder, deleted)",
    )
    described.add_argument("--json", type=output_file_creating_folder, metavar="PATH", help="write the reports here")
    described.add_argument(
        "--in-process", action="store_true", help="run here, with the folders already set (run_chapter's child)"
    )
    return described


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    options = {"device": arguments.device, "micro_batch": arguments.micro_batch, "lm_data": arguments.lm_data}
    reports: list[dict] = []

    def save() -> None:  # after every chapter, so that a run stopped by a time limit keeps what it did
        if arguments.json:
            arguments.json.parent.mkdir(parents=True, exist_ok=True)
            arguments.json.write_text(json.dumps(reports, indent=1) + "\n", encoding="utf-8")

    if arguments.in_process:
        if arguments.threads is not None:
            torch.set_num_threads(arguments.threads)
        try:
            for chapter in arguments.chapters:
                reports.append(check_chapter(chapter, **options))
                save()
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    else:
        work_dir = arguments.work_dir or Path(tempfile.mkdtemp(prefix="ssa-paper-check-"))
        # A time limit (`timeout` sends SIGTERM) still removes the temporary folder.
        signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
        try:
            for chapter in arguments.chapters:
                reports.append(run_chapter(chapter, work_dir, threads=arguments.threads, **options))
                save()
                print(format_report(reports[-1:]).splitlines()[1], file=sys.stderr, flush=True)
        finally:
            if arguments.work_dir is None:
                shutil.rmtree(work_dir, ignore_errors=True)
        print(format_report(reports))
    return 0 if all(report["passed"] for report in reports) else 1
