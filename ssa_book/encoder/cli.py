"""``python -m ssa_book encoder``: the encoder chapter's tools (its cached results: ``python -m ssa_book regenerate encoder``).

    python -m ssa_book encoder corpus --profile smoke     # what the AO-CHILDES corpus contains
"""

from __future__ import annotations

import argparse
import json
import sys

from ssa_book.profiles import PROFILES
from ssa_book.encoder import experiment


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m ssa_book encoder", description="The encoder chapter: describe its corpus.")
    commands = parser.add_subparsers(dest="command", required=True)
    corpus = commands.add_parser("corpus", help="print what the AO-CHILDES corpus contains")
    corpus.add_argument("--profile", choices=PROFILES, default="smoke")
    arguments = parser.parse_args(argv)


    print(json.dumps(experiment.data_summary(arguments.profile)["corpus"], indent=1))
    return 0
