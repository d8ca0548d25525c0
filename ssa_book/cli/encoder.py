"""``python -m ssa_book encoder``: the encoder chapter's tools (its cached results: ``python -m ssa_book regenerate encoder``).

python -m ssa_book encoder corpus --profile smoke     # what the AO-CHILDES corpus contains
"""

from __future__ import annotations

import argparse
import json
import sys

from ssa_book.cli.arguments import Parser
from ssa_book.data import DatasetError
from ssa_book.profiles import PROFILES
from ssa_book.encoder import experiment


def parser() -> argparse.ArgumentParser:
    described = Parser(prog="python -m ssa_book encoder", description="The encoder chapter: describe its corpus.")
    commands = described.add_subparsers(dest="command", required=True, metavar="COMMAND")
    corpus = commands.add_parser("corpus", help="print what the AO-CHILDES corpus contains")
    corpus.add_argument("--profile", choices=PROFILES, default="smoke")
    return described


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    try:
        summary = experiment.data_summary(arguments.profile)
    except (DatasetError, ValueError) as error:  # the data missing (the message names the command that fetches it)
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(json.dumps(summary["corpus"], indent=1))
    return 0
