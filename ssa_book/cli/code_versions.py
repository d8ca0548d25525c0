"""``python -m ssa_book code-versions``: the command line of :mod:`ssa_book.code_versions`."""

from __future__ import annotations

import argparse
import os

from ssa_book import code_versions
from ssa_book.cli.arguments import Parser, one_of
from ssa_book.code_versions import COMPUTATIONS, record, record_path, recorded, stale, version


def parser() -> argparse.ArgumentParser:
    described = Parser(prog="python -m ssa_book code-versions", description=code_versions.__doc__.split("\n\n")[0])
    described.add_argument(
        "command",
        choices=("check", "record", "bump"),
        help="check: list computations whose code changed; record: keep the version, store the new "
        "fingerprint; bump: raise the version (its cached results are recomputed) and record",
    )
    described.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        type=one_of(COMPUTATIONS, "computation"),
        help=f"computations ({', '.join(COMPUTATIONS)}); default: every one that changed",
    )
    return described


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments; ``record`` and ``bump`` need to write the record (:func:`ssa_book.code_versions.record_path`)."""
    described = parser()
    arguments = described.parse_args(argv)
    written = record_path()
    if arguments.command != "check" and not os.access(written if written.exists() else written.parent, os.W_OK):
        described.error(f"argument command: {arguments.command} writes {written}, which is not writable")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    changed = stale()
    if arguments.command == "check":
        for name in changed:
            if name not in recorded():
                print(f"{name}: never recorded; bump it to give it version 1")
            else:
                print(
                    f"{name}: code changed since version {version(name)}; bump it if a number can change, else record it"
                )
        return 1 if changed else 0
    for name, entry in record(arguments.names or changed, bump=arguments.command == "bump").items():
        print(f"{name}: version {entry['version']}, fingerprint {entry['fingerprint'][:12]} recorded")
    return 0
