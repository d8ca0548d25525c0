"""``python -m ssa_book regenerate CHAPTER``: the command line of :mod:`ssa_book.regenerate`, whose
docstring says what each flag means."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ssa_book.chapters import PROG, Run
from ssa_book.cli.arguments import Parser, at_least, minutes, resolved_device
from ssa_book.profiles import DEVICES, PROFILES
from ssa_book.regenerate import CacheNotWritableError, TrainingFolderError, run_plan
from ssa_book.runner import BATCH_SYSTEMS, ClusterError, cluster_problem, scheduler_problem
from ssa_book.studies import ALL, CHAPTERS, plan
from ssa.scoring import scorer_names


def cluster_address(text: str) -> str:
    """A cluster :mod:`ssa_book.runner` can compute on (:func:`ssa_book.runner.cluster_problem`):
    a running scheduler's ``tcp://HOST:PORT``, or a batch system."""
    problem = cluster_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every regenerate command shares (this one and the chapters' own)."""
    parser.add_argument("--profile", choices=PROFILES, default="cpu", help="smoke | cpu | paper (default: cpu)")
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=at_least(0),
        metavar="S",
        help="training seeds of the chapter's models (default: the chapter's published seeds)",
    )
    parser.add_argument(
        "--scorers",
        nargs="+",
        metavar="X",
        help="attention scorers, by registry name (default: the chapter's published scorers)",
    )
    parser.add_argument(
        "--jobs",
        type=at_least(1),
        metavar="N",
        help="runs at once: a local Dask cluster of N processes of one torch thread each; with --cluster "
        "slurm (or another batch system), N batch jobs (default: 1, in this process)",
    )
    parser.add_argument(
        "--cluster",
        type=cluster_address,
        metavar="ADDRESS",
        help="compute on a running Dask scheduler's workers (tcp://HOST:PORT) or on batch jobs "
        f"({', '.join(BATCH_SYSTEMS)}; needs dask-jobqueue)",
    )
    parser.add_argument(
        "--device",
        type=resolved_device,
        default="auto",
        metavar="{" + ",".join(DEVICES) + "}",
        help="where models train (default: auto: cuda, else mps, else cpu)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list the runs, cached or to compute, and compute nothing"
    )
    parser.add_argument(
        "--stop-launching-after", type=minutes, metavar="MINUTES", help="start no new run after this many minutes"
    )


def _seed_ranges(seeds: Sequence[int]) -> str:
    """``0 1 2`` or, for a run of four or more consecutive seeds, ``100-139``."""
    parts, start = [], 0
    seeds = sorted(seeds)
    for index in range(1, len(seeds) + 1):
        if index == len(seeds) or seeds[index] != seeds[index - 1] + 1:
            block = seeds[start:index]
            parts += [f"{block[0]}-{block[-1]}"] if len(block) >= 4 else list(map(str, block))
            start = index
    return " ".join(parts)


def _chapter_lines() -> str:
    width = max(map(len, [*CHAPTERS, ALL]))
    lines = []
    for name, each in CHAPTERS.items():
        seeds = _seed_ranges(each.published_seeds("cpu"))
        lines.append(
            f"  {name:{width}}  {each.summary} ({', '.join(each.published_scorers())}; seeds {seeds})"
            if len(each.published_scorers()) <= 4
            else f"  {name:{width}}  {each.summary} ({len(each.published_scorers())} scorers; seeds {seeds})"
        )
    lines.append(f"  {ALL:{width}}  every chapter above, each run once")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    described = Parser(
        prog=PROG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compute every cached result a chapter reads that is not cached yet (resumable).",
        epilog=(
            "chapters (in brackets: the scorers and seeds published at profile cpu, the defaults):\n"
            + _chapter_lines()
            + "\n\n"
            "A seed initialises one model's weights and draws its training data; runs pair by seed. The\n"
            "performance chapter trains no model: its seed draws the benchmark's inputs. The ICL chapters, the\n"
            "decoder and the encoder accept only the scorers they show; alternative_scorers accepts every\n"
            f"registered one ({', '.join(scorer_names())}).\n"
            "More in the docstring of ssa_book/regenerate.py."
        ),
    )
    described.add_argument("chapter", metavar="CHAPTER", choices=(*CHAPTERS, ALL), help="a chapter below, or all")
    add_run_arguments(described)
    described.add_argument(
        "--arms",
        nargs="+",
        metavar="A",
        help="icl_study only: the arms of its plan to compute, by name (default: every arm)",
    )
    return described


def parse_arguments(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[Run]]:
    """The arguments and the runs they plan; an argument no chapter can use, or a cache this
    command could not write its results to (unless ``--dry-run``), is refused here in one line."""
    command_line = parser()
    arguments = command_line.parse_args(argv)
    try:
        runs = plan(
            arguments.chapter, arguments.profile, seeds=arguments.seeds, scorers=arguments.scorers, arms=arguments.arms
        )
    except ValueError as error:  # "--scorers: ...": argparse's own form, "argument --scorers: ..."
        command_line.error(f"argument {error}")
    if arguments.jobs is not None and arguments.cluster is not None and arguments.cluster not in BATCH_SYSTEMS:
        command_line.error(
            f"argument --jobs: not with --cluster {arguments.cluster}: its scheduler's workers say how many "
            "runs go at once"
        )
    arguments.jobs = 1 if arguments.jobs is None else arguments.jobs
    if arguments.cluster is not None and arguments.cluster not in BATCH_SYSTEMS and not arguments.dry_run:
        problem = scheduler_problem(arguments.cluster)
        if problem is not None:
            command_line.error(f"argument --cluster: {problem}")
    return arguments, runs


def main(argv: list[str] | None = None) -> int:
    arguments, runs = parse_arguments(argv)
    try:
        return run_plan(
            runs,
            profile=arguments.profile,
            device=arguments.device,
            jobs=arguments.jobs,
            cluster=arguments.cluster,
            dry_run=arguments.dry_run,
            stop_launching_after=arguments.stop_launching_after,
        )
    except CacheNotWritableError as error:
        parser().error(f"{error}; set $SSA_RESULTS_DIR to a writable folder (--dry-run shows the plan without writing)")
    except TrainingFolderError as error:
        parser().error(f"{error} (--dry-run shows the plan without writing)")
    except ClusterError as error:
        parser().error(f"argument --cluster: {error}")
    except KeyboardInterrupt:
        print("interrupted: every run reported above is stored; the same command computes the rest", file=sys.stderr)
        return 130
