"""What the "Reproducing this book" page computes: the command behind every chapter, the times
its cached results took (from their provenance), and the data sources.

    chapter_commands("cpu")     # one row per page of _toc.yml: how to run it and regenerate its cache
    chapter_times("cpu")        # per chapter part: runs planned and cached, compute time, processors
    dataset_table()             # every dataset: files, size, the public repositories and licence
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

from ssa_book import paths
from ssa_book.studies import CHAPTERS, plan, read_run
from ssa_book.profiles import check_profile
from ssa_book.book import resolve_document, toc_documents
from ssa_book.data import load_manifest

# Licences, from each dataset's public repository (see also the References page).
DATA_LICENCES = {
    "zorro": "MIT",
    "blimp": "CC BY 4.0",
    "aochildes": "CC BY-NC-SA 3.0 (non-commercial)",
    "wikitext-2": "CC BY-SA 3.0",
    "webtext": "ODC-BY 1.0 and the Common Crawl terms (C4, CCNet, raw Common Crawl); OpenAI WebText: research use",
}
DATA_DESCRIPTIONS = {
    "zorro": "grammatical minimal pairs over the AO-CHILDES vocabulary (encoder probing)",
    "blimp": "English minimal pairs (decoder probing)",
    "aochildes": "child-directed speech from CHILDES, ordered by age (encoder training)",
    "wikitext-2": "WikiText-2 raw, validation and test splits (decoder, out of distribution)",
    "webtext": "small samples of C4, CCNet, raw Common Crawl and OpenAI WebText (decoder training at cpu scale)",
}


def book_command(profile: str, chapter: str) -> str:
    return f"python -m ssa_book book run --profile {profile} --only {chapter}"


def chapter_commands(profile: str = "cpu", root: Path | None = None) -> list[dict]:
    """One dict per page of the book that runs code, in _toc.yml order: ``chapter``, ``page``
    (the toc entry), ``run`` (executes the notebook; ``None`` for a chapter whose notebook is
    not in the book yet) and ``regenerate`` (fills its result cache; ``None`` when the page
    computes everything live or its chapter code has not landed)."""

    check_profile(profile)
    root = root if root is not None else paths.repository_root()
    if root is None:
        raise ValueError("root: no checkout of the book found; pass the repository folder")
    rows = []
    for document in toc_documents(root / "_toc.yml"):
        page = resolve_document(root, document)
        chapter = page.stem
        if page.suffix != ".ipynb" and chapter not in CHAPTERS:
            continue  # a text page: nothing to run
        regenerate = regenerate_command(chapter, profile) if chapter in CHAPTERS else None
        rows.append(
            {
                "chapter": chapter,
                "page": page.with_suffix("").as_posix(),
                "run": book_command(profile, chapter) if page.suffix == ".ipynb" else None,
                "regenerate": regenerate,
            }
        )
    return rows


def regenerate_command(chapter: str, profile: str) -> str:
    """``python -m ssa_book regenerate CHAPTER --profile P`` (:meth:`ssa_book.chapters.Chapter.command`)."""
    return CHAPTERS[chapter].command(profile)


def chapter_times(profile: str = "cpu") -> list[dict]:
    """One row per part of every chapter (:meth:`ssa_book.chapters.Chapter.part`), in the book's
    order: ``chapter``, ``part``, the ``runs`` its regenerate command plans, how many are
    ``cached``, the compute time in seconds of the entries they read (``wall_time_s``, from
    their provenance, each entry once per part; a run shared by two chapters counts in both),
    and the ``processors`` that computed them; ``missing_s``, for a part with runs still missing,
    is their number times the mean compute time of its cached runs (``None`` when none is cached
    or none is missing): an estimate on the processors that computed the others. A part's runs
    read as the chapter reads them (:func:`ssa_book.studies.read_run`)."""
    check_profile(profile)
    rows: dict[tuple[str, str], dict] = {}
    for name, chapter in CHAPTERS.items():
        for run in plan(name, profile):
            part = chapter.part(run)
            row = rows.setdefault(
                (name, part),
                {
                    "chapter": name,
                    "part": part,
                    "runs": 0,
                    "cached": 0,
                    "wall_time_s": 0.0,
                    "processors": set(),
                    "entries": set(),
                },
            )
            row["runs"] += 1
            entries = read_run(run, profile)
            if entries is None:
                continue
            row["cached"] += 1
            for entry in entries:
                if entry.path in row["entries"]:
                    continue
                row["entries"].add(entry.path)
                row["wall_time_s"] += float(entry.provenance.wall_time_s)
                row["processors"].add(entry.provenance.processor or "not recorded")
    return [
        {
            **{key: value for key, value in row.items() if key != "entries"},
            "processors": sorted(row["processors"]),
            "missing_s": (row["runs"] - row["cached"]) * row["wall_time_s"] / row["cached"]
            if 0 < row["cached"] < row["runs"]
            else None,
        }
        for row in rows.values()
    ]


def _source(url: str) -> str:
    """``owner/repository@commit`` of a raw GitHub URL, else the host."""
    parsed = urlparse(url)
    parts = parsed.path.strip("/").split("/")
    if parsed.netloc == "raw.githubusercontent.com" and len(parts) >= 3:
        return f"{parts[0]}/{parts[1]}@{parts[2][:7]}"
    return parsed.netloc


def dataset_table() -> list[dict]:
    """Every dataset of ``ssa_book/datasets.json``: files, megabytes, source repositories, licence."""

    rows = []
    for name, dataset in load_manifest().items():
        files = dataset["files"].values()
        sources = Counter(_source(entry["url"]) for entry in files)
        rows.append(
            {
                "dataset": name,
                "what": DATA_DESCRIPTIONS.get(name, ""),
                "files": len(dataset["files"]),
                "MB": sum(entry["size"] for entry in files) / 1e6,
                "sources": ", ".join(sources),
                "licence": DATA_LICENCES.get(name, "see its source repository"),
            }
        )
    return rows


def install_cell(root: Path | None = None) -> str:
    """The install cell every notebook starts with (tests/test_notebooks.py checks they agree)."""
    import nbformat

    root = root if root is not None else paths.repository_root()
    if root is None:
        raise ValueError("root: no checkout of the book found; pass the repository folder")
    notebook = nbformat.read(root / "notebooks" / "scorers.ipynb", as_version=4)
    return next(cell.source for cell in notebook.cells if cell.cell_type == "code")
