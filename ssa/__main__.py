"""usage: python -m ssa COMMAND [ARGUMENTS]

The book's command line. Commands:

  regenerate CHAPTER   compute a chapter's cached results that are missing (python -m ssa regenerate --help)
  book run             execute the notebooks and build the HTML (python -m ssa.book)
  bench                the attention benchmark, measured again with --force (python -m ssa.bench)
  results list|validate   the result cache (python -m ssa.results)
  data fetch|list|verify  the datasets (python -m ssa.data)

Each command takes the arguments of its module; `python -m ssa COMMAND --help` lists them.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {"regenerate": "ssa.regenerate", "book": "ssa.book", "bench": "ssa.bench", "results": "ssa.results", "data": "ssa.data"}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        print(__doc__.splitlines()[0], file=sys.stderr)
        print(f"python -m ssa: error: argument COMMAND: invalid choice: {argv[0]!r} (choose from {', '.join(COMMANDS)})", file=sys.stderr)
        return 2
    return importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
