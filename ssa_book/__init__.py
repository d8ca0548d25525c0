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
    names = [re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement).group(0) for requirement in requirements
             if marker.search(requirement)]
    missing = []
    for name in names:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


_missing = _missing_requirements(DISTRIBUTION, EXTRA)
if _missing:
    _message = (f"ssa_book is the book's machinery and needs the [{EXTRA}] extra: pip install \"{DISTRIBUTION}[{EXTRA}]\" "
                f"(not installed: {', '.join(_missing)})")
    # While `python -m` looks for its module, sys.argv[0] is "-m" (the -m option's documented
    # behaviour): `python -m ssa_book` then prints the line alone, where runpy would wrap an
    # ImportError in a traceback.
    if getattr(sys, "argv", [None])[:1] == ["-m"]:
        raise SystemExit(_message)
    raise ImportError(_message)
