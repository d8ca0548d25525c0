"""``python -m ssa_book bench``: the command line of :mod:`ssa_book.bench`."""

from __future__ import annotations

import argparse
import json
import sys

from ssa_book import bench
from ssa_book.bench import CPU_THREADS, benchmark, benchmark_entry, format_result, quick_config, run_benchmark
from ssa_book.cli.arguments import Parser, at_least, available_device, output_file
from ssa_book.paths import cache_problem
from ssa_book.profiles import DEVICES, PROFILES
from ssa_book.results.cache import cache_required
from ssa_book.results.errors import CacheMissError


def parser() -> argparse.ArgumentParser:
    described = Parser(prog="python -m ssa_book bench", description=bench.__doc__.split("\n\n")[0])
    described.add_argument(
        "--full",
        action="store_true",
        help="the book's whole benchmark of --profile, through the result cache (default: a quick "
        "measurement of this machine, about 3 minutes, not cached)",
    )
    described.add_argument(
        "--profile", choices=PROFILES, default="cpu", help="with --full: smoke | cpu | paper (paper: GPU sizes)"
    )
    described.add_argument(
        "--device",
        type=available_device,
        default="auto",
        metavar="{" + ",".join(DEVICES) + "}",
        help="where to measure (default: auto: cuda, else mps, else cpu)",
    )
    described.add_argument(
        "--threads",
        type=at_least(1),
        default=None,
        metavar="N",
        help=f"torch threads (default: {CPU_THREADS} on a CPU)",
    )
    described.add_argument(
        "--force", action="store_true", help="with --full: measure again even if the result is cached"
    )
    described.add_argument("--json", type=output_file, metavar="PATH", help="also write the result to this file")
    return described


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments; refused here, in one line: ``--force`` or ``--profile`` without ``--full``,
    and a ``--full`` run to measure whose result the cache could not store."""
    described = parser()
    arguments = described.parse_args(argv)
    if not arguments.full and (arguments.force or arguments.profile != "cpu"):
        described.error("argument --force/--profile: they apply to the book's benchmark: add --full")
    problem = cache_problem(arguments.profile) if arguments.full and _would_measure(arguments) else None
    if problem is not None:
        described.error(f"argument --full: {problem}; set $SSA_RESULTS_DIR to a writable folder")
    return arguments


def _would_measure(arguments: argparse.Namespace) -> bool:
    """Whether ``--full`` would measure (and write its result), rather than read the cache."""
    if arguments.force:
        return True
    try:
        with cache_required():
            benchmark_entry(arguments.profile, arguments.device, arguments.threads)
    except CacheMissError:
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    if arguments.full:
        result = benchmark(arguments.profile, arguments.device, arguments.threads, force=arguments.force, log=log)
    else:
        result = run_benchmark(quick_config(arguments.device, arguments.threads), log)
    print(format_result(result))
    if arguments.json is not None:
        arguments.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0
