"""usage: python -m ssa_book COMMAND [ARGUMENTS]   (or, installed: ssa-book COMMAND [ARGUMENTS])

The book's one command line. Commands:

  book run                 execute the notebooks and build the HTML
  regenerate CHAPTER       compute a chapter's cached results that are missing
  bench                    the attention benchmark (--full: the book's cached one)
  results list|validate|format   the result cache
  data fetch|list|verify   the datasets
  code-versions check|record|bump   the code version of each cached computation
  paper-check              every chapter at the paper's sizes, a few steps each
  decoder train|evaluate|lm-eval|params   the decoder chapter's tools
  encoder corpus           the encoder chapter's corpus
  reruns run|table|bitwise   do reruns on this machine match the cache?

`python -m ssa_book COMMAND --help` lists a command's arguments.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ssa_book.cli.arguments import Parser

# Each command's module in this package: its parser (``parser()``, and ``parse_arguments`` where it
# checks more right after parsing) and ``main(argv)``, which calls the module that does the work.
COMMANDS = {
    "book": "ssa_book.cli.book",
    "regenerate": "ssa_book.cli.regenerate",
    "bench": "ssa_book.cli.bench",
    "results": "ssa_book.cli.results",
    "data": "ssa_book.cli.data",
    "code-versions": "ssa_book.cli.code_versions",
    "paper-check": "ssa_book.cli.paper_check",
    "decoder": "ssa_book.cli.decoder",
    "encoder": "ssa_book.cli.encoder",
    "reruns": "ssa_book.cli.reruns",
}


def parser() -> argparse.ArgumentParser:
    """The top level: COMMAND, one of :data:`COMMANDS`, then that command's own arguments, which
    its own parser (:func:`command_parser`) reads."""
    described = Parser(prog="python -m ssa_book", description=__doc__.splitlines()[0], add_help=False)
    described.add_argument("command", metavar="COMMAND", choices=COMMANDS)
    described.add_argument("arguments", metavar="ARGUMENTS", nargs=argparse.REMAINDER)
    return described


def command_parser(command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` (a key of :data:`COMMANDS`): every command module has a ``parser()``."""
    return importlib.import_module(COMMANDS[command]).parser()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    try:
        command = parser().parse_args(argv[:1]).command
    except SystemExit as exited:  # an unknown command: argparse has said so, in one line
        return exited.code
    return importlib.import_module(COMMANDS[command]).main(argv[1:])
