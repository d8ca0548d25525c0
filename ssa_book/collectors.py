"""Lists that a block of code fills as a side channel: what a chapter read, what a rule judged.

JUDGED = Collector()
with JUDGED.collecting() as found:   # every JUDGED.add(item) inside goes to ``found``
    ...
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Collector(Generic[T]):
    """Every :meth:`add` goes to each open :meth:`collecting` block's list; nested blocks each get it."""

    def __init__(self) -> None:
        self._open: list[list[T]] = []

    @contextlib.contextmanager
    def collecting(self) -> Iterator[list[T]]:
        found: list[T] = []
        self._open.append(found)
        try:
            yield found
        finally:
            self._open.remove(found)

    def add(self, item: T) -> T:
        for found in self._open:
            found.append(item)
        return item
