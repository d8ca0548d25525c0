"""The one runner that executes the book's notebooks and builds its HTML.

    python -m ssa_book book run --profile cpu                 # every notebook, then _build/html/
    python -m ssa_book book run --profile smoke --no-html     # what CI runs first
    python -m ssa_book book run --profile cpu --only theory   # one chapter (others keep their last output)
    python -m ssa_book book run --profile smoke --jobs 2      # two notebooks at once, one kernel each

Every ``.ipynb`` page of ``_toc.yml`` is executed with papermill, with the parameters
``profile``, ``device`` and ``seed`` injected, into ``_build/src/`` (a copy of the book's layout:
``_config.yml``, ``_toc.yml``, ``book/``, ``notebooks/``); the committed notebooks are never
written. With ``jobs`` above 1, that many notebooks execute at once, each in a worker process of
its own (its kernel's environment, and so its direction log, that process's alone); progress and
failures are reported in table-of-contents order whatever finishes first. Jupyter Book then
builds ``_build/src`` into ``_build/html`` with warnings as errors, and every page of the table
of contents is checked for what a reader must never see: a cell's stderr, a traceback, a path of
this machine, a frozen widget (``ssa_book.page_check``).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import yaml

from ssa_book import direction_check, paths
from ssa_book.profiles import DEVICES, check_profile
from ssa_book.page_check import CAPTION_WORDS, HISTORY_PAGES, check_pages, long_captions
from ssa_book.verdicts.verdict import DIRECTION_LOG_ENV

KERNEL_NAME = "ssa-book"
STAGE = Path("_build") / "src"
STAGED_FILES = ("_config.yml", "_toc.yml")
STAGED_FOLDERS = ("book", "notebooks")
# Files a chapter offers for download (the leaderboard's CSV): written here by the notebooks,
# copied by the build to the site's root (html_extra_path), so each has a stable address.
DOWNLOADS = "downloads"
DOWNLOADS_ENV = "SSA_BOOK_DOWNLOADS"
DEFAULT_CELL_TIMEOUT_S = 3600
PAGE_SUFFIXES = (".ipynb", ".md")


class NotebookFailed(RuntimeError):
    """A notebook cell raised, timed out or killed its kernel; the message names the cell."""


class BookBuildFailed(RuntimeError):
    """Jupyter Book reported an error or a warning."""


def toc_documents(toc_path: Path) -> list[str]:
    """Every document named in a Jupyter Book ``_toc.yml`` (``root`` and each ``file``), in order."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    if not isinstance(toc, dict) or "root" not in toc:
        raise ValueError(f"{toc_path} has no 'root' entry; is it a jb-book table of contents?")
    documents: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for key in ("root", "file"):
                if key in node:
                    documents.append(str(node[key]))
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return documents


def resolve_document(root: Path, document: str) -> Path:
    """The file (relative to ``root``) behind a toc entry, which may omit its suffix."""
    candidate = Path(document)
    if candidate.suffix in PAGE_SUFFIXES:
        if (root / candidate).is_file():
            return candidate
    else:
        for suffix in PAGE_SUFFIXES:
            if (root / candidate.with_suffix(suffix)).is_file():
                return candidate.with_suffix(suffix)
    raise FileNotFoundError(f"_toc.yml names {document!r} but no {' or '.join(PAGE_SUFFIXES)} file exists for it")


def toc_notebooks(root: Path) -> list[Path]:
    """The notebooks of the book, relative to ``root``, in table-of-contents order."""
    pages = [resolve_document(root, document) for document in toc_documents(root / "_toc.yml")]
    return [page for page in pages if page.suffix == ".ipynb"]


def draft_notebooks(root: Path) -> list[Path]:
    """Chapter notebooks not yet in the table of contents (their cached ``cpu`` results are still
    missing); ``run --drafts`` executes them too, so CI keeps them working at the smoke profile."""
    in_toc = set(toc_notebooks(root))
    found = sorted(path.relative_to(root) for path in (root / "notebooks").glob("*.ipynb"))
    return [path for path in found if path not in in_toc]


