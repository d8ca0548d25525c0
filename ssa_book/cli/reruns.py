"""``python -m ssa_book reruns``: the command line of :mod:`ssa_book.reruns`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ssa_book import reruns
from ssa_book.cli.arguments import Parser, at_least, writable_folder
from ssa_book.ledger import markdown_table
from ssa_book.paths import cache_problem
from ssa_book.profiles import PROFILES
from ssa_book.reruns.bits import bitwise, bitwise_summary, bitwise_table
from ssa_book.reruns.comparison import PROG, rerun
from ssa_book.reruns.report import rerun_summary, rerun_table


def parser() -> argparse.ArgumentParser:
    described = Parser(prog=PROG, description=reruns.__doc__.split("\n\n")[0].replace("\n", " "))
    commands = described.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="rerun the subset, compare it with the cache, store this machine's record")
    run.add_argument("--profile", choices=PROFILES, default="cpu", help="smoke | cpu | paper (default: cpu)")
    run.add_argument(
        "--jobs", type=at_least(1), default=1, metavar="N", help="runs at once, each on one torch thread (default: 1)"
    )
    run.add_argument(
        "--folder",
        type=_fresh_folder,
        metavar="DIR",
        help="the fresh results folder to rerun into (empty or absent; kept); default: a temporary one",
    )
    run.add_argument(
        "--missing",
        action="store_true",
        help="rerun only the runs this machine's record lacks (or holds for an older entry), keeping its other rows",
    )
    table = commands.add_parser("table", help="print every machine's rerun rows at a profile and the summary")
    table.add_argument("--profile", choices=PROFILES, default="cpu", help="smoke | cpu | paper (default: cpu)")
    bits = commands.add_parser(
        "bitwise",
        help="which settings give the same bits: short runs in fresh processes, stored as this machine's record",
    )
    bits.add_argument(
        "--profile", choices=PROFILES, default="smoke", help="the profile of the short runs (default: smoke)"
    )
    bits.add_argument("--repeats", type=at_least(1), default=2, metavar="N", help="runs of each setting (default: 2)")
    return described


def _fresh_folder(text: str) -> Path:
    """A folder to rerun into: absent (then created) or empty, and writable."""
    folder = writable_folder(text)
    if folder.is_dir() and any(folder.iterdir()):
        raise argparse.ArgumentTypeError(f"must be an empty or absent folder; {text} holds files")
    return folder


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments; ``run`` and ``bitwise`` store this machine's record in the result cache,
    which must then be writable (checked here, before the reruns' minutes of training)."""
    described = parser()
    arguments = described.parse_args(argv)
    problem = cache_problem(arguments.profile) if arguments.command in ("run", "bitwise") else None
    if problem is not None:
        described.error(
            f"{problem}; {arguments.command} stores this machine's record there: set $SSA_RESULTS_DIR to a writable folder"
        )
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    if arguments.command == "run":
        stored = rerun(
            arguments.profile,
            jobs=arguments.jobs,
            folder=arguments.folder,
            log=lambda line: print(line, file=sys.stderr, flush=True),
            missing=arguments.missing,
        )
        print(f"record: {stored.path}", file=sys.stderr)
        arguments.command = "table"
    if arguments.command == "table":
        frame = rerun_table(arguments.profile)
        if len(frame):
            print(markdown_table(frame))
        print(rerun_summary(arguments.profile))
        return 0
    stored = bitwise(
        arguments.profile, repeats=arguments.repeats, log=lambda line: print(line, file=sys.stderr, flush=True)
    )
    print(f"record written: {stored.path}", file=sys.stderr)
    print(markdown_table(bitwise_table()))
    print(bitwise_summary())
    return 0
