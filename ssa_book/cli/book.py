"""``python -m ssa_book book run``: the command line of :mod:`ssa_book.book`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ssa_book import book, files
from ssa_book.book import (
    DEFAULT_CELL_TIMEOUT_S,
    BookBuildFailed,
    NotebookFailed,
    RunSettings,
    draft_notebooks,
    results_folder,
    run,
    select_notebooks,
    toc_notebooks,
)
from ssa_book.cli.arguments import Parser, at_least, available_device, existing_folder
from ssa_book.paths import cache_problem
from ssa_book.profiles import DEVICES, PROFILES


def parser() -> argparse.ArgumentParser:
    described = Parser(prog="python -m ssa_book book", description=book.__doc__.split("\n\n")[0])
    commands = described.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run_parser = commands.add_parser("run", help="execute the notebooks and build the HTML")
    run_parser.add_argument("--profile", choices=PROFILES, default="cpu")
    run_parser.add_argument(
        "--device",
        type=available_device,
        default="auto",
        metavar="{" + ",".join(DEVICES) + "}",
        help="where the chapters compute (default: auto: cuda, else mps, else cpu)",
    )
    run_parser.add_argument(
        "--seed", type=at_least(0), default=0, metavar="S", help="the seed the chapters take (default: 0)"
    )
    run_parser.add_argument("--only", action="append", metavar="NAME", help="run only this notebook (repeatable)")
    run_parser.add_argument("--no-html", dest="html", action="store_false", help="execute only; skip jupyter-book")
    run_parser.add_argument(
        "--drafts", action="store_true", help="also execute notebooks not yet in _toc.yml (needs --no-html)"
    )
    run_parser.add_argument(
        "--require-cache", action="store_true", help="a missing cached result is an error (SSA_REQUIRE_CACHE=1)"
    )
    run_parser.add_argument(
        "--timeout", type=at_least(1), default=DEFAULT_CELL_TIMEOUT_S, metavar="S", help="per-cell timeout"
    )
    run_parser.add_argument(
        "--jobs",
        type=at_least(1),
        default=1,
        metavar="N",
        help="notebooks executed at once, each in its own kernel with the cores shared out (default: 1)",
    )
    run_parser.add_argument("--root", type=existing_folder, default=Path.cwd(), help=argparse.SUPPRESS)
    return described


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, refused in one line here rather than after the first notebooks: ``--root``
    without a book, ``--only`` naming no notebook, ``--drafts`` with the HTML, and, unless
    ``--require-cache`` (then nothing is written), a result cache the chapters could not store
    what they compute in."""
    described = parser()
    arguments = described.parse_args(argv)
    root = arguments.root.resolve()
    try:
        notebooks = toc_notebooks(root) + (draft_notebooks(root) if arguments.drafts else [])
    except (OSError, ValueError) as error:
        described.error(
            f"argument --root: {root} (default: the current folder) holds no book; run it from the repository's "
            f"folder: {error}"
        )
    if arguments.drafts and arguments.html:
        described.error("argument --drafts: it executes notebooks that are not in the book: use it with --no-html")
    try:
        select_notebooks(notebooks, arguments.only)
    except ValueError as error:
        described.error(f"argument {error}")
    problem = None if arguments.require_cache else cache_problem(arguments.profile, results_folder(root))
    if problem is not None:
        described.error(
            f"{problem}; a chapter that misses a result would compute it and fail to store it: set $SSA_RESULTS_DIR "
            "to a writable folder, or add --require-cache to only read the cache"
        )
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    settings = RunSettings(
        arguments.profile, arguments.device, arguments.seed, arguments.timeout, arguments.require_cache
    )
    if not arguments.require_cache:
        files.remove_abandoned_temporaries(
            results_folder(arguments.root.resolve()),
            files.TEMPORARY_SUFFIX,
            recursive=True,
            log=lambda line: print(f"ssa_book.book: {line}", file=sys.stderr, flush=True),
        )
    try:
        run(
            arguments.root,
            settings,
            only=arguments.only,
            html=arguments.html,
            drafts=arguments.drafts,
            jobs=arguments.jobs,
        )
    except (NotebookFailed, BookBuildFailed, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
