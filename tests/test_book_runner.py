"""The runner: table-of-contents parsing, notebook selection, execution and failure messages."""

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from ssa_book import book
from ssa_book.cli import book as cli_book

ROOT = Path(__file__).resolve().parent.parent

NESTED_TOC = """
format: jb-book
root: book/intro
parts:
  - caption: One
    chapters:
      - file: notebooks/first
        sections:
          - file: book/detail
  - caption: Two
    chapters:
      - file: notebooks/second.ipynb
      - url: https://example.org
"""


def _write_book(root: Path, toc: str, notebooks: dict[str, list[str]], pages=("book/intro",)) -> None:
    (root / "_config.yml").write_text("title: test\nexecute:\n  execute_notebooks: 'off'\n")
    (root / "_toc.yml").write_text(toc)
    for page in pages:
        (root / f"{page}.md").parent.mkdir(parents=True, exist_ok=True)
        (root / f"{page}.md").write_text(f"# {page}\n")
    for name, sources in notebooks.items():
        cells = [
            new_markdown_cell(f"# {name}"),
            new_code_cell('profile = "cpu"\ndevice = "auto"\nseed = 0', metadata={"tags": ["parameters"]}),
        ]
        cells += [new_code_cell(source) for source in sources]
        path = root / f"{name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(new_notebook(cells=cells), path)


def test_toc_documents_walks_parts_chapters_and_sections(tmp_path):
    (tmp_path / "_toc.yml").write_text(NESTED_TOC)
    assert book.toc_documents(tmp_path / "_toc.yml") == [
        "book/intro",
        "notebooks/first",
        "book/detail",
        "notebooks/second.ipynb",
    ]


def test_toc_notebooks_resolves_suffixes_and_keeps_order(tmp_path):
    _write_book(
        tmp_path, NESTED_TOC, {"notebooks/first": [], "notebooks/second": []}, pages=("book/intro", "book/detail")
    )
    assert book.toc_notebooks(tmp_path) == [Path("notebooks/first.ipynb"), Path("notebooks/second.ipynb")]


def test_toc_entry_without_a_file_is_an_error(tmp_path):
    _write_book(tmp_path, NESTED_TOC, {"notebooks/first": []}, pages=("book/intro", "book/detail"))
    with pytest.raises(FileNotFoundError, match="notebooks/second.ipynb"):
        book.toc_notebooks(tmp_path)


def test_select_by_stem_or_path_and_reject_unknown_names():
    notebooks = [Path("notebooks/theory.ipynb"), Path("notebooks/decoder.ipynb")]
    assert book.select_notebooks(notebooks, None) == notebooks
    assert book.select_notebooks(notebooks, ["decoder"]) == [Path("notebooks/decoder.ipynb")]
    assert book.select_notebooks(notebooks, ["notebooks/theory"]) == [Path("notebooks/theory.ipynb")]
    with pytest.raises(ValueError, match="choose from theory, decoder"):
        book.select_notebooks(notebooks, ["encoder"])


def test_the_book_toc_has_every_planned_part():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert [part["caption"] for part in toc["parts"]] == [
        "Introduction",
        "Theory",
        "In-context learning",
        "Alternative scorers",
        "Decoder language model",
        "Encoder and grammatical probing",
        "Performance",
        "Beyond the paper",
        "Reproducing this book",
    ]
    for document in book.toc_documents(ROOT / "_toc.yml"):
        book.resolve_document(ROOT, document)


def _settings(**overrides) -> book.RunSettings:
    values = {"profile": "smoke", "device": "cpu", "seed": 5, "cell_timeout_s": 60, "require_cache": True}
    return book.RunSettings(**{**values, **overrides})


REPORT_CELL = """import json, os, sys
with open("report.json", "w") as stream:
    json.dump({"profile": profile, "device": device, "seed": seed, "python": sys.executable,
               "require": os.environ.get("SSA_REQUIRE_CACHE"), "cwd": os.getcwd()}, stream)"""


def test_run_injects_parameters_into_a_staged_copy_with_this_interpreter(tmp_path, capsys):
    _write_book(
        tmp_path,
        "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/report\n",
        {"notebooks/report": [REPORT_CELL]},
    )
    committed = (tmp_path / "notebooks" / "report.ipynb").read_text()
    assert book.run(tmp_path, _settings(), html=False) is None
    staged = tmp_path / "_build" / "src" / "notebooks"
    report = json.loads((staged / "report.json").read_text())
    assert report == {
        "profile": "smoke",
        "device": "cpu",
        "seed": 5,
        "python": sys.executable,
        "require": "1",
        "cwd": str(staged),
    }
    assert (tmp_path / "notebooks" / "report.ipynb").read_text() == committed, "the committed notebook was modified"
    assert (tmp_path / "_build" / "src" / "book" / "intro.md").is_file()
    assert "[1/1] notebooks/report.ipynb ... ok" in capsys.readouterr().out


