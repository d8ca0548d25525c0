"""ssa_book: the machinery of the SSA book, above the ``ssa`` library.

Layers, each importing only those below it (``.importlinter`` holds the contracts): the command
line (``python -m ssa_book``); the pages' readers (ledger, reproducing page, reruns); the
studies (in-context, decoder, encoder, max retrieval, alternatives, leaderboard, theory,
benchmark), each listed once as a ``ssa_book.chapters.Study`` in ``ssa_book.studies`` (its chapters,
the kinds of run they plan, the readers of its runs, the paper's claims it judges); the protocol
(verdicts, training harness, result cache, profiles, data); and below them the library,
``ssa``.

Installs with the ``[book]`` extra. Without it, importing ``ssa_book`` fails at once with one line
naming the extra (the distributions it lacks in brackets), before any module of the book is
imported, rather than with the traceback of whichever missing module came first.
"""

import re
import sys
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "ssa-book"
EXTRA = "book"


def _missing_requirements(distribution: str, extra: str) -> list[str]:
    """The distributions that ``distribution``'s ``extra`` names and that are not installed; none
    where ``distribution`` itself is not installed (a source tree on the path), whose requirements
    are then unknown."""
    try:
        requirements = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    names = [
        re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement).group(0)
        for requirement in requirements
        if marker.search(requirement)
    ]
    missing = []
    for name in names:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def _console_scripts(distribution: str) -> set[str]:
    """The names of ``distribution``'s console scripts that run this package (none where it is not
    installed)."""
    try:
        entry_points = metadata.distribution(distribution).entry_points
    except metadata.PackageNotFoundError:
        return set()
    return {
        each.name for each in entry_points if each.group == "console_scripts" and each.value.startswith(f"{__name__}.")
    }


def _run_as_a_command(argv: list[str]) -> bool:
    """Whether this import is a command's (``python -m ssa_book`` or an installed console script),
    whose user wants the refusal's line alone rather than an import's traceback. While `python -m`
    looks for its module, ``sys.argv[0]`` is "-m" (the -m option's documented behaviour); a console
    script's is the script's path."""
    return bool(argv) and (argv[0] == "-m" or Path(argv[0]).name in _console_scripts(DISTRIBUTION))


_missing = _missing_requirements(DISTRIBUTION, EXTRA)
if _missing:
    _message = (
        f'ssa_book is the book\'s machinery and needs the [{EXTRA}] extra: pip install "{DISTRIBUTION}[{EXTRA}]" '
        f"(not installed: {', '.join(_missing)})"
    )
    if _run_as_a_command(getattr(sys, "argv", [])):
        raise SystemExit(_message)
    raise ImportError(_message)
