"""``python -m ssa_book results``: the command line of :mod:`ssa_book.results`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ssa_book import files, paths
from ssa_book.cli.arguments import Parser, existing_folder
from ssa_book.code_versions import computation_of, in_folders
from ssa_book.profiles import PROFILES
from ssa_book.results.store import profile_folders
from ssa_book.results.validate import RESULTS_BYTES_LIMIT, committed_bytes, list_entries, reformat_entry


def parser() -> argparse.ArgumentParser:
    described = Parser(prog="python -m ssa_book results", description="List and validate cached results.")
    described.add_argument(
        "command",
        choices=("list", "validate", "format"),
        help="list entries; validate them (and the committed cache's size); format: rewrite "
        "entries stored in another layout in the one entry_text writes",
    )
    described.add_argument(
        "--profile",
        choices=PROFILES,
        action="append",
        help="only this profile's entries (repeatable; default: every profile folder)",
    )
    described.add_argument(
        "--results-dir",
        type=existing_folder,
        metavar="DIR",
        help="the cache to read (default: $SSA_RESULTS_DIR, else results/ in the repository)",
    )
    described.add_argument(
        "--clean",
        action="store_true",
        help="also require a clean provenance: a code version in the key, computed from a clean tree at a "
        "commit of this checkout",
    )
    described.add_argument(
        "--experiment",
        action="append",
        metavar="FOLDER",
        type=_experiment_folder,
        help="only the experiments in FOLDER or under it (repeatable), e.g. icl/ or icl/every/ssa",
    )
    described.add_argument(
        "--versioned",
        action="store_true",
        help="only the experiments whose keys hold a code version (ssa_book.code_versions)",
    )
    return described


def _experiment_folder(text: str) -> str:
    """An experiment folder's relative name (``icl/`` or ``icl/every/ssa``)."""
    if not text.strip("/") or Path(text).is_absolute() or ".." in Path(text).parts:
        raise argparse.ArgumentTypeError(
            f"must be a folder of the cache relative to a profile's, like icl/ or icl/every/ssa; got {text!r}"
        )
    return text.rstrip("/") + "/"


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, checked against the cache: an ``--experiment`` folder that no profile has
    would filter every entry away and let ``validate`` pass on nothing; ``format`` needs a
    cache it can write."""
    described = parser()
    arguments = described.parse_args(argv)
    root = arguments.results_dir if arguments.results_dir is not None else paths.results_dir()
    if not root.is_dir():
        described.error(f"the result cache {root} does not exist (set $SSA_RESULTS_DIR or --results-dir to a folder)")
    profiles = arguments.profile or profile_folders(root, None)
    for folder in arguments.experiment or ():
        if not any((root / profile / folder).is_dir() for profile in profiles):
            described.error(
                f"argument --experiment: no folder {folder} under {root} at profile {', '.join(profiles) or '(none)'}"
            )
    problem = files.folder_problem(root) if arguments.command == "format" else None
    if problem is not None:
        described.error(f"argument command: format rewrites entries, but {problem}")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    entries = [
        entry
        for profile in (arguments.profile or [None])
        for entry in list_entries(arguments.results_dir, profile, clean=arguments.clean)
    ]
    if arguments.experiment:
        entries = [entry for entry in entries if in_folders(entry.experiment, arguments.experiment)]
    if arguments.versioned:
        entries = [entry for entry in entries if computation_of(entry.experiment) is not None]
    if arguments.command == "format":
        rewritten = [entry for entry in entries if not entry.problems and reformat_entry(entry.path)]
        print(f"{len(entries)} entries, {len(rewritten)} rewritten", file=sys.stderr)
        return 0
    invalid = [entry for entry in entries if entry.problems]
    for entry in entries if arguments.command == "list" else invalid:
        status = "ok" if not entry.problems else "; ".join(entry.problems)
        print(f"{entry.profile:6} {entry.experiment:40} {entry.path.name}  {status}")
    print(f"{len(entries)} entries, {len(invalid)} invalid", file=sys.stderr)
    oversize = arguments.command == "validate" and committed_bytes(arguments.results_dir) > RESULTS_BYTES_LIMIT
    if oversize:
        print(
            f"the committed results take {committed_bytes(arguments.results_dir):,} bytes, over the cap of "
            f"{RESULTS_BYTES_LIMIT:,}: run `python -m ssa_book results format`, or keep fewer per-position arrays",
            file=sys.stderr,
        )
    return 1 if invalid or oversize else 0