def test_failing_cell_names_notebook_cell_and_error(tmp_path, capsys):
    toc = "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/broken\n"
    _write_book(tmp_path, toc, {"notebooks/broken": ["x = 1", "\n# divide\nratio = x / 0\nprint(ratio)"]})
    with pytest.raises(book.NotebookFailed) as raised:
        book.run(tmp_path, _settings(), html=False)
    message = str(raised.value)
    # Cells: 0 title, 1 parameters, 2 "x = 1", 3 the failing one (papermill's injected cell is not counted).
    assert "notebooks/broken.ipynb failed at cell 3" in message
    assert "'# divide'" in message
    assert "ZeroDivisionError: division by zero" in message
    assert "FAILED" in capsys.readouterr().out


def test_cell_timeout_is_reported(tmp_path):
    toc = "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/slow\n"
    _write_book(tmp_path, toc, {"notebooks/slow": ["import time\ntime.sleep(60)"]})
    with pytest.raises(book.NotebookFailed, match=r"(?s)notebooks/slow.ipynb failed at cell 2 .*timed out after 2 s"):
        book.run(tmp_path, _settings(cell_timeout_s=2), html=False)


def test_main_reports_errors_without_a_traceback(tmp_path, capsys):
    _write_book(
        tmp_path, "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/report\n", {"notebooks/report": []}
    )
    with pytest.raises(SystemExit) as exited:  # refused with the arguments, before any notebook runs
        cli_book.main(["run", "--root", str(tmp_path), "--only", "nonexistent", "--no-html", "--require-cache"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "argument --only: unknown notebook nonexistent; choose from report" in err


def test_staging_drops_pages_deleted_from_the_repository(tmp_path):
    _write_book(tmp_path, "format: jb-book\nroot: book/intro\n", {}, pages=("book/intro", "book/theory"))
    book.stage_book(tmp_path, tmp_path / "stage")
    (tmp_path / "book" / "theory.md").unlink()
    book.stage_book(tmp_path, tmp_path / "stage")
    assert sorted(path.name for path in (tmp_path / "stage" / "book").iterdir()) == ["intro.md"]


def test_drafts_are_the_notebooks_outside_the_toc_and_never_go_into_html(tmp_path):
    _write_book(
        tmp_path,
        NESTED_TOC,
        {"notebooks/first": [], "notebooks/second": [], "notebooks/draft": []},
        pages=("book/intro", "book/detail"),
    )
    assert book.draft_notebooks(tmp_path) == [Path("notebooks/draft.ipynb")]
    with pytest.raises(ValueError, match="--drafts .* --no-html"):
        book.run(tmp_path, _settings(), html=True, drafts=True)


PROGRESS_CELL = """import transformers  # imports tqdm.auto, which warned into the page without ipywidgets
import transformers.utils.logging as hf_logging
assert not hf_logging.is_progress_bar_enabled()
total = sum(hf_logging.tqdm(range(3), desc="Loading weights"))
print(total)"""


def test_book_kernels_leave_no_stderr_and_no_progress_bar_in_the_page(tmp_path):
    # The decoder chapter once showed tqdm's "IProgress not found" warning (on importing
    # transformers); a progress bar would stay on a static page as stderr text or a frozen widget.
    # The package's own bars are the chapters' business (progress=False); Hugging Face's are off.
    _write_book(
        tmp_path,
        "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/bars\n",
        {"notebooks/bars": [PROGRESS_CELL]},
    )
    book.run(tmp_path, _settings(), html=False)
    executed = nbformat.read(tmp_path / "_build" / "src" / "notebooks" / "bars.ipynb", as_version=4)
    outputs = [output for cell in executed.cells if cell.cell_type == "code" for output in cell.outputs]
    assert [output for output in outputs if output.get("name") == "stderr" or output.output_type == "error"] == []
    assert [output for output in outputs if "application/vnd.jupyter.widget-view+json" in output.get("data", {})] == []
    assert [output.text for output in outputs if output.get("name") == "stdout"] == ["3\n"]


TIMED_CELL = """import json, os, time
started = time.time()
time.sleep({sleep})
with open(os.environ["SSA_DIRECTION_LOG"], "a") as log:
    log.write(json.dumps({{"words": "{name}"}}) + "\\n")
with open("{name}.json", "w") as stream:
    json.dump({{"started": started, "ended": time.time(), "threads": os.environ.get("OMP_NUM_THREADS")}}, stream)"""
TWO_NOTEBOOKS = "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/slow\n  - file: notebooks/fast\n"


def _progress_lines(output: str) -> list[str]:
    """The runner's lines of one notebook each, without their times."""
    return [
        line.rsplit(" ", 2)[0] if line.endswith(" s") else line for line in output.splitlines() if line.startswith("[")
    ]


def test_two_jobs_run_notebooks_at_once_and_report_them_as_one_job_does(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    reports = {}
    for jobs in (1, 2):
        root = tmp_path / f"jobs{jobs}"
        root.mkdir()
        # The first notebook is the slower: with two jobs it usually finishes last, and is reported first.
        _write_book(
            root,
            TWO_NOTEBOOKS,
            {
                "notebooks/slow": [TIMED_CELL.format(sleep=4, name="slow")],
                "notebooks/fast": [TIMED_CELL.format(sleep=0, name="fast")],
            },
        )
        book.run(root, _settings(), html=False, jobs=jobs)
        staged = root / "_build" / "src" / "notebooks"
        reports[jobs] = {name: json.loads((staged / f"{name}.json").read_text()) for name in ("slow", "fast")}
        logs = {name: (root / "_build" / "direction_log" / f"{name}.jsonl").read_text() for name in ("slow", "fast")}
        assert logs == {name: json.dumps({"words": name}) + "\n" for name in ("slow", "fast")}, (
            "each notebook logs to its own file"
        )
        assert _progress_lines(capsys.readouterr().out) == [
            "[1/2] notebooks/slow.ipynb ... ok",
            "[2/2] notebooks/fast.ipynb ... ok",
        ]
    one, two = reports[1], reports[2]
    assert one["fast"]["started"] >= one["slow"]["ended"], "one job runs the notebooks one after the other"
    assert two["fast"]["started"] < two["slow"]["ended"], "two jobs run them at once"
    assert one["slow"]["threads"] is None and two["slow"]["threads"] == book.kernel_threads(2)["OMP_NUM_THREADS"]


WAIT_FOR_THE_BROKEN_CELL = """import os, time
while not os.path.exists("reached"):
    time.sleep(0.1)
time.sleep(3)"""


def test_a_failure_is_reported_alike_by_one_and_two_jobs_and_stops_later_notebooks(tmp_path, capsys):
    toc = "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/broken\n  - file: notebooks/next\n  - file: notebooks/last\n"
    messages, lines = {}, {}
    for jobs in (1, 2):
        root = tmp_path / f"jobs{jobs}"
        root.mkdir()
        # The next notebook ends seconds after the broken one reached its failing cell: by then no new one may start.
        _write_book(
            root,
            toc,
            {
                "notebooks/broken": ["open('reached', 'w').close()\nratio = 1 / 0"],
                "notebooks/next": [WAIT_FOR_THE_BROKEN_CELL],
                "notebooks/last": ["x = 1"],
            },
        )
        with pytest.raises(book.NotebookFailed) as raised:
            book.run(root, _settings(), html=False, jobs=jobs)
        messages[jobs] = str(raised.value).replace(str(root), "ROOT")
        lines[jobs] = _progress_lines(capsys.readouterr().out)
    assert messages[1] == messages[2]
    assert messages[1].startswith("notebooks/broken.ipynb failed at cell 2") and "ZeroDivisionError" in messages[1]
    # One job starts nothing after the failure; two had started the next notebook beside it.
    assert lines[1] == [
        "[1/3] notebooks/broken.ipynb ... FAILED",
        "[2/3] notebooks/next.ipynb ... not run: a notebook failed",
        "[3/3] notebooks/last.ipynb ... not run: a notebook failed",
    ]
    assert lines[2] == [
        "[1/3] notebooks/broken.ipynb ... FAILED",
        "[2/3] notebooks/next.ipynb ... ok",
        "[3/3] notebooks/last.ipynb ... not run: a notebook failed",
    ]


def test_kernel_threads_share_the_cores_out_unless_set_already(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert book.kernel_threads(1, cores=8) == {}
    assert book.kernel_threads(2, cores=8) == {"OMP_NUM_THREADS": "4"}
    assert book.kernel_threads(3, cores=2) == {"OMP_NUM_THREADS": "1"}
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert book.kernel_threads(2, cores=8) == {}


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True])
def test_jobs_below_one_or_not_whole_are_refused_before_any_work(tmp_path, jobs):
    with pytest.raises(ValueError, match="jobs must be a whole number of at least 1"):
        book.run(tmp_path, _settings(), html=False, jobs=jobs)


def test_the_command_line_refuses_jobs_below_one(tmp_path, capsys):
    _write_book(
        tmp_path, "format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/report\n", {"notebooks/report": []}
    )
    with pytest.raises(SystemExit) as exited:
        cli_book.main(["run", "--root", str(tmp_path), "--jobs", "0", "--no-html", "--require-cache"])
    assert exited.value.code == 2 and "--jobs" in capsys.readouterr().err
