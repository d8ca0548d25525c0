"""``python -m ssa_book``: the book's command line, :mod:`ssa_book.cli`."""

import sys

from ssa_book.cli import main

if __name__ == "__main__":
    sys.exit(main())