def select_notebooks(notebooks: list[Path], only: list[str] | None) -> list[Path]:
    """Filter by ``--only`` names: a notebook's stem (``theory``) or path (``notebooks/theory``)."""
    if not only:
        return notebooks
    by_name = {}
    for notebook in notebooks:
        for name in (notebook.stem, notebook.with_suffix("").as_posix(), notebook.as_posix()):
            by_name[name] = notebook
    unknown = [name for name in only if name not in by_name]
    if unknown:
        choices = ", ".join(notebook.stem for notebook in notebooks)
        raise ValueError(f"--only: unknown notebook {', '.join(unknown)}; choose from {choices}")
    wanted = {by_name[name] for name in only}
    return [notebook for notebook in notebooks if notebook in wanted]


def stage_book(root: Path, stage: Path) -> None:
    """Refresh the staging copy of the book's sources; executed notebooks are written later."""
    stage.mkdir(parents=True, exist_ok=True)
    (stage / DOWNLOADS).mkdir(exist_ok=True)
    for name in STAGED_FILES:
        shutil.copy2(root / name, stage / name)
    for name in STAGED_FOLDERS:
        # Drop staged pages and assets first, so a page deleted from the repository (e.g. a
        # placeholder replaced by its notebook) does not linger in the build.
        for staged in (stage / name).rglob("*") if (stage / name).is_dir() else ():
            if staged.is_file() and staged.suffix != ".ipynb":
                staged.unlink()
        if (root / name).is_dir():
            # Notebooks already in the stage may be outputs of an earlier run (kept for --only).
            shutil.copytree(
                root / name,
                stage / name,
                dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"),
            )


# A page shows every row, column and character of a table: pandas' display limits would cut a
# verdict table to its first and last rows behind "...", and a cell's text at 50 characters.
WHOLE_TABLES = (
    "import pandas; pandas.set_option('display.max_rows', None, 'display.max_columns', None, "
    "'display.max_colwidth', None, 'display.width', None)"
)


def _write_kernelspec(jupyter_dir: Path) -> None:
    """A kernel that runs this very interpreter, whatever other ``python3`` kernels exist."""
    spec_dir = jupyter_dir / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        # Kernel log noise (e.g. the unencrypted-TCP notice) would bury the progress lines.
        "argv": [
            sys.executable,
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--IPKernelApp.log_level=ERROR",
            f"--IPKernelApp.exec_lines={WHOLE_TABLES}",
        ],
        "display_name": f"SSA book ({sys.executable})",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")


def _first_line(source: str) -> str:
    lines = [line for line in source.strip().splitlines() if line.strip()]
    return lines[0].strip() if lines else "<empty cell>"


def _failed_cell(executed_path: Path) -> tuple[int, str, str | None] | None:
    """(index in the committed notebook, first source line, error or None) of the cell that failed."""
    if not executed_path.is_file():
        return None
    cells = json.loads(executed_path.read_text(encoding="utf-8"))["cells"]
    index_in_source = 0
    for cell in cells:
        metadata = cell.get("metadata", {})
        tags = metadata.get("tags", [])
        # Papermill adds the injected parameters and, on failure, banner cells of its own.
        if "injected-parameters" in tags or "papermill-error-cell-tag" in tags:
            continue
        status = metadata.get("papermill", {}).get("status")
        errors = [output for output in cell.get("outputs", []) if output.get("output_type") == "error"]
        if errors or status in ("failed", "running"):
            source = "".join(cell.get("source", ""))
            error = f"{errors[0]['ename']}: {errors[0]['evalue']}" if errors else None
            return index_in_source, _first_line(source), error
        index_in_source += 1
    return None


@dataclass(frozen=True)
class RunSettings:
    profile: str
    device: str
    seed: int
    cell_timeout_s: int
    require_cache: bool


def execute_notebook(root: Path, stage: Path, notebook: Path, settings: RunSettings) -> None:
    """Execute ``root/notebook`` into ``stage/notebook``; raise :class:`NotebookFailed` naming the cell."""
    import papermill

    output = stage / notebook
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(
            str(root / notebook),
            str(output),
            parameters={"profile": settings.profile, "device": settings.device, "seed": settings.seed},
            kernel_name=KERNEL_NAME,
            language="python",
            cwd=str(output.parent),
            progress_bar=False,
            execution_timeout=settings.cell_timeout_s,
        )
    except Exception as error:  # papermill, nbclient (timeouts) and dead kernels raise unrelated types
        failed = _failed_cell(output)
        where = f"cell {failed[0]} (0-based, first line: {failed[1]!r})" if failed else "an unknown cell"
        if isinstance(error, TimeoutError):  # checked first: the interrupted cell also shows a KeyboardInterrupt
            detail = f"the cell timed out after {settings.cell_timeout_s} s (--timeout)"
        elif failed and failed[2]:
            detail = failed[2]
        else:
            detail = f"{type(error).__name__}: {_first_line(str(error))}"
        raise NotebookFailed(
            f"{notebook.as_posix()} failed at {where}:\n    {detail}\n"
            f"The executed copy with the full traceback is {output}"
        ) from error


