"""``python -m ssa_book data``: the command line of :mod:`ssa_book.data`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ssa_book import files, paths
from ssa_book.cli.arguments import Parser, existing_folder, one_of
from ssa_book.data import DATASET_NAMES, MIRROR_ENV, DatasetError, fetch, fix_command, load_manifest, problems


def _size_text(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def parser() -> argparse.ArgumentParser:
    described = Parser(prog="python -m ssa_book data", description="Fetch, list and verify the book's datasets.")
    commands = described.add_subparsers(dest="command", required=True, metavar="COMMAND")
    dataset = one_of(DATASET_NAMES, "dataset")
    fetch_parser = commands.add_parser("fetch", help="copy from a mirror or download, then verify")
    fetch_parser.add_argument(
        "names", nargs="*", type=dataset, metavar="NAME", help="default: all of " + ", ".join(DATASET_NAMES)
    )
    fetch_parser.add_argument(
        "--mirror",
        type=existing_folder,
        metavar="DIR",
        help=f"a folder laid out like the data directory (default ${MIRROR_ENV})",
    )
    commands.add_parser("list", help="each dataset, its size and whether it is ready")
    verify_parser = commands.add_parser("verify", help="check every file's SHA-256 sum")
    verify_parser.add_argument("names", nargs="*", type=dataset, metavar="NAME", help="default: all")
    return described


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments; ``fetch`` from a mirror that lacks a dataset, or into a data directory it
    cannot write, is refused here, before any download."""
    described = parser()
    arguments = described.parse_args(argv)
    if arguments.command == "fetch":
        mirror = arguments.mirror if arguments.mirror is not None else os.environ.get(MIRROR_ENV) or None
        lacking = [
            name
            for name in arguments.names or DATASET_NAMES
            if mirror is not None and not (Path(mirror) / name).is_dir()
        ]
        if lacking:
            described.error(
                f"argument --mirror (or ${MIRROR_ENV}): {mirror} has no folder {', '.join(lacking)}; "
                "it must be laid out like the data directory"
            )
        problem = files.folder_problem(paths.data_dir())
        if problem is not None:
            described.error(f"the data directory cannot be written: {problem}; set $SSA_DATA_DIR to a writable folder")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)

    if arguments.command == "fetch":
        try:
            fetch(arguments.names, arguments.mirror)
        except (DatasetError, OSError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        return 0
    if arguments.command == "list":
        print(f"data directory: {paths.data_dir()}")
        for name in DATASET_NAMES:
            listed = load_manifest()[name]["files"]
            ready = all((paths.data_dir() / name / relative).is_file() for relative in listed)
            size = sum(entry["size"] for entry in listed.values())
            print(f"  {name:12} {len(listed):4} files {_size_text(size):>9}  {'present' if ready else 'missing'}")
        return 0
    failed = False
    for name in arguments.names or DATASET_NAMES:
        found = problems(name)
        failed = failed or bool(found)
        print(f"{name}: {'ok' if not found else f'{len(found)} problems, run: ' + fix_command(name)}")
        for problem in found[:5]:
            print(f"  {problem}")
    return 1 if failed else 0
