"""Every direction word a built page shows ("SSA worse", "sigmoid better", "SSA slightly
better") stands on a decided verdict: one the rule gives again from its own paired differences and
that survives false-discovery control where it was judged in a family.

While the book runner executes a notebook, each direction word a :class:`ssa_book.verdicts.verdict.Verdict`
produces is logged, one JSON line each, with what the rule lacks for it (nothing, for a decided
verdict) and the estimate it stands on (:data:`ssa_book.verdicts.verdict.DIRECTION_LOG_ENV`). After the
HTML build, :func:`unbacked_directions` reads each page's text and reports

* a direction word that no verdict of that page's notebook said (typed by hand, or built from a
  bare outcome without the verdict behind it);
* a direction word said only by verdicts the rule does not back, with what it lacks;
* a direction word followed by an estimate and interval ("SSA worse, -0.17 [-0.27, -0.07]") that
  no backed verdict with those words has, to the printed precision.

A direction word in quotation marks is a mention (the glossary defines "SSA better"; a caption
says what "SSA worse" would mean) and is not checked. The names a direction word may follow are
the treatments the logs name, and "SSA".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ssa_book.page_check import argument_text, quoted

LOG_FOLDER = Path("_build") / "direction_log"
ALWAYS_NAMED = ("SSA",)
DIRECTIONS = ("better", "worse")
_NUMBER = r"[+\-−]?\d+(?:\.\d+)?(?:e[+\-]?\d+)?"
# An estimate and its interval right after the words: "-0.17 [-0.27, -0.07]", "(+0.08 [+0.00, +0.16])".
ESTIMATE = re.compile(rf"\s*[,;:(]?\s*(?P<effect>{_NUMBER})\s*\[\s*(?P<low>{_NUMBER}),\s*(?P<high>{_NUMBER})\s*\]")


def log_path(root: Path, notebook: str) -> Path:
    """The log of the direction words ``notebook`` (its stem: "intro") produced when last executed."""
    return root / LOG_FOLDER / f"{notebook}.jsonl"


def read_log(path: Path) -> list[dict]:
    """The entries of one notebook's log (none when the notebook logged no direction word)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def named_treatments(entries: Sequence[dict]) -> set[str]:
    """The treatments the ``entries`` name before their direction ("sharper softmax" of "sharper
    softmax worse"), and :data:`ALWAYS_NAMED`."""
    names = set(ALWAYS_NAMED)
    for entry in entries:
        head, _, direction = entry["words"].rpartition(" ")
        if direction in DIRECTIONS and head:
            names.add(head.removesuffix(" slightly"))
    return names


def _value(text: str) -> float:
    return float(text.replace("−", "-"))


def _printed_as(printed: str, value: float | None) -> bool:
    """Whether ``value`` prints as ``printed`` at ``printed``'s precision (its decimals, or its
    significant digits for a number without a point)."""
    if value is None:
        return False
    decimals = len(printed.split(".")[1].split("e")[0]) if "." in printed else 0
    return abs(_value(printed) - value) <= 0.5 * 10**-decimals * (1 + 1e-9) + 1e-12


def _matches(entry: dict, estimate: re.Match) -> bool:
    interval = entry.get("interval") or (None, None)
    return (
        _printed_as(estimate["effect"], entry.get("effect"))
        and _printed_as(estimate["low"], interval[0])
        and _printed_as(estimate["high"], interval[1])
    )


def unbacked_directions(text: str, entries: Sequence[dict], names: set[str]) -> list[str]:
    """The direction words in a page's ``text`` that the logged ``entries`` of its notebook do not
    back (see the module's docstring), each with a little context; ``names``: the treatments a
    direction word may follow (:func:`named_treatments` over every notebook's log)."""
    said: dict[str, list[dict]] = {}
    for entry in entries:
        said.setdefault(entry["words"], []).append(entry)
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w-])(?P<words>(?:{alternatives})(?: slightly)? (?:{'|'.join(DIRECTIONS)}))\b")
    found = []
    for match in pattern.finditer(text):
        if quoted(text, match.start()):
            continue
        words = match["words"]
        context = " ".join(text[max(0, match.start() - 60) : match.end() + 40].split())
        backed = [entry for entry in said.get(words, []) if not entry["problems"]]
        if words not in said:
            found.append(f"{words!r} with no verdict behind it: {context!r}")
        elif not backed:
            lacks = "; ".join(dict.fromkeys(problem for entry in said[words] for problem in entry["problems"]))
            found.append(f"{words!r} from a verdict the rule does not back ({lacks}): {context!r}")
        elif (estimate := ESTIMATE.match(text, match.end())) and not any(_matches(entry, estimate) for entry in backed):
            found.append(f"{words!r} beside an estimate no decided verdict of that name has: {context!r}")
    return list(dict.fromkeys(found))


def check_built_pages(root: Path, html_root: Path, pages: Mapping[str, str]) -> dict[str, list[str]]:
    """``{page: unbacked direction words}`` for ``pages`` (a built page, relative to
    ``html_root``, -> the stem of the notebook whose log backs it), from the logs under ``root``."""
    logs = {page: read_log(log_path(root, notebook)) for page, notebook in pages.items()}
    names = named_treatments([entry for entries in logs.values() for entry in entries])
    found = {}
    for page, entries in logs.items():
        problems = unbacked_directions(argument_text((html_root / page).read_text(encoding="utf-8")), entries, names)
        if problems:
            found[page] = problems
    return found