def _stage_unexecuted(root: Path, stage: Path, notebook: Path, profile: str) -> str:
    """For a notebook left out by ``--only``: keep its last output at this profile, else copy it bare."""
    staged = stage / notebook
    if staged.is_file():
        metadata = json.loads(staged.read_text(encoding="utf-8")).get("metadata", {})
        if metadata.get("papermill", {}).get("parameters", {}).get("profile") == profile:
            return "not run (--only); keeping its previous output"
    staged.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / notebook, staged)
    return "not run (--only); shown without outputs"


def kernel_threads(jobs: int, cores: int | None = None) -> dict[str, str]:
    """``OMP_NUM_THREADS`` for kernels that run ``jobs`` at once: the cores shared out, so that two
    kernels do not each start a thread per core. Nothing with one job, or where the variable is
    set already (the caller's choice stands)."""
    if jobs == 1 or "OMP_NUM_THREADS" in os.environ:
        return {}
    return {"OMP_NUM_THREADS": str(max(1, (cores or os.cpu_count() or 1) // jobs))}


def _execute_in_worker(
    root: Path, stage: Path, notebook: Path, settings: RunSettings, environment: dict[str, str]
) -> tuple[float, str | None]:
    """In a worker process: execute one notebook with ``environment`` set in this process (its
    kernel inherits it); return the seconds it took and the failure's message, or ``None``."""
    started = time.perf_counter()
    try:
        with paths.environment(environment):
            execute_notebook(root, stage, notebook, settings)
    except NotebookFailed as failure:
        return time.perf_counter() - started, str(failure)
    return time.perf_counter() - started, None


def _execute_in_order(
    root: Path,
    stage: Path,
    notebooks: list[Path],
    selected: list[Path],
    settings: RunSettings,
    environment: dict[str, str],
    jobs: int,
) -> None:
    """Execute ``selected`` (``jobs`` at once, each in a worker process), printing one line per
    notebook of ``notebooks`` in their order as soon as it and those before it are done. After a
    failure no further notebook starts (those running finish); raise :class:`NotebookFailed` with
    every failure, in order."""
    outcomes: dict[Path, str] = {}
    failures: dict[Path, str] = {}
    printed = 0

    def print_ready() -> None:
        nonlocal printed
        while printed < len(notebooks) and notebooks[printed] in outcomes:
            notebook = notebooks[printed]
            print(f"[{printed + 1}/{len(notebooks)}] {notebook.as_posix()} ... {outcomes[notebook]}", flush=True)
            printed += 1

    for notebook in notebooks:
        if notebook not in selected:
            outcomes[notebook] = _stage_unexecuted(root, stage, notebook, settings.profile)
    waiting = list(selected)
    running: dict[Future, Path] = {}
    # Spawned, not forked: a worker starts from a clean interpreter whatever this process holds.
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        while waiting or running:
            while waiting and len(running) < jobs and not failures:
                notebook = waiting.pop(0)
                directions = direction_check.log_path(root, notebook.stem)
                directions.parent.mkdir(parents=True, exist_ok=True)
                directions.unlink(missing_ok=True)
                notebook_environment = {**environment, DIRECTION_LOG_ENV: str(directions)}
                running[pool.submit(_execute_in_worker, root, stage, notebook, settings, notebook_environment)] = (
                    notebook
                )
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda future: selected.index(running[future])):
                notebook = running.pop(future)
                seconds, failure = future.result()
                outcomes[notebook] = f"{'FAILED' if failure else 'ok'} {seconds:.1f} s"
                if failure:
                    failures[notebook] = failure
            print_ready()
    for notebook in waiting:
        outcomes[notebook] = "not run: a notebook failed"
    print_ready()
    if failures:
        raise NotebookFailed("\n".join(failures[notebook] for notebook in selected if notebook in failures))


def build_html(stage: Path, output_root: Path) -> Path:
    executable = Path(sys.executable).with_name("jupyter-book")
    command = [str(executable) if executable.exists() else "jupyter-book"]
    command += [
        "build",
        str(stage),
        "--path-output",
        str(output_root),
        "--builder",
        "html",
        "--warningiserror",
        "--keep-going",
    ]
    completed = subprocess.run(command)
    if completed.returncode != 0:
        raise BookBuildFailed(
            f"jupyter-book build failed (exit {completed.returncode}); its warnings and errors are above"
        )
    index = output_root / "_build" / "html" / "index.html"
    if not index.is_file():
        raise BookBuildFailed(f"jupyter-book finished but {index} does not exist")
    return index


def toc_pages(root: Path) -> list[str]:
    """The built HTML page of every ``_toc.yml`` document, relative to ``_build/html``."""
    return [
        resolve_document(root, document).with_suffix(".html").as_posix()
        for document in toc_documents(root / "_toc.yml")
    ]


def check_built_pages(root: Path, html_root: Path) -> None:
    """Raise :class:`BookBuildFailed` naming every page with what :mod:`ssa_book.page_check` refuses."""

    found = check_pages(html_root, toc_pages(root))
    for page, captions in long_captions(html_root, toc_pages(root)).items():
        found.setdefault(page, []).extend(
            f"a figure caption over {CAPTION_WORDS} words: {caption}" for caption in captions
        )
    checked = {
        page: Path(page).stem
        for page in toc_pages(root)
        if page.startswith("notebooks/") and not page.endswith(HISTORY_PAGES)
    }
    for page, problems in direction_check.check_built_pages(root, html_root, checked).items():
        found.setdefault(page, []).extend(
            f"a direction word without a decided verdict: {problem}" for problem in problems
        )
    if found:
        lines = [f"{page}: {problem}" for page, problems in found.items() for problem in problems]
        raise BookBuildFailed(
            "pages show what a reader must not see (see ssa_book/page_check.py):\n    " + "\n    ".join(lines)
        )


def run(
    root: Path,
    settings: RunSettings,
    *,
    only: list[str] | None = None,
    html: bool = True,
    drafts: bool = False,
    jobs: int = 1,
) -> Path | None:
    """Execute the book's notebooks, ``jobs`` at once, and build the HTML; return the path of ``index.html``."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number of at least 1; got {jobs!r}")
    check_profile(settings.profile)
    if settings.device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}; got {settings.device!r}")
    root = root.resolve()
    stage = root / STAGE
    if drafts and html:
        raise ValueError("--drafts executes notebooks that are not in the book: use it with --no-html")
    notebooks = toc_notebooks(root) + (draft_notebooks(root) if drafts else [])
    selected = select_notebooks(notebooks, only)
    stage_book(root, stage)
    jupyter_dir = root / "_build" / "jupyter"
    _write_kernelspec(jupyter_dir)

    kernel_environment = {
        "JUPYTER_PATH": os.pathsep.join(filter(None, [str(jupyter_dir), os.environ.get("JUPYTER_PATH")])),
        # Kernels run inside _build/src; point them at the real result cache and data.
        "SSA_RESULTS_DIR": str(results_folder(root)),
        "SSA_DATA_DIR": os.environ.get("SSA_DATA_DIR", str(root / "data")),
        "SSA_REQUIRE_CACHE": "1" if settings.require_cache else os.environ.get("SSA_REQUIRE_CACHE", "0"),
        DOWNLOADS_ENV: str(stage / DOWNLOADS),
        # A static page cannot show a live progress bar: it would stay on the page as a frozen
        # widget (ssa_book.page_check refuses it). Hugging Face's bars (e.g. transformers' "Loading
        # weights") are switched off here; the chapters pass progress=False to the package's
        # own training loops.
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        **kernel_threads(jobs),
    }
    print(
        f"ssa_book.book: profile={settings.profile} device={settings.device} seed={settings.seed} "
        f"require_cache={settings.require_cache} notebooks={len(selected)}/{len(notebooks)}",
        flush=True,
    )
    started = time.perf_counter()
    _execute_in_order(root, stage, notebooks, selected, settings, kernel_environment, jobs)
    print(f"executed {len(selected)} notebooks in {time.perf_counter() - started:.1f} s", flush=True)
    if not html:
        return None
    html_started = time.perf_counter()
    index = build_html(stage, root)
    check_built_pages(root, index.parent)
    print(f"built {index} in {time.perf_counter() - html_started:.1f} s", flush=True)
    return index


def results_folder(root: Path) -> Path:
    """The result cache the notebooks of the book at ``root`` read and write."""
    return Path(os.environ.get("SSA_RESULTS_DIR", str(root / "results")))
